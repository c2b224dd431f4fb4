package inspect

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MemberWindow keeps, per group, the last membership observation and the
// generation changes seen within the window: what CHURN, the membership
// series and the attribution of a rewind read. A group's state is small
// and bounded: its members as one compact string (none for a group
// without members), a few counters, and at most maxChurnMarks change
// times; only the last change keeps its members. It is what the exporter,
// 'groups health' and 'watch --offsets' share. It is not safe for
// concurrent use.
type MemberWindow struct {
	// Window bounds the changes CHURN counts (0: every change kept, up to
	// the bound).
	Window time.Duration
	// Rebalances: CHURN when more than this many generation changes fall
	// in the window (0: DefaultChurnRebalances).
	Rebalances int
	// ZombieGrace bounds the look for an older generation's commit after a
	// change (0: DefaultZombieGrace); PageRecords is the rewind severity's
	// threshold (0: DefaultRewindPageRecords).
	ZombieGrace time.Duration
	PageRecords int64
	// OutOfOrder is the generation's note on commits landing out of order.
	OutOfOrder string
	groups     map[string]*memberGroup
	strs       map[string]string
}

// DefaultChurnRebalances is how many generation changes a window may hold
// before CHURN: a rolling restart of a few consumers changes the
// generation once per consumer leaving and once per one joining.
const DefaultChurnRebalances = 3

// maxChurnMarks bounds the change times a group keeps: CHURN needs to know
// only whether there are more than the threshold in the window.
const maxChurnMarks = 32

// memberGroup is one group's membership state.
type memberGroup struct {
	// sig encodes the members of the last observation (memberSig); ""
	// when it had none.
	sig                string
	coordinator, state string
	members            int32
	// at is the last observation (Unix ns; 0: none yet); errSince the
	// start of the current run of failed ones (0: observed).
	at, errSince int64
	generation   int64
	joined, left int64
	// rebalances counts the generation changes by cause (ChurnCauses
	// order).
	rebalances [4]int64
	marks      []churnMark
	last       *MembershipChange
	move       *CoordinatorMove
	// rewinds are the attributed rewinds still in the window.
	rewinds []RewindAttribution
	seen    bool
}

// churnMark is one generation change: when, and its causes (a bit per
// ChurnCauses entry).
type churnMark struct {
	at     int64
	causes uint8
}

// RewindAttribution is one rewind of a group, attributed.
type RewindAttribution struct {
	Time time.Time `json:"time"`
	Rewound
	Attribution
	// Severity is RewindSeverity's: page or warning.
	Severity string `json:"severity"`
}

// ChurnStats are a group's membership figures at an evaluation.
type ChurnStats struct {
	// ObservedGeneration is kaasctl's count of the group's generations
	// since it started observing (not kaas's generation id).
	ObservedGeneration int64 `json:"observedGeneration"`
	// Changes are the generation changes in the window, by cause.
	Changes  int               `json:"changes"`
	ByCause  []ChurnCauseCount `json:"byCause"`
	Joined   int64             `json:"joinedTotal"`
	Left     int64             `json:"leftTotal"`
	Members  int               `json:"members"`
	Observed bool              `json:"observed"`
	// Rebalances counts the generation changes since the first
	// observation by cause (a change can have several).
	Rebalances []ChurnCauseCount `json:"rebalancesTotal"`
	// Last is the last change seen (nil: none yet).
	Last *MembershipChange `json:"last,omitempty"`
}

// ChurnCauseCount is how many generation changes had one cause.
type ChurnCauseCount struct {
	Cause string `json:"cause"`
	Count int    `json:"count"`
}

// Observe records one membership observation of group and attributes the
// rewinds it revealed since the previous observation (rewinds: the REWIND
// anomalies of the same refresh): the membership before them is the
// previous observation's, after them this one's. It returns the
// generation change this observation shows (ok false: none).
func (w *MemberWindow) Observe(group string, s MemberSample, rewinds []OffsetAnomaly) (MembershipChange, bool) {
	if w.groups == nil {
		w.groups, w.strs = map[string]*memberGroup{}, map[string]string{}
	}
	g := w.groups[group]
	if g == nil {
		if !s.Observed() && !slices.ContainsFunc(rewinds, func(a OffsetAnomaly) bool { return a.Kind == AnomalyRewind }) {
			return MembershipChange{}, false // nothing to keep (see blank)
		}
		g = &memberGroup{}
		w.groups[group] = g
	}
	g.seen = true
	before := g.membersAt()
	c, changed := w.record(g, s)
	for _, a := range rewinds {
		if a.Kind == AnomalyRewind {
			w.attribute(g, a, before, s)
		}
	}
	w.expire(g, s.Time)
	if g.blank() {
		delete(w.groups, group)
	}
	return c, changed
}

