package observe

import (
	"fmt"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
)

// StuckTracker follows groups' states over a window (groups describe
// --why --window) and says, per partition, whether the committed offset
// stayed while the group was alive: the evidence of a record its consumer
// cannot get past.
type StuckTracker struct {
	parts  map[stuckKey]*stuckObs
	groups map[string]*groupObs
}

type stuckKey struct {
	group, topic string
	part         int32
}

type stuckObs struct {
	offset      int64
	moved       bool
	since, last time.Time
	samples     int
	// others is the sum of the group's other committed offsets since
	// (progress.others): when it changes, the consumer worked elsewhere
	// and the partition's window starts again (elsewhere: it did).
	others    int64
	elsewhere bool
}

// groupObs is what the window saw of a group's liveness: the fewest
// members at an observation (-1: the brokers were not asked) and the
// offset file's rewrites.
type groupObs struct {
	minMembers int
	mod        time.Time
	rewrites   int
	samples    int
}

// NewStuckTracker starts an empty window.
func NewStuckTracker() *StuckTracker {
	return &StuckTracker{parts: map[stuckKey]*stuckObs{}, groups: map[string]*groupObs{}}
}

// Add records one observation of gs at at: members is how many the
// brokers reported (-1: not asked), fileMod the offset file's
// modification time (zero: none).
func (t *StuckTracker) Add(gs *inspect.GroupState, members int, fileMod, at time.Time) {
	g := t.groups[gs.Group]
	if g == nil {
		g = &groupObs{minMembers: members, mod: fileMod}
		t.groups[gs.Group] = g
	}
	g.minMembers = min(g.minMembers, members)
	if !fileMod.IsZero() && !fileMod.Equal(g.mod) {
		g.rewrites++
		g.mod = fileMod
	}
	g.samples++
	pr := progressOf(gs.Group, gs.Partitions, nil)
	for i := range gs.Partitions {
		p := &gs.Partitions[i]
		if p.Resume.Source == "" {
			continue
		}
		k := stuckKey{gs.Group, p.Topic, p.Partition}
		others := pr.others(k, p.Resume.Value)
		o := t.parts[k]
		if o == nil || (!o.moved && o.offset == p.Resume.Value && o.others != others) {
			// First seen, or sitting while the group moved elsewhere
			// (drained in turns): its window starts now.
			t.parts[k] = &stuckObs{offset: p.Resume.Value, since: at, last: at, samples: 1, others: others, elsewhere: o != nil}
			continue
		}
		o.moved = o.moved || o.offset != p.Resume.Value
		o.offset, o.last = p.Resume.Value, at
		o.others = others
		o.samples++
	}
}

// Stuck is what the window saw of one partition (nil: never observed).
func (t *StuckTracker) Stuck(group, topic string, part int32) *inspect.Stuck {
	o := t.parts[stuckKey{group, topic, part}]
	g := t.groups[group]
	if o == nil || g == nil {
		return nil
	}
	s := &inspect.Stuck{Offset: o.offset, Moved: o.moved, Since: o.since, Until: o.last, Samples: o.samples, Elsewhere: o.elsewhere}
	switch {
	case g.minMembers > 0:
		s.Alive, s.AliveBy = true, fmt.Sprintf("at least %d member(s) at each of %d observations", g.minMembers, g.samples)
	case g.minMembers == 0:
		s.AliveBy = "the brokers reported no member at some observation"
	case g.rewrites > 0:
		s.Alive, s.AliveBy = true, fmt.Sprintf("offline: its offset file was rewritten %d time(s) in the window (kaas rewrites it on every commit)", g.rewrites)
	default:
		s.AliveBy = "offline: its offset file was not rewritten in the window"
	}
	return s
}
