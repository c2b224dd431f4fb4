package commands

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
)

// buildVerdicts fills v with the verdict of every group selected (named,
// or all; --regex) and returns the groups named that were not observed.
func buildVerdicts(g *Globals, o groupsExplainOptions, v *GroupsExplainView, healths []inspect.GroupHealth, last *observe.Observation, moves map[string][]inspect.TraceEvent) []string {
	sel := inspect.SelectHealth(healths, o.names, o.filter)
	obs := map[string]*observe.GroupObs{}
	for i := range last.Groups {
		obs[last.Groups[i].Row.Group] = &last.Groups[i]
	}
	gi := g.Generation()
	if v.Generation != nil {
		gi = *v.Generation
	}
	cmds := inspect.ExplainCommands{Flags: g.GivenFlags(), VolumeFlags: g.volumeFlags(), Journal: o.journal}
	for i := range sel.Groups {
		h := &sel.Groups[i]
		in := inspect.ExplainInput{Group: h.Group, Health: h, Gen: gi, Commands: cmds, Moves: moves[h.Group],
			Lag: inspect.VerdictLag{Messages: h.Lag, Known: h.LagKnown, UnknownPartitions: h.LagUnknown}}
		if gob := obs[h.Group]; gob != nil {
			explainFacts(&in, gob)
		}
		vd := inspect.Explain(in)
		v.Severities[vd.Severity]++
		if o.problemsOnly && vd.Severity == inspect.VerdictOK {
			continue
		}
		v.Groups = append(v.Groups, vd)
	}
	slices.SortStableFunc(v.Groups, func(a, b inspect.Verdict) int {
		if d := inspect.VerdictRank(a.Severity) - inspect.VerdictRank(b.Severity); d != 0 {
			return d
		}
		return strings.Compare(a.Group, b.Group)
	})
	return sel.Missing
}

// explainFacts takes what the last observation says of the group: its
// lag (in seconds too), the read model's incidents and the routing row.
func explainFacts(in *inspect.ExplainInput, gob *observe.GroupObs) {
	in.Row = gob.Row
	in.Lag = inspect.VerdictLag{Messages: gob.Lag, Known: gob.LagKnown, UnknownPartitions: gob.LagUnknown,
		Seconds: gob.LagSeconds, SecondsKnown: gob.LagSecondsKnown}
	for _, inc := range gob.Incidents {
		in.Incidents = append(in.Incidents, inspect.ExplainIncident{Partition: inc.Topic + "/" + strconv.Itoa(int(inc.Partition)), PartitionIncident: inc.PartitionIncident})
	}
	in.GroupIncidents = gob.GroupIncidents
	in.Blockers = gob.Blockers // the read model's, for partitions unmoved since the observation before
}

// volumeFlags are the volume, generation and profile flags given on the
// command line, to repeat in a printed command that reads only the volume.
func (g *Globals) volumeFlags() string {
	var b strings.Builder
	for _, f := range [][2]string{{flagDataDir, g.vin.DataDirFlag}, {flagClusterDir, g.vin.ClusterDirFlag}, {flagKaasVersion, g.vin.KaasVersionFlag}} {
		if f[1] != "" {
			b.WriteString(" --" + f[0] + " " + shellQuote(f[1]))
		}
	}
	if g.conn != nil {
		for _, k := range []string{"profile", "config"} {
			if v := g.conn.flags[k]; v != "" {
				b.WriteString(" --" + k + " " + shellQuote(v))
			}
		}
	}
	return b.String()
}

