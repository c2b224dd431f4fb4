package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DemoTopics are the topics --demo seeds.
var DemoTopics = []Topic{{Name: "orders", Partitions: 6}, {Name: "payments", Partitions: 3}}

// demoGroup is one background consumer group of the demo.
type demoGroup struct {
	group   string
	topics  []string
	members int
	slow    bool // sleeps between polls, so it lags
}

var demoGroups = []demoGroup{
	{group: "orders-app", topics: []string{"orders"}, members: 2},
	{group: "billing", topics: []string{"payments"}, members: 1},
	{group: "audit", topics: []string{"orders", "payments"}, members: 1},
	{group: "fraud-check", topics: []string{"orders"}, members: 1, slow: true},
}

// DemoIdleGroup commits once and leaves: an Empty group with an offsets file.
const DemoIdleGroup = "nightly-report"

// StartDemo runs the demo workload until the sandbox closes: a producer
// writing to orders and payments, four consumer groups consuming and
// committing through the brokers (so they follow kaas's routing), and one
// idle group. The demo topics must exist (pass DemoTopics in Options.Topics).
func (s *Sandbox) StartDemo() error {
	if s.closed.Load() {
		return fmt.Errorf("sandbox is closed")
	}
	seeds := kgo.SeedBrokers(s.Bootstrap()...)
	common := []kgo.Opt{seeds, kgo.MetadataMinAge(250 * time.Millisecond), kgo.ClientID("kaasctl-sandbox-demo")}

	// The idle group first, synchronously, so it exists when this returns.
	adm, err := kgo.NewClient(common...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(s.demoCtx, 10*time.Second)
	os := kadm.Offsets{}
	for p := int32(0); p < 3; p++ {
		os.AddOffset("payments", p, 0, -1)
	}
	err = kadm.NewClient(adm).CommitAllOffsets(ctx, DemoIdleGroup, os)
	cancel()
	adm.Close()
	if err != nil {
		return fmt.Errorf("demo: commit %s: %w", DemoIdleGroup, err)
	}

	prod, err := kgo.NewClient(append(common, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))...)
	if err != nil {
		return err
	}
	s.demoWG.Add(1)
	go func() {
		defer s.demoWG.Done()
		defer prod.Close()
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		n := 0
		for {
			select {
			case <-s.demoCtx.Done():
				return
			case <-tk.C:
			}
			n++
			prod.Produce(s.demoCtx, &kgo.Record{Topic: "orders", Value: fmt.Appendf(nil, `{"order":%d}`, n)}, nil)
			if n%3 == 0 {
				prod.Produce(s.demoCtx, &kgo.Record{Topic: "payments", Value: fmt.Appendf(nil, `{"payment":%d}`, n)}, nil)
			}
		}
	}()
	for _, g := range demoGroups {
		if err := s.startDemoGroup(common, g); err != nil {
			return err
		}
	}
	return nil
}

// DemoGroupNames lists the demo's groups.
func DemoGroupNames() []string {
	out := []string{}
	for _, g := range demoGroups {
		out = append(out, g.group)
	}
	return append(out, DemoIdleGroup)
}
