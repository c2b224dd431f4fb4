package inspect

import (
	"slices"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// MatchingGroups keeps the groups that --group patterns (names or globs)
// select, in order; no patterns keep them all.
func MatchingGroups(groups, patterns []string) []string {
	if len(patterns) == 0 {
		return groups
	}
	match := GroupMatcher(patterns)
	var out []string
	for _, name := range groups {
		if match(name) {
			out = append(out, name)
		}
	}
	return out
}

// ExactNames keeps the --group values that are names, not globs: those
// join the followed set even when nothing else mentions them.
func ExactNames(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		if !strings.ContainsAny(p, "*?[") {
			out = append(out, p)
		}
	}
	return out
}

// NewerThan reports whether a is a later version of the assignment than
// b: a higher controller epoch, or a higher version in the same epoch.
func NewerThan(a, b *volume.Assignment) bool {
	return a.ControllerEpoch > b.ControllerEpoch ||
		(a.ControllerEpoch == b.ControllerEpoch && a.AssignmentVersion > b.AssignmentVersion)
}

// AssignmentFollower carries a followed assignment.json from one version
// to the next (what `kaasctl watch` sees): each version is compared with
// the previous one, and the versions, moves and missed versions add up.
type AssignmentFollower struct {
	// Path names the file in warnings; Filter (names or globs) limits the
	// groups reported.
	Path   string
	Filter []string

	// Versions and Events are every version and move seen so far; Missed
	// counts the versions written and replaced between two reads.
	Versions []TraceVersion
	Events   []TraceEvent
	Missed   int64

	prevState *RoutingState
	prevA     *volume.Assignment
}

// FollowedVersion is what one new version means.
type FollowedVersion struct {
	Step
	// Warnings: the file went backwards, or was rewritten in place.
	Warnings []string
	// First is the first version seen: it has no moves, and Placements
	// is where each selected group is coordinated.
	First      bool
	Placements []Placement
}

// Next takes a new version a of the file, read at observed, with the
// groups known at that version (rewritten: its content changed without a
// new epoch or version).
func (f *AssignmentFollower) Next(a *volume.Assignment, groups []string, rewritten bool, observed time.Time) FollowedVersion {
	fv := FollowedVersion{Warnings: VersionWarnings(f.Path, f.prevA, a, rewritten), First: f.prevState == nil}
	fv.Step = NextStep(f.prevState, f.prevA, a, groups, f.Filter, observed)
	f.prevState, f.prevA = fv.State, a
	f.Missed += fv.Version.MissingBefore
	f.Versions = append(f.Versions, fv.Version)
	f.Events = append(f.Events, fv.Events...)
	if fv.First {
		fv.Placements = PlacementsAt(fv.State, MatchingGroups(groups, f.Filter))
	}
	return fv
}

// BrokerGroupCount is how many groups a broker coordinates.
type BrokerGroupCount struct {
	Broker string `json:"broker"`
	Groups int    `json:"groups"`
}

// CoordinatorCounts counts the placements per coordinator: every broker
// listed, in order (zero included), then coordinators not listed (a group
// with none has ""), by name.
func CoordinatorCounts(ps []Placement, brokers []string) []BrokerGroupCount {
	counts := map[string]int{}
	for _, p := range ps {
		counts[p.Coordinator]++
	}
	out := make([]BrokerGroupCount, 0, len(brokers)+len(counts))
	for _, b := range brokers {
		out = append(out, BrokerGroupCount{Broker: b, Groups: counts[b]})
		delete(counts, b)
	}
	rest := make([]string, 0, len(counts))
	for b := range counts {
		rest = append(rest, b)
	}
	slices.Sort(rest)
	for _, b := range rest {
		out = append(out, BrokerGroupCount{Broker: b, Groups: counts[b]})
	}
	return out
}

// SnapshotVersions are the trace's versions read from assignment files
// (not those known only from logs).
func (t *Trace) SnapshotVersions() []TraceVersion {
	var out []TraceVersion
	for _, v := range t.Versions {
		if v.Source == "snapshot" {
			out = append(out, v)
		}
	}
	return out
}

// VersionKey names one assignment version.
type VersionKey struct{ Epoch, Version int64 }

// KeyOf is the version's key.
func (v TraceVersion) KeyOf() VersionKey { return VersionKey{v.ControllerEpoch, v.AssignmentVersion} }

// EventsByVersion splits the trace's moves: those at a version of the
// trace, by version, and the rest (moves seen only in logs, at versions
// no snapshot or log line dates), in order.
func (t *Trace) EventsByVersion() (at map[VersionKey][]TraceEvent, orphans []TraceEvent) {
	at = map[VersionKey][]TraceEvent{}
	known := map[VersionKey]bool{}
	for _, v := range t.Versions {
		known[v.KeyOf()] = true
	}
	for _, e := range t.Events {
		k := VersionKey{e.ControllerEpoch, e.AssignmentVersion}
		if known[k] {
			at[k] = append(at[k], e)
		} else {
			orphans = append(orphans, e)
		}
	}
	return at, orphans
}

// CountMoves counts the moves of one kind (groups or transactional ids).
func CountMoves(ms []Move, k Kind) int {
	n := 0
	for _, m := range ms {
		if m.Kind == k {
			n++
		}
	}
	return n
}

// ListedBrokers counts the brokers the assignment lists (the hash
// divisor), leaving out coordinators of entries it does not list.
func (s *AssignmentSummary) ListedBrokers() int {
	n := 0
	for _, b := range s.Brokers {
		if b.Health != "unlisted" {
			n++
		}
	}
	return n
}

// AuditCounts counts the audited entries by status; problems are those
// that do not agree with the hash tier.
func AuditCounts(entries []EntryAudit) (byStatus map[string]int, problems int) {
	byStatus = map[string]int{}
	for _, e := range entries {
		byStatus[string(e.Status)]++
		if e.Status != EntryAgrees {
			problems++
		}
	}
	return byStatus, problems
}
