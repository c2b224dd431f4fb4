package inspect

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/labdata"
	"github.com/kaasctl/kaasctl/internal/volume"
)

func mvAsg(epoch, version int64, controller string, brokers []volume.BrokerEntry, entries ...volume.GroupEntry) *volume.Assignment {
	return &volume.Assignment{ControllerEpoch: epoch, AssignmentVersion: version, Controller: controller,
		GeneratedAt: "2026-07-23T11:40:02.120000000Z", Brokers: brokers, ConsumerGroups: entries}
}

func mvAlive(ids ...string) []volume.BrokerEntry {
	var out []volume.BrokerEntry
	for _, id := range ids {
		out = append(out, volume.BrokerEntry{ID: id, Health: "alive"})
	}
	return out
}

// findGroup returns a group name whose hash slot over n brokers is slot.
func mvFindGroup(t *testing.T, prefix string, pred func(h uint32) bool) string {
	t.Helper()
	for i := 0; i < 100000; i++ {
		g := fmt.Sprintf("%s-%d", prefix, i)
		if pred(grouphash.FNV1a32(g)) {
			return g
		}
	}
	t.Fatal("no group found")
	return ""
}

func mvMoveOf(t *testing.T, r MovesResult, key string) Move {
	t.Helper()
	for _, m := range r.Moves {
		if m.Key == key {
			return m
		}
	}
	t.Fatalf("no move for %q in %+v", key, r.Moves)
	return Move{}
}

