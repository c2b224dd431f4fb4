package inspect

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/wire"
)

// A group's membership as kaasctl sees it: DescribeGroups on the group's
// coordinator, asked at every observation (the exporter's refresh, a
// watch's poll, groups health). kaas's DescribeGroups carries no
// generation id (no Kafka version of it does), so a generation change is
// what kaasctl sees change between two observations: the member set, the
// members' assignments (where the broker reports them), the coordinator
// that answers, or a group caught rebalancing. kaasctl numbers the
// generations it saw itself (ObservedGeneration): a count from the first
// observation, not kaas's generation id.

// Causes of a generation change, as seen between two observations.
const (
	CauseMemberJoined         = "member_joined"     // a member id not seen before
	CauseMemberLeft           = "member_left"       // a member id gone: it left, or timed out (DescribeGroups cannot tell which)
	CauseCoordinatorMoved     = "coordinator_moved" // another broker answers for the group (kaas evicts every member on a move)
	CauseRebalanceSameMembers = "rebalance"         // the same members, but the group was caught rebalancing or their assignments changed
)

// ChurnCauses lists the causes in the order they are reported.
var ChurnCauses = []string{CauseMemberLeft, CauseMemberJoined, CauseCoordinatorMoved, CauseRebalanceSameMembers}

// MemberSample is one observation of a group's membership.
type MemberSample struct {
	Time time.Time `json:"time"`
	// Err says why the membership could not be observed (no broker
	// answer, the coordinator's error); the rest is then empty.
	Err string `json:"error,omitempty"`
	// Coordinator is the broker that answered for the group.
	Coordinator string `json:"coordinator,omitempty"`
	State       string `json:"state"`
	Protocol    string `json:"protocol,omitempty"`
	// Members are sorted by id.
	Members []MemberInfo `json:"members"`
	// HostsReported and AssignmentsReported say whether the broker
	// reported any member's client host and assignment (kaas's Go broker
	// reports neither: hosts and assignments are then "not reported by
	// this broker", never empty).
	HostsReported       bool `json:"hostsReported"`
	AssignmentsReported bool `json:"assignmentsReported"`
}

// MemberInfo is one member as DescribeGroups reports it.
type MemberInfo struct {
	ID         string `json:"memberId"`
	ClientID   string `json:"clientId,omitempty"`
	InstanceID string `json:"instanceId,omitempty"`
	// Host is the client host ("" when the broker did not report it).
	Host string `json:"host,omitempty"`
	// Assigned are the member's partitions ("topic/partition", sorted);
	// AssignmentReported is false when the broker sent no assignment.
	Assigned           []string `json:"assigned,omitempty"`
	AssignmentReported bool     `json:"assignmentReported"`
	// assignSig is assignmentSig's hash when only it is known (a member
	// a MemberWindow kept; 0: computed from Assigned).
	assignSig uint64
}

// Label is the member in words: its id, with its client id and host when
// known ("kgo-1a2b (client orders, host /10.0.0.7)").
func (m MemberInfo) Label() string {
	var extra []string
	if m.ClientID != "" {
		extra = append(extra, "client "+m.ClientID)
	}
	if m.InstanceID != "" {
		extra = append(extra, "instance "+m.InstanceID)
	}
	if m.Host != "" {
		extra = append(extra, "host "+m.Host)
	}
	if len(extra) == 0 {
		return m.ID
	}
	return m.ID + " (" + strings.Join(extra, ", ") + ")"
}

// MemberSampleOf is the membership a DescribeGroups answer shows at at;
// coordinator names the broker that answered ("" when unknown). An answer
// with an error is an observation that failed.
func MemberSampleOf(d wire.DescribedGroup, coordinator string, at time.Time) MemberSample {
	s := MemberSample{Time: at, Coordinator: coordinator, State: d.State, Protocol: d.Protocol, Members: []MemberInfo{}}
	if d.Err != "" {
		return MemberSample{Time: at, Err: "DescribeGroups: " + d.Err, Members: []MemberInfo{}}
	}
	for _, m := range d.Members {
		mi := MemberInfo{ID: m.MemberID, ClientID: m.ClientID, InstanceID: m.InstanceID, AssignmentReported: m.AssignmentReported && m.AssignmentErr == ""}
		if m.HostReported {
			mi.Host = m.ClientHost
			s.HostsReported = true
		}
		if mi.AssignmentReported {
			s.AssignmentsReported = true
			for _, a := range m.Assignment {
				for _, p := range a.Partitions {
					mi.Assigned = append(mi.Assigned, a.Topic+"/"+strconv.Itoa(int(p)))
				}
			}
			slices.Sort(mi.Assigned)
		}
		s.Members = append(s.Members, mi)
	}
	slices.SortFunc(s.Members, func(a, b MemberInfo) int { return strings.Compare(a.ID, b.ID) })
	return s
}

