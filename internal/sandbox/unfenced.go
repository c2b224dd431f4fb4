package sandbox

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AcceptStaleCommits makes OffsetCommit behave as on kaas, which never
// fences commits by generation: a commit that carries a member id and an
// old generation (a consumer fenced off by a rebalance, a zombie) is
// accepted when the group has no live members, and rewrites the offsets
// file like any commit. kfake itself still fences a commit to a group
// with live members (see Limits).
func (s *Sandbox) AcceptStaleCommits(on bool) { s.unfenced.Store(on) }

// ForgetOffsets makes the group's coordinator behave as a kaas coordinator
// that has not loaded the group (it just took the group over, or restarted):
// its next commit rewrites the offsets file with only the partitions that
// commit carries. The brokers' committed offsets (OffsetFetch) are not
// changed.
func (s *Sandbox) ForgetOffsets(group string) {
	s.offsets.mu.Lock()
	delete(s.offsets.groups, group)
	s.offsets.mu.Unlock()
}

// unfencedCommit returns the commit rewritten as a simple (generation -1)
// commit when stale commits are accepted and the group has no members;
// nil to forward the request as it is.
func (s *Sandbox) unfencedCommit(f *frame, r *kmsg.OffsetCommitRequest) []byte {
	if !s.unfenced.Load() || r.Generation < 0 {
		return nil
	}
	if gi := s.kf.GroupInfo(r.Group); gi != nil && len(gi.Members) > 0 {
		return nil
	}
	c := *r
	c.Generation, c.MemberID, c.InstanceID = -1, "", nil
	return f.withBody(&c)
}
