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
	la := &LiveAnswers{Coords: map[string]wire.Coordinator{
		"a": {Key: "a", NodeID: 0},
		"b": {Key: "b", Err: "NOT_COORDINATOR", Code: kerr.NotCoordinator.Code},
		"c": {Key: "c", Err: "COORDINATOR_NOT_AVAILABLE", Code: kerr.CoordinatorNotAvailable.Code},
	}}
	brokers := []BrokerAnswer{{Node: 0, Broker: "kaas-0", Answered: true}, {Node: 1, Broker: "kaas-1", Error: "connection refused"}}
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
