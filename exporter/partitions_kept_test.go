package exporter

import (
	"context"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/observe"
)

// A refresh keeps each group's partitions only when something reads them:
// per-partition series, or lag in seconds with brokers to ask. A
// volume-only exporter, lag seconds on as the CLI's default has it, keeps
// the offsets in the health sample alone, and the health window takes
// them from there (the published observation's samples are let go).
func TestRefreshKeepsPartitionsOnlyWhenRead(t *testing.T) {
	t.Parallel()
	l, _ := offsetsVolume(t, `{"offsets":{"orders/0":20,"orders/1":7}}`, "app", "billing")
	for _, c := range []struct {
		partitionMetrics bool
		want             int
	}{{false, 0}, {true, 2}} {
		e := New(Options{Source: &observe.Source{Layout: &l, LagSeconds: true}, Window: time.Hour, PartitionMetrics: c.partitionMetrics})
		o := e.opt.Source.Observe(context.Background())
		if len(o.Groups) != 2 {
			t.Fatalf("partition metrics %v: %d groups observed, want 2", c.partitionMetrics, len(o.Groups))
		}
		for _, g := range o.Groups {
			if len(g.Partitions) != c.want || len(g.Sample.Partitions) != 2 {
				t.Errorf("partition metrics %v: %s keeps %d partitions (sample %d), want %d (sample 2)",
					c.partitionMetrics, g.Row.Group, len(g.Partitions), len(g.Sample.Partitions), c.want)
			}
		}
		e.publish(o)
		if g := o.Groups[0]; g.Sample.Partitions != nil || g.Sample.File != nil {
			t.Errorf("partition metrics %v: the published observation still holds its samples", c.partitionMetrics)
		}
		if h := e.Health(); len(h) != 2 || h[0].Samples != 1 {
			t.Errorf("partition metrics %v: health %+v after one refresh", c.partitionMetrics, h)
		}
	}
}
