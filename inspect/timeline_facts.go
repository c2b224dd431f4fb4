package inspect

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/watch"
)

// timelineFacts are what every source of a group's story may need: the
// membership the observers confirmed over time, the generation changes,
// the coordinator moves, the stretches nobody observed, and kaasctl's
// writes. Built once from the input before the sources run.
type timelineFacts struct {
	group string
	// ticks are the moments an observer confirmed the group's membership
	// (a record of it, or of the observer being alive), in time order,
	// each with the membership then (nil: not known yet).
	ticks      []obsTick
	maxGap     time.Duration
	changes    []MembershipChange
	moves      []CoordinatorMove
	unobserved []stretch
	writes     []KaasctlWrite
	matched    []bool // writes a commit was attributed to
	// What the records say of the broker's answers.
	membersSeen, hostsReported, assignmentsReported, withMembers bool
	// clientIDs: some member carried a client id.
	clientIDs   bool
	journalGaps int
}

type obsTick struct {
	at    time.Time
	state *MemberSample
}

type stretch struct {
	since, until time.Time
	why          string
}

// observerSlack is added to the longest a running observer stays silent
// (its interval, or AliveEvery) before a silence is a stretch nobody
// observed.
const observerSlack = 5 * time.Second

func newTimelineFacts(in *TimelineInput) *timelineFacts {
	f := &timelineFacts{group: in.Group, writes: in.Writes, matched: make([]bool, len(in.Writes)), maxGap: watch.AliveEvery + observerSlack}
	f.readEvents(in)
	for _, m := range in.Moves {
		f.moves = append(f.moves, CoordinatorMove{Time: m.Time, From: m.From, To: m.To, Cause: string(m.Cause)})
	}
	for _, c := range f.changes {
		if c.Has(CauseCoordinatorMoved) {
			f.moves = append(f.moves, CoordinatorMove{Time: c.Since, From: c.From, To: c.To, Cause: "seen by the observer"})
		}
	}
	slices.SortStableFunc(f.moves, func(a, b CoordinatorMove) int { return a.Time.Compare(b.Time) })
	for _, p := range in.History {
		if p.Kind == watch.RecGap {
			f.journalGaps++
		}
	}
	return f
}

// readEvents walks the events journal: ticks, changes and unobserved
// stretches of the group.
func (f *timelineFacts) readEvents(in *TimelineInput) {
	var state *MemberSample
	var gapFrom *time.Time
	for _, r := range in.Events {
		switch r.Kind {
		case watch.EvSegment:
			if d, err := time.ParseDuration(r.Interval); err == nil {
				f.maxGap = max(f.maxGap, watch.AliveEvery+2*d+observerSlack)
			}
		case watch.EvUnobserved:
			f.unobserved = append(f.unobserved, stretch{since: *r.Since, until: r.Time, why: r.Problem})
			continue
		case watch.EvGap:
			t := r.Time
			gapFrom = &t
			continue
		case watch.EvMembers:
			if r.Group != f.group {
				continue
			}
			s := MemberSampleOfRecord(r)
			f.noteMembers(s, state, r.Change)
			state = &s
		}
		if gapFrom != nil {
			f.unobserved = append(f.unobserved, stretch{since: *gapFrom, until: r.Time, why: "a line of the events journal could not be read"})
			gapFrom = nil
		}
		f.tick(r.Time, state)
	}
}

// tick records an observer's confirmation at at; a silence since the
// previous one longer than a running observer keeps is a stretch nobody
// observed.
func (f *timelineFacts) tick(at time.Time, state *MemberSample) {
	if n := len(f.ticks); n > 0 && at.Sub(f.ticks[n-1].at) > f.maxGap {
		f.unobserved = append(f.unobserved, stretch{since: f.ticks[n-1].at, until: at, why: "no observer recorded anything: none was running, or it could not write its journal"})
	}
	f.ticks = append(f.ticks, obsTick{at: at, state: state})
}