// blank reports whether g holds nothing a group without an entry does
// not: never observed (no brokers, or none answered for it yet), no
// rewind or coordinator move kept. Such a group has no entry: its health
// gets neither CHURN nor rewinds' authors either way, and a volume-only
// exporter of 100,000 groups would hold 24 MB of them.
func (g *memberGroup) blank() bool {
	return g.at == 0 && len(g.rewinds) == 0 && g.move == nil && len(g.marks) == 0 && g.last == nil
}

// record takes the observation into g and returns the change it shows.
func (w *MemberWindow) record(g *memberGroup, s MemberSample) (MembershipChange, bool) {
	if !s.Observed() {
		if g.errSince == 0 {
			g.errSince = s.Time.UnixNano()
		}
		return MembershipChange{}, false
	}
	g.errSince = 0
	sig := memberSig(s.Members)
	first := g.at == 0
	unchanged := sig == g.sig && s.Coordinator == g.coordinator && !(Rebalancing(s.State) && !Rebalancing(g.state))
	var c MembershipChange
	ok := false
	if !first && !unchanged {
		var continues bool
		c, continues, ok = DiffMembership(g.sample(), s)
		if ok {
			w.count(g, &c, continues)
		}
	}
	if sig != g.sig {
		g.sig = sig
	}
	g.coordinator, g.state, g.members, g.at = w.intern(s.Coordinator), w.intern(s.State), int32(len(s.Members)), s.Time.UnixNano()
	return c, ok
}

// count records change c in g: a new generation, or, when it continues a
// rebalance recorded at the previous observation, an amendment of it.
func (w *MemberWindow) count(g *memberGroup, c *MembershipChange, continues bool) {
	g.joined += int64(len(c.Joined))
	g.left += int64(len(c.Left))
	bits := causeBits(c.Causes)
	if n := len(g.marks); continues && n > 0 && g.last != nil && g.marks[n-1].at == g.at {
		// The same rebalance, seen again: its causes and members grow.
		added := bits &^ g.marks[n-1].causes
		g.marks[n-1].causes |= bits
		g.marks[n-1].at = c.Time.UnixNano()
		merged := mergeChange(*g.last, *c)
		g.last = &merged
		*c = merged
		addCauses(&g.rebalances, added)
		return
	}
	g.generation++
	c.ObservedGeneration = g.generation
	addCauses(&g.rebalances, bits)
	if len(g.marks) == maxChurnMarks {
		g.marks = append(g.marks[:0], g.marks[1:]...)
	}
	g.marks = append(g.marks, churnMark{at: c.Time.UnixNano(), causes: bits})
	kept := *c
	g.last = &kept
}

// mergeChange is a rebalance seen over two observations as one change.
func mergeChange(a, b MembershipChange) MembershipChange {
	out := b
	out.Since, out.StateBefore, out.ObservedGeneration = a.Since, a.StateBefore, a.ObservedGeneration
	out.Joined = append(slices.Clone(a.Joined), b.Joined...)
	out.Left = append(slices.Clone(a.Left), b.Left...)
	out.Causes = slices.Clone(a.Causes)
	for _, cs := range b.Causes {
		if !slices.Contains(out.Causes, cs) {
			out.Causes = append(out.Causes, cs)
		}
	}
	if a.From != "" {
		out.From = a.From
	}
	return out
}

// NoteMove records a coordinator move of group seen in assignment.json,
// kept for the attribution of the next rewind. A group the window holds no
// entry for gets one, which the next Sweep forgets unless the group is
// observed by then (one never observed has none: blank).
func (w *MemberWindow) NoteMove(group string, m CoordinatorMove) {
	g := w.groups[group]
	if g == nil {
		if w.groups == nil {
			w.groups, w.strs = map[string]*memberGroup{}, map[string]string{}
		}
		g = &memberGroup{}
		w.groups[group] = g
	}
	g.move = &m
}

