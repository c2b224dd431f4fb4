package wire

import "github.com/twmb/franz-go/pkg/kerr"

// What a FindCoordinator answer means for routing, so callers never
// compare error codes.

// Unassigned reports COORDINATOR_NOT_AVAILABLE: no alive broker can take
// the key (on kaas, the broker its routing names is not alive). It is an
// answer about routing ("none"), not a failed lookup.
func (c Coordinator) Unassigned() bool { return c.Code == kerr.CoordinatorNotAvailable.Code }

// Failed reports a lookup that says nothing about routing: an error other
// than COORDINATOR_NOT_AVAILABLE (the request failed, NOT_COORDINATOR, an
// authorization error).
func (c Coordinator) Failed() bool { return c.Err != "" && !c.Unassigned() }

// Found reports an answer that names a coordinator.
func (c Coordinator) Found() bool { return c.Err == "" && c.NodeID >= 0 }