// noteMembers takes one membership record: what the broker reports, and
// the generation change it records (or, for a snapshot after a time
// nobody observed, the one it shows).
func (f *timelineFacts) noteMembers(s MemberSample, prev *MemberSample, ch *watch.EventChange) {
	f.membersSeen = true
	if len(s.Members) > 0 {
		f.withMembers = true
		f.hostsReported = f.hostsReported || s.HostsReported
		f.clientIDs = f.clientIDs || slices.ContainsFunc(s.Members, func(m MemberInfo) bool { return m.ClientID != "" })
		f.assignmentsReported = f.assignmentsReported || s.AssignmentsReported
	}
	switch {
	case ch != nil:
		c := MembershipChange{Time: s.Time, Since: ch.Since, ObservedGeneration: ch.ObservedGeneration, Causes: ch.Causes, From: ch.From, To: ch.To,
			State: s.State, Members: len(s.Members), Joined: pick(s.Members, ch.Joined), Left: []MemberInfo{}}
		if prev != nil {
			c.StateBefore, c.Left = prev.State, pick(prev.Members, ch.Left)
		} else {
			c.Left = pick(nil, ch.Left)
		}
		f.changes = append(f.changes, c)
	case prev != nil:
		if c, _, ok := DiffMembership(*prev, s); ok {
			c.ObservedGeneration = -1 // seen only by comparing two snapshots
			f.changes = append(f.changes, c)
		}
	}
}

// pick are the members of ids, with what ms says of them (the id alone
// when ms does not hold it).
func pick(ms []MemberInfo, ids []string) []MemberInfo {
	out := make([]MemberInfo, 0, len(ids))
	for _, id := range ids {
		i := slices.IndexFunc(ms, func(m MemberInfo) bool { return m.ID == id })
		if i >= 0 {
			out = append(out, ms[i])
		} else {
			out = append(out, MemberInfo{ID: id})
		}
	}
	return out
}

// before is the membership as last confirmed at or before t (nil: none).
func (f *timelineFacts) before(t time.Time) *MembersAt {
	i := sortSearchTicks(f.ticks, t, true)
	if i < 0 || f.ticks[i].state == nil {
		return nil
	}
	return membersAt(f.ticks[i].at, f.ticks[i].state)
}

// after is the membership as first confirmed at or after t (nil: none).
func (f *timelineFacts) after(t time.Time) *MembersAt {
	i := sortSearchTicks(f.ticks, t, false)
	if i < 0 || f.ticks[i].state == nil {
		return nil
	}
	return membersAt(f.ticks[i].at, f.ticks[i].state)
}

// sortSearchTicks is the last tick at or before t (atOrBefore) or the
// first at or after it; -1 when none.
func sortSearchTicks(ts []obsTick, t time.Time, atOrBefore bool) int {
	i, _ := slices.BinarySearchFunc(ts, t, func(x obsTick, t time.Time) int { return x.at.Compare(t) })
	if atOrBefore {
		for i < len(ts) && !ts[i].at.After(t) {
			i++
		}
		return i - 1
	}
	if i == len(ts) {
		return -1
	}
	return i
}

func membersAt(at time.Time, s *MemberSample) *MembersAt {
	m := &MembersAt{Time: at, Members: len(s.Members), State: s.State, Coordinator: s.Coordinator}
	for _, mi := range s.Members {
		m.IDs = append(m.IDs, mi.Label())
	}
	return m
}

// unobservedAt says why the membership was not observed between since
// and t ("" when it was).
func (f *timelineFacts) unobservedAt(since, t time.Time) string {
	for _, s := range f.unobserved {
		if !t.Before(s.since) && !since.After(s.until) {
			return s.why
		}
	}
	return ""
}

// lastChange is the last generation change at or before t (nil: none).
func (f *timelineFacts) lastChange(t time.Time) *MembershipChange {
	for i := len(f.changes) - 1; i >= 0; i-- {
		if !f.changes[i].Time.After(t) {
			return &f.changes[i]
		}
	}
	return nil
}

