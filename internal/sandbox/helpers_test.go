package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestHelpersProduceCommitAndConsume(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3, Topics: []Topic{{Name: "orders", Partitions: 3}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := sb.Produce(ctx, "orders", 3, 4); err != nil {
		t.Fatal(err)
	}
	if err := sb.Commit(ctx, "reporting", map[string]map[int32]int64{"orders": {0: 2, 1: 3}}); err != nil {
		t.Fatal(err)
	}
	got, ok := sb.CommittedOffsets("reporting")
	if !ok || !mapsEqual(got, map[string]int64{"orders/0": 2, "orders/1": 3}) {
		t.Fatalf("committed = %v (%v)", got, ok)
	}
	if f, ok := readOffsets(t, sb, "reporting"); !ok || !mapsEqual(f.Offsets, got) {
		t.Fatalf("file = %v, cache = %v", f.Offsets, got)
	}
	// A consumer resumes from the committed offsets: 2+1+4 records remain.
	cl, err := sb.Client(ConsumerOpts("reporting", "orders")...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	first := map[int32]int64{}
	for n := 0; n < 7; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of 7", n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			if o, seen := first[r.Partition]; !seen || r.Offset < o {
				first[r.Partition] = r.Offset
			}
		})
	}
	if first[0] != 2 || first[1] != 3 || first[2] != 0 {
		t.Fatalf("first offsets read per partition = %v, want 0:2 1:3 2:0 (resumed from the commit)", first)
	}
	if _, ok := sb.CommittedOffsets("nobody"); ok {
		t.Fatal("offsets for a group that never committed")
	}
}
