package watch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeSegment writes one journal segment of records by hand.
func writeSegment(t *testing.T, dir string, recs ...JournalRecord) {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		j, _ := json.Marshal(r)
		b.Write(j)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, JournalSegmentName(recs[0].Time)), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The journal's commit times: a change is a commit at its time, a group in
// the opening snapshot committed at or before it, a group first seen later
// committed then, and a gap may hide any group's commit.
func TestReadCommitTimes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	writeSegment(t, dir,
		JournalRecord{Kind: RecSegment, Time: at(0), Version: JournalFormatVersion, Seq: 1},
		JournalRecord{Kind: RecSnapshot, Time: at(0), Group: "quiet", Offsets: map[string]int64{"orders/0": 3}},
		JournalRecord{Kind: RecSnapshot, Time: at(0), Group: "busy", Offsets: map[string]int64{"orders/0": 3, "audit/0": 1}},
		JournalRecord{Time: at(5), Group: "busy", Changed: map[string]int64{"orders/0": 9}},
		JournalRecord{Kind: RecSnapshot, Time: at(7), Group: "new", Offsets: map[string]int64{"orders/1": 2}},
	)
	writeSegment(t, dir,
		JournalRecord{Kind: RecSegment, Time: at(10), Version: JournalFormatVersion, Seq: 2},
		JournalRecord{Kind: RecSnapshot, Time: at(10), Group: "quiet", Offsets: map[string]int64{"orders/0": 3}},
		JournalRecord{Kind: RecSnapshot, Time: at(10), Group: "busy", Offsets: map[string]int64{"orders/0": 9, "audit/0": 1}},
		JournalRecord{Kind: RecSnapshot, Time: at(10), Group: "new", Offsets: map[string]int64{"orders/1": 2}},
	)
	c, err := ReadCommitTimes(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		group string
		want  time.Time
		how   string
	}{{"quiet", at(0), "no commit recorded since"}, {"busy", at(5), "last change recorded"}, {"new", at(7), "last change recorded"}} {
		got, how, ok := c.LastCommit(w.group)
		if !ok || !got.Equal(w.want) || !strings.Contains(how, w.how) {
			t.Errorf("%s: %v %q %v, want %v (%s)", w.group, got, how, ok, w.want, w.how)
		}
	}
	if _, _, ok := c.LastCommit("unknown"); ok {
		t.Error("a group the journal never saw has a commit time")
	}
	if got, _, _ := c.PartitionCommit("busy", "audit/0"); !got.Equal(at(0)) {
		t.Errorf("busy audit/0: %v, want the opening snapshot's time", got)
	}
	if got, _, _ := c.PartitionCommit("busy", "orders/0"); !got.Equal(at(5)) {
		t.Errorf("busy orders/0: %v", got)
	}
	// A gap after the last change may hide a commit: the gap's time counts.
	writeSegment(t, dir, JournalRecord{Kind: RecSegment, Time: at(20), Version: JournalFormatVersion, Seq: 3},
		JournalRecord{Kind: RecGap, Time: at(20), Since: ptr(at(15)), Problem: "disk full"})
	c, _ = ReadCommitTimes(dir)
	if got, how, _ := c.LastCommit("quiet"); !got.Equal(at(20)) || !strings.Contains(how, "gap") {
		t.Errorf("quiet after a gap: %v %q", got, how)
	}
}

func ptr(t time.Time) *time.Time { return &t }
