package commands

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// Helpers shared by the assignment, takeover and watch commands.

// readAssignmentFile reads one assignment and prints its warnings.
func trReadAssignment(g *Globals, path string) (*volume.Assignment, []volume.Finding, error) {
	a, fs, err := volume.ReadAssignment(path)
	if err != nil {
		return nil, nil, err
	}
	g.WarnFindings(fs)
	return a, fs, nil
}

// knownGroupsFromVolume lists offset-file group names when a volume is
// given; a volume that cannot be resolved yields nothing and a warning.
func trOffsetGroups(g *Globals) []string {
	if !g.HasVolume() {
		return nil
	}
	l, err := g.Layout()
	if err != nil {
		g.Warnf("offset files not listed: %v", err)
		return nil
	}
	names, err := l.KnownOffsetGroups()
	if err != nil {
		g.Warnf("offset files not fully listed: %v", err)
	}
	return names
}

// bar draws a horizontal bar of value/max over width cells with eighth
// blocks, padded to width.
func trBar(value, max, width int) string {
	if width <= 0 {
		return ""
	}
	if max <= 0 || value <= 0 {
		return strings.Repeat(" ", width)
	}
	eighths := int(math.Round(float64(value) / float64(max) * float64(width*8)))
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
	b.WriteString(strings.Repeat(" ", trMax0(width-cells)))
	return b.String()
}

func trMax0(n int) int {
	if n < 0 {
		return 0
	}
	return n
}

// padRight pads s to n display cells (runes; the text here is ASCII or
// block characters, each one cell).
func trPad(s string, n int) string {
	c := utf8.RuneCountInString(s)
	if c >= n {
		return s
	}
	return s + strings.Repeat(" ", n-c)
}

// trPaint wraps s in an ANSI colour when colour is on (render's Paint: the
// only colour sequences the human writer lets through).
func trPaint(p *render.Printer, code, s string) string { return p.Paint(code, s) }

const (
	trRed    = "31"
	trYellow = "33"
	trGreen  = "32"
	trBold   = "1"
	trDim    = "2"
)

// trSafe makes a hostile name printable on one line (render.Clean:
// control, C1 and bidi characters and invalid UTF-8 escaped), very long
// names shortened for tables.
func trSafe(s string, limit int) string {
	s = render.Clean(s)
	if limit > 0 && utf8.RuneCountInString(s) > limit {
		r := []rune(s)
		s = string(r[:limit-1]) + "…"
	}
	return s
}

// ago renders how long ago t was, for people.
func trAgo(now, t time.Time) string {
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

func trPlural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func trLines(w io.Writer, lines ...string) error {
	for _, l := range lines {
		if _, err := io.WriteString(w, l+"\n"); err != nil {
			return err
		}
	}
	return nil
}
