package exporter

import (
	"context"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// BenchmarkProbe is one coordinator probe of a 3-broker sandbox (every
// broker concurrently: FindCoordinator, OffsetCommit, OffsetFetch). It
// reports the wall time and the requests per broker, and the round trips of
// the three steps summed per broker.
func BenchmarkProbe(b *testing.B) {
	sb, err := sandbox.New(sandbox.Options{Brokers: 3, DataDir: b.TempDir(), Topics: []sandbox.Topic{{Name: "orders", Partitions: 4}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(sb.Close)
	cl, err := wire.NewClient(&wire.Settings{Brokers: sb.Bootstrap(), Timeout: 30 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	l := sb.Layout()
	a, _, err := volume.ReadAssignment(l.AssignmentPath())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if rep, err := Probe(ctx, ProbeInput{Assignment: a, Client: cl, Owned: func(string) (bool, string) { return true, "" }}); err != nil || rep.Failed > 0 {
		b.Fatalf("first probe: %v %+v", err, rep)
	}
	cl.Counter.Reset()
	var stepSeconds float64
	brokers := 0
	b.ResetTimer()
	for b.Loop() {
		rep, err := Probe(ctx, ProbeInput{Assignment: a, Client: cl, Owned: func(string) (bool, string) { return true, "" }})
		if err != nil || rep.Failed > 0 {
			b.Fatalf("probe: %v %+v", err, rep)
		}
		for _, bp := range rep.Brokers {
			stepSeconds += bp.Seconds
		}
		brokers = len(rep.Brokers)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/n, "ms/probe")
	b.ReportMetric(stepSeconds*1000/n/float64(brokers), "round-trip-ms/broker")
	b.ReportMetric(float64(cl.Counter.Total())/n/float64(brokers), "requests/broker")
}
