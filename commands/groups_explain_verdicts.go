package commands

import (
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

// buildVerdicts fills v with the verdict of every group selected (named,
// or all; --regex) and returns the groups named that were not observed
// (observe.Verdicts).
func buildVerdicts(g *Globals, o groupsExplainOptions, v *views.GroupsExplainView, healths []inspect.GroupHealth, last *observe.Observation, moves map[string][]inspect.TraceEvent) []string {
	gi := g.Generation()
	if v.Generation != nil {
		gi = *v.Generation
	}
	sel := observe.VerdictSelection{Names: o.names, Filter: o.filter, ProblemsOnly: o.problemsOnly, Gen: gi,
		Commands: inspect.ExplainCommands{Flags: g.GivenFlags(), VolumeFlags: g.volumeFlags(), Journal: o.journal}}
	var missing []string
	v.Groups, missing = observe.Verdicts(sel, healths, last, moves, v.Severities)
	return missing
}

// explainMoves are the recent coordinator moves of every group observed,
// since --moves-since ago (observe.ExplainMoves).
func explainMoves(g *Globals, o groupsExplainOptions, seen []*volume.Assignment, last *observe.Observation) (map[string][]inspect.TraceEvent, views.ExplainMovesSource) {
	src := views.ExplainMovesSource{Journal: o.journal}
	if o.movesSince > 0 {
		src.Since = g.Now().Add(-o.movesSince).UTC()
	}
	moves, n := observe.ExplainMoves(o.journal, src.Since, seen, last, g)
	src.Versions = n
	return moves, src
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
			if v := g.conn.Flags[k]; v != "" {
				b.WriteString(" --" + k + " " + render.ShellQuote(v))
			}
		}
	}
	return b.String()
}
