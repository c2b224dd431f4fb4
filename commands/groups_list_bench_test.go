package commands

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchVolume writes n offset files shaped like real ones (6 partitions with
// metadata, ~400 bytes) plus an assignment, and returns the data dir and the
// total bytes of the offset files.
func benchVolume(b *testing.B, n int) (string, int64) {
	return benchVolumeParts(b, n, 6)
}

// benchVolumeParts is benchVolume with parts partitions per file.
func benchVolumeParts(b *testing.B, n, parts int) (string, int64) {
	b.Helper()
	data := b.TempDir()
	cd := filepath.Join(data, "__cluster")
	od := filepath.Join(cd, "__consumer_offsets")
	if err := os.MkdirAll(od, 0o755); err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString(`{"controllerEpoch":1,"assignmentVersion":1,"generatedAt":"2026-07-23T10:00:00Z","controller":"kaas-0","brokers":[`)
	for i := range 5 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"id":"kaas-%d","health":"alive","lastSeen":"2026-07-23T10:00:00Z"}`, i)
	}
	sb.WriteString(`],"partitions":[],"consumerGroups":[`)
	for i := range 1000 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"groupId":"group-%06d","broker":"kaas-%d","epoch":1}`, i*7, i%5)
	}
	sb.WriteString(`]}`)
	if err := os.WriteFile(filepath.Join(cd, "assignment.json"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	var total int64
	for i := range n {
		var f strings.Builder
		f.WriteString(`{"offsets":{`)
		for p := range parts {
			if p > 0 {
				f.WriteString(",")
			}
			fmt.Fprintf(&f, `"events/%d":%d`, p, 1000+i+p)
		}
		f.WriteString(`},"metadata":{`)
		for p := range parts {
			if p > 0 {
				f.WriteString(",")
			}
			fmt.Fprintf(&f, `"events/%d":"consumer-%d-59ff39037652d402"`, p, i%17)
		}
		f.WriteString(`}}`)
		total += int64(f.Len())
		if err := os.WriteFile(filepath.Join(od, fmt.Sprintf("group-%06d.json", i)), []byte(f.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return data, total
}

// plainRead is the baseline: list the dir, then read every file in turn
// into one buffer, as cat does.
func plainRead(b *testing.B, dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	var n int64
	for _, e := range ents {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		for {
			k, err := f.Read(buf)
			n += int64(k)
			if err != nil {
				break
			}
		}
		f.Close()
	}
	return n
}

// peakHeap samples live heap bytes until stop is closed.
func peakHeap(stop <-chan struct{}, peak *atomic.Uint64, wg *sync.WaitGroup) {
	defer wg.Done()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for {
		metrics.Read(s)
		if v := s[0].Value.Uint64(); v > peak.Load() {
			peak.Store(v)
		}
		select {
		case <-stop:
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// BenchmarkGroupsListOffline100k runs 'kaasctl groups list' (table output,
// discarded) over 100,000 offset files and, in the same iteration, a plain
// sequential read of the same files. SPEC §7 target: list within 2× of the
// plain read, memory bounded (not O(total bytes)).
func BenchmarkGroupsListOffline100k(b *testing.B) { benchGroupsList(b, 100_000, 6) }

// BenchmarkGroupsListOfflineBigFiles: 4,000 files of 600 partitions each
// (~60 MB). Peak heap must stay far below the total size: the scan streams
// and keeps a summary per group, never file content.
func BenchmarkGroupsListOfflineBigFiles(b *testing.B) { benchGroupsList(b, 4_000, 600) }

func benchGroupsList(b *testing.B, n, parts int) {
	TuneRuntime() // as the binary runs
	data, total := benchVolumeParts(b, n, parts)
	od := filepath.Join(data, "__cluster", "__consumer_offsets")
	plainRead(b, od) // warm the page cache for both
	var listDur, readDur time.Duration
	var peak atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if got := plainRead(b, od); got != total {
			b.Fatalf("read %d bytes, want %d", got, total)
		}
		readDur += time.Since(t0)

		runtime.GC()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go peakHeap(stop, &peak, &wg)
		t1 := time.Now()
		code := Main([]string{"kaasctl", "groups", "list", "--data-dir", data, "-q"}, &IOStreams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }})
		listDur += time.Since(t1)
		close(stop)
		wg.Wait()
		if code != 0 {
			b.Fatalf("groups list exit %d", code)
		}
	}
	b.StopTimer()
	iters := float64(b.N)
	b.ReportMetric(float64(listDur.Milliseconds())/iters, "list-ms/op")
	b.ReportMetric(float64(readDur.Milliseconds())/iters, "plainread-ms/op")
	b.ReportMetric(float64(listDur)/float64(readDur), "ratio(target<=2)")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(total)/(1<<20), "files-MB")
}
