package views

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render"
)

type TraceView struct {
	Sources inspect.TraceSources `json:"sources"`
	Filters []string             `json:"filters"`
	*inspect.Trace
}

// TraceNoVolumeHint says what a trace without a volume may miss: the only
// groups known are those named in explicit entries and logs, and a group
// placed by the hash tier is recomputed only when its name is known.
func TraceNoVolumeHint(tr *inspect.Trace) string {
	if len(tr.Events) == 0 {
		return fmt.Sprintf("'no coordinator moves' covers only the %s named in explicit entries or in the logs; any other group placed by the hash tier may have moved", render.Plural(tr.Groups, "group", "groups"))
	}
	return fmt.Sprintf("the %s followed are those named in explicit entries or in the logs (moves shown above included); any other group placed by the hash tier is not recomputed and may have moved too", render.Plural(tr.Groups, "group", "groups"))
}

// TraceOutput is the trace: a line per version and move for people, a
// row per event in the tables.
func TraceOutput(view TraceView) render.Output {
	t := render.NewTable("TIME", "EPOCH", "VERSION", "GROUP", "FROM", "TO", "CAUSE", "EVIDENCE", "DETAIL+", "LOGS+")
	for _, e := range view.Events {
		t.Add(render.Timestamp(e.Time), strconv.FormatInt(e.ControllerEpoch, 10), strconv.FormatInt(e.AssignmentVersion, 10), e.Group, e.From, e.To,
			string(e.Cause), string(e.Evidence), e.Detail, strings.Join(e.Logs, " "))
	}
	return render.Output{Data: view, Items: view.Events, Table: t, Human: func(p *render.Printer) error {
		return renderTrace(p, view)
	}}
}

// dayStamp prints times with the date once: on the first line and when
// the day changes.
type dayStamp struct{ day string }

func (d *dayStamp) stamp(t time.Time) string {
	day := ""
	if !t.IsZero() {
		day = t.UTC().Format("2006-01-02")
	}
	s := render.Clock(t, day != d.day && day != "")
	if day != "" {
		d.day = day
	}
	return s
}

func renderTrace(p *render.Printer, v TraceView) error {
	tr := v.Trace
	lines := []string{p.Paint(render.Bold, traceHead(v))}
	var days dayStamp
	gw, bw := 5, 4
	for _, e := range tr.Events {
		gw = max(gw, min(40, len(render.Shorten(e.Group, 40))))
		bw = max(bw, len(e.From), len(e.To))
	}
	at, orphans := tr.EventsByVersion()
	for _, x := range tr.Versions {
		lines = append(lines, "", p.Paint(render.Bold, days.stamp(x.Time)+"  "+fmt.Sprintf("epoch %d v%d", x.ControllerEpoch, x.AssignmentVersion))+"  "+strings.Join(traceVersionInfo(p, tr, x), " · "))
		for _, n := range x.Notes {
			lines = append(lines, p.Paint(render.Dim, fmt.Sprintf("    ↳ %s %s  %s  [%s]", render.Clock(n.Time, false), render.Dash(n.Broker), n.Text, n.Ref)))
		}
		for _, e := range at[x.KeyOf()] {
			lines = append(lines, traceEventLine(p, e, gw, bw))
		}
	}
	if len(orphans) > 0 {
		lines = append(lines, "", p.Paint(render.Bold, "moves seen only in logs, at versions with no snapshot"))
		for _, e := range orphans {
			lines = append(lines, "  "+days.stamp(e.Time)+" epoch "+strconv.FormatInt(e.ControllerEpoch, 10)+" v"+strconv.FormatInt(e.AssignmentVersion, 10))
			lines = append(lines, traceEventLine(p, e, gw, bw))
		}
	}
	lines = append(lines, "")
	lines = append(lines, traceFooter(p, tr, len(v.Filters) > 0)...)
	return render.Lines(p.Out, lines...)
}

