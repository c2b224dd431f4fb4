package commands

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
)

// journalFor records group g in offsetsDir: progress, then a rewind of
// orders/0 (an anomaly to restore before).
func journalFor(t *testing.T, offsetsDir string) string {
	t.Helper()
	root := t.TempDir()
	j := &watch.OffsetJournal{Dir: filepath.Join(root, watch.OffsetJournalSubdir), OffsetsDir: offsetsDir}
	base := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	var prev *inspect.OffsetObservation
	for i, st := range []map[string]int64{{"orders/0": 10}, {"orders/0": 40}, {"orders/0": 4}} {
		cur := inspect.OffsetObservation{Time: base.Add(time.Duration(i) * time.Minute), Group: "g", File: filepath.Join(offsetsDir, "g.json"), Format: volume.FormatEnvelope, Offsets: st}
		ev := watch.OffsetEvent{Prev: prev, Cur: cur, Initial: prev == nil}
		var before map[string]int64
		if prev != nil {
			before = prev.Offsets
			ev.Anomalies = inspect.CompareOffsetObservations(*prev, cur, false)
		}
		ev.Changed, ev.Removed = watch.OffsetDelta(before, st)
		if err := j.Append([]watch.OffsetEvent{ev}); err != nil {
			t.Fatal(err)
		}
		prev = &cur
	}
	j.Close()
	return root
}

// A journal recorded for another cluster's offsets dir is never applied to
// this volume's same-named group: the restore is refused (exit 4) naming
// both dirs, and the volume is byte for byte as it was; the journal of
// this volume restores.
func TestRestoreRefusesAnotherClustersJournal(t *testing.T) {
	t.Parallel()
	dataA, cdA := safeVolume(t)
	dataB, _ := safeVolume(t)
	journal := journalFor(t, filepath.Join(cdA, "__consumer_offsets"))
	for _, spec := range [][]string{{"--to-history-before-anomaly"}, {"--to-history", "2026-11-30T10:01:30Z"}} {
		before := fileHashes(t, dataB)
		r := runCLI(t, "", nil, append([]string{"offsets", "reset", "--offline", "--data-dir", dataB, "-g", "g", "--journal", journal, "--execute"}, spec...)...)
		if r.Code != 4 || !strings.Contains(r.Err, filepath.Join(cdA, "__consumer_offsets")) || !strings.Contains(r.Err, "not an offsets dir of this volume") {
			t.Errorf("%v on another cluster: exit %d\n%s", spec, r.Code, r.Err)
		}
		sameHashes(t, "refused restore", before, fileHashes(t, dataB))
		r = runCLI(t, "", nil, append([]string{"offsets", "reset", "--offline", "--data-dir", dataA, "-g", "g", "--journal", journal, "--export"}, spec...)...)
		if r.Code != 0 || strings.TrimSpace(r.Out) != "orders,0,40" {
			t.Errorf("%v on its own cluster: exit %d plan %q\n%s", spec, r.Code, r.Out, r.Err)
		}
	}
}

// --to-history at a moment before the journal's first record of the group
// says where its history starts, not "no history recorded" (the journal
// holds the group from later on).
func TestRestoreBeforeTheJournalStarts(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	journal := journalFor(t, filepath.Join(cd, "__consumer_offsets"))
	before := fileHashes(t, data)
	r := runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--journal", journal, "--to-history", "2026-11-30T09:00:00Z", "--execute")
	if r.Code == 0 || strings.Contains(r.Err, "no history recorded") || !strings.Contains(r.Err, "the history starts at 2026-11-30T10:00:00Z") {
		t.Errorf("exit %d\n%s", r.Code, r.Err)
	}
	sameHashes(t, "restore before the history", before, fileHashes(t, data))
}
