package watchrun

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
)

// MembersWatch observes the membership of a watch's groups (watch
// --offsets with brokers): it prints each generation change with its
// causes, CHURN entering and leaving, and who a rewind was likely by; with
// a journal it records them for 'groups timeline'.
type MembersWatch struct {
	ctx     context.Context
	w       *OffsetsWatch
	cl      *wire.Client
	layout  volume.Layout
	win     inspect.MemberWindow
	journal *watch.EventJournal
	// known are the groups with an offset file (from the follower's
	// events); churning those in CHURN at the last round.
	known    map[string]bool
	churning map[string]bool
	// last is each group's last observed membership (a journal segment
	// starts with them).
	last map[string]inspect.MemberSample
	// unobservedSince: the brokers have not answered since then.
	unobservedSince time.Time
	unobservedWhy   string
}

// NewMembersWatch is the membership observer of the watch w over the
// brokers of cl (the window counts CHURN; journal nil: none). Close closes
// cl.
func NewMembersWatch(ctx context.Context, w *OffsetsWatch, cl *wire.Client, l volume.Layout, win inspect.MemberWindow, journal *watch.EventJournal) *MembersWatch {
	m := &MembersWatch{ctx: ctx, w: w, cl: cl, layout: l, win: win,
		known: map[string]bool{}, churning: map[string]bool{}, last: map[string]inspect.MemberSample{}}
	m.journal = journal
	if m.journal != nil {
		m.journal.Snapshot = m.snapshot
	}
	return m
}

// OnTick is the follower's tick (nil without membership).
func (m *MembersWatch) OnTick() func() {
	if m == nil {
		return nil
	}
	return m.tick
}

// noteFiles keeps the groups the follower saw files of.
func (m *MembersWatch) noteFiles(evs []watch.OffsetEvent) {
	for _, ev := range evs {
		if ev.Cur.Missing {
			delete(m.known, ev.Cur.Group)
		} else {
			m.known[ev.Cur.Group] = true
		}
	}
}

// tick is one round: describe, print the changes and CHURN, journal.
func (m *MembersWatch) tick() {
	now := m.w.env.Now()
	a, _, _ := volume.ReadAssignment(m.layout.AssignmentPath())
	known := make([]string, 0, len(m.known))
	for g := range m.known {
		known = append(known, g)
	}
	r := observe.ObserveMembers(m.ctx, m.cl, a, known, true, m.w.sel.Match, now)
	var recs []watch.EventRecord
	if r.Err != "" {
		if m.unobservedSince.IsZero() {
			m.unobservedSince, m.unobservedWhy = now, "brokers: "+r.Err
			m.w.env.Notes.Warnf("membership: brokers: %s", r.Err)
		}
	} else if !m.unobservedSince.IsZero() {
		since := m.unobservedSince
		recs = append(recs, watch.EventRecord{Kind: watch.EvUnobserved, Time: now, Since: &since, Problem: m.unobservedWhy})
		m.unobservedSince = time.Time{}
	}
	groups := make([]string, 0, len(r.Samples))
	for g := range r.Samples {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	for _, g := range groups {
		recs = append(recs, m.observe(g, r.Samples[g])...)
	}
	m.win.Sweep()
	for g := range m.last {
		if _, ok := r.Samples[g]; !ok && r.Err == "" {
			delete(m.last, g)
		}
	}
	if m.journal != nil {
		if err := m.journal.Append(now, recs); err != nil {
			m.w.env.Notes.Warnf("events journal: %v", err)
		}
	}
	m.w.out.Flush()
}

// observe takes one group's sample, prints what changed and returns the
// journal records.
func (m *MembersWatch) observe(group string, s inspect.MemberSample) []watch.EventRecord {
	var recs []watch.EventRecord
	if s.Observed() {
		m.last[group] = s
	}
	if c, ok := m.win.Observe(group, s, nil); ok {
		recs = append(recs, inspect.MembersRecord(group, s, &c))
		m.emit(MemberWatchEvent{Time: c.Time, Group: group, Kind: watch.EvMembers, Change: &c,
			Detail: fmt.Sprintf("generation change %d (as observed): %s", c.ObservedGeneration, c.Summary())})
	}
	h := inspect.GroupHealth{Group: group, State: inspect.HealthOK, Conditions: []string{inspect.HealthOK}, Evidence: []inspect.HealthEvidence{}}
	m.win.Apply(&h)
	before := []string{}
	if m.churning[group] {
		before = append(before, inspect.HealthChurn)
	}
	for _, r := range inspect.ConditionChanges(before, h, s.Time) {
		recs = append(recs, r)
		ev := MemberWatchEvent{Time: r.Time, Group: group, Kind: watch.EvCondition, Condition: r.Condition, Entered: r.Entered, Detail: r.Detail}
		if !r.Entered {
			ev.Detail = "no more than " + strconv.Itoa(m.win.Rebalances) + " generation changes in the window any more"
		}
		m.emit(ev)
	}
	m.churning[group] = h.Has(inspect.HealthChurn)
	return recs
}

// rewindAuthors adds to each REWIND of evs who it was likely by.
func (m *MembersWatch) rewindAuthors(evs []watch.OffsetEvent) {
	for i := range evs {
		for j := range evs[i].Anomalies {
			a := &evs[i].Anomalies[j]
			if a.Kind == inspect.AnomalyRewind {
				a.Detail += "; " + m.win.Attribute(evs[i].Cur.Group, *a).Text()
			}
		}
	}
}

// emit keeps a membership event in the view and prints it in the
// watch's format.
func (m *MembersWatch) emit(ev MemberWatchEvent) {
	m.w.view.Members = append(m.w.view.Members, ev)
	m.w.out.Member(ev)
}

// snapshot is every group's membership at the start of a journal segment.
func (m *MembersWatch) snapshot(time.Time) []watch.EventRecord {
	groups := make([]string, 0, len(m.last))
	for g := range m.last {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	out := make([]watch.EventRecord, 0, len(groups))
	for _, g := range groups {
		out = append(out, inspect.MembersRecord(g, m.last[g], nil))
	}
	return out
}

// Close closes the events journal and the connection.
func (m *MembersWatch) Close() {
	if m == nil {
		return
	}
	if m.journal != nil {
		m.journal.Close()
	}
	m.cl.Close()
}
