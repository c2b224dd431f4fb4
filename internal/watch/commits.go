package watch

import (
	"fmt"
	"slices"
	"time"
)

// CommitTimes is what an offsets journal says of when each group last
// committed, read once in bounded memory: a time per group and per
// partition, no offsets. A change record is a commit seen at its time (or
// a write by a tool: kaasctl's own writes are changes too); a group first
// seen in a segment's opening snapshot committed at or before it; a gap
// may hide a commit of any group.
type CommitTimes struct {
	Dir string
	// Start is the journal's first record: nothing before it is known.
	Start time.Time
	// LastGap is the latest time up to which changes may have gone
	// unrecorded (zero: no gap).
	LastGap time.Time
	// Warnings are the reader's (torn or unreadable lines, segments).
	Warnings []string
	// Dirs are the offsets dirs the segments' headers name (what the
	// journal followed).
	Dirs     []string
	groups   map[string]*groupCommits
	keys     map[string]string
	segStart time.Time
}

type groupCommits struct {
	// since: first seen in a segment's opening snapshot then (its
	// commits before are unknown); last: its last recorded change.
	since, last time.Time
	parts       map[string]time.Time
}

// ReadCommitTimes reads the offsets journal in dir (as
// ResolveOffsetJournal names it) into commit times.
func ReadCommitTimes(dir string) (*CommitTimes, error) {
	c := &CommitTimes{Dir: dir, groups: map[string]*groupCommits{}, keys: map[string]string{}}
	res, err := ReadOffsetJournal(dir, JournalReadOptions{Each: c.add})
	if err != nil {
		return nil, err
	}
	c.Warnings = res.Warnings
	return c, nil
}

func (c *CommitTimes) add(r JournalRecord) {
	if c.Start.IsZero() || r.Time.Before(c.Start) {
		c.Start = r.Time
	}
	switch r.Kind {
	case RecSegment:
		c.segStart = r.Time
		if r.Dir != "" && !slices.Contains(c.Dirs, r.Dir) {
			c.Dirs = append(c.Dirs, r.Dir)
		}
		return
	case RecGap:
		if r.Time.After(c.LastGap) {
			c.LastGap = r.Time
		}
		return
	}
	g := c.groups[r.Group]
	if g == nil {
		g = &groupCommits{since: r.Time}
		c.groups[r.Group] = g
		if r.Kind == RecSnapshot && !r.Time.After(c.segStart) {
			return // known from the segment's opening snapshot
		}
	} else if r.Kind == RecSnapshot {
		return // a later segment's snapshot: no change
	}
	// A change, a removal, a corrupt write, or a group first seen after
	// its segment began (its file appeared: a first commit).
	g.last = r.Time
	for _, m := range []map[string]int64{r.Changed, r.Offsets} {
		for k := range m {
			c.touch(g, k, r.Time)
		}
	}
	for _, k := range r.Removed {
		c.touch(g, k, r.Time)
	}
}

func (c *CommitTimes) touch(g *groupCommits, key string, t time.Time) {
	k, ok := c.keys[key]
	if !ok {
		k = key
		c.keys[k] = k
	}
	if g.parts == nil {
		g.parts = map[string]time.Time{}
	}
	g.parts[k] = t
}

// LastCommit is the latest time group may have committed, as far as the
// journal knows, and how it knows; false when the journal never saw the
// group.
func (c *CommitTimes) LastCommit(group string) (time.Time, string, bool) {
	g := c.groups[group]
	if g == nil {
		return time.Time{}, "", false
	}
	at, how := g.last, "last change recorded at "+stamp(g.last)
	if at.IsZero() {
		at, how = g.since, "no commit recorded since the journal first saw the group at "+stamp(g.since)
	}
	return c.withGap(at, how)
}

// PartitionCommit is the latest time group may have committed the
// partition key ("topic/partition"); false when the journal never saw the
// group.
func (c *CommitTimes) PartitionCommit(group, key string) (time.Time, string, bool) {
	g := c.groups[group]
	if g == nil {
		return time.Time{}, "", false
	}
	if t, ok := g.parts[key]; ok {
		return c.withGap(t, key+" last changed at "+stamp(t))
	}
	return c.withGap(g.since, key+" not changed since the journal first saw the group at "+stamp(g.since))
}

func (c *CommitTimes) withGap(at time.Time, how string) (time.Time, string, bool) {
	if c.LastGap.After(at) {
		return c.LastGap, how + fmt.Sprintf("; a gap in the journal up to %s may hide a later commit", stamp(c.LastGap)), true
	}
	return at, how, true
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
