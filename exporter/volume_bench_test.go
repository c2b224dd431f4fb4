package exporter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
)

// BenchmarkExporterRefreshVolume100k is one offline refresh (no brokers,
// no cap) of a volume with 100,000 file-only groups (4 partitions each)
// and 12 alive brokers, the 'kaasctl exporter --once --max-groups 0' case
// of issue 24. It reports the process CPU per refresh (the machine is
// shared: wall time also counts waiting for a core), the bytes allocated,
// the heap live after a refresh and the exposition's size. The
// whole-binary figures beside their targets (peak RSS, cat) are in
// scripts/bench-exporter.sh.
func BenchmarkExporterRefreshVolume100k(b *testing.B) {
	const groups = 100000
	data := b.TempDir()
	cd := filepath.Join(data, "__cluster")
	od := filepath.Join(cd, "__consumer_offsets")
	if err := os.MkdirAll(od, 0o755); err != nil {
		b.Fatal(err)
	}
	var a strings.Builder
	a.WriteString(`{"controllerEpoch":1,"assignmentVersion":1,"controller":"kaas-0","brokers":[`)
	for i := range 12 {
		if i > 0 {
			a.WriteByte(',')
		}
		fmt.Fprintf(&a, `{"id":"kaas-%d","health":"alive"}`, i)
	}
	a.WriteString(`],"partitions":[]}`)
	if err := os.WriteFile(filepath.Join(cd, "assignment.json"), []byte(a.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := range groups {
		n := i % 1000
		body := fmt.Sprintf(`{"offsets":{"orders/0":%d,"orders/1":%d,"orders/2":%d,"events/0":%d},"metadata":{}}`, n, n, n, n)
		if err := os.WriteFile(filepath.Join(od, fmt.Sprintf("svc-%06d.json", i)), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	l := volume.Layout{DataDir: data, ClusterDir: cd}
	e := New(Options{Source: &observe.Source{Layout: &l}, Interval: time.Minute, Window: 5 * time.Minute})
	ctx := context.Background()
	var page int
	cpu0 := cpuTime()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for b.Loop() {
		if o := e.Refresh(ctx); len(o.Groups) != groups {
			b.Fatalf("%d groups", len(o.Groups))
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	page = e.snap.Load().page.n
	runtime.GC()
	var live runtime.MemStats
	runtime.ReadMemStats(&live)
	runtime.KeepAlive(e)
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/refresh")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MB/refresh")
	b.ReportMetric(float64(live.HeapAlloc)/(1<<20), "live-MB")
	b.ReportMetric(float64(page)/(1<<20), "page-MB")
	b.ReportMetric(40, "target-page-MB")
}