// explainMoves are the recent coordinator moves of every group observed:
// from the --journal's assignment versions and those the observations
// read, since --moves-since ago.
func explainMoves(g *Globals, o groupsExplainOptions, seen []*volume.Assignment, last *observe.Observation) (map[string][]inspect.TraceEvent, explainMovesSource) {
	src := explainMovesSource{Journal: o.journal}
	if o.movesSince > 0 {
		src.Since = g.Now().Add(-o.movesSince).UTC()
	}
	var snaps []volume.Snapshot
	if o.journal != "" {
		hist := volume.LoadAssignmentHistory([]string{o.journal})
		for _, p := range hist.Problems {
			g.Warnf("%s: %s (skipped)", p.Path, p.Problem)
		}
		snaps = hist.Snapshots
	}
	for _, a := range seen {
		if a == nil || slices.ContainsFunc(snaps, func(s volume.Snapshot) bool {
			return s.Assignment.ControllerEpoch == a.ControllerEpoch && s.Assignment.AssignmentVersion == a.AssignmentVersion
		}) {
			continue
		}
		snaps = append(snaps, volume.Snapshot{Path: "observed", Assignment: a})
	}
	slices.SortFunc(snaps, func(a, b volume.Snapshot) int {
		ae, av := a.Key()
		be, bv := b.Key()
		if ae != be {
			return cmpInt64(ae, be)
		}
		return cmpInt64(av, bv)
	})
	src.Versions = len(snaps)
	out := map[string][]inspect.TraceEvent{}
	if len(snaps) < 2 {
		return out, src
	}
	names := make([]string, len(last.Groups))
	for i := range last.Groups {
		names[i] = last.Groups[i].Row.Group
	}
	tr := inspect.BuildTrace(inspect.TraceInput{Snapshots: snaps, Groups: names, Since: src.Since})
	for _, e := range tr.Events {
		out[e.Group] = append(out[e.Group], e)
	}
	return out, src
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// explainOutput is the verdicts: a few lines per group for people (every
// finding with -o wide), a row per group in csv.
func explainOutput(v GroupsExplainView) render.Output {
	t := render.NewTable("GROUP", "SEVERITY", "SUMMARY", "LAG", "LAG-SECONDS", "DRAIN", "RETENTION", "COORDINATOR", "ANSWERED", "MOVES", "NEXT")
	for _, vd := range v.Groups {
		lag, secs := "-", "-"
		if vd.Lag.Known {
			lag = strconv.FormatInt(vd.Lag.Messages, 10)
		}
		if vd.Lag.SecondsKnown {
			secs = strconv.FormatFloat(vd.Lag.Seconds, 'f', 0, 64)
		}
		next := ""
		if vd.Next != nil {
			next = vd.Next.Command
		}
		t.Add(vd.Group, vd.Severity, vd.Summary, lag, secs, vd.Drain.Text(), vd.Retention.Text(), vd.Coordinator.Computed, vd.Coordinator.Answered,
			strconv.Itoa(len(vd.Moves)), next)
	}
	return render.Output{Data: v, Items: v.Groups, Table: t, Human: func(p *render.Printer) error { return explainHuman(p, v) }}
}

// severityPaint colours a severity for people.
var severityPaint = map[string]string{inspect.VerdictPage: render.Red, inspect.VerdictWarning: render.Yellow, inspect.VerdictOK: render.Green}

func explainHuman(p *render.Printer, v GroupsExplainView) error {
	if len(v.Groups) == 0 {
		fmtf(p.Out, "no groups to explain\n")
	}
	for i, vd := range v.Groups {
		if i > 0 {
			fmtf(p.Out, "\n")
		}
		explainVerdictLines(p, vd)
	}
	var counts []string
	for _, s := range inspect.VerdictSeverities {
		counts = append(counts, fmt.Sprintf("%d %s", v.Severities[s], s))
	}
	gen := ""
	if v.Generation != nil {
		gen = "; " + v.Generation.Short()
	}
	fmtf(p.Out, "\n%s (%s, window %s)%s\n", strings.Join(counts, ", "), v.Source, v.Window, gen)
	return nil
}

// explainVerdictLines is one group's few lines.
func explainVerdictLines(p *render.Printer, vd inspect.Verdict) {
	fmtf(p.Out, "%s  %s  %s\n", render.Shorten(vd.Group, 80), p.Paint(severityPaint[vd.Severity], strings.ToUpper(vd.Severity)), vd.Summary)
	fmtf(p.Out, "    lag %s; drain %s; retention %s\n", verdictLagText(vd.Lag), vd.Drain.Text(), vd.Retention.Text())
	fmtf(p.Out, "    coordinator %s\n", verdictCoordinatorText(vd.Coordinator))
	if b := vd.Blocker; b != nil {
		fmtf(p.Out, "    blocked %s at offset %d by %s%s\n", b.Partition, b.Offset, b.Kind, map[bool]string{true: fmt.Sprintf(" (%d partitions blocked)", vd.BlockedPartitions), false: ""}[vd.BlockedPartitions > 1])
		if b.Fix != "" {
			fmtf(p.Out, "    fix: %s\n", b.Fix)
		}
	}
	if n := len(vd.Moves); n > 0 {
		m := vd.Moves[n-1]
		fmtf(p.Out, "    moved %s: %s → %s (%s, assignment v%d)%s\n", orNone(render.Timestamp(m.Time)), orNone(m.From), orNone(m.To), m.Cause, m.AssignmentVersion,
			map[bool]string{true: fmt.Sprintf(", %d moves in all", n), false: ""}[n > 1])
	}
	for j, f := range vd.Findings {
		if j == 0 && !p.Wide() {
			continue
		}
		on := ""
		if f.Partition != "" {
			on = " on " + f.Partition
		}
		if !p.Wide() {
			fmtf(p.Out, "    also %s%s (%s)\n", f.Code, on, f.Severity)
			continue
		}
		fmtf(p.Out, "    %-7s %s%s: %s\n", f.Severity, f.Code, on, f.Detail)
		if f.Command != "" {
			fmtf(p.Out, "            $ %s\n", f.Command)
		}
	}
	if vd.Next != nil {
		fmtf(p.Out, "    next: %s\n", vd.Next.Command)
	}
}

func verdictLagText(l inspect.VerdictLag) string {
	s := totalLagText(l.Known, l.Messages, l.UnknownPartitions)
	if l.SecondsKnown {
		s += " (" + inspect.FormatSeconds(l.Seconds) + ")"
	}
	return s
}

func verdictCoordinatorText(c inspect.VerdictCoordinator) string {
	s := orNone(c.Computed)
	if c.Tier != "" {
		s += " (" + c.Tier + ")"
	}
	switch {
	case c.AnswerError != "":
		s += "; brokers: " + c.AnswerError
	case c.Answered != "":
		s += "; brokers answer " + c.Answered
	}
	if c.State != "" {
		s += "; " + c.State + ", " + render.Plural(c.Members, "member", "members")
	}
	return s
}