func TestCauses(t *testing.T) {
	t.Parallel()
	b3 := mvAlive("kaas-0", "kaas-1", "kaas-2")
	b2 := mvAlive("kaas-0", "kaas-2")
	// slot 1 of 3 (kaas-1) → coordinator leaves.
	gLeft := mvFindGroup(t, "left", func(h uint32) bool { return h%3 == 1 })
	// kaas-0 of 3 → kaas-2 of 2, both alive in both: divisor change.
	gDiv := mvFindGroup(t, "div", func(h uint32) bool { return h%3 == 0 && h%2 == 1 })
	// stays on kaas-0
	gStay := mvFindGroup(t, "stay", func(h uint32) bool { return h%3 == 0 && h%2 == 0 })
	// hash would stay on kaas-0, entry sends it to kaas-2
	gEntry := mvFindGroup(t, "entry", func(h uint32) bool { return h%3 == 0 && h%2 == 0 })

	old := mvAsg(1, 5, "kaas-0", b3)
	cur := mvAsg(1, 6, "kaas-0", b2, volume.GroupEntry{GroupID: gEntry, Broker: "kaas-2"})
	r := ComputeMoves(MovesInput{Old: old, New: cur, Groups: []string{gLeft, gDiv, gStay}})
	if got := mvMoveOf(t, r, gLeft); got.Cause != CauseBrokerLeft || got.From != "kaas-1" {
		t.Errorf("left: %+v", got)
	}
	if got := mvMoveOf(t, r, gDiv); got.Cause != CauseDivisorChanged || got.From != "kaas-0" || got.To != "kaas-2" {
		t.Errorf("divisor: %+v", got)
	}
	if got := mvMoveOf(t, r, gEntry); got.Cause != CauseEntryAdded || got.To != "kaas-2" || got.ToTier != grouphash.TierExplicit {
		t.Errorf("entry: %+v", got)
	}
	for _, m := range r.Moves {
		if m.Key == gStay {
			t.Errorf("unmoved group reported: %+v", m)
		}
	}
	if r.GroupsChecked != 4 {
		t.Errorf("groups checked %d, want 4", r.GroupsChecked)
	}

	// Reverse: kaas-1 joins. gLeft comes back to kaas-1 (joined); the
	// entry is retired (entry_removed beats broker_joined).
	r = ComputeMoves(MovesInput{Old: cur, New: old, Groups: []string{gLeft, gDiv}})
	if got := mvMoveOf(t, r, gLeft); got.Cause != CauseBrokerJoined || got.To != "kaas-1" {
		t.Errorf("joined: %+v", got)
	}
	if got := mvMoveOf(t, r, gEntry); got.Cause != CauseEntryRemoved {
		t.Errorf("entry removed: %+v", got)
	}
	if got := mvMoveOf(t, r, gDiv); got.Cause != CauseDivisorChanged {
		t.Errorf("divisor on join: %+v", got)
	}

	// Entry moved between two alive brokers.
	a := mvAsg(1, 7, "kaas-0", b3, volume.GroupEntry{GroupID: "orders", Broker: "kaas-0"})
	b := mvAsg(1, 8, "kaas-0", b3, volume.GroupEntry{GroupID: "orders", Broker: "kaas-2"})
	r = ComputeMoves(MovesInput{Old: a, New: b})
	if got := mvMoveOf(t, r, "orders"); got.Cause != CauseEntryMoved {
		t.Errorf("entry moved: %+v", got)
	}

	// An entry on a broker that leaves, retired at the same time: broker_left wins.
	a = mvAsg(1, 7, "kaas-0", b3, volume.GroupEntry{GroupID: "orders", Broker: "kaas-1"})
	b = mvAsg(1, 8, "kaas-0", b2)
	r = ComputeMoves(MovesInput{Old: a, New: b})
	if got := mvMoveOf(t, r, "orders"); got.Cause != CauseBrokerLeft {
		t.Errorf("entry on leaving broker: %+v", got)
	}

	// Failover: epoch bump with a new broker set; the group that moves
	// between survivors is controller_failover, the one whose broker left
	// is still broker_left.
	a = mvAsg(3, 10, "kaas-1", b3)
	b = mvAsg(4, 1, "kaas-0", b2)
	r = ComputeMoves(MovesInput{Old: a, New: b, Groups: []string{gLeft, gDiv}})
	if got := mvMoveOf(t, r, gDiv); got.Cause != CauseControllerFailover {
		t.Errorf("failover: %+v", got)
	}
	if got := mvMoveOf(t, r, gLeft); got.Cause != CauseBrokerLeft {
		t.Errorf("failover left: %+v", got)
	}

	// Health flip: kaas-1 listed but draining → hash-fallback.
	drain := []volume.BrokerEntry{{ID: "kaas-0", Health: "alive"}, {ID: "kaas-1", Health: "draining"}, {ID: "kaas-2", Health: "alive"}}
	r = ComputeMoves(MovesInput{Old: mvAsg(1, 1, "kaas-0", b3), New: mvAsg(1, 2, "kaas-0", drain), Groups: []string{gLeft}})
	if got := mvMoveOf(t, r, gLeft); got.Cause != CauseBrokerLeft || got.ToTier != grouphash.TierHashFallback {
		t.Errorf("draining: %+v", got)
	}

	// Everyone gone: no coordinator.
	r = ComputeMoves(MovesInput{Old: mvAsg(1, 1, "kaas-0", b3), New: mvAsg(1, 2, "kaas-0", nil), Groups: []string{gStay}})
	if got := mvMoveOf(t, r, gStay); got.Cause != CauseBrokerLeft || got.To != "" {
		t.Errorf("none: %+v", got)
	}

	// Transactional ids: hash tier only, entries ignored.
	r = ComputeMoves(MovesInput{Old: old, New: cur, TxnIDs: []string{gEntry, gLeft}})
	for _, m := range r.Moves {
		if m.Kind == KindTxn && m.Key == gEntry {
			t.Errorf("txn id moved by a group entry: %+v", m)
		}
	}
	if got := mvMoveOf(t, ComputeMoves(MovesInput{Old: old, New: cur, TxnIDs: []string{gLeft}}), gLeft); got.Kind != KindTxn || got.Cause != CauseBrokerLeft {
		t.Errorf("txn left: %+v", got)
	}
}

func TestAuditEntries(t *testing.T) {
	t.Parallel()
	g0 := mvFindGroup(t, "g", func(h uint32) bool { return h%3 == 0 })
	a := mvAsg(1, 1, "kaas-0", []volume.BrokerEntry{{ID: "kaas-0", Health: "alive"}, {ID: "kaas-1", Health: "dead"}, {ID: "kaas-2", Health: "alive"}},
		volume.GroupEntry{GroupID: g0, Broker: "kaas-0"},
		volume.GroupEntry{GroupID: "x", Broker: "kaas-1"},
		volume.GroupEntry{GroupID: "y", Broker: "kaas-9"},
		volume.GroupEntry{GroupID: g0, Broker: "kaas-2"},
		volume.GroupEntry{GroupID: mvFindGroup(t, "d", func(h uint32) bool { return h%3 == 2 }), Broker: "kaas-0"},
	)
	got := AuditEntries(a)
	want := []EntryStatus{EntryAgrees, EntryDeadBroker, EntryUnknownBroker, EntryDuplicate, EntryDisagrees}
	if len(got) != len(want) {
		t.Fatalf("got %d audits", len(got))
	}
	for i, w := range want {
		if got[i].Status != w {
			t.Errorf("entry %d (%s): %s, want %s", i, got[i].Group, got[i].Status, w)
		}
	}
	if got[4].HashCoordinator != "kaas-2" {
		t.Errorf("hash coordinator %q", got[4].HashCoordinator)
	}
}

