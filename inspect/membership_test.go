package inspect

import (
	"strings"
	"testing"
	"time"
)

var m0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

// sampleAt is a membership observation at t0+sec with the given member ids.
func sampleAt(sec int, coord, state string, ids ...string) MemberSample {
	s := MemberSample{Time: m0.Add(time.Duration(sec) * time.Second), Coordinator: coord, State: state, Members: []MemberInfo{}}
	for _, id := range ids {
		s.Members = append(s.Members, MemberInfo{ID: id, ClientID: "c-" + id})
	}
	return s
}

func TestDiffMembership(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		prev, cur MemberSample
		ok        bool
		causes    string
		joined    int
		left      int
		continues bool
	}{
		{"same", sampleAt(0, "kaas-0", "Stable", "a", "b"), sampleAt(5, "kaas-0", "Stable", "a", "b"), false, "", 0, 0, false},
		{"one left", sampleAt(0, "kaas-0", "Stable", "a", "b"), sampleAt(5, "kaas-0", "Stable", "a"), true, CauseMemberLeft, 0, 1, false},
		{"one joined", sampleAt(0, "kaas-0", "Stable", "a"), sampleAt(5, "kaas-0", "Stable", "a", "b"), true, CauseMemberJoined, 1, 0, false},
		{"replaced", sampleAt(0, "kaas-0", "Stable", "a", "b"), sampleAt(5, "kaas-0", "Stable", "a", "c"), true, CauseMemberLeft + "," + CauseMemberJoined, 1, 1, false},
		{"moved", sampleAt(0, "kaas-0", "Stable", "a"), sampleAt(5, "kaas-1", "Stable", "b"), true, CauseMemberLeft + "," + CauseMemberJoined + "," + CauseCoordinatorMoved, 1, 1, false},
		{"empty group moved", sampleAt(0, "kaas-0", "Empty"), sampleAt(5, "kaas-1", "Empty"), false, "", 0, 0, false},
		{"caught rebalancing", sampleAt(0, "kaas-0", "Stable", "a"), sampleAt(5, "kaas-0", "PreparingRebalance", "a"), true, CauseRebalanceSameMembers, 0, 0, false},
		{"after rebalancing", sampleAt(0, "kaas-0", "PreparingRebalance", "a"), sampleAt(5, "kaas-0", "Stable", "a", "b"), true, CauseMemberJoined, 1, 0, true},
		{"unobserved", MemberSample{Time: m0, Err: "brokers: down"}, sampleAt(5, "kaas-0", "Stable", "a"), false, "", 0, 0, false},
	}
	for _, c := range cases {
		ch, cont, ok := DiffMembership(c.prev, c.cur)
		if ok != c.ok || strings.Join(ch.Causes, ",") != c.causes || len(ch.Joined) != c.joined || len(ch.Left) != c.left || cont != c.continues {
			t.Errorf("%s: got ok=%v causes=%v joined=%d left=%d continues=%v; want %v %q %d %d %v", c.name, ok, ch.Causes, len(ch.Joined), len(ch.Left), cont, c.ok, c.causes, c.joined, c.left, c.continues)
		}
	}
}

func TestDiffMembershipAssignments(t *testing.T) {
	t.Parallel()
	prev := sampleAt(0, "kaas-0", "Stable", "a", "b")
	cur := sampleAt(5, "kaas-0", "Stable", "a", "b")
	for i := range prev.Members {
		prev.Members[i].AssignmentReported, cur.Members[i].AssignmentReported = true, true
	}
	prev.Members[0].Assigned, prev.Members[1].Assigned = []string{"t/0", "t/1"}, []string{"t/2"}
	cur.Members[0].Assigned, cur.Members[1].Assigned = []string{"t/0"}, []string{"t/1", "t/2"}
	if ch, _, ok := DiffMembership(prev, cur); !ok || !ch.Has(CauseRebalanceSameMembers) {
		t.Fatalf("reassigned partitions: got %+v %v, want a rebalance with the same members", ch, ok)
	}
	// Not reported on one side: nothing to compare.
	cur.Members[0].AssignmentReported = false
	cur.Members[1].AssignmentReported = false
	if _, _, ok := DiffMembership(prev, cur); ok {
		t.Fatal("assignments no longer reported are no change")
	}
}

