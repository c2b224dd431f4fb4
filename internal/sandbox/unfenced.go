package sandbox

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AcceptStaleCommits makes OffsetCommit behave as on kaas, which checks
// neither the generation, the member nor the group's state of a commit
// (kaas-formats §0 item 11 and §3.5: manager.rs's commit path takes any
// generation or member, in any state): a commit from a member fenced off
// by a rebalance or gone from the group (a zombie), or an admin's
// (generation −1, no member) to a group with live members, is accepted and
// rewrites the offsets file like any commit. kfake fences such commits as
// Apache Kafka does, so the sandbox hands them to kfake as a simple commit
// when the group has no members, and as one of the current generation by
// a current member when it has some (kfake then counts it as that
// member's heartbeat; see Limits).
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

// unfencedCommit returns the commit rewritten so that kfake accepts it as
// kaas would, when stale commits are accepted and kfake would fence it;
// nil to forward the request as it is.
func (s *Sandbox) unfencedCommit(f *frame, r *kmsg.OffsetCommitRequest) []byte {
	if !s.unfenced.Load() {
		return nil
	}
	gi := s.kf.GroupInfo(r.Group)
	if gi == nil || len(gi.Members) == 0 {
		if r.Generation < 0 {
			return nil
		}
		c := *r
		c.Generation, c.MemberID, c.InstanceID = -1, "", nil
		return f.withBody(&c)
	}
	if r.Generation == gi.Epoch && slices.ContainsFunc(gi.Members, func(m kfake.GroupMember) bool { return m.MemberID == r.MemberID }) {
		return nil // a current member's: kfake takes it
	}
	m := gi.Members[0]
	c := *r
	c.Generation, c.MemberID, c.InstanceID = gi.Epoch, m.MemberID, m.InstanceID
	return f.withBody(&c)
}
