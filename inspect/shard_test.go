package inspect

import (
	"fmt"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// ParseShard accepts K/N with 0 ≤ K < N ≤ 1024 and nothing else, and what
// it accepts prints back as given.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/3", "2/3", "3/3", "1", "-1/2", "a/b", "0/0", " 1 / 2 ", "0/1025", "1023/1024"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			return
		}
		if sh.K < 0 || sh.K >= sh.N || sh.N > 1024 {
			t.Fatalf("%q accepted as %+v", s, sh)
		}
		if back, err := ParseShard(sh.String()); err != nil || back != sh {
			t.Fatalf("%q: %v prints as %q, which reads %+v, %v", s, sh, sh.String(), back, err)
		}
	})
}

// Every group has exactly one owner under a version, and the owner of a
// group with an explicit entry is its broker's rank, dead or alive.
func TestShardRuleOwners(t *testing.T) {
	t.Parallel()
	a := &volume.Assignment{Brokers: []volume.BrokerEntry{{ID: "b", Health: "alive"}, {ID: "a", Health: "dead"}, {ID: "c", Health: "alive"}},
		ConsumerGroups: []volume.GroupEntry{{GroupID: "held", Broker: "a"}, {GroupID: "moved", Broker: "c"}}}
	r := NewShardRule(a, 3)
	if got := r.Owner("held"); got != 0 {
		t.Errorf("a group entered on the dead broker a (rank 0) is owned by shard %d", got)
	}
	if got := r.Owner("moved"); got != 2 {
		t.Errorf("a group entered on c (rank 2) is owned by shard %d", got)
	}
	counts := make([]int, 3)
	for i := range 3000 {
		g := fmt.Sprintf("g-%d", i)
		o := r.Owner(g)
		if o != NewShardRule(a, 3).Owner(g) {
			t.Fatalf("%s: two rules of one version disagree", g)
		}
		counts[o]++
	}
	if counts[0] != 0 || counts[1] == 0 || counts[2] == 0 {
		t.Errorf("hash-tier groups by shard %v: the dead broker's shard should get none, the alive ones some", counts)
	}
	if got := NewShardRule(nil, 4).Owner("x"); got < 0 || got > 3 {
		t.Errorf("without an assignment: owner %d of 4", got)
	}
}
