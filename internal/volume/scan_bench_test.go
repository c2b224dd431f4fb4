package volume

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkScanOffsets10k: a scan of 10,000 group files of 6 partitions
// each in the live dir of a 0.2.18 volume, with a few stale temporary
// files, backups and foreign files beside them (the listing's findings).
// One op is the whole scan, listing included; "summary" is what volume
// check does without partition logs, "entries" what it does with them.
func BenchmarkScanOffsets10k(b *testing.B) {
	data := b.TempDir()
	cd := filepath.Join(data, ClusterSubdir)
	dir := filepath.Join(cd, OffsetsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	const groups = 10_000
	for i := range groups {
		body := fmt.Sprintf(`{"offsets":{"orders/0":%d,"orders/1":%d,"orders/2":%d,"events/0":%d,"events/1":%d,"events/2":%d},"metadata":{"orders/0":"m"}}`, i, i+1, i+2, i+3, i+4, i+5)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("group-%05d.json", i)), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 20 {
		for _, name := range []string{fmt.Sprintf("group-%05d.json.tmp", i), fmt.Sprintf("notes-%d.txt", i)} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	l := Layout{DataDir: data, ClusterDir: cd}.PinnedTo(Gen018, "benchmark")
	for _, summary := range []bool{true, false} {
		name := "entries"
		if summary {
			name = "summary"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				_, err := ScanOffsets(l, ScanOptions{SummaryOnly: summary}, func(*OffsetScanItem) error {
					n++
					return nil
				})
				if err != nil || n != groups {
					b.Fatalf("scanned %d files: %v", n, err)
				}
			}
		})
	}
}
