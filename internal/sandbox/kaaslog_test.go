package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// A persisted sandbox restarted after records were deleted up to the
// middle of a batch writes its segments afresh from what kfake holds: the
// segment starts with that whole batch, and the log ends where kfake's
// does.
func TestSegmentsRewrittenAfterARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := Options{DataDir: dir, Brokers: 1, Persist: true, PollInterval: 50 * time.Millisecond, Topics: []Topic{{Name: "orders", Partitions: 1}}}
	sb, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	prod := newClient(t, sb, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce(t, prod, "orders", 1, 20) // one batch: offsets 0..19
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	del := kadm.Offsets{}
	del.AddOffset("orders", 0, 12, -1)
	if _, err := kadm.NewClient(prod).DeleteRecords(ctx, del); err != nil {
		t.Fatal(err)
	}
	prod.Close()
	sb.Close()

	sb2 := Start(t, opts)
	pdir := sb2.Layout().PartitionDir("orders", 0)
	for {
		if pl, _, err := volume.ReadPartitionLog(pdir); err == nil && pl.LogEnd == 20 {
			if pl.Segments != 1 || pl.LogStart > 12 {
				t.Errorf("segments %d, log start %d (want one segment holding offset 12)", pl.Segments, pl.LogStart)
			}
			return
		}
		if ctx.Err() != nil {
			pl, _, err := volume.ReadPartitionLog(pdir)
			t.Fatalf("the segments after the restart: %+v %v", pl, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
