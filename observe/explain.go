package observe

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// groups explain's last steps over an observed window: the recent
// coordinator moves of every group, and one verdict per group built from
// the read model's facts (inspect.Explain).

// VerdictSelection is which groups get a verdict and how they are told:
// the groups asked for (none: every group), --regex, --problems, the
// generation assumed and the commands a finding repeats.
type VerdictSelection struct {
	Names        []string
	Filter       *regexp.Regexp
	ProblemsOnly bool
	Gen          volume.GenerationInfo
	Commands     inspect.ExplainCommands
}

// Verdicts is the verdict of every group selected, page first, with the
// count of each severity (every group observed, also those ProblemsOnly
// leaves out) and the groups named that were not observed.
func Verdicts(sel VerdictSelection, healths []inspect.GroupHealth, last *Observation, moves map[string][]inspect.TraceEvent, severities map[string]int) (verdicts []inspect.Verdict, missing []string) {
	hs := inspect.SelectHealth(healths, sel.Names, sel.Filter)
	obs := map[string]*GroupObs{}
	for i := range last.Groups {
		obs[last.Groups[i].Row.Group] = &last.Groups[i]
	}
	verdicts = []inspect.Verdict{}
	for i := range hs.Groups {
		h := &hs.Groups[i]
		in := inspect.ExplainInput{Group: h.Group, Health: h, Gen: sel.Gen, Commands: sel.Commands, Moves: moves[h.Group],
			Lag: inspect.VerdictLag{Messages: h.Lag, Known: h.LagKnown, UnknownPartitions: h.LagUnknown}}
		if gob := obs[h.Group]; gob != nil {
			explainFacts(&in, gob)
		}
		vd := inspect.Explain(in)
		severities[vd.Severity]++
		if sel.ProblemsOnly && vd.Severity == inspect.VerdictOK {
			continue
		}
		verdicts = append(verdicts, vd)
	}
	slices.SortStableFunc(verdicts, func(a, b inspect.Verdict) int {
		if d := inspect.VerdictRank(a.Severity) - inspect.VerdictRank(b.Severity); d != 0 {
			return d
		}
		return strings.Compare(a.Group, b.Group)
	})
	return verdicts, hs.Missing
}

// explainFacts takes what the last observation says of the group: its
// lag (in seconds too), the read model's incidents and the routing row.
func explainFacts(in *inspect.ExplainInput, gob *GroupObs) {
	in.Row = gob.Row
	in.Lag = inspect.VerdictLag{Messages: gob.Lag, Known: gob.LagKnown, UnknownPartitions: gob.LagUnknown,
		Seconds: gob.LagSeconds, SecondsKnown: gob.LagSecondsKnown}
	for _, inc := range gob.Incidents {
		in.Incidents = append(in.Incidents, inspect.ExplainIncident{Partition: inc.Topic + "/" + strconv.Itoa(int(inc.Partition)), PartitionIncident: inc.PartitionIncident})
	}
	in.GroupIncidents = gob.GroupIncidents
	in.Blockers = gob.Blockers // the read model's, for partitions unmoved since the observation before
}

// ExplainMoves are the recent coordinator moves of every group observed:
// from the journal's assignment versions (journal "": none) and those the
// observations read (seen), since since; versions is how many versions
// were followed. The journal's unreadable files are told to notes.
func ExplainMoves(journal string, since time.Time, seen []*volume.Assignment, last *Observation, notes render.Notes) (moves map[string][]inspect.TraceEvent, versions int) {
	var snaps []volume.Snapshot
	if journal != "" {
		hist := volume.LoadAssignmentHistory([]string{journal})
		for _, p := range hist.Problems {
			notes.Warnf("%s: %s (skipped)", p.Path, p.Problem)
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
			return cmp.Compare(ae, be)
		}
		return cmp.Compare(av, bv)
	})
	moves = map[string][]inspect.TraceEvent{}
	if len(snaps) < 2 {
		return moves, len(snaps)
	}
	names := make([]string, len(last.Groups))
	for i := range last.Groups {
		names[i] = last.Groups[i].Row.Group
	}
	tr := inspect.BuildTrace(inspect.TraceInput{Snapshots: snaps, Groups: names, Since: since})
	for _, e := range tr.Events {
		moves[e.Group] = append(moves[e.Group], e)
	}
	return moves, len(snaps)
}
