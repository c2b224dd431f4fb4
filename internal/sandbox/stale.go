package sandbox

import (
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Stale in-memory groups (kaas gh #89, and kaas's Go flavor): a broker that
// stops coordinating a group keeps it in memory, and a ListGroups that is
// not filtered by ownership lists it. Clients that union ListGroups over
// every broker (the Kafka AdminClient, kafka-consumer-groups --list) then
// show a group on a broker that does not coordinate it, and a group deleted
// on its coordinator "reappears". Current kaas filters ListGroups by
// ownership, which is the sandbox's default; EmulateStaleGroups switches
// the older behaviour on so tools can be tested against the symptom.
//
// A stale group stays listed on its old broker until that broker restarts
// (StopBroker drops its memory), whatever happens to the group elsewhere,
// including DeleteGroups on its coordinator.

// staleSet is the groups each broker keeps in memory without coordinating
// them.
type staleSet struct {
	mu sync.Mutex
	on bool
	m  map[string]map[string]string // broker id → group → last state seen
}

// EmulateStaleGroups makes every broker keep the groups that move away
// from it and list them in ListGroups (on) or behave like current kaas
// (off; the default). Turning it off forgets every stale group.
func (s *Sandbox) EmulateStaleGroups(on bool) {
	s.stale.mu.Lock()
	defer s.stale.mu.Unlock()
	s.stale.on = on
	if !on {
		s.stale.m = nil
	}
}

// MakeStale puts group in broker's memory as a stale group in state (e.g.
// "Empty"), as if the group had moved away from it. The broker must exist;
// stale emulation is switched on.
func (s *Sandbox) MakeStale(brokerID, group, state string) error {
	if _, err := s.lookup(brokerID); err != nil {
		return err
	}
	if group == "" {
		return fmt.Errorf("empty group id")
	}
	s.stale.mu.Lock()
	defer s.stale.mu.Unlock()
	s.stale.on = true
	s.stale.put(brokerID, group, state)
	return nil
}

// StaleGroups lists the stale groups a broker holds, sorted.
func (s *Sandbox) StaleGroups(brokerID string) []string {
	s.stale.mu.Lock()
	defer s.stale.mu.Unlock()
	out := make([]string, 0, len(s.stale.m[brokerID]))
	for g := range s.stale.m[brokerID] {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

func (st *staleSet) put(brokerID, group, state string) {
	if st.m == nil {
		st.m = map[string]map[string]string{}
	}
	if st.m[brokerID] == nil {
		st.m[brokerID] = map[string]string{}
	}
	if state == "" {
		state = "Empty"
	}
	st.m[brokerID][group] = state
}

// noteMoves records the moved groups on the running brokers they left
// (called by apply with the old and new routes).
func (s *Sandbox) noteMoves(old, cur *routeState, moved []string) {
	s.stale.mu.Lock()
	defer s.stale.mu.Unlock()
	if !s.stale.on {
		return
	}
	for _, g := range moved {
		from, to := old.group(g), cur.group(g)
		if b, ok := s.byID[from]; ok && from != to && b.isRunning() {
			// Relinquishing shuts the group down: members are gone.
			s.stale.put(from, g, "Empty")
		}
	}
	// A group that comes back to a broker is no longer stale there.
	for id, gs := range s.stale.m {
		for g := range gs {
			if cur.group(g) == id {
				delete(gs, g)
			}
		}
	}
}

// forgetStale drops a stopped broker's memory.
func (s *Sandbox) forgetStale(brokerID string) {
	s.stale.mu.Lock()
	delete(s.stale.m, brokerID)
	s.stale.mu.Unlock()
}

// addStaleListings appends broker b's stale groups to its ListGroups
// answer (honouring the states filter, exact match as kaas does).
func (s *Sandbox) addStaleListings(b *broker, req *kmsg.ListGroupsRequest, r *kmsg.ListGroupsResponse) {
	s.stale.mu.Lock()
	defer s.stale.mu.Unlock()
	if !s.stale.on || len(s.stale.m[b.id]) == 0 {
		return
	}
	listed := map[string]bool{}
	for _, g := range r.Groups {
		listed[g.Group] = true
	}
	names := make([]string, 0, len(s.stale.m[b.id]))
	for g := range s.stale.m[b.id] {
		names = append(names, g)
	}
	slices.Sort(names)
	for _, g := range names {
		state := s.stale.m[b.id][g]
		if listed[g] || (req != nil && len(req.StatesFilter) > 0 && !slices.Contains(req.StatesFilter, state)) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState = g, "consumer", state
		r.Groups = append(r.Groups, lg)
	}
}
