package watch

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/anomaly"
)

// BenchmarkOffsetJournal writes a day-like journal (100 groups of 6
// partitions, 100,000 commits in batches of one scan) and measures reading one group's history
// from it; it reports the journal's bytes per commit.
func BenchmarkOffsetJournal(b *testing.B) {
	dir := b.TempDir()
	j := &OffsetJournal{Dir: dir, OffsetsDir: "/data/__cluster/__consumer_offsets", SegmentBytes: 8 << 20}
	state := map[string]anomaly.Observation{}
	const groups, commits = 100, 100_000
	var batch []OffsetEvent
	for i := 0; i < commits; i++ {
		g := fmt.Sprintf("group-%03d", i%groups)
		prev, ok := state[g]
		offs := map[string]int64{}
		for p := 0; p < 6; p++ {
			offs[fmt.Sprintf("orders/%d", p)] = int64(i/groups) * 10
		}
		cur := anomaly.Observation{Time: t0.Add(time.Duration(i) * 100 * time.Millisecond), Group: g, File: "/data/__cluster/__consumer_offsets/" + g + ".json", Format: "envelope", Offsets: offs}
		var ev OffsetEvent
		if ok {
			ev = step(&prev, cur)
		} else {
			ev = step(nil, cur)
		}
		state[g] = cur
		// One batch per round of the groups (one scan: one write, one fsync).
		if batch = append(batch, ev); len(batch) == groups {
			if err := j.Append(batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	j.Close()
	segs, _ := listSegments(dir)
	var size int64
	for _, s := range segs {
		st, _ := os.Stat(dir + "/" + s.name)
		size += st.Size()
	}
	b.ResetTimer()
	for b.Loop() {
		jr, err := ReadOffsetJournal(dir, JournalReadOptions{Group: "group-042"})
		if err != nil || len(ReplayGroup(jr.Records, "group-042")) != commits/groups {
			b.Fatalf("%v", err)
		}
	}
	b.ReportMetric(float64(size)/commits, "journal-bytes/commit")
}
