package exporter

import (
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/observe"
)

// MembersOptions configure what the exporter does with the membership it
// sees at every refresh (DescribeGroups on each group's coordinator): the
// CHURN condition, the authors of rewinds, and the events journal.
type MembersOptions struct {
	// Rebalances: CHURN when more than this many generation changes fall
	// in the health window (0: inspect.DefaultChurnRebalances).
	Rebalances int
	// PageRecords is how many records a rewind by the group's own members
	// may go back before it pages (0: inspect.DefaultRewindPageRecords);
	// exported as kaas_exporter_rewind_page_records for the alert rules.
	PageRecords int64
	// ZombieGrace bounds the look for an older generation's commit after a
	// generation change (0: inspect.DefaultZombieGrace).
	ZombieGrace time.Duration
	// OutOfOrder is the generation's note on commits landing out of order.
	OutOfOrder string
	// Journal records the membership changes, the conditions entering and
	// leaving, and when the brokers could not be asked (nil: none).
	Journal *watch.EventJournal
}

// membership is the exporter's state of every group's members.
type membership struct {
	win     inspect.MemberWindow
	journal *watch.EventJournal
	// conds are each group's conditions at the last refresh, kept only
	// with a journal (their changes are recorded); interned.
	conds    map[string][]string
	interned map[string][]string
	// unobservedSince is when the brokers stopped answering (zero: they
	// answer), recorded in the journal when they answer again.
	unobservedSince time.Time
	unobservedWhy   string
	errors          int64
	// current is the refresh being journaled (a new segment's snapshot
	// reads it); nil between refreshes.
	current *observe.Observation
	// recs are the refresh's records, written at its end (membersDone).
	recs []watch.EventRecord
}

func newMembership(opt Options) membership {
	m := opt.Members
	return membership{win: inspect.MemberWindow{Window: opt.Window, Rebalances: m.Rebalances, PageRecords: m.PageRecords,
		ZombieGrace: m.ZombieGrace, OutOfOrder: m.OutOfOrder}, journal: m.Journal, conds: map[string][]string{}, interned: map[string][]string{}}
}

// journalSnapshot makes the journal's segments start with the membership
// of every group of the refresh being journaled.
func (m *membership) journalSnapshot() {
	if m.journal != nil {
		m.journal.Snapshot = func(time.Time) []watch.EventRecord { return m.snapshot(m.current) }
	}
}

// observeMembers takes the membership of the groups of refresh o from lo
// on (health holds theirs, revealed the rewinds their health windows
// revealed) into the window, adds CHURN and the rewinds' authors to their
// health and the produce rates to their lag spread, and keeps what changed
// for the journal (membersDone writes it).
func (e *Exporter) observeMembers(o *observe.Observation, lo int, health []inspect.GroupHealth, revealed [][]inspect.OffsetAnomaly) {
	m := &e.members
	for i := range health {
		g := &o.Groups[lo+i]
		name := g.Row.Group
		var s inspect.MemberSample
		if g.Members != nil {
			s = *g.Members
		}
		if !o.HasBrokers {
			s = inspect.MemberSample{Time: o.Time, Err: "the exporter does not ask the brokers (no --brokers): membership unknown"}
		}
		c, changed := m.win.Observe(name, s, revealed[i])
		if changed && m.journal != nil {
			m.recs = append(m.recs, inspect.MembersRecord(name, s, &c))
		}
		m.win.Apply(&health[i])
		if d := health[i].Drain; d != nil && d.Known {
			if g.Spread == nil {
				g.Spread = &inspect.LagSpread{Hot: []inspect.HotPartition{}}
			}
			g.Spread.AddRates(d)
		}
		if m.journal != nil {
			m.recs = append(m.recs, inspect.ConditionChanges(m.conds[name], health[i], o.Time)...)
			m.conds[name] = m.intern(health[i].Conditions)
		}
	}
}

// membersDone ends the refresh's membership: the window swept, the
// journal written (its errors are exported from the next page on).
func (e *Exporter) membersDone(o *observe.Observation) {
	m := &e.members
	m.win.Sweep()
	if m.journal != nil {
		m.forgetConds(o)
		recs := m.recs
		m.recs = nil
		e.journalMembers(o, recs)
	}
}

// setMemberCounters sets what the page exports of the membership's settings
// and the journal's errors (before the page is built: its refresh rows
// come first).
func (e *Exporter) setMemberCounters() {
	m := &e.members
	page := m.win.PageRecords
	if page <= 0 {
		page = inspect.DefaultRewindPageRecords
	}
	reb := m.win.Rebalances
	if reb <= 0 {
		reb = inspect.DefaultChurnRebalances
	}
	e.c.members = memberCounters{pageRecords: page, rebalances: reb, journal: m.journal != nil, journalErrors: m.errors}
}

// journalMembers appends the refresh's records, and an unobserved stretch
// when the brokers answer again after not answering.
func (e *Exporter) journalMembers(o *observe.Observation, recs []watch.EventRecord) {
	m := &e.members
	if o.HasBrokers && o.WireErr != "" {
		if m.unobservedSince.IsZero() {
			m.unobservedSince, m.unobservedWhy = o.Time, "brokers: "+o.WireErr
		}
	} else if !m.unobservedSince.IsZero() {
		since := m.unobservedSince
		recs = append([]watch.EventRecord{{Kind: watch.EvUnobserved, Time: o.Time, Since: &since, Problem: m.unobservedWhy}}, recs...)
		m.unobservedSince = time.Time{}
	}
	m.current = o
	err := m.journal.Append(o.Time, recs)
	m.current = nil
	for _, w := range m.journal.Warnings {
		e.logf("%s", w)
	}
	m.journal.Warnings = nil
	if err != nil {
		m.errors++
		e.logf("events journal: %v (%d records not written)", err, len(recs))
	}
}

// snapshot is every group's membership at the start of a journal segment.
func (m *membership) snapshot(last *observe.Observation) []watch.EventRecord {
	if last == nil {
		return nil
	}
	var out []watch.EventRecord
	for i := range last.Groups {
		if s := last.Groups[i].Members; s != nil && s.Observed() {
			out = append(out, inspect.MembersRecord(last.Groups[i].Row.Group, *s, nil))
		}
	}
	return out
}

// intern keeps one copy of each set of conditions (most groups share
// ["OK"]).
func (m *membership) intern(cs []string) []string {
	k := ""
	for _, c := range cs {
		k += c + ","
	}
	if v, ok := m.interned[k]; ok {
		return v
	}
	v := append([]string(nil), cs...)
	m.interned[k] = v
	return v
}

// forgetConds drops the conditions of groups the refresh did not observe.
func (m *membership) forgetConds(o *observe.Observation) {
	if len(m.conds) <= len(o.Groups) {
		return
	}
	seen := make(map[string]bool, len(o.Groups))
	for i := range o.Groups {
		seen[o.Groups[i].Row.Group] = true
	}
	for k := range m.conds {
		if !seen[k] {
			delete(m.conds, k)
		}
	}
}

// Close closes the events journal (the exporter stops recording).
func (e *Exporter) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if j := e.members.journal; j != nil {
		return j.Close()
	}
	return nil
}
