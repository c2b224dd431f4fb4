package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
)

// clockStepJournal records group g in offsetsDir through two writers: the
// first from 10:00 (progress, a REWIND: incident A, then recovery to 30),
// the second after the host's clock stepped back six minutes (a resumed
// VM, NTP): 09:58 progress to 31, 09:59 a REWIND to 2 (incident B, the
// latest), 10:00 progress to 40, which is what the file holds now. The
// clock passed 10:00:30 twice: at 10 the first time, at 40 the second.
func clockStepJournal(t *testing.T, offsetsDir string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, watch.OffsetJournalSubdir)
	file := filepath.Join(offsetsDir, "g.json")
	write := func(j *watch.OffsetJournal, prev *inspect.OffsetObservation, start time.Time, states ...int64) *inspect.OffsetObservation {
		for i, o := range states {
			cur := inspect.OffsetObservation{Time: start.Add(time.Duration(i) * time.Minute), Group: "g", File: file, Format: volume.FormatEnvelope, Offsets: map[string]int64{"orders/0": o}}
			ev := watch.OffsetEvent{Prev: prev, Cur: cur, Initial: prev == nil}
			var before map[string]int64
			if prev != nil {
				before = prev.Offsets
				ev.Anomalies = inspect.CompareOffsetObservations(*prev, cur, false)
			}
			ev.Changed, ev.Removed = watch.OffsetDelta(before, cur.Offsets)
			if err := j.Append([]watch.OffsetEvent{ev}); err != nil {
				t.Fatal(err)
			}
			prev = &cur
		}
		return prev
	}
	j := &watch.OffsetJournal{Dir: dir, OffsetsDir: offsetsDir}
	last := write(j, nil, time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), 10, 20, 5, 30)
	j.Close()
	state, _, err := watch.LastJournalState(dir)
	if err != nil {
		t.Fatal(err)
	}
	j2 := &watch.OffsetJournal{Dir: dir, OffsetsDir: offsetsDir}
	j2.Resume(state)
	write(j2, last, time.Date(2026, 11, 30, 9, 58, 0, 0, time.UTC), 31, 2, 40)
	j2.Close()
	return root
}

// After the clock steps back, the journal is read in its own order (wall
// time is a label): history's last value is the file's, and the restore
// before the latest incident undoes incident B, not the older A.
func TestJournalOrderSurvivesAClockStep(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	writeFile(t, cd, "__consumer_offsets/g.json", `{"offsets":{"orders/0":40}}`)
	journal := clockStepJournal(t, filepath.Join(cd, "__consumer_offsets"))
	r := runCLI(t, "", nil, "offsets", "history", "g", "--journal", journal, "-o", "json")
	v := mustJSON[inspect.OffsetHistoryView](t, r.Out)
	if r.Code != 0 || len(v.Partitions) != 1 || v.Partitions[0].Last == nil || *v.Partitions[0].Last != 40 {
		t.Errorf("history's last value is not the file's 40: exit %d %+v\n%s", r.Code, v.Partitions, r.Err)
	}
	if !strings.Contains(r.Err, "clock") {
		t.Errorf("no word of the clock step:\n%s", r.Err)
	}
	r = runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--journal", journal, "--to-history-before-anomaly", "--export")
	if r.Code != 0 || strings.TrimSpace(r.Out) != "orders,0,31" {
		t.Errorf("restore before the latest incident: exit %d plan %q (want orders,0,31)\n%s", r.Code, r.Out, r.Err)
	}
	// A moment the clock passed twice is taken at its latest pass.
	r = runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--journal", journal, "--to-history", "2026-11-30T10:00:30Z", "--export")
	if r.Code != 0 || strings.TrimSpace(r.Out) != "orders,0,40" {
		t.Errorf("--to-history at a moment passed twice: exit %d plan %q (want orders,0,40, its latest pass)\n%s", r.Code, r.Out, r.Err)
	}
}

// A journal written before segments carried a sequence (no "seq" in its
// headers) still reads, in the order of its segment names.
func TestJournalWithoutSequenceReads(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	journal := journalFor(t, filepath.Join(cd, "__consumer_offsets"))
	segs, _ := filepath.Glob(filepath.Join(journal, watch.OffsetJournalSubdir, "offsets-*.jsonl"))
	for _, s := range segs {
		b, _ := os.ReadFile(s)
		os.WriteFile(s, []byte(strings.Replace(string(b), `,"seq":1`, "", 1)), 0o644)
	}
	r := runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--journal", journal, "--to-history-before-anomaly", "--export")
	if r.Code != 0 || strings.TrimSpace(r.Out) != "orders,0,40" {
		t.Errorf("exit %d plan %q\n%s", r.Code, r.Out, r.Err)
	}
}
