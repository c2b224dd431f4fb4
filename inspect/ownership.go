package inspect

import (
	"slices"
	"strconv"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// Ownership: which member of a live group owns each partition, as the
// members' assignments in DescribeGroups say. A partition with lag that no
// member owns is read by nobody (a member dropped it, or the group's
// assignor left it out), and a member that owns nothing is idle. kaas's
// Go broker answers DescribeGroups with empty assignments: then nothing
// can be said and the answer says so ("not reported by this broker")
// instead of calling every partition unowned.

// OwnershipNotReported is what Ownership says when the broker reported no
// member's assignment.
const OwnershipNotReported = "not reported by this broker: its DescribeGroups carries no member assignments (kaas's Go broker sends them empty), so unowned partitions and idle members cannot be told"

// Ownership is who owns a live group's partitions.
type Ownership struct {
	// Reported: the broker reported the members' assignments; Note says
	// what cannot be told when it did not (or for which members).
	Reported bool   `json:"reported"`
	Note     string `json:"note,omitempty"`
	// Unowned are the partitions with lag, of the topics the members are
	// assigned, that no member owns; UnownedLag their lag summed.
	Unowned    []string `json:"unownedLagging"`
	UnownedLag int64    `json:"unownedLag"`
	// Idle are the members that own no partition.
	Idle []string `json:"idleMembers"`
}

// OwnershipOf is the ownership of a group with members (nil without
// members: an empty group owns nothing by definition) over its partition
// states.
func OwnershipOf(members []MemberInfo, states []PartitionState) *Ownership {
	if len(members) == 0 {
		return nil
	}
	o := &Ownership{Unowned: []string{}, Idle: []string{}}
	owned := map[string]bool{}
	var unreported []string
	for _, m := range members {
		if !m.AssignmentReported {
			unreported = append(unreported, m.ID)
			continue
		}
		o.Reported = true
		for _, k := range m.Assigned {
			owned[k] = true
		}
		if len(m.Assigned) == 0 {
			o.Idle = append(o.Idle, m.Label())
		}
	}
	if !o.Reported {
		o.Note = OwnershipNotReported
		return o
	}
	if len(unreported) > 0 {
		// Some members' assignments are missing: a partition may be
		// theirs, so none is called unowned.
		o.Note = "the assignments of " + QuoteList(unreported) + " were not reported: unowned partitions cannot be told"
		return o
	}
	// Only the topics the members read: a topic none of them is assigned
	// is one the group no longer reads (groups prune --unsubscribed).
	read := map[string]bool{}
	for k := range owned {
		if t, _, err := volume.SplitOffsetKey(k); err == nil {
			read[t] = true
		}
	}
	for i := range states {
		p := &states[i]
		k := p.Topic + "/" + strconv.Itoa(int(p.Partition))
		if read[p.Topic] && p.LagKnown && p.Lag > 0 && !owned[k] {
			o.Unowned = append(o.Unowned, k)
			o.UnownedLag += p.Lag
		}
	}
	slices.Sort(o.Unowned)
	return o
}
