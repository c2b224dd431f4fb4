package inspect

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// Shard is one exporter's part of the groups: shard K of N (0 ≤ K < N).
type Shard struct {
	K, N int
}

// ParseShard reads "K/N" (shard K of N, counted from 0).
func ParseShard(s string) (Shard, error) {
	ks, ns, ok := strings.Cut(s, "/")
	k, kerr := strconv.Atoi(strings.TrimSpace(ks))
	n, nerr := strconv.Atoi(strings.TrimSpace(ns))
	switch {
	case !ok || kerr != nil || nerr != nil:
		return Shard{}, fmt.Errorf("%q is not K/N (shard K of N, from 0: 0/3, 1/3, 2/3)", s)
	case n < 1 || n > 1024:
		return Shard{}, fmt.Errorf("%q: N must be 1 to 1024", s)
	case k < 0 || k >= n:
		return Shard{}, fmt.Errorf("%q: K must be 0 to %d", s, n-1)
	}
	return Shard{K: k, N: n}, nil
}

// String is "K/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// ClusterWide reports whether this shard exports the series of the whole
// cluster (assignment, brokers, volume findings): shard 0 does.
func (s Shard) ClusterWide() bool { return s.K == 0 }

// ShardRule gives the shard that owns each group under one version of
// assignment.json, by kaas's own routing. The rule, the same for every
// shard that read the same version:
//   - a group's coordinator is what the version's two tiers say (the
//     explicit entry, else the hash tier), whatever the brokers answer;
//     a group mid-takeover (its entry names a broker that is not alive,
//     or the brokers still list it on the old coordinator) stays with the
//     shard of the coordinator the version names until a version names
//     another;
//   - the coordinator's shard is its rank among the ids of brokers[]
//     (sorted, dead ones included) modulo N, so N equal to the brokers is
//     a shard per broker; a coordinator brokers[] does not list, and a
//     group with none (no broker alive), go by FNV-1a of the id modulo N;
//   - with no readable assignment.json (or no volume), every group goes
//     by FNV-1a of its id modulo N.
type ShardRule struct {
	n      int
	router *grouphash.Router
	rank   map[string]int
}

// NewShardRule is the rule for n shards under a (nil: none read).
func NewShardRule(a *volume.Assignment, n int) *ShardRule {
	r := &ShardRule{n: max(n, 1)}
	if a == nil {
		return r
	}
	r.router = a.Router()
	ids := make([]string, 0, len(a.Brokers))
	for _, b := range a.Brokers {
		ids = append(ids, b.ID)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	r.rank = make(map[string]int, len(ids))
	for i, id := range ids {
		r.rank[id] = i
	}
	return r
}

// Owner is the shard that owns group.
func (r *ShardRule) Owner(group string) int {
	if r.router == nil {
		return r.hashed(group)
	}
	c := r.router.Group(group).Coordinator
	if i, ok := r.rank[c]; ok {
		return i % r.n
	}
	if c != "" {
		return r.hashed(c)
	}
	return r.hashed(group)
}

func (r *ShardRule) hashed(s string) int { return int(grouphash.FNV1a32(s) % uint32(r.n)) }