// traceHead is the trace's first line: groups, versions, logs.
func traceHead(v TraceView) string {
	head := fmt.Sprintf("takeover trace · %s", render.Plural(v.Groups, "group", "groups"))
	if snaps := v.SnapshotVersions(); len(snaps) > 0 {
		first, last := snaps[0], snaps[len(snaps)-1]
		head += fmt.Sprintf(" · %s (epoch %d v%d … epoch %d v%d)", render.Plural(len(snaps), "assignment version", "assignment versions"),
			first.ControllerEpoch, first.AssignmentVersion, last.ControllerEpoch, last.AssignmentVersion)
	}
	if len(v.Sources.Logs) > 0 {
		head += fmt.Sprintf(" · %s (%d lines, %d used)", render.Plural(len(v.Sources.Logs), "log", "logs"), v.Sources.LogStats.Lines, v.Sources.LogLinesFound)
	}
	return head
}

// traceVersionInfo is what a version's line says after its epoch and
// version: controller, brokers, moves, the gap before it.
func traceVersionInfo(p *render.Printer, tr *inspect.Trace, x inspect.TraceVersion) []string {
	var info []string
	if x.Controller != "" {
		info = append(info, "controller "+x.Controller)
	}
	switch {
	case x.Source == "log":
		info = append(info, "known only from logs (no snapshot)")
	case x.First:
		info = append(info, brokersText(x), "first version: "+placementSummary(tr.Initial))
	default:
		info = append(info, brokersText(x), render.Plural(x.Moves, "move", "moves"))
	}
	if x.MissingBefore > 0 {
		info = append(info, p.Paint(render.Yellow, x.Gap))
	} else if x.Gap != "" {
		info = append(info, p.Paint(render.Dim, x.Gap))
	}
	return info
}

// traceFooter sums the moves up, and warns of versions never seen.
func traceFooter(p *render.Printer, tr *inspect.Trace, filtered bool) []string {
	var lines []string
	switch {
	case len(tr.Events) == 0 && filtered:
		lines = append(lines, "no coordinator moves for the groups and times selected")
	case len(tr.Events) == 0:
		lines = append(lines, "no coordinator moves")
	default:
		var parts []string
		for _, cc := range tr.EventsBy {
			parts = append(parts, fmt.Sprintf("%s %d", cc.Cause, cc.Count))
		}
		lines = append(lines, fmt.Sprintf("%s: %s · %d confirmed by broker logs · %d seen only in logs",
			render.Plural(len(tr.Events), "move", "moves"), strings.Join(parts, ", "), tr.Confirmed, tr.LogOnlyMoves))
	}
	if tr.MissedVersions > 0 {
		lines = append(lines, p.Paint(render.Yellow, fmt.Sprintf("%s never seen: a coordinator a group had only in a missing version is not in this trace",
			render.Plural(int(tr.MissedVersions), "assignment version", "assignment versions"))))
	}
	return lines
}

func traceEventLine(p *render.Printer, e inspect.TraceEvent, gw, bw int) string {
	cause := render.Pad(string(e.Cause), 19)
	switch e.Cause {
	case inspect.CauseBrokerLeft, inspect.CauseControllerFailover:
		cause = p.Paint(render.Red, cause)
	case inspect.CauseUnknown:
		cause = p.Paint(render.Yellow, cause)
	}
	s := "    " + render.Pad(render.Shorten(e.Group, 40), gw) + "  " + render.Pad(render.Dash(e.From), bw) + " → " + render.Pad(render.Dash(e.To), bw) +
		"  " + cause + " " + render.Pad(string(e.Evidence), 10)
	if p.Wide() {
		s += "  " + e.Detail
		if len(e.Logs) > 0 {
			s += "  [" + strings.Join(e.Logs, " ") + "]"
		}
	}
	return strings.TrimRight(s, " ")
}

// placementSummary is "N groups (b1 3, b2 4)": groups per coordinator.
func placementSummary(ps []inspect.Placement) string {
	if len(ps) == 0 {
		return "no groups known"
	}
	counts := map[string]int{}
	for _, p := range ps {
		counts[render.Dash(p.Coordinator)]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	return render.Plural(len(ps), "group", "groups") + " (" + strings.Join(parts, ", ") + ")"
}

// TraceFilters names the filters applied (takeover trace's --group,
// --since, --until), for the view.
func TraceFilters(groups []string, since, until time.Time) []string {
	var out []string
	for _, gname := range groups {
		out = append(out, "group "+gname)
	}
	if !since.IsZero() {
		out = append(out, "since "+since.UTC().Format(time.RFC3339))
	}
	if !until.IsZero() {
		out = append(out, "until "+until.UTC().Format(time.RFC3339))
	}
	return out
}
