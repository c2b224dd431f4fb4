// Command seedgroups commits one offset for each of N consumer groups on a
// running kaas (or the sandbox), so listing and describing thousands of
// groups can be timed against other tools: every group exists as an Empty
// group on its coordinator and has an offset file.
//
//	go run ./scripts/seedgroups -b 127.0.0.1:PORT -n 10000 -topic orders
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

func main() {
	brokers := flag.String("b", "", "bootstrap broker HOST:PORT")
	n := flag.Int("n", 10000, "number of groups")
	prefix := flag.String("prefix", "bench-", "group id prefix (ids are PREFIX%06d)")
	topic := flag.String("topic", "orders", "topic to commit offset 0 of partition 0 on (must exist)")
	workers := flag.Int("workers", 16, "commits in flight")
	flag.Parse()
	if *brokers == "" || *n < 1 || *workers < 1 {
		fmt.Fprintln(os.Stderr, "seedgroups: -b is required; -n and -workers must be positive")
		os.Exit(2)
	}
	// kaas decodes requests up to Kafka 3.6's versions.
	cl, err := kgo.NewClient(kgo.SeedBrokers(*brokers), kgo.MaxVersions(kversion.V3_6_0()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "seedgroups:", err)
		os.Exit(1)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(*n) {
					return
				}
				g := fmt.Sprintf("%s%06d", *prefix, i)
				var o kadm.Offsets
				o.Add(kadm.Offset{Topic: *topic, Partition: 0, At: 0, LeaderEpoch: -1})
				r, err := adm.CommitOffsets(ctx, g, o)
				if err == nil {
					err = r.Error()
				}
				if err != nil {
					if failed.Add(1) <= 5 {
						fmt.Fprintf(os.Stderr, "seedgroups: %s: %v\n", g, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	fmt.Fprintf(os.Stderr, "seedgroups: %d groups committed (%d failed) in %s\n", int64(*n)-failed.Load(), failed.Load(), time.Since(start).Round(time.Millisecond))
	if failed.Load() > 0 {
		os.Exit(1)
	}
}
