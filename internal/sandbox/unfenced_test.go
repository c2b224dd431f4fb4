package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A group with a live member: kfake fences a commit from an unknown
// member or an old generation, and an admin's (generation −1), as Apache
// Kafka does; with AcceptStaleCommits the sandbox takes each as kaas does
// (it never fences OffsetCommit) and writes it to the offsets file.
func TestAcceptStaleCommitsWithLiveMembers(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 2, Topics: []Topic{{Name: "orders", Partitions: 2}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	member, err := sb.Client(ConsumerOpts("live", "orders")...)
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	go func() {
		for ctx.Err() == nil {
			member.PollFetches(ctx)
		}
	}()
	sb.WaitFor(t, "a live member", 20*time.Second, func() bool {
		gi := sb.kf.GroupInfo("live")
		return gi != nil && len(gi.Members) == 1 && gi.State == "Stable"
	})
	cl, err := sb.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	commit := func(memberID string, gen int32, offset int64) error {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation, req.MemberID = "live", gen, memberID
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "orders"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = 1, offset, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	}
	if err := commit("zombie-1", 1, 7); err != kerr.UnknownMemberID {
		t.Fatalf("kfake took a zombie's commit: %v", err)
	}
	sb.AcceptStaleCommits(true)
	for _, c := range []struct {
		member string
		gen    int32
		offset int64
	}{{"zombie-1", 1, 7}, {"", -1, 3}} {
		if err := commit(c.member, c.gen, c.offset); err != nil {
			t.Fatalf("commit by %q generation %d: %v", c.member, c.gen, err)
		}
		if offs, ok := sb.CommittedOffsets("live"); !ok || offs["orders/1"] != c.offset {
			t.Errorf("after the commit by %q generation %d the file holds %v", c.member, c.gen, offs)
		}
	}
	if gi := sb.kf.GroupInfo("live"); len(gi.Members) != 1 || gi.State != "Stable" {
		t.Errorf("the live member after the stale commits: %+v", gi)
	}
}
