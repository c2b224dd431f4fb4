//go:build realkaas

package realkaas

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kaas fences OffsetCommit by neither generation nor member: a zombie's
// commit (a member id the group does not have, a generation it never
// had) to a group with a live member is accepted and becomes the group's
// committed offset. The sandbox's AcceptStaleCommits and the timeline's
// zombie attribution rest on this; Apache Kafka (and kfake) would answer
// UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION.
func TestRealZombieCommitAccepted(t *testing.T) {
	t.Parallel()
	forFlavours(t, testRealZombieCommitAccepted)
}

func testRealZombieCommitAccepted(t *testing.T, f Flavour) {
	c := newFlavourCluster(t, f, "orders:3")
	const group = "g-zombie"
	produce(t, c, "orders", 3, 30)
	a := startConsumer(t, c, group, "orders")
	waitPositions(t, all("orders", 3, 30), a)
	waitFor(t, 60*time.Second, "a's commits at 30", func() error {
		if got := committed(t, c, group); fmtOffsets(got) != fmtOffsets(all("orders", 3, 30)) {
			return fmt.Errorf("committed %s", fmtOffsets(got))
		}
		return nil
	})
	waitGroupState(t, c, group, "Stable")

	cl := newClient(t, c)
	defer cl.Close()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation, req.MemberID = group, 9999, "zombie-member"
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "orders"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = 1, 10, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("zombie OffsetCommit: %v", err)
	}
	for _, tt := range resp.Topics {
		for _, p := range tt.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				t.Fatalf("kaas fenced the zombie's commit on %s/%d: %v", tt.Topic, p.Partition, err)
			}
		}
	}
	want := all("orders", 3, 30)
	want[tp{"orders", 1}] = 10
	if got := committed(t, c, group); fmtOffsets(got) != fmtOffsets(want) {
		t.Errorf("after the zombie's commit: committed %s, want %s", fmtOffsets(got), fmtOffsets(want))
	}
	// The live member is still the group's: the commit did not fence it.
	waitGroupState(t, c, group, "Stable")
	a.stop()
}
