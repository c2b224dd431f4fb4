package sandbox

import (
	"os"
	"testing"
	"time"
)

// BenchmarkStartupToAssignment measures New → the first assignment.json on
// disk (3 brokers, one 6-partition topic), then Close. SPEC §6 / issue 4:
// well under a second.
func BenchmarkStartupToAssignment(b *testing.B) {
	base := b.TempDir()
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		dir, err := os.MkdirTemp(base, "sb")
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		sb, err := New(Options{DataDir: dir, Brokers: 3, Topics: []Topic{{Name: "orders", Partitions: 6}}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := os.Stat(sb.Layout().AssignmentPath()); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		b.StopTimer()
		sb.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-assignment")
	b.ReportMetric(1000, "target-ms")
}
