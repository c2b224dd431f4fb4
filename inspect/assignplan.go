package inspect

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Consumer group assignment planning: what each member owns now and after
// members join or leave. The franz-go assignors are franz-go's own balance
// code (kgo's GroupBalancer / GroupMemberBalancer), fed the join metadata a
// franz-go member sends, so the answer is what the group leader computes.

// Assignors lists the values of --assignor.
var Assignors = []string{"range", "roundrobin", "sticky", "cooperative-sticky", "minikafka"}

// AssignorNotes says where an assignor's answer can differ from a Java
// client's for the same members.
var AssignorNotes = map[string]string{
	"range":              "franz-go's range equals Java's RangeAssignor (members ordered by group.instance.id, then member id; per topic, the first members get one extra partition); with racks (KIP-881) both prefer same-rack partitions first and can differ",
	"roundrobin":         "franz-go's roundrobin equals Java's RoundRobinAssignor (every partition sorted by topic and number, one circular walk over the sorted members, skipping members not subscribed to the topic)",
	"sticky":             "franz-go's eager members forget their assignment when they revoke it before rejoining (their sticky user data then owns nothing), so a franz-go sticky group rebalances as from scratch; Java's StickyAssignor members keep their previous assignment in the user data and keep most partitions",
	"cooperative-sticky": "franz-go's cooperative-sticky: the sticky plan, with every partition that changes owner revoked in a first rebalance and assigned in a second; a Java leader's ties can break differently",
	"minikafka":          "the textbook deterministic round-robin: members (by member id), topics and partitions sorted, one cursor shared across topics advancing over the members subscribed to each topic; equal to roundrobin when no member is static",
}

// RejoinOwned is what a franz-go member reports owning when it rejoins:
// a cooperative member keeps its partitions through the rebalance; an
// eager one revokes them all first and forgets them (kgo's lastAssigned
// is cleared with the revoke), so it reports nothing.
func RejoinOwned(assignor string, owned map[string][]int32) map[string][]int32 {
	if assignor == "cooperative-sticky" {
		return owned
	}
	return nil
}

// AssignMember is one member as it joins.
type AssignMember struct {
	ID         string             `json:"memberId"`
	InstanceID string             `json:"instanceId,omitempty"`
	Topics     []string           `json:"subscription"`
	Owned      map[string][]int32 `json:"owned"`
}

// Assignment is topic → partitions per member.
type Assignment map[string]map[string][]int32

// BalanceResult is one balance: the final assignment and, for a
// cooperative assignor, the partitions revoked by the first rebalance.
type BalanceResult struct {
	Assignment Assignment
	Revoked    []PartitionMove
	Rounds     int
	// Alternatives: franz-go's sticky engine breaks some ties by Go map
	// order, so the same members can get different answers; every
	// distinct answer seen over BalanceTries runs, the most frequent
	// (Assignment) first, with its share.
	Alternatives []AlternativeAssignment
}

// AlternativeAssignment is one answer a non-deterministic balance gave.
type AlternativeAssignment struct {
	Assignment Assignment `json:"assignment"`
	Share      float64    `json:"share"`
}

// BalanceTries is how many times a sticky balance is run to see every
// answer its ties allow.
const BalanceTries = 64

// PartitionMove is a partition that changes owner.
type PartitionMove struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	From      string `json:"from"` // "" unassigned
	To        string `json:"to"`   // "" unassigned
}

func kgoBalancer(name string) (kgo.GroupBalancer, error) {
	switch name {
	case "range":
		return kgo.RangeBalancer(), nil
	case "roundrobin":
		return kgo.RoundRobinBalancer(), nil
	case "sticky":
		return kgo.StickyBalancer(), nil
	case "cooperative-sticky":
		return kgo.CooperativeStickyBalancer(), nil
	}
	return nil, fmt.Errorf("--assignor %q: choose %s", name, strings.Join(Assignors, ", "))
}

// Balance assigns partitions (topic → count) to members with the assignor.
// The sticky assignors are run BalanceTries times (see Alternatives).
func Balance(assignor string, members []AssignMember, partitions map[string]int32, generation int32) (BalanceResult, error) {
	if assignor != "sticky" && assignor != "cooperative-sticky" {
		return balance(assignor, members, partitions, generation)
	}
	type seen struct {
		res BalanceResult
		n   int
	}
	var outs []*seen
	byKey := map[string]*seen{}
	for i := 0; i < BalanceTries; i++ {
		r, err := balance(assignor, members, partitions, generation)
		if err != nil {
			return r, err
		}
		k := fmt.Sprint(r.Assignment)
		if s := byKey[k]; s != nil {
			s.n++
			continue
		}
		byKey[k] = &seen{res: r, n: 1}
		outs = append(outs, byKey[k])
	}
	slices.SortStableFunc(outs, func(a, b *seen) int {
		return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(fmt.Sprint(a.res.Assignment), fmt.Sprint(b.res.Assignment)))
	})
	res := outs[0].res
	if len(outs) > 1 {
		for _, o := range outs {
			res.Alternatives = append(res.Alternatives, AlternativeAssignment{Assignment: o.res.Assignment, Share: float64(o.n) / BalanceTries})
		}
	}
	return res, nil
}

