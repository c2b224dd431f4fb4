//go:build unix

package commands

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkPrunePlan100k plans 'kaasctl groups prune --empty-for 30d
// --deleted-topics' (offline, -o json discarded) over a synthetic volume of
// 100,000 groups of 6 partitions made at run time, every group selected.
// The volume is read in batches, so what stays is a small record per
// selected group (retained-MB, measured after a collection on a plan made
// the same way), never the files or the groups' states; peak-heap-MB is
// the heap sampled while the binary's code runs under its GC tuning (it
// collects late: garbage counts there). cpu-ms is the process's CPU time,
// which a loaded machine does not inflate as it does the wall time.
func BenchmarkPrunePlan100k(b *testing.B) { benchPrunePlan(b, benchGroupsFromEnv(100_000), 6) }

func benchGroupsFromEnv(def int) int {
	if n, err := strconv.Atoi(os.Getenv("KAASCTL_BENCH_GROUPS")); err == nil && n > 0 {
		return n
	}
	return def
}

func benchPrunePlan(b *testing.B, n, parts int) {
	TuneRuntime()
	data, total := benchVolumeParts(b, n, parts)
	od := filepath.Join(data, "__cluster", "__consumer_offsets")
	old := time.Now().Add(-40 * 24 * time.Hour)
	ents, err := os.ReadDir(od)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range ents {
		os.Chtimes(filepath.Join(od, e.Name()), old, old)
	}
	args := []string{"--data-dir", data, "--kaas-version", "0.2.18"}
	var peak atomic.Uint64
	var dur, cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		runtime.GC()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go peakHeap(stop, &peak, &wg)
		t0, c0 := time.Now(), cpuTime()
		var errb strings.Builder
		code := Main(append([]string{"kaasctl", "groups", "prune", "--offline", "--empty-for", "30d", "--deleted-topics", "--max-groups", "1000000", "-o", "json"}, args...),
			&IOStreams{In: strings.NewReader(""), Out: io.Discard, Err: &errb, Getenv: func(string) string { return "" }})
		dur, cpu = dur+time.Since(t0), cpu+cpuTime()-c0
		close(stop)
		wg.Wait()
		if code != 0 || !strings.Contains(errb.String(), "prune plan: "+strconv.Itoa(n)+" of "+strconv.Itoa(n)+" groups selected") {
			b.Fatalf("groups prune exit %d:\n%s", code, errb.String())
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(dur.Milliseconds())/float64(b.N), "plan-ms/op")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	b.ReportMetric(retainedByPlan(b, args, n)/(1<<20), "retained-MB")
	b.ReportMetric(float64(total)/(1<<20), "files-MB")
}

// retainedByPlan plans the same prune in-process and measures the heap
// the plan keeps once it is made (after a collection).
func retainedByPlan(b *testing.B, args []string, n int) float64 {
	g, err := GlobalsFor(&IOStreams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }}, args...)
	if err != nil {
		b.Fatal(err)
	}
	l, err := g.Layout()
	if err != nil {
		b.Fatal(err)
	}
	o := pruneOptions{maxGroups: n}
	o.ask.Empty, o.ask.MinAge, o.ask.AgeFrom, o.ask.Deleted, o.ask.Now = true, 30*24*time.Hour, "mtime", true, time.Now()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	r, err := newPruneRun(context.Background(), g, o, l, nil)
	if err == nil {
		err = r.Plan(context.Background())
	}
	if err != nil || len(r.Groups) != n {
		b.Fatalf("plan: %v (%d groups)", err, len(r.Groups))
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(r)
	return float64(m1.HeapAlloc) - float64(m0.HeapAlloc)
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
