package volume

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// makeSparsePartition writes one partition whose active segment is a
// 1 GiB sparse file: kaas's batches in its last bytes and a sparse index
// (an entry every 4 KiB, as kaas writes it) whose last entries point at
// them. It returns the log end.
func makeSparsePartition(tb testing.TB, dir string, segBytes int64) int64 {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	const base = 1_000_000
	// ~12 KiB of batches at the end of the segment, the first at tailPos.
	var tail []byte
	type entry struct{ rel, pos int64 }
	var entries []entry
	next := int64(base + 5_000_000)
	last := int64(-KaasIndexIntervalBytes)
	for len(tail) < 12<<10-400 {
		pos := int64(len(tail))
		if pos-last >= KaasIndexIntervalBytes {
			entries = append(entries, entry{next - base, pos})
			last = pos
		}
		tail = append(tail, EncodeBatch(next, 3, 1_700_000_000_000, [][]byte{make([]byte, 90)})...)
		next += 3
	}
	tailPos := segBytes - int64(len(tail))
	var index []byte
	for _, e := range entries {
		index = binary.BigEndian.AppendUint32(index, uint32(e.rel))
		index = binary.BigEndian.AppendUint32(index, uint32(tailPos+e.pos))
	}
	log, err := os.Create(filepath.Join(dir, SegmentLogName(base, 7)))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := log.WriteAt(tail, tailPos); err != nil {
		tb.Fatal(err)
	}
	log.Close()
	idx, err := os.Create(filepath.Join(dir, SegmentIndexName(base, 7)))
	if err != nil {
		tb.Fatal(err)
	}
	idxSize := segBytes / KaasIndexIntervalBytes * indexEntryLen
	if _, err := idx.WriteAt(index, idxSize-int64(len(index))); err != nil {
		tb.Fatal(err)
	}
	idx.Close()
	return next
}

// BenchmarkReadPartitionLogs10k: the log end of 10,000 partitions whose
// active segments are 1 GiB each (sparse files made here), listing
// included. One op is the whole volume.
func BenchmarkReadPartitionLogs10k(b *testing.B) {
	root := b.TempDir()
	const parts = 10_000
	want := make([]int64, parts)
	dirs := make([]string, parts)
	for i := range parts {
		dirs[i] = filepath.Join(root, "t"+strconv.Itoa(i/100), strconv.Itoa(i%100))
		want[i] = makeSparsePartition(b, dirs[i], 1<<30)
	}
	for _, workers := range []int{1, 16} {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			benchLogs(b, dirs, want, workers)
		})
	}
}

func benchLogs(b *testing.B, dirs []string, want []int64, workers int) {
	const parts = 10_000
	var reads, bytes int64
	for b.Loop() {
		reads, bytes = 0, 0
		for i, r := range ReadPartitionLogs(dirs, workers) {
			pl, err, d := r.Log, r.Err, dirs[i]
			if err != nil {
				b.Fatal(err)
			}
			if pl.LogEnd != want[i] || pl.Method != LogEndIndex || pl.ActiveSize != 1<<30 {
				b.Fatalf("%s: %d via %s (size %d), want %d", d, pl.LogEnd, pl.Method, pl.ActiveSize, want[i])
			}
			reads += int64(pl.Reads)
			bytes += pl.BytesRead
		}
	}
	b.ReportMetric(float64(reads)/parts, "reads/partition")
	b.ReportMetric(float64(bytes)/parts, "bytes/partition")
}
