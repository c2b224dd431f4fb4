package render

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestCells(t *testing.T) {
	t.Parallel()
	seven := int64(7)
	for _, c := range []struct{ got, want string }{
		{Dash(""), "-"},
		{Dash("x"), "x"},
		{OptInt(nil), "-"},
		{OptInt(&seven), "7"},
		{Offset(-1), "-"},
		{Offset(0), "0"},
		{Offset(42), "42"},
		{Plural(1, "group", "groups"), "1 group"},
		{Plural(0, "group", "groups"), "0 groups"},
		{Plural(2, "more", "more"), "2 more"},
		{Pad("ab", 4), "ab  "},
		{Pad("█▌", 3), "█▌ "},
		{Pad("abcdef", 3), "abcdef"},
		{Shorten("a\x1bb", 0), `a\x1bb`},
		{Shorten("abcdefgh", 5), "abcd…"},
		{Bar(0, 10, 4), "    "},
		{Bar(10, 10, 4), "████"},
		{Bar(5, 10, 4), "██  "},
		{Bar(1, 100, 4), "▏   "},
		{Bar(3, 0, 2), "  "},
		{Bar(3, 3, 0), ""},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestAgo(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{30 * time.Second, "30s ago"},
		{5 * time.Minute, "5m ago"},
		{2*time.Hour + 3*time.Minute, "2h03m ago"},
		{72 * time.Hour, "3d ago"},
		{-time.Minute, "in the future (clock skew?)"},
	} {
		if got := Ago(now, now.Add(-c.d)); got != c.want {
			t.Errorf("%v: %q, want %q", c.d, got, c.want)
		}
	}
	if got := Ago(now, time.Time{}); got != "" {
		t.Errorf("zero time: %q", got)
	}
}

func TestSparkline(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(0, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	v := func(n int64) *int64 { return &n }
	times := []time.Time{at(0), at(5), at(10)}
	// Rising values: lowest to highest block; a missing partition is '·';
	// an anomaly '!'.
	if got := Sparkline(times, []*int64{v(0), v(50), v(100)}, []bool{false, false, false}, at(0), at(10), 3); got != "▁▄█" {
		t.Errorf("rising: %q", got)
	}
	if got := Sparkline(times, []*int64{v(1), nil, v(1)}, []bool{false, false, true}, at(0), at(10), 3); got != "█·!" {
		t.Errorf("gap and mark: %q", got)
	}
	// Nothing before the first point.
	if got := Sparkline(times[2:], []*int64{v(4)}, []bool{false}, at(0), at(10), 3); got != "  █" {
		t.Errorf("late start: %q", got)
	}
	if got := Sparkline(nil, nil, nil, at(0), at(10), 3); got != "" {
		t.Errorf("no points: %q", got)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

func TestLinesStopsAtTheFirstWriteError(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := Lines(&b, "a", "b"); err != nil || b.String() != "a\nb\n" {
		t.Fatalf("%q %v", b.String(), err)
	}
	if err := Lines(&failWriter{n: 1}, "a", "b", "c"); err == nil {
		t.Fatal("a failed write was not reported")
	}
}

func TestTimestampAndClock(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 29, 10, 8, 36, 100_000_000, time.FixedZone("CET", 3600))
	for _, c := range []struct{ got, want string }{
		{Timestamp(at), "2026-11-29T09:08:36.100Z"},
		{Timestamp(time.Time{}), ""},
		{Clock(at, false), "09:08:36.100"},
		{Clock(at, true), "2026-11-29 09:08:36.100"},
		{Clock(time.Time{}, true), "(time unknown)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