// lastMove is the last coordinator move after from and at or before t.
func (f *timelineFacts) lastMove(from, t time.Time) *CoordinatorMove {
	for i := len(f.moves) - 1; i >= 0; i-- {
		m := &f.moves[i]
		if !m.Time.After(t) {
			if m.Time.After(from) || from.IsZero() {
				return m
			}
			return nil
		}
	}
	return nil
}

// writeSlack is how far kaasctl's record of a write may be from the change
// the offsets journal saw of it (the follower's poll, clocks of two hosts).
const writeSlack = 10 * time.Second

// matchWrite is kaasctl's write that made a change at t setting changed
// and removing removed (nil: none), marking it matched.
func (f *timelineFacts) matchWrite(t time.Time, changed map[string]int64, removed []string) *KaasctlWrite {
	for i := range f.writes {
		w := &f.writes[i]
		if f.matched[i] || absDur(w.Time.Sub(t)) > writeSlack {
			continue
		}
		overlap, agree := 0, true
		for _, p := range w.Partitions {
			if v, ok := changed[p.Partition]; ok {
				overlap++
				agree = agree && v == p.After
			} else if p.After < 0 && slices.Contains(removed, p.Partition) {
				overlap++
			}
		}
		if overlap > 0 && agree {
			f.matched[i] = true
			return w
		}
	}
	return nil
}

// notes say plainly what the record of the group cannot tell.
func (f *timelineFacts) notes(in *TimelineInput) []string {
	var out []string
	if in.Journal == "" {
		out = append(out, "no offsets journal was read: the story has no commits (record one with 'kaasctl watch --offsets --journal DIR' or 'kaasctl exporter --journal DIR')")
	}
	switch {
	case in.EventsDir == "":
		out = append(out, "no events journal was read: the membership was not recorded, so no commit can be told to be the group's own, an admin tool's or a zombie's (record it with 'kaasctl exporter --journal DIR -b BROKERS' or 'kaasctl watch --offsets --journal DIR -b BROKERS')")
	case !f.membersSeen:
		out = append(out, "the events journal holds no observation of the group's membership: its commits cannot be attributed")
	default:
		out = append(out, "generations are kaasctl's count of the changes it observed between two looks at the group: kaas's DescribeGroups carries no generation id, and a rebalance that kept every member id between two looks is not seen")
	}
	if f.withMembers && !f.hostsReported {
		out = append(out, "the coordinator reported no client hosts (kaas's DescribeGroups leaves client_host empty): members are named by member and client id only")
	}
	if f.withMembers && !f.clientIDs {
		out = append(out, "the coordinator reported no client ids (kaas 0.2.18 reports the connection's SASL principal as the client id, empty without authentication, and names members '-' and a counter): members are told apart by member id only")
	}
	if f.withMembers && !f.assignmentsReported {
		out = append(out, "member assignments: "+OwnershipNotReported)
	}
	if f.journalGaps > 0 {
		out = append(out, fmt.Sprintf("the offsets journal has %s: commits in them are unknown", healthPlural(f.journalGaps, "gap", "gaps")))
	}
	if in.Versions == 0 {
		out = append(out, "no assignment.json version was read: coordinator moves come only from the membership observed (give --journal DIR of 'kaasctl watch --journal', --assignments DIR, or the volume for the live version)")
	}
	if n := len(f.writes) - countTrue(f.matched); n > 0 && in.Journal != "" {
		out = append(out, fmt.Sprintf("%s by kaasctl matched no change the offsets journal recorded (written while nothing recorded, or they changed nothing)", healthPlural(n, "write", "writes")))
	}
	return out
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// membersLine is a membership in words.
func membersLine(s *MemberSample) string {
	if len(s.Members) == 0 {
		return fmt.Sprintf("no member (state %s, coordinator %s)", orNone(s.State), orNone(s.Coordinator))
	}
	labels := make([]string, len(s.Members))
	for i, m := range s.Members {
		labels[i] = m.Label()
	}
	return fmt.Sprintf("%s: %s (state %s, coordinator %s)", healthPlural(len(s.Members), "member", "members"), strings.Join(labels, ", "), orNone(s.State), orNone(s.Coordinator))
}
