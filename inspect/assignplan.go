package inspect

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
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

// balanceOnce runs one join round of bal as franz-go's group leader does:
// the members' join metadata in the leader's order, the balance over the
// partitions of the topics they are interested in, and each member's
// assignment parsed back (every member present, partitions sorted).
func balanceOnce(bal kgo.GroupBalancer, members []AssignMember, partitions map[string]int32, generation int32) (Assignment, error) {
	mb, interests, err := bal.MemberBalancer(joinMembers(bal, members, generation))
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

// joinMembers is the JoinGroup answer the leader balances: each member's
// metadata from bal (its topics and owned partitions sorted), in the order
// franz-go's leader balances in: instance id first (static members), then
// member id.
func joinMembers(bal kgo.GroupBalancer, members []AssignMember, generation int32) []kmsg.JoinGroupResponseMember {
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
	return jm
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

// AssignPlanInput is what plan assignment is asked and what was read: the
// flags, the topics the group committed on the volume and the live group.
type AssignPlanInput struct {
	Group      string
	Assignor   string   // one of Assignors, or "" for the default
	Members    int      // > 0: N hypothetical members member-1..member-N
	Add        int      // members that join
	NewMembers []string // names of joining members (static: their instance id)
	Remove     []string // members that leave: member id, instance id or client id
	Topics     []string // --topic: the subscription of hypothetical and joining members
	Committed  []string // the topics the group committed offsets for on the volume
	// Live is the live group with members (DescribeGroups on its
	// coordinator), nil when there is none.
	Live *wire.DescribedGroup
	// Brokers: the brokers were asked (the error when nothing is known
	// names what to give).
	Brokers bool
}

// AssignInputError is a plan that cannot be made from what was given:
// the caller reports it as a usage error.
type AssignInputError struct{ Msg string }

func (e *AssignInputError) Error() string { return e.Msg }

func inputErrorf(format string, a ...any) error {
	return &AssignInputError{Msg: fmt.Sprintf(format, a...)}
}

// AssignPlan is plan assignment's answer (its -o json document).
type AssignPlan struct {
	Group        string             `json:"group"`
	Assignor     string             `json:"assignor"`
	AssignorNote string             `json:"assignorNote"`
	Sources      AssignPlanSources  `json:"sources"`
	Partitions   map[string]int32   `json:"partitions"`
	Members      []AssignPlanMember `json:"members"`
	Moves        []PartitionMove    `json:"moves"`
	Revoked      []PartitionMove    `json:"revokedFirst"`
	Rebalances   int                `json:"rebalances"`
	// Alternatives: every answer franz-go's sticky engine gave over
	// repeated runs when its ties fall by Go map order (the leader's
	// real answer is one of them); empty when the answer is unique.
	Alternatives []AlternativeAssignment `json:"alternatives"`
	Notes        []string                `json:"notes"`
}

// AssignPlanSources says where each input of the plan came from.
type AssignPlanSources struct {
	Members       string `json:"members"`
	Subscriptions string `json:"subscriptions"`
	Partitions    string `json:"partitions"`
	Now           string `json:"now"`
}

// AssignPlanMember is one member now and after.
type AssignPlanMember struct {
	MemberID     string             `json:"memberId"`
	InstanceID   string             `json:"instanceId,omitempty"`
	ClientID     string             `json:"clientId,omitempty"`
	Status       string             `json:"status"` // stays, joins, leaves
	Subscription []string           `json:"subscription"`
	Now          map[string][]int32 `json:"now"`
	After        map[string][]int32 `json:"after"`
	Gained       int                `json:"gained"`
	Lost         int                `json:"lost"`
}

// AssignPlanner is a plan assignment between its two halves: the members
// and their subscriptions are known (Subscribed lists the topics), the
// partition counts not yet (Plan takes them).
type AssignPlanner struct {
	in         AssignPlanInput
	plan       AssignPlan
	members    []AssignMember
	clientIDs  map[string]string
	nowKnown   bool
	defaults   []string // the subscription of hypothetical and joining members
	subscribed []string
}

// MaxAssignMembers is the most members plan assignment balances, before
// or after: franz-go's sticky balancers take about a second per 3,000
// members (run 64 times each), so a million would take hours; a count above
// what the protocol can carry (2^31-1 members) no group could have.
const MaxAssignMembers = 10000

// CheckMemberCounts refuses counts no group could have and bounds the rest
// (live: the live group's members now, 0 before it is known).
func CheckMemberCounts(in AssignPlanInput, live int) error {
	for _, c := range []struct {
		flag string
		n    int
	}{{"--members", in.Members}, {"--add", in.Add}} {
		if c.n > math.MaxInt32 {
			return inputErrorf("%s %d: no group has that many members (a JoinGroup member count is a 32-bit number; kaas and Kafka hold at most %d)", c.flag, c.n, math.MaxInt32)
		}
	}
	now := max(in.Members, live)
	if in.Members > 0 && in.Live != nil && scaling(in) {
		now = live
	}
	after := max(in.Members, now) + max(in.Add, len(in.NewMembers))
	if now > MaxAssignMembers || after > MaxAssignMembers {
		return inputErrorf("%d members: plan assignment balances at most %d (franz-go's sticky balancers take a second per 3,000 members, run 64 times over); members beyond the partition count own nothing anyway", max(now, after), MaxAssignMembers)
	}
	return nil
}

// scaling: --members N is the group's size after (the live group scaled
// from its members now to N), not a hypothetical group, when nothing else
// is asked to change.
func scaling(in AssignPlanInput) bool {
	return in.Members > 0 && in.Add == 0 && len(in.NewMembers) == 0 && len(in.Remove) == 0
}

// StartAssignPlan chooses the assignor and gathers the members now with
// their subscriptions: the live group (scaled to --members N when that is
// all that is asked), else the hypothetical --members N.
func StartAssignPlan(in AssignPlanInput) (*AssignPlanner, error) {
	live := 0
	if in.Live != nil {
		live = len(in.Live.Members)
	}
	if err := CheckMemberCounts(in, live); err != nil {
		return nil, err
	}
	if scaling(in) && in.Live != nil {
		return scaleLive(in)
	}
	if scaling(in) {
		where := "no live group (give -b BROKERS to scale the live group to " + strconv.Itoa(in.Members) + ")"
		if in.Brokers {
			where = "the group has no live members"
		}
		return nil, inputErrorf("--members %d alone changes nothing: NOW and AFTER would be the same %d hypothetical members, and %s; add --add N, --new-member NAME or --remove member-K to see what moves", in.Members, in.Members, where)
	}
	return startAssignPlan(in)
}

// scaleLive plans the live group scaled to --members N: members join
// (new-1…) or the last by group.instance.id (else member id) leave.
func scaleLive(in AssignPlanInput) (*AssignPlanner, error) {
	target, k := in.Members, len(in.Live.Members)
	in.Members = 0
	switch {
	case target > k:
		in.Add = target - k
	case target < k:
		ms := slices.Clone(in.Live.Members)
		key := func(m wire.Member) string { return cmp.Or(m.InstanceID, m.MemberID) }
		slices.SortFunc(ms, func(a, b wire.Member) int {
			return cmp.Or(cmp.Compare(key(a), key(b)), cmp.Compare(a.MemberID, b.MemberID))
		})
		for _, m := range ms[target:] {
			in.Remove = append(in.Remove, m.MemberID)
		}
	}
	p, err := startAssignPlan(in)
	if err != nil {
		return nil, err
	}
	note := fmt.Sprintf("--members %d: the live group scaled from %d to %d members", target, k, target)
	if target < k {
		note += " (the last by group.instance.id, else member id, leave: " + strings.Join(in.Remove, ", ") + ")"
	}
	p.plan.Notes = append(p.plan.Notes, note)
	return p, nil
}

func startAssignPlan(in AssignPlanInput) (*AssignPlanner, error) {
	p := &AssignPlanner{in: in, clientIDs: map[string]string{}, plan: AssignPlan{Group: in.Group, Partitions: map[string]int32{},
		Notes: []string{}, Members: []AssignPlanMember{}, Moves: []PartitionMove{}, Revoked: []PartitionMove{}}}
	p.chooseAssignor()
	p.defaults = in.Committed
	subSource := "the topics the group committed offsets for on the volume"
	if len(in.Topics) > 0 {
		p.defaults, subSource = in.Topics, "--topic"
	}
	switch {
	case in.Members > 0:
		for i := 1; i <= in.Members; i++ {
			p.members = append(p.members, AssignMember{ID: fmt.Sprintf("member-%d", i), Topics: slices.Clone(p.defaults)})
		}
		p.plan.Sources.Members = fmt.Sprintf("--members %d (hypothetical member-1..member-%d)", in.Members, in.Members)
		p.plan.Sources.Subscriptions = subSource
	case in.Live != nil:
		p.liveMembers(subSource)
	case in.Brokers:
		return nil, inputErrorf("group %s has no live members: give --members N to plan a group of N members", in.Group)
	default:
		return nil, inputErrorf("no live group (give -b BROKERS) and no --members N: nothing to plan for %s", in.Group)
	}
	for _, m := range p.members {
		for _, t := range m.Topics {
			if !slices.Contains(p.subscribed, t) {
				p.subscribed = append(p.subscribed, t)
			}
		}
	}
	slices.Sort(p.subscribed)
	if len(p.subscribed) == 0 {
		return nil, inputErrorf("no subscription known for %s: the group has no committed offsets on the volume; give --topic", in.Group)
	}
	return p, nil
}

// chooseAssignor takes --assignor, else the live group's protocol, else
// franz-go's default, and notes which.
func (p *AssignPlanner) chooseAssignor() {
	live, assignor := p.in.Live, p.in.Assignor
	switch {
	case assignor == "":
		assignor = "cooperative-sticky"
		if live != nil && slices.Contains(Assignors, live.Protocol) {
			assignor = live.Protocol
			p.plan.Notes = append(p.plan.Notes, "assignor "+assignor+": the live group's protocol")
		} else {
			p.plan.Notes = append(p.plan.Notes, "assignor cooperative-sticky: franz-go's default (give --assignor)")
		}
	case live != nil && live.Protocol != "" && live.Protocol != assignor:
		p.plan.Notes = append(p.plan.Notes, fmt.Sprintf("the live group uses %s; computed with --assignor %s", live.Protocol, assignor))
	}
	p.plan.Assignor, p.plan.AssignorNote = assignor, AssignorNotes[assignor]
}

// liveMembers takes the members, their subscriptions (reported metadata,
// else the default topics) and what they own from the live group.
func (p *AssignPlanner) liveMembers(subSource string) {
	live := p.in.Live
	reported := 0
	p.nowKnown = true
	for _, m := range live.Members {
		am := AssignMember{ID: m.MemberID, InstanceID: m.InstanceID, Owned: map[string][]int32{}}
		p.clientIDs[m.MemberID] = m.ClientID
		if m.MetadataReported && m.MetadataErr == "" && len(m.Subscription) > 0 {
			am.Topics = m.Subscription
			reported++
		} else {
			am.Topics = slices.Clone(p.defaults)
		}
		if m.AssignmentReported && m.AssignmentErr == "" {
			for _, at := range m.Assignment {
				am.Owned[at.Topic] = append(am.Owned[at.Topic], at.Partitions...)
			}
		} else {
			p.nowKnown = false
		}
		p.members = append(p.members, am)
	}
	p.plan.Sources.Members = fmt.Sprintf("live: DescribeGroups on the coordinator (%s, %s, %d members)", live.State, noneIfEmpty(live.Protocol), len(live.Members))
	switch reported {
	case len(live.Members):
		p.plan.Sources.Subscriptions = "live: the members' metadata"
	case 0:
		p.plan.Sources.Subscriptions = "the broker did not report member metadata: " + subSource
	default:
		p.plan.Sources.Subscriptions = fmt.Sprintf("live metadata for %d member(s); %s for the rest", reported, subSource)
	}
}

// Subscribed is every topic a member subscribes to, sorted: the topics
// whose partition counts Plan needs.
func (p *AssignPlanner) Subscribed() []string { return slices.Clone(p.subscribed) }

// PartitionCountsFromMetadata is each topic's partition count in the
// brokers' metadata (topics the metadata failed for are left out).
func PartitionCountsFromMetadata(md *wire.Metadata, topics []string) map[string]int32 {
	out := map[string]int32{}
	for _, t := range topics {
		if tm := md.Topics[t]; tm != nil && tm.Err == "" {
			out[t] = int32(len(tm.Partitions))
		}
	}
	return out
}

// PartitionCountsFromAssignment is each topic's partition count in
// assignment.json's partitions[] (the highest partition listed, plus one).
func PartitionCountsFromAssignment(a *volume.Assignment, topics []string) map[string]int32 {
	out := map[string]int32{}
	for _, p := range a.Partitions {
		if slices.Contains(topics, p.Topic) {
			out[p.Topic] = max(out[p.Topic], p.Partition+1)
		}
	}
	return out
}

// Plan finishes the plan with the partition counts (and where they came
// from: "" when unknown): what the members own now, who stays, leaves and
// joins, the balance after, the moves and each member's tally.
func (p *AssignPlanner) Plan(partitions map[string]int32, source string) (AssignPlan, error) {
	v := &p.plan
	v.Sources.Partitions = source
	for t, n := range partitions {
		v.Partitions[t] = n
	}
	if source == "" {
		return AssignPlan{}, inputErrorf("the partition counts are unknown: give -b BROKERS (their metadata) or a volume with assignment.json")
	}
	for _, t := range p.subscribed {
		if _, ok := v.Partitions[t]; ok {
			continue
		}
		if slices.Contains(p.in.Topics, t) {
			return AssignPlan{}, inputErrorf("--topic %s: no such topic in %s", t, strings.TrimPrefix(source, "live: "))
		}
		v.Notes = append(v.Notes, "topic "+t+": partition count unknown (not in the "+strings.TrimPrefix(source, "live: ")+"); left out")
	}
	now, err := p.now()
	if err != nil {
		return AssignPlan{}, err
	}
	after, status, err := p.membersAfter()
	if err != nil {
		return AssignPlan{}, err
	}
	res, err := p.balanceAfter(after)
	if err != nil {
		return AssignPlan{}, err
	}
	v.Moves = AssignmentMoves(now, res.Assignment)
	if v.Moves == nil {
		v.Moves = []PartitionMove{}
	}
	all := slices.Clone(p.members)
	for _, m := range after {
		if status[m.ID] == "joins" {
			all = append(all, m)
		}
	}
	v.Members = memberTallies(all, status, p.clientIDs, now, res.Assignment, v.Moves)
	return *v, nil
}

// now is what the members own: as reported by the live group, else what
// the assignor gives them from scratch (then also their Owned).
func (p *AssignPlanner) now() (Assignment, error) {
	now := Assignment{}
	if p.nowKnown {
		for _, m := range p.members {
			now[m.ID] = m.Owned
		}
		p.plan.Sources.Now = "live: the members' current assignment"
		return now, nil
	}
	res, err := Balance(p.plan.Assignor, p.members, p.plan.Partitions, 1)
	if err != nil {
		return nil, err
	}
	now = res.Assignment
	p.plan.Sources.Now = "computed: what the assignor gives these members from scratch"
	if p.in.Live != nil {
		p.plan.Sources.Now += " (the broker did not report the members' assignment)"
	}
	for i := range p.members {
		p.members[i].Owned = now[p.members[i].ID]
	}
	return now, nil
}

// membersAfter is the members that rejoin (stays: owning what their
// assignor reports when rejoining) and join, and each member's status.
func (p *AssignPlanner) membersAfter() ([]AssignMember, map[string]string, error) {
	removed := map[string]bool{}
	for _, r := range p.in.Remove {
		found := false
		for _, m := range p.members {
			if m.ID == r || (m.InstanceID != "" && m.InstanceID == r) || p.clientIDs[m.ID] == r {
				removed[m.ID], found = true, true
			}
		}
		if !found {
			return nil, nil, inputErrorf("--remove %s: no such member (members: %s)", r, strings.Join(memberNames(p.members), ", "))
		}
	}
	status := map[string]string{}
	var after []AssignMember
	for _, m := range p.members {
		if removed[m.ID] {
			status[m.ID] = "leaves"
			continue
		}
		status[m.ID] = "stays"
		m.Owned = RejoinOwned(p.plan.Assignor, m.Owned)
		after = append(after, m)
	}
	add := max(p.in.Add, len(p.in.NewMembers))
	for i := 0; i < add; i++ {
		nm := AssignMember{ID: fmt.Sprintf("new-%d", i+1), Topics: slices.Clone(p.defaults), Owned: map[string][]int32{}}
		if i < len(p.in.NewMembers) {
			nm.ID, nm.InstanceID = p.in.NewMembers[i], p.in.NewMembers[i]
		}
		if len(nm.Topics) == 0 {
			nm.Topics = slices.Clone(p.subscribed)
		}
		if status[nm.ID] != "" {
			return nil, nil, inputErrorf("--new-member %s: a member of that name exists", nm.ID)
		}
		status[nm.ID] = "joins"
		after = append(after, nm)
	}
	if add > 0 && len(p.in.NewMembers) == 0 {
		p.plan.Notes = append(p.plan.Notes, "new members are named new-1…: a real one's member id is chosen by the broker and decides where it sorts (give --new-member NAME for a static member)")
	}
	return after, status, nil
}

// balanceAfter balances the members after, and notes an empty group and
// the alternatives of a balance whose ties fall by map order.
func (p *AssignPlanner) balanceAfter(after []AssignMember) (BalanceResult, error) {
	v := &p.plan
	res := BalanceResult{Assignment: Assignment{}, Rounds: 1}
	if len(after) > 0 {
		var err error
		if res, err = Balance(v.Assignor, after, v.Partitions, 2); err != nil {
			return res, err
		}
	} else {
		v.Notes = append(v.Notes, "no member is left: every partition is unassigned")
	}
	v.Rebalances = res.Rounds
	v.Alternatives = res.Alternatives
	if v.Alternatives == nil {
		v.Alternatives = []AlternativeAssignment{}
	} else {
		v.Notes = append(v.Notes, fmt.Sprintf("franz-go's %s engine breaks ties here by Go map order: over %d runs it gave %d different answers; shown is the most frequent (%.0f%%), the others are in -o json's alternatives",
			v.Assignor, BalanceTries, len(v.Alternatives), 100*v.Alternatives[0].Share))
	}
	if res.Revoked != nil {
		v.Revoked = res.Revoked
	}
	return res, nil
}

// memberTallies is each member now and after, with the partitions it
// gains and loses.
func memberTallies(all []AssignMember, status, clientIDs map[string]string, now, after Assignment, moves []PartitionMove) []AssignPlanMember {
	out := []AssignPlanMember{}
	for _, m := range all {
		pm := AssignPlanMember{MemberID: m.ID, InstanceID: m.InstanceID, ClientID: clientIDs[m.ID], Status: status[m.ID],
			Subscription: m.Topics, Now: orEmptyParts(now[m.ID]), After: orEmptyParts(after[m.ID])}
		for _, mv := range moves {
			if mv.To == m.ID {
				pm.Gained++
			}
			if mv.From == m.ID {
				pm.Lost++
			}
		}
		if pm.Subscription == nil {
			pm.Subscription = []string{}
		}
		out = append(out, pm)
	}
	return out
}

func orEmptyParts(m map[string][]int32) map[string][]int32 {
	if m == nil {
		return map[string][]int32{}
	}
	return m
}

// memberNames lists members as an error names them: id (instance id).
func memberNames(ms []AssignMember) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
		if m.InstanceID != "" {
			out[i] += " (" + m.InstanceID + ")"
		}
	}
	return out
}
