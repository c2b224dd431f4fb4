package views

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render"
)

func optInt(p *int64) string {
	if p == nil {
		return "?"
	}
	return strconv.FormatInt(*p, 10)
}

func OrNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// stateCell is a group's live state in a table, the same in groups list and
// groups describe: "-" when there is none (offline, or a group its
// coordinator does not hold: issue fileOnly).
func stateCell(state string) string {
	if state == "" {
		return "-"
	}
	return state
}

// totalLagText is a group's total lag for the human view, without the
// words saying what it is measured against.
func totalLagText(known bool, total int64, unknown int) string {
	if !known {
		return "unknown"
	}
	lag := strconv.FormatInt(total, 10)
	if unknown > 0 {
		lag += fmt.Sprintf(" (+%s unknown)", render.Plural(unknown, "partition", "partitions"))
	}
	return lag
}

// WriteKV prints a two-column key/value block without a header.
func WriteKV(p *render.Printer, t *render.TableData) error {
	w := 0
	for _, r := range t.Rows {
		w = max(w, utf8.RuneCountInString(r[0]))
	}
	// One write for the block (describe --all prints 100,000 of them).
	var b strings.Builder
	for _, r := range t.Rows {
		b.WriteString("  " + render.Pad(r[0], w) + "  " + render.Dash(r[1]) + "\n")
	}
	_, err := io.WriteString(p.Out, b.String())
	return err
}

// cellName is a group id in a table cell for format f: shortened past 64
// bytes in the default table only; -o wide shows it whole (escaped by the
// printer like every human cell) and csv carries it unchanged, like json.
func cellName(f render.Format, s string) string {
	if f != render.Table {
		return s
	}
	d := render.Clean(s)
	if len(d) <= 64 {
		return s
	}
	cut := 56
	for cut > 0 && !utf8.RuneStart(d[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(%d bytes)", d[:cut], len(s))
}

// FilteredTable prints a list table for people: emptyMsg when nothing is
// shown, else the table and, when a filter hid some, "N of M <noun> shown".
func FilteredTable(p *render.Printer, t *render.TableData, shown, total int, noun, emptyMsg string) error {
	if shown == 0 {
		fmt.Fprintf(p.Out, "%s\n", emptyMsg)
		return nil
	}
	if err := p.Table(t); err != nil {
		return err
	}
	if shown != total {
		fmt.Fprintf(p.Out, "%d of %d %s shown\n", shown, total, noun)
	}
	return nil
}

// drainSummary is the time to drain for humans, with the window it used.
func drainSummary(f *inspect.GroupForecast) string {
	if f == nil {
		return "- (observe with --drain-window D: the estimate needs " + strconv.Itoa(inspect.MinForecastSamples) + " observations)"
	}
	d := f.Drain
	if d == nil || !d.Known {
		return "- (fewer than " + strconv.Itoa(inspect.MinForecastSamples) + " observations with a known lag)"
	}
	return fmt.Sprintf("%s  (consumed %.1f/s, produced %.1f/s over %s, %d observations)", d.Text(), d.ConsumeRate, d.ProduceRate,
		inspect.FormatSeconds(d.WindowSeconds), d.Samples)
}

// retentionSummary is the retention forecast for humans.
func retentionSummary(f *inspect.GroupForecast) string {
	if f == nil || f.Retention == nil {
		return "-"
	}
	r := f.Retention
	switch {
	case !r.Known:
		return fmt.Sprintf("no log start advancing toward an unread record over %s (kaas moves it only on DeleteRecords)", inspect.FormatSeconds(r.WindowSeconds))
	case r.Breached:
		return "records of " + r.Partition + " were deleted before the group read them (committed offset below the log start)"
	}
	for _, p := range r.Partitions {
		if p.Partition == r.Partition {
			return fmt.Sprintf("the log start passes the committed offset of %s in %s (log start %d, committed %d, log start +%.1f/s over %s)",
				r.Partition, inspect.FormatSeconds(r.Seconds), p.Start, p.Committed, p.StartRate, inspect.FormatSeconds(r.WindowSeconds))
		}
	}
	return r.Text()
}

// forecastDrainCell is the DRAIN column: the estimate, "not draining",
// "caught up", "keeping up", or "-" (not observed, or too few observations).
func forecastDrainCell(f *inspect.GroupForecast) string {
	if f == nil {
		return "-"
	}
	return f.Drain.Text()
}

// forecastRetentionCell is the RETENTION column.
func forecastRetentionCell(f *inspect.GroupForecast) string {
	if f == nil {
		return "-"
	}
	return f.Retention.Text()
}
