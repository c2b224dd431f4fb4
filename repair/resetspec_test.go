package repair

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestParseDateTime(t *testing.T) {
	t.Parallel()
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
		got, note, err := ParseDateTime(tc.in)
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
		if _, _, err := ParseDateTime(bad); err == nil {
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

func TestParseTopicScope(t *testing.T) {
	t.Parallel()
	ts, err := ParseTopicScope("orders:5,0,2,2")
	if err != nil || ts.Topic != "orders" || len(ts.Partitions) != 3 || ts.Partitions[0] != 0 || ts.Partitions[2] != 5 {
		t.Errorf("%+v %v", ts, err)
	}
	if ts, err := ParseTopicScope("orders"); err != nil || ts.Partitions != nil {
		t.Errorf("%+v %v", ts, err)
	}
	for _, bad := range []string{"", ":1", "orders:", "orders:a", "orders:-1", "a/b", "#x"} {
		if _, err := ParseTopicScope(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestResetCSVRoundTrip(t *testing.T) {
	t.Parallel()
	rows := []PlanRow{
		{Group: "g1", Topic: "orders", Partition: 0, New: 5},
		{Group: "g1", Topic: "orders", Partition: 1, New: 7},
		{Group: "g2", Topic: "audit", Partition: 0, New: 0},
		{Group: "g2", Topic: "audit", Partition: 1, Error: "nope"},
	}
	for _, multi := range []bool{false, true} {
		var b bytes.Buffer
		if err := ExportCSV(&b, rows[:2+2*btoi(multi)], multi); err != nil {
			t.Fatal(err)
		}
		fp, err := ParseResetCSV(&b, "plan.csv")
		if err != nil {
			t.Fatal(err)
		}
		if fp.MultiGroup != multi {
			t.Errorf("layout detection: %v", fp.MultiGroup)
		}
		if got := fp.ForGroup("g1"); len(got) != 2 || got[1].Offset != 7 {
			t.Errorf("g1 rows: %+v", got)
		}
		if multi && (len(fp.ForGroup("g2")) != 1 || len(fp.Groups()) != 2) {
			t.Errorf("g2 rows: %+v", fp)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestParseResetCSVErrors(t *testing.T) {
	t.Parallel()
	ok := "topic,partition,offset\n# a comment\norders,0,5\n\n"
	if fp, err := ParseResetCSV(strings.NewReader(ok), "f"); err != nil || len(fp.Rows) != 1 {
		t.Errorf("header/comment/blank: %+v %v", fp, err)
	}
	for in, want := range map[string]string{
		"":                           "no offsets",
		"orders,0\n":                 "2 fields",
		"orders,x,5\n":               `partition "x"`,
		"orders,0,-5\n":              `offset "-5"`,
		"orders,0,5\norders,0,6\n":   "listed twice",
		"orders,0,5\ng,orders,1,6\n": "one file holds one layout",
		",0,5\n":                     "not a valid topic name",
		"\"unterminated,0,5\n":       "f:",
	} {
		_, err := ParseResetCSV(strings.NewReader(in), "f")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func FuzzParseResetCSV(f *testing.F) {
	f.Add("orders,0,5\norders,1,6\n")
	f.Add("group,topic,partition,offset\ng,orders,0,5\n")
	f.Add("\"a\nb\",0,1\n")
	f.Fuzz(func(t *testing.T, in string) {
		fp, err := ParseResetCSV(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		var rows []PlanRow
		for _, r := range fp.Rows {
			if r.Offset < 0 || r.Partition < 0 || r.Topic == "" {
				t.Fatalf("bad row accepted: %+v", r)
			}
			rows = append(rows, PlanRow{Group: r.Group, Topic: r.Topic, Partition: r.Partition, New: r.Offset})
		}
		var b bytes.Buffer
		if err := ExportCSV(&b, rows, fp.MultiGroup); err != nil {
			t.Fatal(err)
		}
		back, err := ParseResetCSV(&b, "fuzz.csv")
		if err != nil || len(back.Rows) != len(fp.Rows) {
			t.Fatalf("export did not round-trip: %v (%d vs %d rows)", err, len(back.Rows), len(fp.Rows))
		}
	})
}

func FuzzParseDateTimeAndDuration(f *testing.F) {
	f.Add("2026-11-29T03:00:00Z")
	f.Add("PT1H30M")
	f.Add("-PT30M")
	f.Add("2026-11-29T03:00:00.000")
	f.Add("1h")
	f.Fuzz(func(t *testing.T, s string) {
		if tm, _, err := ParseDateTime(s); err == nil && tm.IsZero() {
			t.Fatalf("%q: zero time accepted", s)
		}
		if d, err := ParseDuration(s); err == nil && (d > 101*365*24*time.Hour || d < -101*365*24*time.Hour || (d < 0) != strings.HasPrefix(strings.TrimSpace(s), "-") && d != 0) {
			t.Fatalf("%q: duration %v out of range or with the wrong sign", s, d)
		}
	})
}
