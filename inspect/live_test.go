package inspect

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

func TestBrokerOrdinalAndNames(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]int32{"kaas-2": 2, "skafka-10": 10, "a-b-c-7": 7, "7": 7, "kaas-": -1, "kaas-x": -1, "": -1} {
		got, ok := BrokerOrdinal(id)
		if (want >= 0) != ok || (ok && got != want) {
			t.Errorf("BrokerOrdinal(%q) = %d, %v; want %d", id, got, ok, want)
		}
	}
	a := &volume.Assignment{Brokers: []volume.BrokerEntry{{ID: "skafka-0", Health: "alive"}, {ID: "skafka-2", Health: "alive"}}}
	n := NewNodeNamer(a)
	if n.Name(2) != "skafka-2" || n.Name(1) != "skafka-1" || n.Name(-1) != "" {
		t.Errorf("names: %q %q", n.Name(2), n.Name(1))
	}
	if NewNodeNamer(nil).Name(3) != "node 3" {
		t.Errorf("no volume: %q", NewNodeNamer(nil).Name(3))
	}
	if !SameBroker("skafka-2", 2) || SameBroker("skafka-2", 20) || SameBroker("", 0) {
		t.Error("SameBroker")
	}
}

func TestParseStates(t *testing.T) {
	t.Parallel()
	got, err := ParseStates(" empty,STABLE,, preparingrebalance,Empty")
	if err != nil || !slices.Equal(got, []string{"Empty", "Stable", "PreparingRebalance"}) {
		t.Errorf("got %v %v", got, err)
	}
	if _, err := ParseStates("stable,sleepy"); err == nil || !strings.Contains(err.Error(), "sleepy") {
		t.Errorf("bad state: %v", err)
	}
	if got, err := ParseStates(""); err != nil || got != nil {
		t.Errorf("empty: %v %v", got, err)
	}
}

func FuzzParseStates(f *testing.F) {
	for _, s := range []string{"", "empty", "Stable,Dead", ",,,", "\x00", "stable,stable", strings.Repeat("x,", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseStates(s)
		if err != nil {
			return
		}
		for _, st := range got {
			if !slices.Contains(GroupStates, st) {
				t.Fatalf("%q gave unknown state %q", s, st)
			}
		}
	})
}

func FuzzBrokerOrdinal(f *testing.F) {
	for _, s := range []string{"kaas-0", "skafka-12", "-", "", "kaas-99999999999", "\xff-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := BrokerOrdinal(s)
		if ok && (n < 0 || !strings.HasSuffix(s, strconv.Itoa(int(n)))) {
			t.Fatalf("%q → %d", s, n)
		}
	})
}

func TestWireDisagrees(t *testing.T) {
	t.Parallel()
	ok := wire.Coordinator{Key: "g", NodeID: 1}
	cna := wire.Coordinator{Key: "g", NodeID: -1, Code: kerr.CoordinatorNotAvailable.Code, Err: "COORDINATOR_NOT_AVAILABLE"}
	other := wire.Coordinator{Key: "g", NodeID: -1, Err: "the broker did not answer for this key"}
	cases := []struct {
		computed string
		co       wire.Coordinator
		want     bool
	}{
		{"kaas-1", ok, false}, {"kaas-2", ok, true}, {"", ok, true},
		{"", cna, false}, {"kaas-1", cna, true}, {"kaas-1", other, false},
	}
	for _, c := range cases {
		if got := WireDisagrees(c.computed, c.co); got != c.want {
			t.Errorf("WireDisagrees(%q, %+v) = %v", c.computed, c.co, got)
		}
	}
}

