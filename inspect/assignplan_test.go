package inspect

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

func TestMiniKafkaTextbook(t *testing.T) {
	t.Parallel()
	got := miniKafka([]AssignMember{{ID: "b", Topics: []string{"t"}}, {ID: "a", Topics: []string{"t"}}}, map[string]int32{"t": 4})
	if fmt.Sprint(got) != "map[a:map[t:[0 2]] b:map[t:[1 3]]]" {
		t.Fatalf("%v", got)
	}
	// One cursor shared across topics, skipping members not subscribed.
	got = miniKafka([]AssignMember{{ID: "a", Topics: []string{"t", "u"}}, {ID: "b", Topics: []string{"t"}}, {ID: "c", Topics: []string{"u"}}},
		map[string]int32{"t": 3, "u": 3})
	// t0 a, t1 b, t2 a (c skipped), then u from b's next: u0 c, u1 a, u2 c.
	if fmt.Sprint(got) != "map[a:map[t:[0 2] u:[1]] b:map[t:[1]] c:map[u:[0 2]]]" {
		t.Fatalf("%v", got)
	}
}

// The kgo balancers run through the real balance code: range gives the
// first members the extra partitions, cooperative-sticky revokes first.
func TestBalanceWithFranzGo(t *testing.T) {
	t.Parallel()
	ms := []AssignMember{{ID: "m2", Topics: []string{"t"}}, {ID: "m1", Topics: []string{"t"}}}
	r, err := Balance("range", ms, map[string]int32{"t": 5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(r.Assignment) != "map[m1:map[t:[0 1 2]] m2:map[t:[3 4]]]" {
		t.Fatalf("range %v", r.Assignment)
	}
	now, _ := Balance("cooperative-sticky", ms, map[string]int32{"t": 6}, 1)
	after := append([]AssignMember{}, ms...)
	for i := range after {
		after[i].Owned = now.Assignment[after[i].ID]
	}
	after = append(after, AssignMember{ID: "m3", Topics: []string{"t"}})
	r, err = Balance("cooperative-sticky", after, map[string]int32{"t": 6}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rounds != 2 || len(r.Revoked) != 2 || len(r.Assignment["m3"]["t"]) != 2 {
		t.Fatalf("cooperative: %+v", r)
	}
	if len(AssignmentMoves(now.Assignment, r.Assignment)) != 2 {
		t.Fatalf("moves %v", AssignmentMoves(now.Assignment, r.Assignment))
	}
	if _, err := Balance("nope", ms, nil, 1); err == nil {
		t.Fatal("unknown assignor accepted")
	}
}

func planOf(t *testing.T, in AssignPlanInput, partitions map[string]int32, source string) (AssignPlan, error) {
	t.Helper()
	p, err := StartAssignPlan(in)
	if err != nil {
		return AssignPlan{}, err
	}
	return p.Plan(partitions, source)
}

func liveGroup() *wire.DescribedGroup {
	return &wire.DescribedGroup{Group: "g", State: "Stable", Protocol: "range", Members: []wire.Member{
		{MemberID: "m-a", ClientID: "app-1", Subscription: []string{"t"}, MetadataReported: true,
			Assignment: []wire.AssignedTopic{{Topic: "t", Partitions: []int32{0, 1}}}, AssignmentReported: true},
		{MemberID: "m-b", InstanceID: "static-b", ClientID: "app-2", MetadataReported: true,
			Assignment: []wire.AssignedTopic{{Topic: "t", Partitions: []int32{2, 3}}}, AssignmentReported: true},
	}}
}

// The plan's halves: members and subscriptions from the flags or the live
// group, the balance after, the moves and each member's tally; what cannot
// be planned is an AssignInputError.
func TestPlanAssignmentFromInputs(t *testing.T) {
	t.Parallel()
	counts := map[string]int32{"t": 4}
	for _, tc := range []struct {
		name    string
		in      AssignPlanInput
		members string // id:status:gained/lost
		sources string // members | subscriptions | now, by prefix
		notes   []string
		err     string
	}{
		{name: "hypothetical members, one joins", in: AssignPlanInput{Group: "g", Assignor: "minikafka", Members: 2, Add: 1, Committed: []string{"t"}},
			members: "member-1:stays:1/1 member-2:stays:0/1 new-1:joins:1/0", sources: "--members 2|the topics the group committed|computed",
			notes: []string{"new members are named new-1"}},
		{name: "the live group, the default assignor is its protocol", in: AssignPlanInput{Group: "g", Live: liveGroup(), Committed: []string{"t"}, Remove: []string{"static-b"}},
			members: "m-a:stays:2/0 m-b:leaves:0/2", sources: "live: DescribeGroups on the coordinator (Stable, range, 2 members)|live metadata for 1 member(s)|live: the members' current assignment",
			notes: []string{"assignor range: the live group's protocol"}},
		{name: "another assignor than the live group's", in: AssignPlanInput{Group: "g", Assignor: "roundrobin", Live: liveGroup(), Topics: []string{"t"}, Remove: []string{"app-1"}},
			members: "m-a:leaves:0/2 m-b:stays:2/0", sources: "live|live metadata for 1 member(s); --topic for the rest|live",
			notes: []string{"the live group uses range; computed with --assignor roundrobin"}},
		{name: "everyone leaves", in: AssignPlanInput{Group: "g", Assignor: "range", Members: 1, Remove: []string{"member-1"}, Committed: []string{"t", "u"}},
			members: "member-1:leaves:0/4", sources: "--members 1|the topics the group committed|computed",
			notes: []string{"topic u: partition count unknown (not in the assignment.json partitions[]); left out", "no member is left"}},
		{name: "no such member", in: AssignPlanInput{Group: "g", Members: 2, Remove: []string{"member-3"}, Committed: []string{"t"}},
			err: "--remove member-3: no such member (members: member-1, member-2)"},
		{name: "a new member named like one", in: AssignPlanInput{Group: "g", Members: 2, NewMembers: []string{"member-2"}, Committed: []string{"t"}},
			err: "--new-member member-2: a member of that name exists"},
		{name: "nothing to plan offline", in: AssignPlanInput{Group: "g", Committed: []string{"t"}}, err: "no live group (give -b BROKERS)"},
		{name: "no live members", in: AssignPlanInput{Group: "g", Brokers: true}, err: "group g has no live members"},
		{name: "no subscription", in: AssignPlanInput{Group: "g", Members: 2, Add: 1}, err: "no subscription known for g"},
		{name: "--members scales the live group up", in: AssignPlanInput{Group: "g", Live: liveGroup(), Committed: []string{"t"}, Members: 3},
			members: "m-a:stays:1/2 m-b:stays:2/2 new-1:joins:1/0", sources: "live|live metadata for 1 member(s)|live",
			notes: []string{"assignor range: the live group's protocol", "--members 3: the live group scaled from 2 to 3 members", "new members are named new-1"}},
		{name: "--members scales the live group down", in: AssignPlanInput{Group: "g", Live: liveGroup(), Committed: []string{"t"}, Members: 1},
			members: "m-a:stays:2/0 m-b:leaves:0/2", sources: "live|live metadata for 1 member(s)|live",
			notes: []string{"assignor range: the live group's protocol", "--members 1: the live group scaled from 2 to 1 members (the last by group.instance.id, else member id, leave: m-b)"}},
		{name: "--members alone without a live group", in: AssignPlanInput{Group: "g", Members: 4, Committed: []string{"t"}},
			err: "--members 4 alone changes nothing: NOW and AFTER would be the same 4 hypothetical members, and no live group"},
		{name: "--topic that does not exist", in: AssignPlanInput{Group: "g", Members: 2, Add: 1, Topics: []string{"t", "nosuch"}},
			err: "--topic nosuch: no such topic in assignment.json partitions[]"},
		{name: "a count no group could have", in: AssignPlanInput{Group: "g", Members: 2, Add: 99999999999999, Committed: []string{"t"}},
			err: "--add 99999999999999: no group has that many members"},
		{name: "more members than plan assignment balances", in: AssignPlanInput{Group: "g", Members: 1000000, Add: 1, Committed: []string{"t"}},
			err: "1000001 members: plan assignment balances at most 10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := planOf(t, tc.in, counts, "assignment.json partitions[]")
			if tc.err != "" {
				var ie *AssignInputError
				if !errors.As(err, &ie) || !strings.HasPrefix(ie.Msg, tc.err) {
					t.Fatalf("error %v, want an input error %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ms []string
			for _, m := range v.Members {
				ms = append(ms, fmt.Sprintf("%s:%s:%d/%d", m.MemberID, m.Status, m.Gained, m.Lost))
			}
			if got := strings.Join(ms, " "); got != tc.members {
				t.Errorf("members %s, want %s", got, tc.members)
			}
			src := strings.Split(tc.sources, "|")
			if !strings.HasPrefix(v.Sources.Members, src[0]) || !strings.HasPrefix(v.Sources.Subscriptions, src[1]) || !strings.HasPrefix(v.Sources.Now, src[2]) {
				t.Errorf("sources %+v, want %v", v.Sources, src)
			}
			if len(v.Notes) != len(tc.notes) {
				t.Fatalf("notes %q, want %q", v.Notes, tc.notes)
			}
			for i, n := range tc.notes {
				if !strings.HasPrefix(v.Notes[i], n) {
					t.Errorf("note %d %q, want %q", i, v.Notes[i], n)
				}
			}
			gained, lost := 0, 0
			for _, m := range v.Members {
				gained, lost = gained+m.Gained, lost+m.Lost
			}
			moves := 0
			for _, mv := range v.Moves {
				if mv.From != "" && mv.To != "" {
					moves++
				}
			}
			if gained > len(v.Moves) || lost > len(v.Moves) || moves > gained {
				t.Errorf("tallies gained %d lost %d for moves %+v", gained, lost, v.Moves)
			}
		})
	}
}

func TestPartitionCounts(t *testing.T) {
	t.Parallel()
	md := &wire.Metadata{Topics: map[string]*wire.TopicMeta{"t": {Partitions: map[int32]int32{0: 1, 1: 2}}, "bad": {Err: "UNKNOWN_TOPIC_OR_PARTITION"}}}
	if got := PartitionCountsFromMetadata(md, []string{"t", "bad", "absent"}); fmt.Sprint(got) != "map[t:2]" {
		t.Errorf("metadata: %v", got)
	}
	a := &volume.Assignment{Partitions: []volume.PartitionEntry{{Topic: "t", Partition: 4}, {Topic: "t", Partition: 1}, {Topic: "u", Partition: 0}}}
	if got := PartitionCountsFromAssignment(a, []string{"t"}); fmt.Sprint(got) != "map[t:5]" {
		t.Errorf("assignment: %v", got)
	}
}
