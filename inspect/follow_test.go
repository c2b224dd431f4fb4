package inspect

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

func TestAssignmentFollower(t *testing.T) {
	t.Parallel()
	b3 := mvAlive("kaas-0", "kaas-1", "kaas-2")
	b2 := mvAlive("kaas-0", "kaas-2")
	g := mvFindGroup(t, "g", func(h uint32) bool { return h%3 == 0 && h%2 == 1 })
	seen := time.Date(2026, 7, 23, 11, 40, 0, 0, time.UTC)
	f := AssignmentFollower{Path: "/cd/assignment.json"}

	first := f.Next(mvAsg(1, 3, "kaas-1", b3), []string{g}, false, seen)
	if !first.First || len(first.Events) != 0 || len(first.Warnings) != 0 {
		t.Fatalf("first version: %+v", first)
	}
	if len(first.Placements) != 1 || first.Placements[0].Group != g || first.Placements[0].Coordinator == "" {
		t.Fatalf("first placements %+v", first.Placements)
	}
	// Three versions written and replaced unseen, then a failover.
	next := f.Next(mvAsg(2, 8, "kaas-0", b2), []string{g}, false, seen.Add(time.Minute))
	if next.First || next.Placements != nil || len(next.Events) != 1 || next.Events[0].Cause != CauseControllerFailover {
		t.Fatalf("second version: %+v", next)
	}
	// The first file again: a restored or stale file.
	back := f.Next(mvAsg(1, 3, "kaas-1", b3), []string{g}, false, seen.Add(2*time.Minute))
	if len(back.Warnings) != 1 || !strings.Contains(back.Warnings[0], "went backwards: epoch 1 v3 after epoch 2 v8") {
		t.Fatalf("backwards: %q", back.Warnings)
	}
	if len(f.Versions) != 3 || len(f.Events) != 1+len(back.Events) || f.Missed != next.Version.MissingBefore {
		t.Fatalf("totals: %d versions, %d events, %d missed", len(f.Versions), len(f.Events), f.Missed)
	}

	// A filter that selects nothing: no placements, no moves.
	only := AssignmentFollower{Path: "x", Filter: []string{"other-*"}}
	only.Next(mvAsg(1, 3, "kaas-1", b3), []string{g}, false, seen)
	if fv := only.Next(mvAsg(2, 8, "kaas-0", b2), []string{g}, true, seen); len(fv.Events) != 0 || len(fv.Warnings) != 1 {
		t.Fatalf("filtered: %+v", fv)
	}
}

func TestGroupSelection(t *testing.T) {
	t.Parallel()
	groups := []string{"orders-1", "orders-2", "billing"}
	if got := MatchingGroups(groups, nil); !slices.Equal(got, groups) {
		t.Errorf("no patterns: %q", got)
	}
	if got := MatchingGroups(groups, []string{"orders-*", "billing"}); !slices.Equal(got, groups) {
		t.Errorf("glob and name: %q", got)
	}
	if got := MatchingGroups(groups, []string{"orders-2"}); !slices.Equal(got, []string{"orders-2"}) {
		t.Errorf("name: %q", got)
	}
	if got := ExactNames([]string{"orders-*", "billing", "a?", "[ab]", "plain"}); !slices.Equal(got, []string{"billing", "plain"}) {
		t.Errorf("exact names: %q", got)
	}
}

func TestNewerThan(t *testing.T) {
	t.Parallel()
	v := func(e, n int64) *volume.Assignment {
		return &volume.Assignment{ControllerEpoch: e, AssignmentVersion: n}
	}
	for _, c := range []struct {
		a, b *volume.Assignment
		want bool
	}{
		{v(1, 2), v(1, 1), true},
		{v(2, 1), v(1, 9), true},
		{v(1, 1), v(1, 1), false},
		{v(1, 9), v(2, 1), false},
	} {
		if got := NewerThan(c.a, c.b); got != c.want {
			t.Errorf("NewerThan(e%d v%d, e%d v%d) = %v", c.a.ControllerEpoch, c.a.AssignmentVersion, c.b.ControllerEpoch, c.b.AssignmentVersion, got)
		}
	}
}

func TestCoordinatorCounts(t *testing.T) {
	t.Parallel()
	ps := []Placement{{Group: "a", Coordinator: "kaas-1"}, {Group: "b", Coordinator: "kaas-1"}, {Group: "c", Coordinator: "zombie"},
		{Group: "d", Coordinator: ""}, {Group: "e", Coordinator: "ghost"}}
	got := CoordinatorCounts(ps, []string{"kaas-0", "kaas-1"})
	want := []BrokerGroupCount{{"kaas-0", 0}, {"kaas-1", 2}, {"", 1}, {"ghost", 1}, {"zombie", 1}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestTraceViewHelpers(t *testing.T) {
	t.Parallel()
	tr := &Trace{
		Versions: []TraceVersion{{ControllerEpoch: 1, AssignmentVersion: 1, Source: "snapshot"}, {ControllerEpoch: 1, AssignmentVersion: 2, Source: "log"},
			{ControllerEpoch: 1, AssignmentVersion: 3, Source: "snapshot"}},
		Events: []TraceEvent{{Group: "a", ControllerEpoch: 1, AssignmentVersion: 2}, {Group: "b", ControllerEpoch: 1, AssignmentVersion: 5},
			{Group: "c", ControllerEpoch: 1, AssignmentVersion: 3}, {Group: "d", ControllerEpoch: 1, AssignmentVersion: 2}},
	}
	snaps := tr.SnapshotVersions()
	if len(snaps) != 2 || snaps[1].AssignmentVersion != 3 {
		t.Errorf("snapshots %+v", snaps)
	}
	at, orphans := tr.EventsByVersion()
	if len(at[VersionKey{1, 2}]) != 2 || at[VersionKey{1, 2}][1].Group != "d" || len(at[VersionKey{1, 3}]) != 1 || len(at[VersionKey{1, 1}]) != 0 {
		t.Errorf("by version %+v", at)
	}
	if len(orphans) != 1 || orphans[0].Group != "b" {
		t.Errorf("orphans %+v", orphans)
	}
}

func TestDiffAndAuditCounts(t *testing.T) {
	t.Parallel()
	ms := []Move{{Kind: KindGroup}, {Kind: KindTxn}, {Kind: KindGroup}}
	if CountMoves(ms, KindGroup) != 2 || CountMoves(ms, KindTxn) != 1 {
		t.Errorf("CountMoves")
	}
	s := &AssignmentSummary{Brokers: []BrokerLoad{{ID: "a", Health: "alive"}, {ID: "b", Health: "dead"}, {ID: "c", Health: "unlisted"}}}
	if s.ListedBrokers() != 2 {
		t.Errorf("ListedBrokers = %d", s.ListedBrokers())
	}
	byStatus, problems := AuditCounts([]EntryAudit{{Status: EntryAgrees}, {Status: EntryDisagrees}, {Status: EntryDeadBroker}, {Status: EntryAgrees}})
	if problems != 2 || byStatus[string(EntryAgrees)] != 2 || byStatus[string(EntryDisagrees)] != 1 || len(byStatus) != 3 {
		t.Errorf("AuditCounts = %v, %d", byStatus, problems)
	}
}
