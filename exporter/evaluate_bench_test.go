package exporter

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/observe"
)

// BenchmarkEvaluate10k is the exporter's work per refresh after the
// observation, without I/O: 10,000 groups of 4 partitions through their
// health windows (a full 5-minute window at a 15 s interval: 20
// observations each), conditions, time to drain, retention forecast, and
// the exposition text. Synthetic data: committed offsets, log ends and log
// starts advance at per-group rates.
func BenchmarkEvaluate10k(b *testing.B) {
	const groups, parts, interval = 10000, 4, 15 * time.Second
	hw := inspect.HealthWindow{Window: 5 * time.Minute}
	o := &observe.Observation{HasVolume: true, HasBrokers: true, Groups: make([]observe.GroupObs, groups)}
	for i := range o.Groups {
		o.Groups[i].Row = inspect.GroupRow{Group: fmt.Sprintf("bench-%05d", i), Tier: "hash", Coordinator: "kaas-" + strconv.Itoa(i%3)}
	}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	step := 0
	observe := func() {
		o.Time = t0.Add(time.Duration(step) * interval)
		for i := range o.Groups {
			g := &o.Groups[i]
			s := inspect.HealthSample{Time: o.Time, Partitions: make([]inspect.PartitionSample, 0, parts)}
			g.Partitions = g.Partitions[:0]
			g.Lag, g.LagKnown = 0, true
			for p := range parts {
				end := int64(1000 + step*(10+i%7))
				c := int64(900 + step*(8+i%11))
				st := int64(step * (i % 3))
				s.Partitions = append(s.Partitions, inspect.PartitionSample{Key: "orders/" + strconv.Itoa(p), Committed: c, End: end, Start: st})
				g.Partitions = append(g.Partitions, observe.PartObs{Topic: "orders", Partition: int32(p), Committed: c, End: end, Start: st, Lag: max(0, end-c), LagKnown: true})
				g.Lag += max(0, end-c)
			}
			g.Sample = s
		}
		step++
	}
	health := make([]inspect.GroupHealth, groups)
	counts := make([]inspect.HealthCounts, groups)
	c := &counters{moves: map[inspect.Cause]int64{}, brokerErrors: map[string]int64{}, brokersSeen: map[string]bool{}, brokerRequests: map[string]int64{}}
	refresh := func() int {
		observe()
		for i := range o.Groups {
			name := o.Groups[i].Row.Group
			hw.Add(name, o.Groups[i].Sample)
			health[i] = hw.Evaluate(name)
			counts[i] = hw.Counts(name)
		}
		hw.Sweep()
		return buildText(o, health, counts, c, true, "bench", "bench").page().n
	}
	for range 20 { // a full window
		refresh()
	}
	if d := health[0].Drain; d == nil || !d.Known {
		b.Fatalf("no drain estimate after a full window: %+v", d)
	}
	size := 0
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		size = refresh()
	}
	b.StopTimer()
	// CPU time: on a shared machine the wall time also counts waiting.
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/refresh")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/refresh")
	b.ReportMetric(float64(size), "exposition-bytes")
}
