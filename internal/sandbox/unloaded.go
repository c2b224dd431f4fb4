package sandbox

import "sync"

// A kaas coordinator relinquishes a group when it moves away (or dies with
// the broker): the group is shut down there, and the new coordinator loads
// it only when a member joins (or commits). A group with members is back in
// memory on its new coordinator once they rejoin; an Empty group that
// moves is in no broker's memory any more, so the controller no longer
// reports it active (no entry) and no broker lists it. kfake keeps every
// group in one place, so the sandbox remembers those groups here.

type unloadedSet struct {
	mu sync.Mutex
	m  map[string]bool
}

// empty reports whether no group is unloaded (most of the time: a listing
// then skips the check per group).
func (u *unloadedSet) empty() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.m) == 0
}

func (u *unloadedSet) has(g string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.m[g]
}

func (u *unloadedSet) add(g string) {
	u.mu.Lock()
	if u.m == nil {
		u.m = map[string]bool{}
	}
	u.m[g] = true
	u.mu.Unlock()
}

func (u *unloadedSet) remove(g string) {
	u.mu.Lock()
	delete(u.m, g)
	u.mu.Unlock()
}

// noteUnloaded is called with the groups a new version moves: those Empty
// at the last look are unloaded.
func (s *Sandbox) noteUnloaded(moved []string) {
	s.groupsMu.Lock()
	defer s.groupsMu.Unlock()
	for _, g := range moved {
		if s.kfStates[g] == "Empty" {
			s.unloaded.add(g)
		}
	}
}

// reloadIfJoined forgets the unloaded mark of groups that have members
// again (a member joined: the coordinator loaded the group). The caller
// holds groupsMu.
func (s *Sandbox) reloadIfJoinedLocked() {
	for g, st := range s.kfStates {
		if st != "Empty" && st != "Dead" && s.unloaded.has(g) {
			s.unloaded.remove(g)
		}
	}
}

// Unloaded reports whether a group is in no broker's memory: it moved
// while Empty (see unloaded.go).
func (s *Sandbox) Unloaded(group string) bool { return s.unloaded.has(group) }
