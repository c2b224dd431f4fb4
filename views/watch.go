package views

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/observe/watchrun"
	"github.com/kaasctl/kaasctl/render"
)

// WatchOnceOutput is the current version's line (and the journal), or a
// row per broker with the groups it coordinates.
func WatchOnceOutput(view watchrun.WatchOnceView, placements []inspect.Placement) render.Output {
	t := render.NewTable("BROKER", "GROUPS")
	for _, bc := range view.Coordinators {
		name := bc.Broker
		if name == "" {
			name = "(none)"
		}
		t.Add(name, strconv.Itoa(bc.Groups))
	}
	return render.Output{Data: view, Items: view.Coordinators, Table: t, Human: func(p *render.Printer) error {
		lines := []string{versionLine(p, view.Version, "current version: "+placementSummary(placements))}
		if view.Journal != "" {
			lines = append(lines, "journal: "+view.Journal)
		}
		return render.Lines(p.Out, lines...)
	}}
}

// WatchOut is where a watch prints: json and yaml print the whole view
// when the watch ends; the other formats stream each item through
// render.Stream as it comes, and the first failed write (a closed pipe)
// stops the watch (stop) and is what the watch returns.
type WatchOut struct {
	p    *render.Printer
	s    *render.Stream // nil for json and yaml
	err  error
	stop context.CancelFunc
	// gw and bw are the group and broker column widths so far (a
	// followed assignment's moves).
	gw, bw int
}

// streaming reports whether items are written as they come (and no
// write has failed).
func (w *WatchOut) streaming() bool { return w.s != nil && w.err == nil }

// Stop ends the watch.
func (w *WatchOut) Stop() { w.stop() }

// AtEnd reports whether the format prints the whole view at the end.
func (w *WatchOut) AtEnd() bool { return w.s == nil }

// event writes one event (jsonl: a line; csv: its rows).
func (w *WatchOut) event(v any, rows ...[]string) {
	if w.streaming() {
		w.err = w.s.Event(v, rows...)
	}
}

// lines writes human lines (names cleaned, colour kept).
func (w *WatchOut) lines(ls ...string) {
	if w.streaming() {
		w.err = w.s.Lines(ls...)
	}
}

// Flush pushes out what was written; a failed write stops the watch.
func (w *WatchOut) Flush() {
	if w.streaming() {
		w.err = w.s.Flush()
	}
	if w.err != nil {
		w.stop()
	}
}

// End prints the whole view for json and yaml; for the other formats it
// returns the first write error.
func (w *WatchOut) End(view any) error {
	if w.err != nil {
		return w.err
	}
	if w.AtEnd() {
		return w.p.Print(render.Output{Data: view})
	}
	return nil
}

// Version streams one followed version: its moves (jsonl, csv), or its
// line and one per move (table, wide).
func (w *WatchOut) Version(fv inspect.FollowedVersion) {
	if !w.streaming() {
		return // json and yaml: printed at the end
	}
	switch p := w.p; p.Format {
	case render.JSONL:
		for _, e := range fv.Events {
			w.event(e)
		}
	case render.CSV:
		for _, e := range fv.Events {
			w.event(e, []string{render.Timestamp(e.Time), strconv.FormatInt(e.ControllerEpoch, 10), strconv.FormatInt(e.AssignmentVersion, 10),
				e.Group, e.From, e.To, string(e.Cause), string(e.Evidence), e.Detail})
		}
	default:
		for _, e := range fv.Events {
			w.gw = max(w.gw, min(40, len(render.Shorten(e.Group, 40))))
			w.bw = max(w.bw, len(e.From), len(e.To))
		}
		summary := render.Plural(len(fv.Events), "move", "moves")
		if fv.First {
			summary = "current version: " + placementSummary(fv.Placements)
		}
		lines := []string{versionLine(p, fv.Version, summary)}
		for _, e := range fv.Events {
			lines = append(lines, traceEventLine(p, e, w.gw, w.bw))
		}
		w.lines(lines...)
	}
	w.Flush()
}

// Changes streams offset-file changes: rows (jsonl, csv), or a line per
// change and one per anomaly (table, wide).
func (w *WatchOut) Changes(cs []watchrun.OffsetWatchEvent) {
	if !w.streaming() {
		return // json and yaml: printed at the end
	}
	for _, e := range cs {
		if f := w.p.Format; f == render.JSONL || f == render.CSV {
			w.event(e, watchEventRows(e)...)
		} else {
			w.lines(watchEventLines(w.p, e)...)
		}
	}
	w.Flush()
}

// Member writes one membership event of watch --offsets with brokers: its
// row (jsonl, csv) or its line (table, wide); Flush pushes it out.
func (w *WatchOut) Member(ev watchrun.MemberWatchEvent) {
	if !w.streaming() {
		return // json and yaml: printed at the end
	}
	if f := w.p.Format; f == render.JSONL || f == render.CSV {
		w.event(ev, []string{render.Timestamp(ev.Time), ev.Group, ev.Kind, "", "", ev.Condition, ev.Detail})
		return
	}
	body := ev.Detail
	if ev.Kind == watch.EvCondition {
		word := "CHURN"
		if !ev.Entered {
			word = "CHURN over"
		}
		body = w.p.Paint(render.Red, word) + "  " + ev.Detail
	}
	w.lines(render.Clock(ev.Time, false) + "  " + render.Shorten(ev.Group, 60) + "  " + body)
}