// attribute classes one rewind and keeps it for the window.
func (w *MemberWindow) attribute(g *memberGroup, a OffsetAnomaly, before *MembersAt, cur MemberSample) {
	c := CommitContext{Time: a.Time, Since: a.Since, Rewound: []Rewound{{Partition: a.Partition, Before: a.Before, After: a.After}},
		Before: before, ZombieGrace: w.ZombieGrace, OutOfOrder: w.OutOfOrder, LastChange: g.last}
	switch {
	case cur.Observed():
		c.After = &MembersAt{Time: cur.Time, Members: len(cur.Members), State: cur.State, Coordinator: cur.Coordinator}
	case cur.Err != "":
		c.Unobserved = cur.Err
	}
	if c.Since.IsZero() {
		c.Since = c.Time
	}
	if g.move != nil && (before == nil || !g.move.Time.Before(before.Time.Add(-w.grace()))) {
		c.Move = g.move
	}
	attr := AttributeCommit(c)
	g.rewinds = append(g.rewinds, RewindAttribution{Time: a.Time, Rewound: c.Rewound[0], Attribution: attr, Severity: RewindSeverity(attr, w.PageRecords)})
}

// Attribute classes a rewind of group seen now, between observations: the
// membership before it is the last observation's, none after it yet. It
// is kept for the window like the rewinds Observe attributes.
func (w *MemberWindow) Attribute(group string, a OffsetAnomaly) RewindAttribution {
	g := w.groups[group]
	if g == nil {
		g = &memberGroup{seen: true}
		if w.groups == nil {
			w.groups, w.strs = map[string]*memberGroup{}, map[string]string{}
		}
		w.groups[group] = g
	}
	w.attribute(g, a, g.membersAt(), MemberSample{})
	return g.rewinds[len(g.rewinds)-1]
}

func (w *MemberWindow) grace() time.Duration {
	if w.ZombieGrace > 0 {
		return w.ZombieGrace
	}
	return DefaultZombieGrace
}

// expire drops the changes, moves and rewinds older than the window.
func (w *MemberWindow) expire(g *memberGroup, now time.Time) {
	if w.Window <= 0 {
		return
	}
	cut := now.Add(-w.Window).UnixNano()
	i := 0
	for i < len(g.marks) && g.marks[i].at < cut {
		i++
	}
	if i > 0 {
		g.marks = append(g.marks[:0], g.marks[i:]...)
	}
	if len(g.marks) == 0 {
		g.marks = nil
	}
	if g.move != nil && g.move.Time.UnixNano() < cut-int64(w.grace()) {
		g.move = nil
	}
	g.rewinds = slices.DeleteFunc(g.rewinds, func(r RewindAttribution) bool { return r.Time.UnixNano() < cut })
	if len(g.rewinds) == 0 {
		g.rewinds = nil
	}
}

// membersAt is the group's last observation (nil: none, or the last
// failed).
func (g *memberGroup) membersAt() *MembersAt {
	if g.at == 0 || g.errSince != 0 {
		return nil
	}
	return &MembersAt{Time: time.Unix(0, g.at).UTC(), Members: int(g.members), State: g.state, Coordinator: g.coordinator}
}

// sample is the group's last observation as a sample (its members as
// memberSig kept them: ids, client ids and an assignment signature).
func (g *memberGroup) sample() MemberSample {
	s := MemberSample{Time: time.Unix(0, g.at).UTC(), Coordinator: g.coordinator, State: g.state, Members: []MemberInfo{}}
	for _, line := range strings.Split(g.sig, "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\x1f", 3)
		for len(f) < 3 {
			f = append(f, "")
		}
		m := MemberInfo{ID: f[0], ClientID: f[1]}
		if f[2] != "" {
			m.AssignmentReported = true
			m.assignSig, _ = strconv.ParseUint(f[2], 16, 64)
		}
		s.Members = append(s.Members, m)
	}
	return s
}

