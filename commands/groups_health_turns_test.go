package commands

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/views"
)

// joinMember starts a member of group that stays in it (its polls run in
// the background until the test ends); its commits are the test's.
func joinMember(t *testing.T, sb *sandbox.Sandbox, group string) *kgo.Client {
	t.Helper()
	cl := sbClient(t, sb, append(sandbox.ConsumerOpts(group, "orders"), kgo.ClientID(group+"-member"))...)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	}()
	t.Cleanup(cancel)
	return cl
}

// memberCommit commits offs of "orders" as the group's member.
func memberCommit(t *testing.T, cl *kgo.Client, offs map[int32]int64) {
	t.Helper()
	m := map[string]map[int32]kgo.EpochOffset{"orders": {}}
	for p, o := range offs {
		m["orders"][p] = kgo.EpochOffset{Epoch: -1, Offset: o}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var cerr error
	done := make(chan struct{})
	cl.CommitOffsetsSync(ctx, m, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, _ *kmsg.OffsetCommitResponse, err error) {
		cerr = err
		close(done)
	})
	<-done
	if cerr != nil {
		t.Errorf("commit: %v", cerr)
	}
}

// groups health with brokers over two groups whose member stays: one
// serves its partitions in turns (two at a time, the others still, the
// group draining), which is neither STALL nor CHURN; the other keeps up
// on three partitions while the fourth does not move with lag (the group
// not draining), which is STALL, naming that partition.
func TestGroupsHealthTurnsAndOneStuckPartition(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 1, Topics: []sandbox.Topic{{Name: "orders", Partitions: 4}}})
	produceOrders(t, sb, 400)
	turns, stuck := joinMember(t, sb, "turns"), joinMember(t, sb, "onestuck")
	memberCommit(t, turns, map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0})
	memberCommit(t, stuck, map[int32]int64{0: 397, 1: 397, 2: 397, 3: 100})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		at := [4]int64{}
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ctx.Err() == nil; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			produceOrders(t, sb, 2)
			end := 400 + 2*int64(i+1)
			pair := (i / 15) % 2 // a turn is 15 ticks (3 s): longer than the window
			offs := map[int32]int64{}
			for p := range at {
				if p/2 == pair {
					at[p] = min(end, at[p]+12)
				}
				offs[int32(p)] = at[p]
			}
			memberCommit(t, turns, offs)
			memberCommit(t, stuck, map[int32]int64{0: end - 3, 1: end - 3, 2: end - 3, 3: 100})
		}
	}()
	r := live(t, sb, "groups", "health", "turns", "onestuck", "--window", "2s", "--interval", "250ms", "-o", "json")
	cancel()
	<-done
	v := decodeJSON[views.GroupsHealthView](t, r)
	by := map[string]inspect.GroupHealth{}
	for _, h := range v.Groups {
		by[h.Group] = h
	}
	if h := by["turns"]; h.Has(inspect.HealthStall) || h.Has(inspect.HealthChurn) || h.Has(inspect.HealthStop) {
		t.Errorf("turns: %v %+v", h.Conditions, h.Evidence)
	}
	h := by["onestuck"]
	if !h.Has(inspect.HealthStall) || h.Has(inspect.HealthChurn) {
		t.Fatalf("onestuck: %v %+v\n%s", h.Conditions, h.Evidence, r.Err)
	}
	for _, e := range h.Evidence {
		if e.State == inspect.HealthStall && e.Partition != "orders/3" {
			t.Errorf("STALL on %s, want orders/3 alone", e.Partition)
		}
	}
}