// TestLabDiffMatchesFindCoordinator is the acceptance check: on the lab
// capture, diffing consecutive versions names exactly the groups whose
// FindCoordinator answer changed between phase 1 (v2) and phase 2 (v3),
// and each move's endpoints are the brokers' answers.
func TestLabDiffMatchesFindCoordinator(t *testing.T) {
	t.Parallel()
	dir, err := labdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	p1, err := labdata.FindCoordinator(filepath.Join(dir, "phase1-steady-3-brokers", "api-findcoordinator.txt"))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := labdata.FindCoordinator(filepath.Join(dir, "phase2-after-kill9-skafka-1", "api-findcoordinator.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p1) != 5 || len(p2) != 5 {
		t.Fatalf("transcripts: %v %v", p1, p2)
	}
	var groups, changed []string
	for g := range p1 {
		groups = append(groups, g)
		if p1[g] != p2[g] {
			changed = append(changed, g)
		}
	}
	slices.Sort(changed)
	hist := volume.LoadAssignmentHistory([]string{filepath.Join(dir, "assignment-history")})
	if len(hist.Snapshots) != 3 || len(hist.Problems) > 0 {
		t.Fatalf("history: %d snapshots, problems %v", len(hist.Snapshots), hist.Problems)
	}
	v2, v3 := hist.Snapshots[1].Assignment, hist.Snapshots[2].Assignment
	if v2.AssignmentVersion != 2 || v3.AssignmentVersion != 3 {
		t.Fatalf("versions %d %d", v2.AssignmentVersion, v3.AssignmentVersion)
	}
	d := DiffAssignments("v2", v2, "v3", v3, groups, nil)
	var moved []string
	for _, m := range d.Moves {
		moved = append(moved, m.Key)
		if m.From != p1[m.Key] || m.To != p2[m.Key] {
			t.Errorf("%s: moved %s → %s, brokers answered %s then %s", m.Key, m.From, m.To, p1[m.Key], p2[m.Key])
		}
	}
	if !slices.Equal(moved, changed) {
		t.Errorf("moved %v, FindCoordinator changed for %v", moved, changed)
	}
	causes := map[string]Cause{}
	for _, m := range d.Moves {
		causes[m.Key] = m.Cause
	}
	want := map[string]Cause{"lab-group": CauseBrokerLeft, "g-alpha": CauseBrokerLeft, "g-beta": CauseEntryAdded, "g-gamma": CauseEntryAdded, "g-delta": CauseDivisorChanged}
	for g, c := range want {
		if causes[g] != c {
			t.Errorf("%s: cause %s, want %s", g, causes[g], c)
		}
	}
	if len(d.Brokers) != 1 || d.Brokers[0].ID != "skafka-1" || d.Brokers[0].Change != "left" {
		t.Errorf("broker changes %+v", d.Brokers)
	}
	if len(d.Entries) != 2 {
		t.Errorf("entry changes %+v", d.Entries)
	}
}

func mvSynth(nBrokers, nEntries int, shift int) *volume.Assignment {
	a := &volume.Assignment{ControllerEpoch: 1, AssignmentVersion: int64(shift + 1), Controller: "kaas-0"}
	for i := 0; i < nBrokers; i++ {
		if shift > 0 && i%97 == 0 {
			continue // some brokers left
		}
		a.Brokers = append(a.Brokers, volume.BrokerEntry{ID: fmt.Sprintf("kaas-%d", i), Health: "alive"})
	}
	for i := 0; i < nEntries; i++ {
		b := (i + shift*(i%3)) % nBrokers
		a.ConsumerGroups = append(a.ConsumerGroups, volume.GroupEntry{GroupID: fmt.Sprintf("group-%07d", i), Broker: fmt.Sprintf("kaas-%d", b), Epoch: 1})
	}
	return a
}

// BenchmarkDiff100kEntries1kBrokers is SPEC §7's target: diff two versions
// with 100,000 entries and 1,000 brokers in under 1 s.
func BenchmarkDiff100kEntries1kBrokers(b *testing.B) {
	old := mvSynth(1000, 100000, 0)
	cur := mvSynth(1000, 100000, 1)
	extra := make([]string, 50000)
	for i := range extra {
		extra[i] = fmt.Sprintf("file-only-%d", i)
	}
	b.ResetTimer()
	var moves int
	for i := 0; i < b.N; i++ {
		d := DiffAssignments("a", old, "b", cur, extra, nil)
		moves = len(d.Moves)
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/diff")
	b.ReportMetric(1000, "target-ms")
	b.ReportMetric(float64(moves), "moves")
}