// Observed reports whether the sample is an observation (the broker
// answered for the group).
func (s MemberSample) Observed() bool { return s.Err == "" && !s.Time.IsZero() }

// Rebalancing reports whether a state is one of a rebalance in progress.
func Rebalancing(state string) bool {
	switch state {
	case "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling":
		return true
	}
	return false
}

// MembershipChange is one generation change seen between two observations
// of a group (Since and Time): who joined and left, what else changed,
// and kaasctl's count of the group's generations after it.
type MembershipChange struct {
	Time  time.Time `json:"time"`
	Since time.Time `json:"since"`
	// ObservedGeneration is kaasctl's count of the generations it saw
	// (not kaas's generation id, which DescribeGroups does not carry).
	ObservedGeneration int64        `json:"observedGeneration"`
	Causes             []string     `json:"causes"`
	Joined             []MemberInfo `json:"joined"`
	Left               []MemberInfo `json:"left"`
	// From and To are the coordinators that answered before and after.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// StateBefore and State are the group's states at the two
	// observations; Members the member count after.
	StateBefore string `json:"stateBefore"`
	State       string `json:"state"`
	Members     int    `json:"members"`
}

// Has reports whether cause is one of the change's.
func (c MembershipChange) Has(cause string) bool { return slices.Contains(c.Causes, cause) }

// DiffMembership is the generation change between two observations of a
// group (ok false when there is none, or either is not an observation).
// A change is a member id that came or went, another coordinator
// answering, the members' reported assignments changing, or the group
// caught rebalancing when it was not before. A change seen right after an
// observation that caught the group rebalancing continues that rebalance
// (continues): the caller amends the change recorded then instead of
// counting another generation.
func DiffMembership(prev, cur MemberSample) (c MembershipChange, continues, ok bool) {
	if !prev.Observed() || !cur.Observed() {
		return c, false, false
	}
	c = MembershipChange{Time: cur.Time, Since: prev.Time, StateBefore: prev.State, State: cur.State, Members: len(cur.Members),
		Joined: []MemberInfo{}, Left: []MemberInfo{}, Causes: []string{}}
	i, j := 0, 0
	same := true // same ids with the same reported assignments
	for i < len(prev.Members) || j < len(cur.Members) {
		switch {
		case j == len(cur.Members) || i < len(prev.Members) && prev.Members[i].ID < cur.Members[j].ID:
			c.Left = append(c.Left, prev.Members[i])
			i++
		case i == len(prev.Members) || cur.Members[j].ID < prev.Members[i].ID:
			c.Joined = append(c.Joined, cur.Members[j])
			j++
		default:
			p, q := prev.Members[i], cur.Members[j]
			if p.AssignmentReported && q.AssignmentReported && p.assignmentSig() != q.assignmentSig() {
				same = false
			}
			i++
			j++
		}
	}
	if len(c.Left) > 0 {
		c.Causes = append(c.Causes, CauseMemberLeft)
	}
	if len(c.Joined) > 0 {
		c.Causes = append(c.Causes, CauseMemberJoined)
	}
	if prev.Coordinator != "" && cur.Coordinator != "" && prev.Coordinator != cur.Coordinator {
		c.Causes = append(c.Causes, CauseCoordinatorMoved)
		c.From, c.To = prev.Coordinator, cur.Coordinator
	}
	if len(c.Left) == 0 && len(c.Joined) == 0 && (!same || Rebalancing(cur.State) && !Rebalancing(prev.State)) {
		c.Causes = append(c.Causes, CauseRebalanceSameMembers)
	}
	if len(c.Causes) == 0 || len(c.Causes) == 1 && c.Causes[0] == CauseCoordinatorMoved && len(cur.Members) == 0 {
		// Nothing changed; or a group with no members now answered by
		// another broker: no generation of members changed (the move is a
		// coordinator event of its own).
		return MembershipChange{}, false, false
	}
	return c, Rebalancing(prev.State), true
}

// Summary is the change in words: "kgo-a (client c) left; kgo-b
// joined; the coordinator moved from kaas-1 to kaas-0".
func (c MembershipChange) Summary() string {
	var parts []string
	names := func(ms []MemberInfo) string {
		out := make([]string, len(ms))
		for i, m := range ms {
			out[i] = m.Label()
		}
		return strings.Join(out, ", ")
	}
	if len(c.Left) > 0 {
		parts = append(parts, names(c.Left)+" left or timed out")
	}
	if len(c.Joined) > 0 {
		parts = append(parts, names(c.Joined)+" joined")
	}
	if c.Has(CauseCoordinatorMoved) {
		parts = append(parts, "the coordinator moved from "+c.From+" to "+c.To)
	}
	if c.Has(CauseRebalanceSameMembers) {
		parts = append(parts, "the same members rebalanced (state "+c.State+")")
	}
	return strings.Join(parts, "; ")
}