func TestMemberWindowChurn(t *testing.T) {
	t.Parallel()
	w := MemberWindow{Window: time.Minute, Rebalances: 2}
	obs := []MemberSample{
		sampleAt(0, "kaas-0", "Stable", "a", "b"),
		sampleAt(5, "kaas-0", "Stable", "a"),                      // b left: 1
		sampleAt(10, "kaas-0", "PreparingRebalance", "a"),         // caught rebalancing: 2
		sampleAt(15, "kaas-0", "Stable", "a", "c"),                // the same rebalance: c joined
		sampleAt(20, "kaas-1", "Stable", "d", "e"),                // moved: 3
		sampleAt(25, "kaas-1", "Stable", "d", "e"),                // no change
		{Time: m0.Add(30 * time.Second), Err: "brokers: refused"}, // not observed
	}
	var gens []int64
	for _, s := range obs {
		if c, ok := w.Observe("g", s, nil); ok {
			gens = append(gens, c.ObservedGeneration)
		}
	}
	if got := gens; len(got) != 4 || got[0] != 1 || got[1] != 2 || got[2] != 2 || got[3] != 3 {
		t.Fatalf("observed generations per change: %v, want [1 2 2 3] (the rebalance seen twice is one)", got)
	}
	h := GroupHealth{Group: "g", State: HealthOK, Conditions: []string{HealthOK}, Evidence: []HealthEvidence{}}
	w.Apply(&h)
	if !h.Has(HealthChurn) || h.Churn.Changes != 3 || h.Churn.ObservedGeneration != 3 {
		t.Fatalf("3 changes over a threshold of 2: conditions %v churn %+v", h.Conditions, h.Churn)
	}
	d := h.Evidence[0].Detail
	for _, want := range []string{"3 generation changes in 1m0s, more than 2", "member left or timed out 2", "member joined 2", "coordinator moved 1", "the coordinator moved from kaas-0 to kaas-1"} {
		if !strings.Contains(d, want) {
			t.Errorf("CHURN detail %q lacks %q", d, want)
		}
	}
	if h.Churn.Observed {
		t.Error("the last observation failed: not observed")
	}
	// The window passes: no CHURN.
	w.Observe("g", sampleAt(200, "kaas-1", "Stable", "d", "e"), nil)
	h = GroupHealth{Group: "g", State: HealthOK, Conditions: []string{HealthOK}, Evidence: []HealthEvidence{}}
	w.Apply(&h)
	if h.Has(HealthChurn) || h.Churn.Changes != 0 || h.Churn.ObservedGeneration != 3 {
		t.Fatalf("after the window: %v %+v", h.Conditions, h.Churn)
	}
}

// A consumer serving partitions in turns keeps its members: no change.
func TestMemberWindowSteadyNoChurn(t *testing.T) {
	t.Parallel()
	w := MemberWindow{Window: time.Minute, Rebalances: 0}
	for i := range 100 {
		if _, ok := w.Observe("g", sampleAt(i, "kaas-0", "Stable", "a", "b"), nil); ok {
			t.Fatalf("observation %d: a change with the same members", i)
		}
	}
	h := GroupHealth{Group: "g", State: HealthOK, Conditions: []string{HealthOK}, Evidence: []HealthEvidence{}}
	w.Apply(&h)
	if h.State != HealthOK || h.Churn.Changes != 0 {
		t.Fatalf("%v %+v", h.Conditions, h.Churn)
	}
}

// A window never told a group's membership (an exporter without brokers)
// keeps no entry for it unless it has a rewind or a coordinator move to
// keep: its health gets what it got with one (no CHURN, its rewinds'
// authors), and the entry goes once they leave the window.
func TestMemberWindowKeepsNothingUnobserved(t *testing.T) {
	t.Parallel()
	w := MemberWindow{Window: time.Minute}
	none := func(sec int) MemberSample {
		return MemberSample{Time: m0.Add(time.Duration(sec) * time.Second), Err: "no brokers"}
	}
	health := func(g string) GroupHealth {
		h := GroupHealth{Group: g, State: HealthOK, Conditions: []string{HealthOK}, Evidence: []HealthEvidence{}}
		w.Apply(&h)
		return h
	}
	for i := range 3 {
		w.Observe("quiet", none(i), nil)
	}
	if h := health("quiet"); len(w.groups) != 0 || h.Churn != nil || h.Rewinds != nil {
		t.Fatalf("never observed: %d entries, churn %+v, rewinds %+v", len(w.groups), h.Churn, h.Rewinds)
	}
	rw := OffsetAnomaly{Kind: AnomalyRewind, Partition: "orders/0", Before: 10, After: 4, Time: m0.Add(3 * time.Second), Since: m0}
	w.Observe("rewound", none(3), []OffsetAnomaly{rw})
	if h := health("rewound"); len(h.Rewinds) != 1 || h.Rewinds[0].Author != AuthorUnknown || h.Churn != nil {
		t.Fatalf("a rewind without membership: rewinds %+v churn %+v", h.Rewinds, h.Churn)
	}
	w.Observe("rewound", none(120), nil)
	if _, held := w.groups["rewound"]; held {
		t.Error("the rewind left the window, the entry stayed")
	}
	// A move noted before the group was ever observed attributes the
	// rewind its members' coordinator then made.
	w.NoteMove("moving", CoordinatorMove{Time: m0, From: "kaas-0", To: "kaas-1", Cause: "broker_left"})
	w.Observe("moving", sampleAt(1, "kaas-1", "Stable", "a"), nil)
	rw.Time, rw.Since = m0.Add(2*time.Second), m0.Add(time.Second)
	w.Observe("moving", sampleAt(2, "kaas-1", "Stable", "a"), []OffsetAnomaly{rw})
	if h := health("moving"); len(h.Rewinds) != 1 || h.Rewinds[0].Author != AuthorCacheRewrite {
		t.Fatalf("a rewind after a noted move: %+v", h.Rewinds)
	}
}