// memberSig encodes members (sorted by id) in one string: per member its
// id, client id and, when reported, a hash of its assignment.
func memberSig(ms []MemberInfo) string {
	if len(ms) == 0 {
		return ""
	}
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.ID)
		b.WriteByte(0x1f)
		b.WriteString(m.ClientID)
		b.WriteByte(0x1f)
		if m.AssignmentReported {
			b.WriteString(strconv.FormatUint(m.assignmentSig(), 16))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// assignmentSig is a hash of the member's reported assignment.
func (m MemberInfo) assignmentSig() uint64 {
	if m.assignSig != 0 {
		return m.assignSig
	}
	h := fnv.New64a()
	for _, k := range m.Assigned {
		h.Write([]byte(k))
		h.Write([]byte{0})
	}
	return h.Sum64() | 1 // never 0: 0 means "not computed"
}

func (w *MemberWindow) intern(s string) string {
	if v, ok := w.strs[s]; ok {
		return v
	}
	if len(w.strs) < 4096 {
		w.strs[s] = s
	}
	return s
}

func causeBits(causes []string) uint8 {
	var b uint8
	for _, c := range causes {
		if i := slices.Index(ChurnCauses, c); i >= 0 {
			b |= 1 << i
		}
	}
	return b
}

func addCauses(counts *[4]int64, bits uint8) {
	for i := range ChurnCauses {
		if bits&(1<<i) != 0 {
			counts[i]++
		}
	}
}

// Sweep forgets groups not observed since the last Sweep.
func (w *MemberWindow) Sweep() {
	for k, g := range w.groups {
		if !g.seen {
			delete(w.groups, k)
			continue
		}
		g.seen = false
	}
}

// Stats are group's membership figures (nil: never observed).
func (w *MemberWindow) Stats(group string) *ChurnStats {
	g := w.groups[group]
	if g == nil {
		return nil
	}
	st := &ChurnStats{ObservedGeneration: g.generation, Changes: len(g.marks), Joined: g.joined, Left: g.left, Members: int(g.members),
		Observed: g.at != 0 && g.errSince == 0, Last: g.last, ByCause: []ChurnCauseCount{}, Rebalances: []ChurnCauseCount{}}
	for i, cause := range ChurnCauses {
		if g.rebalances[i] > 0 {
			st.Rebalances = append(st.Rebalances, ChurnCauseCount{cause, int(g.rebalances[i])})
		}
		n := 0
		for _, m := range g.marks {
			if m.causes&(1<<i) != 0 {
				n++
			}
		}
		if n > 0 {
			st.ByCause = append(st.ByCause, ChurnCauseCount{cause, n})
		}
	}
	return st
}

// Rewinds are group's attributed rewinds in the window.
func (w *MemberWindow) Rewinds(group string) []RewindAttribution {
	if g := w.groups[group]; g != nil {
		return g.rewinds
	}
	return nil
}

// Apply adds group's membership to its health: the figures, CHURN when
// more than Rebalances generation changes fall in the window (with their
// causes), and the authors of its rewinds.
func (w *MemberWindow) Apply(h *GroupHealth) {
	st := w.Stats(h.Group)
	if st == nil {
		return
	}
	h.Rewinds = w.Rewinds(h.Group)
	if w.groups[h.Group].at == 0 {
		return // never observed (no brokers): rewinds only
	}
	h.Churn = st
	limit := w.Rebalances
	if limit <= 0 {
		limit = DefaultChurnRebalances
	}
	if st.Changes > limit {
		g := w.groups[h.Group]
		h.Evidence = append(h.Evidence, churnEvidence(st, time.Unix(0, g.marks[0].at).UTC(), time.Unix(0, g.marks[len(g.marks)-1].at).UTC(), w.Window, limit))
		h.finish()
	}
}

// churnEvidence is CHURN's fact: how many changes, by cause, over which
// span, and the last one.
func churnEvidence(st *ChurnStats, from, to time.Time, window time.Duration, limit int) HealthEvidence {
	var parts []string
	for _, cc := range st.ByCause {
		parts = append(parts, fmt.Sprintf("%s %d", causeWords(cc.Cause), cc.Count))
	}
	span := "the window"
	if window > 0 {
		span = roundSpan(window).String()
	}
	d := fmt.Sprintf("%d generation changes in %s, more than %d (%s)", st.Changes, span, limit, strings.Join(parts, ", "))
	if st.Last != nil {
		d += "; last at " + clock(st.Last.Time) + ": " + st.Last.Summary()
	}
	return HealthEvidence{State: HealthChurn, Before: -1, After: -1, Since: from, Time: to, Detail: d}
}

// causeWords is a cause for people.
func causeWords(cause string) string {
	switch cause {
	case CauseMemberLeft:
		return "member left or timed out"
	case CauseMemberJoined:
		return "member joined"
	case CauseCoordinatorMoved:
		return "coordinator moved"
	}
	return "rebalance with the same members"
}

// RewindAuthor is who the rewind e (a REWIND fact of h) was likely by
// (nil: not attributed).
func (h GroupHealth) RewindAuthor(e HealthEvidence) *RewindAttribution {
	if e.State != HealthRewind {
		return nil
	}
	for i := range h.Rewinds {
		r := &h.Rewinds[i]
		if r.Partition == e.Partition && r.Before == e.Before && r.After == e.After && r.Time.Equal(e.Time) {
			return r
		}
	}
	return nil
}

// Text is the attribution for people: "likely by a zombie: a member of
// the generation before … (page; 200 records)".
func (r RewindAttribution) Text() string {
	certain := "likely by "
	if r.Certain {
		certain = "by "
	}
	return fmt.Sprintf("%s%s (%s, %s; %s)", certain, r.Who, r.Author, healthPlural(int(r.Records), "record", "records"), r.Severity)
}
