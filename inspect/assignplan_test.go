package inspect

import (
	"fmt"
	"testing"
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
