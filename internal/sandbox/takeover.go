package sandbox

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// evictMembers does what a kaas coordinator change does to a group's
// members: the old coordinator relinquishes the group (or died with it), so
// the new one does not know them; their next heartbeat or commit gets
// UNKNOWN_MEMBER_ID and they rejoin — one rebalance per move. The group's
// committed offsets stay (kaas keeps them on the volume).
func (s *Sandbox) evictMembers(groups []string) {
	if len(groups) == 0 || s.KeepMembersOnMove {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
		defer cancel()
		described, err := s.adm.DescribeGroups(ctx, groups...)
		if err != nil {
			return
		}
		for _, d := range described {
			// Only a Stable group: members parked in a JoinGroup are
			// already rebalancing, and kfake never answers a parked join
			// whose member is removed (the client would wait out its
			// request timeout).
			if d.Err != nil || len(d.Members) == 0 || d.State != "Stable" {
				continue
			}
			req := kmsg.NewPtrLeaveGroupRequest()
			req.Group = d.Group
			for _, m := range d.Members {
				lm := kmsg.NewLeaveGroupRequestMember()
				lm.MemberID = m.MemberID
				req.Members = append(req.Members, lm)
			}
			reason := "kaas coordinator change (sandbox)"
			for i := range req.Members {
				req.Members[i].Reason = &reason
			}
			_, _ = req.RequestWith(ctx, s.admin)
		}
	}()
}