// MergeLive from literals: a stale listing, a file-only group, a wire
// mismatch, and a live-only group.
func TestMergeLive(t *testing.T) {
	t.Parallel()
	a := &volume.Assignment{Brokers: []volume.BrokerEntry{{ID: "kaas-0", Health: "alive"}, {ID: "kaas-1", Health: "alive"}},
		ConsumerGroups: []volume.GroupEntry{{GroupID: "pinned", Broker: "kaas-1"}}}
	rt := a.Router()
	coordOf := func(g string) int32 { n, _ := BrokerOrdinal(rt.Group(g).Coordinator); return n }
	other := func(n int32) int32 { return 1 - n }
	files := []GroupFile{{Group: "on-disk", Layout: volume.OffsetsCurrent, Format: volume.FormatEnvelope, Partitions: 2},
		{Group: "busy", Layout: volume.OffsetsCurrent, Format: volume.FormatEnvelope, Partitions: 1}}
	ls := []wire.BrokerGroups{
		{Broker: wire.Broker{NodeID: coordOf("busy")}, Groups: []wire.ListedGroup{{Group: "busy", State: "Stable", ProtocolType: "consumer"}}},
		{Broker: wire.Broker{NodeID: other(coordOf("busy"))}, Groups: []wire.ListedGroup{{Group: "busy", State: "Empty"}, {Group: "live-only", State: "Empty"}}},
	}
	coords := map[string]wire.Coordinator{
		"busy":      {Key: "busy", NodeID: coordOf("busy")},
		"on-disk":   {Key: "on-disk", NodeID: coordOf("on-disk")},
		"pinned":    {Key: "pinned", NodeID: 0}, // the volume says kaas-1
		"live-only": {Key: "live-only", NodeID: other(coordOf("busy"))},
	}
	la := &LiveAnswers{HasAssignment: true, Names: NewNodeNamer(a), GatheredGroups: wire.NewGatheredGroups(ls, coords,
		map[string]wire.DescribedGroup{"busy": {Group: "busy", State: "Stable", Protocol: "range", Members: make([]wire.Member, 3)}})}
	rows := BuildGroupRows(GroupsInput{Assignment: a, Files: files, Extra: la.LiveGroupNames()})
	MergeLive(rows, la)
	by := map[string]GroupRow{}
	for _, r := range rows {
		by[r.Group] = r
	}
	busy := by["busy"]
	if !busy.HasIssue(IssueStaleOnNonCoord) || busy.Live.Members != 3 || busy.Live.State != "Stable" || busy.Live.Protocol != "range" || len(busy.Live.StaleOn) != 1 {
		t.Errorf("busy: %+v %+v", busy, busy.Live)
	}
	if busy.HasIssue(IssueFileOnly) || busy.HasIssue(IssueWireMismatch) {
		t.Errorf("busy flags %v", busy.Issues)
	}
	if d := by["on-disk"]; !d.HasIssue(IssueFileOnly) || d.Live.State != "" {
		t.Errorf("on-disk: %v", d.Issues)
	}
	if p := by["pinned"]; !p.HasIssue(IssueWireMismatch) || p.HasIssue(IssueFileOnly) {
		t.Errorf("pinned: %v", p.Issues)
	}
	lo := by["live-only"]
	if !slices.Equal(lo.Sources, []string{SourceLive}) || lo.HasIssue(IssueStaleOnNonCoord) || lo.Live.State != "Empty" {
		t.Errorf("live-only: %+v %+v", lo, lo.Live)
	}
	if !StateMatch(&lo, []string{"Empty"}) || StateMatch(&lo, []string{"Stable"}) || !StateMatch(&lo, nil) {
		t.Error("StateMatch")
	}
}

func TestStateMessage(t *testing.T) {
	t.Parallel()
	for state, want := range map[string]string{
		"Empty":              "Consumer group 'g' has no active members.",
		"Dead":               "Consumer group 'g' does not exist.",
		"PreparingRebalance": "Warning: Consumer group 'g' is rebalancing.",
		"Stable":             "",
	} {
		if got := StateMessage("g", state); got != want {
			t.Errorf("%s: %q", state, got)
		}
	}
}

// MergeLive reads the listing-ordered answers where they line up and the
// maps elsewhere: the rows are the same as with the maps alone.
func TestMergeLiveListedAnswersAgreeWithMaps(t *testing.T) {
	t.Parallel()
	b0, b1 := wire.Broker{NodeID: 0}, wire.Broker{NodeID: 1}
	lg := func(names ...string) []wire.ListedGroup {
		var out []wire.ListedGroup
		for _, n := range names {
			out = append(out, wire.ListedGroup{Group: n, State: "Empty"})
		}
		return out
	}
	listings := []wire.BrokerGroups{{Broker: b0, Groups: lg("a", "b", "stale")}, {Broker: b1, Groups: lg("c", "stale")}}
	coords := map[string]wire.Coordinator{"a": {Key: "a", NodeID: 0}, "b": {Key: "b", NodeID: -1, Err: "COORDINATOR_NOT_AVAILABLE", Code: 15},
		"c": {Key: "c", NodeID: 1}, "stale": {Key: "stale", NodeID: 1}}
	desc := map[string]wire.DescribedGroup{"a": {Group: "a", State: "Stable", Protocol: "range", Members: []wire.Member{{MemberID: "m"}}},
		"b": {Group: "b", Err: "coordinator lookup: COORDINATOR_NOT_AVAILABLE"}, "c": {Group: "c", State: "Empty"},
		"stale": {Group: "stale", State: "Stable", Protocol: "sticky", Members: []wire.Member{{MemberID: "x"}, {MemberID: "y"}}}}
	// Aligned answers as GatherGroups keeps them: "c" out of order (so
	// not aligned: Key ""), "stale" described by the broker that does not
	// coordinate it (kept in ListedDescribed, never used).
	listedCoords := [][]wire.Coordinator{{coords["a"], coords["b"], coords["stale"]}, {{}, coords["stale"]}}
	listedDesc := [][]wire.DescribedGroup{{desc["a"], {}, {Group: "stale", State: "Empty"}}, {desc["c"], desc["stale"]}}
	run := func(la *LiveAnswers) []GroupRow {
		rows := BrokersOnlyRows(la.LiveGroupNames())
		MergeLive(rows, la)
		return rows
	}
	maps := run(&LiveAnswers{GatheredGroups: wire.NewGatheredGroups(listings, coords, desc)})
	aligned := wire.NewGatheredGroups(listings, coords, desc)
	aligned.ListedCoords, aligned.ListedDescribed = listedCoords, listedDesc
	both := run(&LiveAnswers{GatheredGroups: aligned})
	if !reflect.DeepEqual(maps, both) {
		t.Fatalf("maps only:\n%+v\nwith the listed answers:\n%+v", maps, both)
	}
	for _, r := range both {
		if r.Group == "stale" && (r.Live.Members != 2 || len(r.Live.StaleOn) != 1) {
			t.Errorf("stale: %+v", *r.Live)
		}
	}
}
