package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Client returns a kgo client bootstrapped on every broker, with quick
// metadata refreshes and retries so tests notice broker stops fast. The
// caller closes it.
func (s *Sandbox) Client(opts ...kgo.Opt) (*kgo.Client, error) {
	base := []kgo.Opt{
		kgo.SeedBrokers(s.Bootstrap()...),
		kgo.MetadataMinAge(50 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
	}
	return kgo.NewClient(append(base, opts...)...)
}

// ConsumerOpts are kgo options for a test consumer group member: short
// session, heartbeat and rebalance timeouts, auto-commit off, reading from
// the start. Add kgo.AutoCommitInterval-style options after them to change.
func ConsumerOpts(group string, topics ...string) []kgo.Opt {
	return []kgo.Opt{
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...),
		kgo.SessionTimeout(3 * time.Second), kgo.HeartbeatInterval(100 * time.Millisecond),
		kgo.RebalanceTimeout(3 * time.Second), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}
}

// Produce writes perPartition records to each of the first partitions of
// topic through the brokers, and waits for them.
func (s *Sandbox) Produce(ctx context.Context, topic string, partitions int32, perPartition int) error {
	cl, err := s.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	var rs []*kgo.Record
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < perPartition; i++ {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%s-%d-%d", topic, p, i)})
		}
	}
	return cl.ProduceSync(ctx, rs...).FirstErr()
}

// Commit commits offsets for a group the way an admin tool does (through
// FindCoordinator and the coordinator broker), so the offsets file appears
// on the volume. The group must not have live members (kfake fences
// commits by generation). offsets maps topic → partition → next offset.
func (s *Sandbox) Commit(ctx context.Context, group string, offsets map[string]map[int32]int64) error {
	cl, err := s.Client()
	if err != nil {
		return err
	}
	defer cl.Close()
	os := kadm.Offsets{}
	for t, ps := range offsets {
		for p, o := range ps {
			os.AddOffset(t, p, o, -1)
		}
	}
	return kadm.NewClient(cl).CommitAllOffsets(ctx, group, os)
}

// CommittedOffsets reads a group's offsets file from the sandbox volume
// (kaas's v2 envelope): "topic/partition" → next offset. ok is false when
// the file does not exist.
func (s *Sandbox) CommittedOffsets(group string) (offsets map[string]int64, ok bool) {
	snap := s.offsets.snapshot(group)
	if snap == nil {
		return nil, false
	}
	return snap, true
}
