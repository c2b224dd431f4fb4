package render

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Cell helpers for human tables and summary lines: dashes for empty cells,
// counts with their noun, ages, bars and sparklines.

// Dash is s, or "-" when s is empty.
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// OptInt is *p, or "-" when p is nil.
func OptInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

// Offset is an offset, or "-" when it is negative (none known).
func Offset(n int64) string {
	if n < 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

// Plural is n with its noun: "1 group", "2 groups".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Ago says how long before now t was, for people ("" for a zero t).
func Ago(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	if d < 0 {
		return "in the future (clock skew?)"
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm ago", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// Timestamp is t in UTC to the millisecond for cells and machine rows
// ("2026-11-29T09:08:36.100Z"), "" for a zero t.
func Timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// Clock is t in UTC for human lines: the time of day to the millisecond,
// with the date in front when withDate; "(time unknown)" for a zero t.
func Clock(t time.Time, withDate bool) string {
	if t.IsZero() {
		return "(time unknown)"
	}
	if withDate {
		return t.UTC().Format("2006-01-02 15:04:05.000")
	}
	return t.UTC().Format("15:04:05.000")
}

// Pad pads s to n display cells (runes; the text here is ASCII or
// block characters, each one cell).
func Pad(s string, n int) string {
	c := utf8.RuneCountInString(s)
	if c >= n {
		return s
	}
	return s + strings.Repeat(" ", n-c)
}

// Shorten makes a hostile name printable on one line (Clean:
// control, C1 and bidi characters and invalid UTF-8 escaped), very long
// names shortened for tables.
func Shorten(s string, limit int) string {
	s = Clean(s)
	if limit > 0 && utf8.RuneCountInString(s) > limit {
		r := []rune(s)
		s = string(r[:limit-1]) + "…"
	}
	return s
}

// Bar draws a horizontal bar of value/top over width cells with eighth
// blocks, padded to width.
func Bar(value, top, width int) string {
	if width <= 0 {
		return ""
	}
	if top <= 0 || value <= 0 {
		return strings.Repeat(" ", width)
	}
	eighths := int(math.Round(float64(value) / float64(top) * float64(width*8)))
	if eighths < 1 {
		eighths = 1
	}
	full := eighths / 8
	rem := eighths % 8
	var b strings.Builder
	b.WriteString(strings.Repeat("█", full))
	cells := full
	if rem > 0 {
		b.WriteRune([]rune("▏▎▍▌▋▊▉")[rem-1])
		cells++
	}
	b.WriteString(strings.Repeat(" ", max(0, width-cells)))
	return b.String()
}

// Sparkline draws a partition's committed offset over [t0, t1] in width
// cells: the last value in each cell, scaled between the series' min and
// max; '·' where the partition was not in the file, '!' where an anomaly
// was flagged, ' ' before the first point.
func Sparkline(times []time.Time, vals []*int64, marked []bool, t0, t1 time.Time, width int) string {
	if len(times) == 0 {
		return ""
	}
	const bars = "▁▂▃▄▅▆▇█"
	blocks := []rune(bars)
	var lo, hi int64
	seen := false
	for _, v := range vals {
		if v == nil {
			continue
		}
		if !seen || *v < lo {
			lo = *v
		}
		if !seen || *v > hi {
			hi = *v
		}
		seen = true
	}
	span := t1.Sub(t0)
	cell := func(t time.Time) int {
		if span <= 0 {
			return width - 1
		}
		i := int(float64(t.Sub(t0)) / float64(span) * float64(width-1))
		return min(max(i, 0), width-1)
	}
	out := make([]rune, width)
	for i := range out {
		out[i] = ' '
	}
	j := 0
	var cur *int64
	started := false
	mark := false
	for i := 0; i < width; i++ {
		for j < len(times) && cell(times[j]) <= i {
			cur, started = vals[j], true
			mark = mark || marked[j]
			j++
		}
		switch {
		case !started:
		case mark:
			out[i] = '!'
			mark = false
		case cur == nil:
			out[i] = '·'
		case hi == lo:
			out[i] = blocks[len(blocks)-1]
		default:
			out[i] = blocks[int(float64(*cur-lo)/float64(hi-lo)*float64(len(blocks)-1))]
		}
	}
	return string(out)
}

// Lines writes each line and a newline to w, stopping at the first write
// error.
func Lines(w io.Writer, lines ...string) error {
	for _, l := range lines {
		if _, err := io.WriteString(w, l+"\n"); err != nil {
			return err
		}
	}
	return nil
}
