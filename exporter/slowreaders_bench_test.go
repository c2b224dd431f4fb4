//go:build linux

package exporter

import (
	"bufio"
	"context"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/observe"
)

// rssMiB is the process's resident set and its peak (VmRSS, VmHWM).
func rssMiB() (rss, peak float64) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		switch k {
		case "VmRSS":
			rss = kb / 1024
		case "VmHWM":
			peak = kb / 1024
		}
	}
	return rss, peak
}

// BenchmarkExporterSlowReaders10k measures the process's memory while 40
// clients that never read request /metrics (uncompressed), four more at
// each of ten refreshes (every second) of 10,000 groups on a 3-broker
// sandbox. "bounded" is the exporter's server as shipped (--max-requests 4,
// --write-timeout 30s), "unbounded" the same without those limits, "none"
// the same refreshes without readers. The figures are the live heap and
// the resident set (the in-process sandbox included) after a collection,
// before the readers and with them, and the peak resident set. Run each
// alone: go test -run '^$' -bench 'SlowReaders10k/bounded$' -benchtime 1x ./exporter
func BenchmarkExporterSlowReaders10k(b *testing.B) {
	for _, mode := range []string{"none", "bounded", "unbounded"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				slowReadersScenario(b, mode)
			}
		})
	}
}

// slowReadersScenario runs the exporter for 20 refreshes; mode "none"
// opens no slow reader (the baseline at the same point).
func slowReadersScenario(b *testing.B, mode string) {
	unbounded := mode == "unbounded"
	f := newFixture(b, 10000)
	l := f.sb.Layout()
	e := New(Options{Source: &observe.Source{Layout: &l, Client: f.cl, LagSeconds: true}, Interval: time.Second, Window: 5 * time.Minute, PartitionMetrics: true})
	so := ServeOptions{}
	if unbounded {
		so = ServeOptions{MaxRequests: 1 << 20, MaxConns: 1 << 20, WriteTimeout: time.Hour}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv, sln := e.Server(ln, so)
	go srv.Serve(sln)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	refreshes := func() int64 {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.c.refreshes
	}
	waitRefreshes := func(n int64) {
		for deadline := time.Now().Add(5 * time.Minute); refreshes() < n; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatalf("only %d refreshes", refreshes())
			}
		}
	}
	// Memory held: the live heap and the resident set right after a
	// collection that returns free memory to the OS (what the readers pin,
	// not how far the garbage of refreshes got before a GC).
	held := func() (heapMiB, rss float64) {
		runtime.GC()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		rss, _ = rssMiB()
		return float64(ms.HeapInuse) / (1 << 20), rss
	}
	waitRefreshes(5)
	heapBefore, before := held()
	page := e.snap.Load().page.n
	var conns []net.Conn
	for i := range 10 {
		for range 4 {
			if mode != "none" {
				conns = append(conns, slowReader(b, ln.Addr().String(), "/metrics"))
			}
		}
		waitRefreshes(int64(6 + i))
	}
	waitRefreshes(20)
	_, peak := rssMiB()
	heapAfter, after := held()
	b.ReportMetric(float64(page)/(1<<20), "page-MiB")
	b.ReportMetric(before, "rss-MiB-before")
	b.ReportMetric(after, "rss-MiB-40-slow")
	b.ReportMetric(heapBefore, "heap-MiB-before")
	b.ReportMetric(heapAfter, "heap-MiB-40-slow")
	b.ReportMetric(peak, "peak-rss-MiB")
	b.ReportMetric(float64(e.rejected.Load()), "rejected")
	for _, c := range conns {
		c.Close()
	}
}
