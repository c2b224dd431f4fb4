package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestCoordinatorAnswerKinds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                      string
		co                        Coordinator
		found, unassigned, failed bool
	}{
		{"found", Coordinator{Key: "g", NodeID: 2}, true, false, false},
		{"not available", Coordinator{Key: "g", NodeID: -1, Err: "COORDINATOR_NOT_AVAILABLE", Code: kerr.CoordinatorNotAvailable.Code}, false, true, false},
		{"not coordinator", Coordinator{Key: "g", NodeID: -1, Err: "NOT_COORDINATOR", Code: kerr.NotCoordinator.Code}, false, false, true},
		{"request failed", Coordinator{Key: "g", NodeID: -1, Err: "i/o timeout"}, false, false, true},
		{"no node, no error", Coordinator{Key: "g", NodeID: -1}, false, false, false},
	} {
		if got := [3]bool{c.co.Found(), c.co.Unassigned(), c.co.Failed()}; got != [3]bool{c.found, c.unassigned, c.failed} {
			t.Errorf("%s: found/unassigned/failed = %v, want %v", c.name, got, [3]bool{c.found, c.unassigned, c.failed})
		}
	}
}
