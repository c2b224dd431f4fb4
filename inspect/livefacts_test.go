package inspect

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// BuildLiveFacts from literals: coordinators counted, a failed lookup
// (COORDINATOR_NOT_AVAILABLE is not one), a broker that did not answer, and
// one the assignment calls alive that the cluster metadata lacks.
func TestBuildLiveFacts(t *testing.T) {
	t.Parallel()
	a := &volume.Assignment{Brokers: []volume.BrokerEntry{{ID: "kaas-0", Health: "alive"}, {ID: "kaas-1", Health: "alive"}, {ID: "kaas-2", Health: "alive"}, {ID: "kaas-3", Health: "dead"}}}
	rows := []GroupRow{{Group: "a", Coordinator: "kaas-0"}, {Group: "b", Coordinator: "kaas-0"}, {Group: "c", Coordinator: "kaas-1"}, {Group: "d"}}
	la := &LiveAnswers{GatheredGroups: wire.NewGatheredGroups(nil, map[string]wire.Coordinator{
		"a": {Key: "a", NodeID: 0},
		"b": {Key: "b", Err: "NOT_COORDINATOR", Code: kerr.NotCoordinator.Code},
		"c": {Key: "c", Err: "COORDINATOR_NOT_AVAILABLE", Code: kerr.CoordinatorNotAvailable.Code},
	}, nil)}
	brokers := []BrokerSource{{Node: 0, Broker: "kaas-0", Answered: true}, {Node: 1, Broker: "kaas-1", Error: "connection refused"}}
	f := BuildLiveFacts(rows, la, brokers, a)
	if f.Coordinates["kaas-0"] != 2 || f.Coordinates["kaas-1"] != 1 || len(f.Coordinates) != 2 {
		t.Errorf("coordinates %v", f.Coordinates)
	}
	if !slices.Equal(f.LookupFailed, []string{"b"}) {
		t.Errorf("lookup failed %v", f.LookupFailed)
	}
	if len(f.Unreachable) != 2 || f.Unreachable["kaas-1"] != "connection refused" || f.Unreachable["kaas-2"] == "" {
		t.Errorf("unreachable %v", f.Unreachable)
	}
	if len(f.Rows) != len(rows) {
		t.Errorf("rows %d", len(f.Rows))
	}
	// Without a volume only the brokers' own answers count.
	if f := BuildLiveFacts(rows, la, brokers, nil); len(f.Unreachable) != 1 {
		t.Errorf("no volume: unreachable %v", f.Unreachable)
	}
}

// ListedLiveFacts over one gathering, its rows prepared from the listings
// as doctor prepares them: brokers only, then merged with a volume whose
// offset file names a group no broker lists.
func TestListedLiveFacts(t *testing.T) {
	t.Parallel()
	gg := wire.NewGatheredGroups(
		[]wire.BrokerGroups{
			{Broker: wire.Broker{NodeID: 0, Host: "k0", Port: 9092}, Groups: []wire.ListedGroup{{Group: "app", State: "Stable"}, {Group: "ghost", State: "Empty"}}},
			{Broker: wire.Broker{NodeID: 1, Host: "k1", Port: 9092}, Groups: []wire.ListedGroup{{Group: "app", State: "Empty"}}},
			{Broker: wire.Broker{NodeID: 2, Host: "k2", Port: 9092}, Groups: []wire.ListedGroup{}, Err: "connection refused"},
		},
		map[string]wire.Coordinator{
			"app":   {Key: "app", NodeID: 0},
			"ghost": {Key: "ghost", NodeID: -1, Err: "NOT_COORDINATOR", Code: kerr.NotCoordinator.Code},
		},
		map[string]wire.DescribedGroup{"app": {Group: "app", Coordinator: 0, State: "Stable", Members: []wire.Member{{MemberID: "m1"}}}},
	)
	f, sources := ListedLiveFacts(gg, PrepareListedRows(GroupsInput{}, false, gg.Listings), nil)
	if len(sources) != 3 || !sources[0].Answered || sources[2].Answered || sources[2].Error != "connection refused" || sources[0].Groups != 2 {
		t.Fatalf("sources %+v", sources)
	}
	if len(f.Rows) != 2 || f.Rows[0].Group != "app" || !slices.Equal(f.Rows[0].Live.StaleOn, []string{"node 1"}) || f.Rows[0].Live.Members != 1 {
		t.Fatalf("rows %+v", f.Rows)
	}
	if !slices.Equal(f.LookupFailed, []string{"ghost"}) || len(f.Unreachable) != 1 || f.Unreachable["node 2"] != "connection refused" {
		t.Errorf("lookup failed %v, unreachable %v", f.LookupFailed, f.Unreachable)
	}

	// With the volume: brokers named as the assignment names them, the
	// file-only group flagged, every row's computed coordinator counted.
	a := &volume.Assignment{Brokers: []volume.BrokerEntry{{ID: "kaas-0", Health: "alive"}, {ID: "kaas-1", Health: "alive"}, {ID: "kaas-2", Health: "alive"}}}
	in := GroupsInput{Assignment: a, Files: []GroupFile{{Group: "idle", Layout: volume.OffsetsCurrent, Format: "envelope", Partitions: 4}}}
	f, sources = ListedLiveFacts(gg, PrepareListedRows(in, true, gg.Listings), in.Assignment)
	if sources[2].Broker != "kaas-2" || f.Unreachable["kaas-2"] != "connection refused" {
		t.Errorf("named sources %+v, unreachable %v", sources, f.Unreachable)
	}
	counted := 0
	for _, n := range f.Coordinates {
		counted += n
	}
	var idle *GroupRow
	for i := range f.Rows {
		if f.Rows[i].Group == "idle" {
			idle = &f.Rows[i]
		}
	}
	if len(f.Rows) != 3 || counted != 3 || idle == nil || !idle.HasIssue(IssueFileOnly) {
		t.Errorf("rows %d, coordinates %v, idle %+v", len(f.Rows), f.Coordinates, idle)
	}
}