func balance(assignor string, members []AssignMember, partitions map[string]int32, generation int32) (BalanceResult, error) {
	if assignor == "minikafka" {
		return BalanceResult{Assignment: miniKafka(members, partitions), Rounds: 1}, nil
	}
	bal, err := kgoBalancer(assignor)
	if err != nil {
		return BalanceResult{}, err
	}
	first, err := balanceOnce(bal, members, partitions, generation)
	if err != nil {
		return BalanceResult{}, err
	}
	if !bal.IsCooperative() {
		return BalanceResult{Assignment: first, Rounds: 1}, nil
	}
	// The first round only revokes; members whose partitions were revoked
	// rejoin owning what they kept, and the second round assigns them.
	res := BalanceResult{Rounds: 2}
	res.Revoked = AssignmentMoves(ownedOf(members), first)
	res.Revoked = slices.DeleteFunc(res.Revoked, func(m PartitionMove) bool { return m.To != "" })
	next := make([]AssignMember, len(members))
	for i, m := range members {
		next[i] = m
		next[i].Owned = first[m.ID]
	}
	res.Assignment, err = balanceOnce(bal, next, partitions, generation+1)
	return res, err
}

func ownedOf(members []AssignMember) Assignment {
	a := Assignment{}
	for _, m := range members {
		a[m.ID] = m.Owned
	}
	return a
}

func balanceOnce(bal kgo.GroupBalancer, members []AssignMember, partitions map[string]int32, generation int32) (Assignment, error) {
	jm := make([]kmsg.JoinGroupResponseMember, len(members))
	for i, m := range members {
		jm[i] = kmsg.NewJoinGroupResponseMember()
		jm[i].MemberID = m.ID
		if m.InstanceID != "" {
			id := m.InstanceID
			jm[i].InstanceID = &id
		}
		topics := slices.Clone(m.Topics)
		slices.Sort(topics)
		owned := map[string][]int32{}
		for t, ps := range m.Owned {
			ps = slices.Clone(ps)
			slices.Sort(ps)
			owned[t] = ps
		}
		jm[i].ProtocolMetadata = bal.JoinGroupMetadata(topics, owned, generation)
	}
	// The order franz-go's leader balances in: instance id first (static
	// members), then member id.
	slices.SortStableFunc(jm, func(l, r kmsg.JoinGroupResponseMember) int {
		switch {
		case l.InstanceID != nil && r.InstanceID != nil:
			return cmp.Compare(*l.InstanceID, *r.InstanceID)
		case l.InstanceID != nil:
			return -1
		case r.InstanceID != nil:
			return 1
		}
		return cmp.Compare(l.MemberID, r.MemberID)
	})
	mb, interests, err := bal.MemberBalancer(jm)
	if err != nil {
		return nil, err
	}
	counts := map[string]int32{}
	for t := range interests {
		if n, ok := partitions[t]; ok {
			counts[t] = n
		}
	}
	var into kgo.IntoSyncAssignment
	if eb, ok := mb.(kgo.GroupMemberBalancerOrError); ok {
		if into, err = eb.BalanceOrError(counts); err != nil {
			return nil, err
		}
	} else {
		into = mb.Balance(counts)
	}
	out := Assignment{}
	for _, m := range members {
		out[m.ID] = map[string][]int32{}
	}
	for _, sa := range into.IntoSyncAssignment() {
		got, err := bal.ParseSyncAssignment(sa.MemberAssignment)
		if err != nil {
			return nil, fmt.Errorf("member %s: %w", sa.MemberID, err)
		}
		for t, ps := range got {
			slices.Sort(ps)
			if len(ps) > 0 {
				out[sa.MemberID][t] = ps
			}
		}
	}
	return out, nil
}

// miniKafka is the textbook round-robin: members sorted by id, topics and
// partitions sorted; one cursor over the members shared by every topic,
// advancing past members not subscribed to the topic at hand.
func miniKafka(members []AssignMember, partitions map[string]int32) Assignment {
	ms := slices.Clone(members)
	slices.SortFunc(ms, func(a, b AssignMember) int { return cmp.Compare(a.ID, b.ID) })
	out := Assignment{}
	subscribed := map[string]map[string]bool{}
	topicSet := map[string]bool{}
	for _, m := range ms {
		out[m.ID] = map[string][]int32{}
		subscribed[m.ID] = map[string]bool{}
		for _, t := range m.Topics {
			subscribed[m.ID][t] = true
			if _, ok := partitions[t]; ok {
				topicSet[t] = true
			}
		}
	}
	topics := slices.Sorted(maps.Keys(topicSet))
	cursor := 0
	for _, t := range topics {
		for p := int32(0); p < partitions[t]; p++ {
			for k := 0; k < len(ms); k++ {
				m := ms[(cursor+k)%len(ms)]
				if subscribed[m.ID][t] {
					out[m.ID][t] = append(out[m.ID][t], p)
					cursor = (cursor + k + 1) % len(ms)
					break
				}
			}
		}
	}
	return out
}

// AssignmentMoves lists the partitions whose owner differs between two
// assignments (sorted by topic, partition).
func AssignmentMoves(before, after Assignment) []PartitionMove {
	owner := func(a Assignment) map[[2]any]string {
		m := map[[2]any]string{}
		for member, tps := range a {
			for t, ps := range tps {
				for _, p := range ps {
					m[[2]any{t, p}] = member
				}
			}
		}
		return m
	}
	ob, oa := owner(before), owner(after)
	keys := map[[2]any]bool{}
	for k := range ob {
		keys[k] = true
	}
	for k := range oa {
		keys[k] = true
	}
	var out []PartitionMove
	for k := range keys {
		if ob[k] != oa[k] {
			out = append(out, PartitionMove{Topic: k[0].(string), Partition: k[1].(int32), From: ob[k], To: oa[k]})
		}
	}
	slices.SortFunc(out, func(a, b PartitionMove) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
