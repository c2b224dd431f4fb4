package sandbox

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// BenchmarkLiveDescribeThroughSandbox measures what a live `groups
// describe` of every group costs through the coordination layer: ListGroups
// on every broker, DescribeGroups and FetchManyOffsets batched per
// coordinator, over 2,000 groups on 3 brokers (SPEC §7: 10,000 groups
// under 2 s against the sandbox; this reports ms per 10k groups, scaled).
func BenchmarkLiveDescribeThroughSandbox(b *testing.B) {
	const groups = 2000
	sb, err := New(Options{DataDir: b.TempDir(), Brokers: 3, Topics: []Topic{{Name: "orders", Partitions: 4}}})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	cl, err := sb.Client()
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < groups; i += 16 {
				os := kadm.Offsets{}
				os.AddOffset("orders", int32(i%4), int64(i), -1)
				if err := adm.CommitAllOffsets(ctx, fmt.Sprintf("bench-%05d", i), os); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.Logf("created %d groups (each an offsets file) in %s", groups, time.Since(start))
	b.ResetTimer()
	for b.Loop() {
		lg, err := adm.ListGroups(ctx)
		if err != nil || len(lg) != groups {
			b.Fatalf("ListGroups: %d groups, %v", len(lg), err)
		}
		names := lg.Groups()
		dg, err := adm.DescribeGroups(ctx, names...)
		if err != nil || len(dg) != groups {
			b.Fatalf("DescribeGroups: %d, %v", len(dg), err)
		}
		fo := adm.FetchManyOffsets(ctx, names...)
		if len(fo) != groups {
			b.Fatalf("FetchManyOffsets: %d", len(fo))
		}
	}
	perOp := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(perOp.Milliseconds())*10000/groups, "ms-per-10k-groups")
	b.ReportMetric(2000, "target-ms")
}
