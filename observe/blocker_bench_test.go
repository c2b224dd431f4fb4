package observe

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// bigSegment writes a 1 GiB segment (sparse) whose batches are 4 KiB
// each, one per offset, with kaas's index over the whole segment: the
// batches of offsets [window, window+n) are real (every third one a
// transaction left open), the rest of the file holes the reader never
// reaches. It returns the .log and .index paths.
func bigSegment(b *testing.B, dir string, window, n int64) (string, string) {
	const batch = 4096
	log := filepath.Join(dir, volume.SegmentLogName(0, 1))
	idx := filepath.Join(dir, volume.SegmentIndexName(0, 1))
	f, err := os.Create(log)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(1 << 30); err != nil {
		b.Fatal(err)
	}
	for o := window; o < window+n; o++ {
		var raw []byte
		for v := batch - 80; len(raw) != batch; v -= len(raw) - batch { // a value that makes the batch 4 KiB
			bo := volume.BatchOf{Base: o, ProducerID: -1, Records: []volume.BatchRecord{{Value: make([]byte, v)}}}
			if o%3 == 0 {
				bo.ProducerID, bo.Transactional = 7000+o, true
			}
			raw = volume.EncodeBatchOf(bo)
		}
		if _, err := f.WriteAt(raw, o*batch); err != nil {
			b.Fatal(err)
		}
	}
	entries := make([]byte, 0, (1<<30)/batch*8)
	for o := int64(1); o < (1<<30)/batch; o++ {
		entries = binary.BigEndian.AppendUint32(entries, uint32(o))
		entries = binary.BigEndian.AppendUint32(entries, uint32(o*batch))
	}
	if err := os.WriteFile(idx, entries, 0o644); err != nil {
		b.Fatal(err)
	}
	return log, idx
}

// BenchmarkBlockers10k is --why's read-model step over 10,000 lagging
// partitions, each a 1 GiB segment (the same synthetic one linked into
// every partition dir) with its committed offset 512 MiB in: the bytes
// read per partition are bounded by volume.RecordLimits, whatever the
// segment's size (reported as bytes/partition and max-bytes/partition).
func BenchmarkBlockers10k(b *testing.B) {
	const parts = 10000
	root := b.TempDir()
	l := volume.Layout{DataDir: root, ClusterDir: filepath.Join(root, "__cluster"), Gen: volume.GenerationInfo{Gen: volume.Gen018, Label: "Rust 0.2.18", Source: volume.GenSourcePinned}}
	window := int64(1<<29) / 4096 // 512 MiB in
	src := filepath.Join(root, "src")
	os.MkdirAll(src, 0o755)
	log, idx := bigSegment(b, src, window, 1024)
	gs := &inspect.GroupState{Group: "big"}
	for p := 0; p < parts; p++ {
		dir := l.PartitionDir("big", int32(p))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		os.Link(log, filepath.Join(dir, filepath.Base(log)))
		os.Link(idx, filepath.Join(dir, filepath.Base(idx)))
		at := window + int64(p%900)
		gs.Partitions = append(gs.Partitions, inspect.PartitionState{Topic: "big", Partition: int32(p), Lag: (1<<30)/4096 - at, LagKnown: true,
			Resume: volume.Fact{Value: at, Source: volume.SourceFile}, LogEnd: volume.Fact{Value: (1 << 30) / 4096, Source: volume.SourceSegments}})
	}
	var s *BlockerSources
	b.ResetTimer()
	var bs []inspect.PartitionBlocker
	for i := 0; i < b.N; i++ {
		// A run's sources each time: a run reads each offset once.
		s = &BlockerSources{Layout: l, Gen: l.Gen, Limits: volume.DefaultRecordLimits(), Now: time.Unix(1e9, 0)}
		bs = s.Blockers(gs, false, 0)
	}
	b.StopTimer()
	var most int64
	kinds := map[string]int{}
	for _, x := range bs {
		n := x.Record.BytesRead
		if x.Scan != nil {
			n += x.Scan.BytesRead
		}
		most = max(most, n)
		kinds[x.Kind]++
	}
	if len(bs) != parts || kinds[inspect.BlockOpenTxn] == 0 {
		b.Fatalf("%d blockers, kinds %v", len(bs), kinds)
	}
	if bound := s.Limits.MaxBytes(); most > bound {
		b.Fatalf("a partition read %d bytes, over the bound %d", most, bound)
	}
	b.ReportMetric(float64(s.BytesRead)/parts, "bytes/partition")
	b.ReportMetric(float64(most), "max-bytes/partition")
	b.ReportMetric(float64(s.Limits.MaxBytes()), "bound-bytes/partition")
	b.Logf("10,000 partitions of 1 GiB segments: %s read in all, kinds %v", strconv.FormatInt(s.BytesRead, 10), kinds)
}