// NamesGaps reports whether a version's line names the gap before it
// (table, wide).
func (w *WatchOut) NamesGaps() bool { return w.p.Format == render.Table || w.p.Format == render.Wide }

// WatchOutput is what watchrun.Env.Output is on p: a WatchOut with the
// csv header of the run's kind.
func WatchOutput(p *render.Printer) func(watchrun.OutKind, context.CancelFunc) watchrun.Out {
	return func(kind watchrun.OutKind, stop context.CancelFunc) watchrun.Out {
		hdr := WatchCSVHeader
		if kind == watchrun.OffsetsOut {
			hdr = WatchOffsetsCSVHeader
		}
		return NewWatchOut(p, hdr, stop)
	}
}

var _ watchrun.Out = (*WatchOut)(nil)

// NewWatchOut starts the stream; csvHeader is the csv header row.
func NewWatchOut(p *render.Printer, csvHeader []string, stop context.CancelFunc) *WatchOut {
	w := &WatchOut{p: p, stop: stop, gw: 12, bw: 8}
	if p.Format == render.JSON || p.Format == render.YAML {
		return w
	}
	var hdr []string
	if p.Format == render.CSV {
		hdr = csvHeader
	}
	w.s = render.NewStream(p.Out, p.Format, hdr, "").WithGeneration(p)
	w.err = w.s.Flush()
	return w
}

var WatchCSVHeader = []string{"TIME", "EPOCH", "VERSION", "GROUP", "FROM", "TO", "CAUSE", "EVIDENCE", "DETAIL"}

// brokersText is a version's brokers with those that joined (+) and left
// (-) since the previous one.
func brokersText(v inspect.TraceVersion) string {
	bs := "brokers " + strings.Join(v.Brokers, " ")
	var delta []string
	for _, j := range v.Joined {
		delta = append(delta, "+"+j)
	}
	for _, l := range v.Left {
		delta = append(delta, "-"+l)
	}
	if len(delta) > 0 {
		bs += " (" + strings.Join(delta, " ") + ")"
	}
	return bs
}

// versionLine is a followed version's line: time, epoch and version,
// controller, brokers, summary and a gap before it.
func versionLine(p *render.Printer, v inspect.TraceVersion, summary string) string {
	var info []string
	if v.Controller != "" {
		info = append(info, "controller "+v.Controller)
	}
	info = append(info, brokersText(v), summary)
	if v.MissingBefore > 0 {
		info = append(info, p.Paint(render.Yellow, v.Gap))
	}
	return p.Paint(render.Bold, render.Clock(v.Time, true)+"  "+fmt.Sprintf("epoch %d v%d", v.ControllerEpoch, v.AssignmentVersion)) + "  " + strings.Join(info, " · ")
}

var WatchOffsetsCSVHeader = []string{"TIME", "GROUP", "KIND", "PARTITION", "OFFSET", "ANOMALY", "DETAIL"}

func watchEventRows(e watchrun.OffsetWatchEvent) [][]string {
	t := render.Timestamp(e.Time)
	var rows [][]string
	for _, k := range inspect.SortedOffsetKeys(e.Changed) {
		rows = append(rows, []string{t, e.Group, e.Kind, k, strconv.FormatInt(e.Changed[k], 10), "", ""})
	}
	for _, k := range e.Removed {
		rows = append(rows, []string{t, e.Group, e.Kind, k, "", "", "removed"})
	}
	for _, a := range e.Anomalies {
		rows = append(rows, []string{t, e.Group, e.Kind, a.Partition, "", a.Kind, a.Detail})
	}
	if len(rows) == 0 {
		rows = append(rows, []string{t, e.Group, e.Kind, "", "", "", e.Problem})
	}
	return rows
}

// watchEventLines is one line per change, then one per anomaly.
func watchEventLines(p *render.Printer, e watchrun.OffsetWatchEvent) []string {
	head := render.Clock(e.Time, false) + "  " + render.Shorten(e.Group, 60) + "  "
	var parts []string
	for _, k := range inspect.SortedOffsetKeys(e.Changed) {
		parts = append(parts, k+"="+strconv.FormatInt(e.Changed[k], 10))
	}
	for _, k := range e.Removed {
		parts = append(parts, k+" removed")
	}
	body := e.Kind
	switch e.Kind {
	case watch.RecCorrupt:
		body = p.Paint(render.Red, "unreadable: "+e.Problem)
	case watch.RecMissing:
		body = "file removed"
	}
	if len(parts) > 0 {
		const maxParts = 12
		if len(parts) > maxParts {
			parts = append(parts[:maxParts], fmt.Sprintf("… %d more", len(parts)-maxParts))
		}
		body += "  " + strings.Join(parts, " ")
	}
	lines := []string{head + body}
	for _, a := range e.Anomalies {
		lines = append(lines, "    "+p.Paint(render.Red, a.Kind)+"  "+a.Detail)
	}
	return lines
}
