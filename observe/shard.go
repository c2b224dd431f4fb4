package observe

import "github.com/kaasctl/kaasctl/inspect"

// owns reports whether the refresh's shard owns group (every group when
// the source is not sharded). The rule is made from the assignment the
// refresh read, at its first use: the scan reads assignment.json before
// any offset file.
func (r *refreshRun) owns(group string) bool {
	sh := r.s.Shard
	if sh == nil || sh.N <= 1 {
		return true
	}
	if r.shardRule == nil {
		r.shardRule = inspect.NewShardRule(r.o.Assignment, sh.N)
	}
	return r.shardRule.Owner(group) == sh.K
}

// countOtherShard counts a group left out that passes the filter: another
// shard owns it.
func (r *refreshRun) countOtherShard(group string) {
	s := r.s
	if s.Shard == nil || (s.Filter != nil && !s.Filter.MatchString(group)) || (s.Only != nil && !s.Only[group]) {
		return
	}
	r.o.OtherShards++
}

// shardReads is the scan's ReadGroup: a shard that does not export the
// cluster's series (the volume's findings among them) reads only the
// offset files of the groups it owns; nil (every file) otherwise. It
// makes the shard rule first, from the assignment the scan just read, so
// the workers only read it.
func (r *refreshRun) shardReads() func(group string) bool {
	sh := r.s.Shard
	if sh == nil || sh.N <= 1 || sh.ClusterWide() {
		return nil
	}
	r.shardRule = inspect.NewShardRule(r.o.Assignment, sh.N)
	return r.owns
}
