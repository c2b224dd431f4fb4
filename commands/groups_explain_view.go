package commands

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/render/views"
)

// buildVerdicts fills v with the verdict of every group selected (named,
// or all; --regex) and returns the groups named that were not observed.
func buildVerdicts(g *Globals, o groupsExplainOptions, v *views.GroupsExplainView, healths []inspect.GroupHealth, last *observe.Observation, moves map[string][]inspect.TraceEvent) []string {
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
			b.WriteString(" --" + f[0] + " " + render.ShellQuote(f[1]))
		}
	}
	if g.conn != nil {
		for _, k := range []string{"profile", "config"} {
			if v := g.conn.flags[k]; v != "" {
				b.WriteString(" --" + k + " " + render.ShellQuote(v))
			}
		}
	}
	return b.String()
}

// explainMoves are the recent coordinator moves of every group observed:
// from the --journal's assignment versions and those the observations
// read, since --moves-since ago.
func explainMoves(g *Globals, o groupsExplainOptions, seen []*volume.Assignment, last *observe.Observation) (map[string][]inspect.TraceEvent, views.ExplainMovesSource) {
	src := views.ExplainMovesSource{Journal: o.journal}
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
