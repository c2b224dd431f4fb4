package when

import (
	"strings"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	// A value without a zone is UTC whatever the host's zone (Kafka's
	// tool appends "Z"); TZ cannot change it.
	for _, tc := range []struct {
		in   string
		want time.Time
		note bool
	}{
		{"2026-11-29T03:00:00Z", time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC), false},
		{"2026-11-29T03:00:00.250+01:00", time.Date(2026, 11, 29, 2, 0, 0, 250e6, time.UTC), false},
		{"2026-11-29T03:00:00-0530", time.Date(2026, 11, 29, 8, 30, 0, 0, time.UTC), false},
		{"2026-11-29T03:00:00.123", time.Date(2026, 11, 29, 3, 0, 0, 123e6, time.UTC), true},
		{"2026-11-29", time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), true},
		{"2026-11-29 03:00Z", time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC), false},
		{"1795921200000", time.UnixMilli(1795921200000).UTC(), false},
		{"1795921200", time.Unix(1795921200, 0).UTC(), false},
		{"2026-11-29T03:00:00+18:00", time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC), false},
		{"2026-11-29T03:00:00-18:00", time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC), false},
		{"2026-11-29T03:00:00+05:45", time.Date(2026, 11, 28, 21, 15, 0, 0, time.UTC), false},
	} {
		got, note, err := ParseTime(tc.in, now)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if !got.Equal(tc.want) {
			t.Errorf("%s: got %s want %s", tc.in, got.UTC(), tc.want)
		}
		if (note != "") != tc.note || (tc.note && !strings.Contains(note, "read as UTC")) {
			t.Errorf("%s: note %q", tc.in, note)
		}
	}
	for _, bad := range []string{"", "yesterday", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-29T25:00:00Z", "12345", "2026-11-29T03:00:00+1",
		// Zones no clock has: more than 18 hours from UTC, or 60+ minutes.
		"2026-11-27T16:00:00+99:99", "2026-11-27T16:00:00+25:00", "2026-11-27T16:00:00-24:30", "2026-11-27T16:00:00+18:01", "2026-11-27T16:00:00+0160", "2026-11-27T16:00:00-1900"} {
		if _, _, err := ParseTime(bad, now); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{
		"PT1H": time.Hour, "P1DT12H": 36 * time.Hour, "PT90M": 90 * time.Minute, "PT0.5S": 500 * time.Millisecond, "P2D": 48 * time.Hour,
		"pt15m": 15 * time.Minute, "1h": time.Hour, "90m": 90 * time.Minute, "2d": 48 * time.Hour, "1h30m": 90 * time.Minute, "250ms": 250 * time.Millisecond,
		// Java's Duration: a leading '-' negates (now minus it is the future).
		"-PT30M": -30 * time.Minute, "-1h": -time.Hour, "+PT1H": time.Hour, "PT0S": 0, "P0D": 0,
	} {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "1", "h", "1y", "PT1X", "--PT1H", "-", "-P"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseDurationBeyondWhatADurationHolds(t *testing.T) {
	t.Parallel()
	// Further back than a time.Duration reaches is before every record:
	// it saturates (the reset resolves it to the log start) instead of
	// wrapping around into the future.
	for _, in := range []string{"P99999999D", "P3650000D", "PT999999999999H"} {
		d, err := ParseDuration(in)
		if err != nil || d < 290*365*24*time.Hour {
			t.Errorf("%s: %v %v", in, d, err)
		}
		if n, _ := ParseDuration("-" + in); n > -290*365*24*time.Hour {
			t.Errorf("-%s: %v", in, n)
		}
	}
}

// The one grammar reads Go's forms, days and weeks, ISO 8601, and a
// duration back from now wherever a time is asked; sizes in SI and binary
// units.
func TestGrammarEverywhere(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "1w": 7 * 24 * time.Hour, "P1W": 7 * 24 * time.Hour, "1h30m15s": 90*time.Minute + 15*time.Second,
		"1.5h": 90 * time.Minute, "500ms": 500 * time.Millisecond, "2d12h": 60 * time.Hour, "0": 0} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", in, got, err, want)
		}
	}
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	if got, _, err := ParseTime("30d", now); err != nil || !got.Equal(now.Add(-30*24*time.Hour)) {
		t.Errorf("30d back: %v %v", got, err)
	}
	for in, want := range map[string]int64{"1GiB": 1 << 30, "500MiB": 500 << 20, "2GB": 2e9, "100k": 100 << 10, "12345": 12345, "1.5g": 3 << 29} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("%s: %d %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1k", "1x", "1e400", "NaN"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("size %q accepted", bad)
		}
	}
	for d, want := range map[time.Duration]string{30 * 24 * time.Hour: "30d", 5 * time.Minute: "5m", 90 * time.Minute: "1h30m", 0: "0", 1500 * time.Millisecond: "1.5s"} {
		if got := Format(d); got != want {
			t.Errorf("Format(%v) = %q, want %q", d, got, want)
		}
		if back, err := ParseDuration(Format(d)); err != nil || back != d {
			t.Errorf("Format(%v) does not parse back: %v %v", d, back, err)
		}
	}
}

func FuzzParseTimeAndDuration(f *testing.F) {
	f.Add("2026-11-29T03:00:00Z")
	f.Add("PT1H30M")
	f.Add("-PT30M")
	f.Add("2026-11-29T03:00:00.000")
	f.Add("1h")
	f.Fuzz(func(t *testing.T, s string) {
		if tm, _, err := ParseTime(s, time.Unix(1_800_000_000, 0)); err == nil && tm.IsZero() {
			t.Fatalf("%q: zero time accepted", s)
		}
		if d, err := ParseDuration(s); err == nil && ((d < 0) != strings.HasPrefix(strings.TrimSpace(s), "-") && d != 0) {
			t.Fatalf("%q: duration %v out of range or with the wrong sign", s, d)
		}
	})
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1GiB", "500MiB", "2GB", "100k", "12345", "1.5g", "-1k", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseSize(s); err == nil && n < 0 {
			t.Fatalf("%q: negative size %d", s, n)
		}
	})
}
