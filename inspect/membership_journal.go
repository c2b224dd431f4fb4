package inspect

import (
	"slices"
	"time"

	"github.com/kaasctl/kaasctl/internal/watch"
)

// MembersRecord is group's membership s as the events journal records it,
// with the change it shows (nil: a snapshot).
func MembersRecord(group string, s MemberSample, c *MembershipChange) watch.EventRecord {
	r := watch.EventRecord{Kind: watch.EvMembers, Time: s.Time, Group: group, State: s.State, Coordinator: s.Coordinator, Protocol: s.Protocol,
		HostsReported: s.HostsReported, AssignmentsReported: s.AssignmentsReported}
	for _, m := range s.Members {
		r.Members = append(r.Members, watch.EventMember{ID: m.ID, ClientID: m.ClientID, InstanceID: m.InstanceID, Host: m.Host,
			Assigned: m.Assigned, AssignmentReported: m.AssignmentReported})
	}
	if c != nil {
		ec := &watch.EventChange{Since: c.Since, ObservedGeneration: c.ObservedGeneration, Causes: c.Causes, From: c.From, To: c.To}
		for _, m := range c.Joined {
			ec.Joined = append(ec.Joined, m.ID)
		}
		for _, m := range c.Left {
			ec.Left = append(ec.Left, m.ID)
		}
		r.Change = ec
	}
	return r
}

// MemberSampleOfRecord is the membership a journal record holds.
func MemberSampleOfRecord(r watch.EventRecord) MemberSample {
	s := MemberSample{Time: r.Time, Coordinator: r.Coordinator, State: r.State, Protocol: r.Protocol, Members: []MemberInfo{},
		HostsReported: r.HostsReported, AssignmentsReported: r.AssignmentsReported}
	for _, m := range r.Members {
		s.Members = append(s.Members, MemberInfo{ID: m.ID, ClientID: m.ClientID, InstanceID: m.InstanceID, Host: m.Host,
			Assigned: m.Assigned, AssignmentReported: m.AssignmentReported})
	}
	return s
}

// ConditionChanges are the health conditions of h that entered since the
// conditions before (each with its first fact), and those of before that
// left, as the events journal records them at at. OK is no condition.
func ConditionChanges(before []string, h GroupHealth, at time.Time) []watch.EventRecord {
	var out []watch.EventRecord
	for _, c := range h.Conditions {
		if c == HealthOK || slices.Contains(before, c) {
			continue
		}
		r := watch.EventRecord{Kind: watch.EvCondition, Time: at, Group: h.Group, Condition: c, Entered: true}
		for _, e := range h.Evidence {
			if e.State == c {
				r.Detail = e.Detail
				break
			}
		}
		out = append(out, r)
	}
	for _, c := range before {
		if c != HealthOK && !h.Has(c) {
			out = append(out, watch.EventRecord{Kind: watch.EvCondition, Time: at, Group: h.Group, Condition: c})
		}
	}
	return out
}
