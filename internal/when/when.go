// Package when is kaasctl's one grammar for times, durations and sizes:
// every flag that takes one reads it here, so a form that works on one
// (30d, 90s, 1h30m, P1D, 2026-11-29T03:00:00Z, 1GiB) works on all.
package when

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DurationForms names the duration forms, for usage text and errors.
const DurationForms = "a duration such as 90s, 15m, 1h30m, 2d, 1w, 500ms or ISO 8601 (PT1H, P1DT12H)"

// TimeForms names the time forms.
const TimeForms = "YYYY-MM-DDTHH:mm:SS[.sss][Z|±hh:mm], a date (YYYY-MM-DD), Unix epoch s (10 digits) or ms (13 digits), or a duration back from now (90m, 2h, 1d, PT30M)"

// SizeForms names the size forms.
const SizeForms = "a size such as 500MiB, 1GiB, 2GB, 100k or a number of bytes"

var (
	isoRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)
	})
	shortRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:\d+(?:\.\d+)?(?:w|d|h|m|s|ms|us|µs|ns))+$`) })
	partRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+(?:\.\d+)?)(ms|us|µs|ns|w|d|h|m|s)`) })
	dateRE  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$`)
	})
)

var unitSeconds = map[string]float64{"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}

// ErrDuration is the error of a value that is no duration.
var ErrDuration = errors.New("not a duration: use " + DurationForms)

// ParseDuration reads a duration: Go's form with days and weeks added
// (1h30m, 90s, 2d, 1w, 500ms), or ISO 8601 (PT1H, P1DT12H, P1W), with an
// optional sign. Longer than a time.Duration holds (about 292 years) is the
// longest one (it is before every record, which is all a time back from
// now needs).
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	neg := strings.HasPrefix(in, "-")
	body := strings.TrimPrefix(strings.TrimPrefix(in, "-"), "+")
	var total float64
	switch u := strings.ToUpper(body); {
	case body == "0":
	case strings.HasPrefix(u, "P") && u != "P" && !strings.HasSuffix(u, "T"):
		m := isoRE().FindStringSubmatch(u)
		if m == nil {
			return 0, ErrDuration
		}
		for i, unit := range []float64{7 * 86400, 86400, 3600, 60, 1} {
			if m[i+1] != "" {
				v, _ := strconv.ParseFloat(m[i+1], 64)
				total += v * unit
			}
		}
	case shortRE().MatchString(strings.ToLower(body)):
		for _, p := range partRE().FindAllStringSubmatch(strings.ToLower(body), -1) {
			v, _ := strconv.ParseFloat(p[1], 64)
			total += v * unitSeconds[p[2]]
		}
	default:
		return 0, ErrDuration
	}
	d := time.Duration(math.MaxInt64)
	if total < float64(math.MaxInt64)/float64(time.Second) {
		d = time.Duration(math.Round(total * float64(time.Second)))
	}
	if neg {
		d = -d
	}
	return d, nil
}

// ParseTime reads a moment: a date-time (RFC 3339, or without a zone, read
// as UTC as kafka-consumer-groups.sh reads it: note then says which moment
// that is), a date alone (midnight UTC), Unix epoch seconds (10 digits) or
// milliseconds (13), or a duration back from now.
func ParseTime(s string, now time.Time) (t time.Time, note string, err error) {
	s = strings.TrimSpace(s)
	if d, err := ParseDuration(s); err == nil && !isNumber(s) {
		return now.Add(-d), "", nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		switch len(strings.TrimLeft(s, "-")) {
		case 13:
			return time.UnixMilli(n).UTC(), "", nil
		case 10:
			return time.Unix(n, 0).UTC(), "", nil
		}
		return time.Time{}, "", errors.New("a number must be Unix epoch milliseconds (13 digits) or seconds (10 digits)")
	}
	m := dateRE().FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, "", errors.New("not a time: use " + TimeForms)
	}
	return dateTime(s, m)
}

func isNumber(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// dateTime builds the moment a date-time match names.
func dateTime(s string, m []string) (time.Time, string, error) {
	atoi := func(x string) int { n, _ := strconv.Atoi(x); return n }
	nsec := 0
	if m[7] != "" {
		nsec = atoi((m[7] + "000000000")[:9])
	}
	zone, note := time.UTC, ""
	switch z := m[8]; {
	case z == "":
		note = fmt.Sprintf("%q has no time zone: read as UTC, as kafka-consumer-groups.sh does (%s); add Z or +hh:mm to be explicit", s,
			time.Date(atoi(m[1]), time.Month(atoi(m[2])), atoi(m[3]), atoi(m[4]), atoi(m[5]), atoi(m[6]), nsec, zone).Format(time.RFC3339Nano))
	case z != "Z":
		z = strings.Replace(z, ":", "", 1)
		// No zone is more than 18 hours from UTC (Java's ZoneOffset,
		// which kafka-consumer-groups.sh parses with, stops there), and an
		// hour has 60 minutes: +25:00 or +99:99 is a typo, not a moment.
		h, mm := atoi(z[1:3]), atoi(z[3:5])
		if mm > 59 || h*60+mm > 18*60 {
			return time.Time{}, "", fmt.Errorf("%s is not a time zone offset (from -18:00 to +18:00, minutes below 60)", m[8])
		}
		off := (h*60 + mm) * 60
		if z[0] == '-' {
			off = -off
		}
		zone = time.FixedZone(m[8], off)
	}
	t := time.Date(atoi(m[1]), time.Month(atoi(m[2])), atoi(m[3]), atoi(m[4]), atoi(m[5]), atoi(m[6]), nsec, zone)
	if t.Month() != time.Month(atoi(m[2])) || t.Day() != atoi(m[3]) || atoi(m[4]) > 23 || atoi(m[5]) > 59 || atoi(m[6]) > 60 {
		return time.Time{}, "", errors.New("not a real date and time")
	}
	return t, note, nil
}

// ParseSize reads a size: 1GiB, 500MiB, 2GB, 100k (KiB), 12345 (bytes).
func ParseSize(s string) (int64, error) {
	low := strings.ToLower(strings.TrimSpace(s))
	units := []struct {
		suf string
		n   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40}, {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(low, u.suf) {
			low, mult = strings.TrimSpace(strings.TrimSuffix(low, u.suf)), u.n
			break
		}
	}
	v, err := strconv.ParseFloat(low, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, errors.New("not a size: use " + SizeForms)
	}
	if v*float64(mult) >= math.MaxInt64 {
		return 0, errors.New("too large a size")
	}
	return int64(v * float64(mult)), nil
}

// Format writes a duration in the grammar's short form: whole days as
// "30d", else Go's form without zero tails ("5m", "1h30m", "1.5s").
func Format(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == 0:
		return "0"
	case d%day == 0:
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
