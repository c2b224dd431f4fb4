package wire

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
)

// BenchmarkDescribe10kGroups describes 10,000 groups on a 3-broker kfake
// cluster the way a CLI run does: a new client, a connection check, then
// DescribeMany (FindCoordinator, DescribeGroups per coordinator, metadata,
// explicit-partition OffsetFetch per coordinator, one ListOffsets round).
// SPEC §7 target: under 2 s, O(brokers) round trips.
func BenchmarkDescribe10kGroups(b *testing.B) {
	const nGroups, nParts = 10000, 4
	cl := newCluster(b, kfake.SeedTopics(nParts, "orders"))
	brokers := cl.ListenAddrs()
	produce(b, brokers, "orders", map[int32]int{0: 50, 1: 50, 2: 50, 3: 50})
	adm := kadm.NewClient(mustKgo(b, brokers))
	groups := make([]string, nGroups)
	known := make(map[string]TopicPartitions, nGroups)
	for i := range groups {
		groups[i] = fmt.Sprintf("bench-group-%05d", i)
		known[groups[i]] = TopicPartitions{"orders": {0, 1, 2, 3}}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Int64
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= nGroups {
					return
				}
				var os kadm.Offsets
				for p := int32(0); p < nParts; p++ {
					os.AddOffset("orders", p, int64(10+i%40), -1)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				if err := adm.CommitAllOffsets(ctx, groups[i], os); err != nil {
					failed.Add(1)
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		b.Fatalf("%d commits failed in setup", failed.Load())
	}
	s := settings(b, brokers, nil, nil)

	var maxPerBroker, total int64
	var last []BrokerCount
	var brokersSeen int
	b.ResetTimer()
	for b.Loop() {
		c, err := NewClient(s)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		if _, _, err := c.Check(ctx); err != nil {
			b.Fatal(err)
		}
		ds, err := c.DescribeMany(ctx, groups, DescribeOptions{Known: known})
		if err != nil {
			b.Fatal(err)
		}
		if len(ds) != nGroups {
			b.Fatalf("%d results", len(ds))
		}
		if ps := ds[7].Partitions; len(ps) != nParts || ps[0].Committed != 10+7%40 || ps[nParts-1].End != 50 || ds[7].Err != "" {
			b.Fatalf("wrong offsets for %s: %+v", ds[7].Group, ds[7].Partitions)
		}
		snap := c.Counter.Snapshot()
		last = snap
		total = c.Counter.Total()
		maxPerBroker, brokersSeen = 0, 0
		for _, bc := range snap {
			if bc.Seed {
				continue
			}
			brokersSeen++
			maxPerBroker = max(maxPerBroker, bc.Requests)
		}
		c.Close()
	}
	b.StopTimer()
	for _, bc := range last {
		name := fmt.Sprintf("node %d", bc.Node)
		if bc.Seed {
			name = "seed " + bc.Addr
		}
		b.Logf("%s: %d requests %v", name, bc.Requests, bc.ByAPI)
	}
	b.ReportMetric(float64(nGroups), "groups")
	b.ReportMetric(float64(total), "requests/op")
	b.ReportMetric(float64(maxPerBroker), "max-requests/broker")
	b.ReportMetric(float64(brokersSeen), "brokers")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op(target<2000)")
}
