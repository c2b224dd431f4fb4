package repair

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every group ApplyOffsets writes lands in kaasctl's write log with its
// partitions before and after; a dry-run and a refused group do not.
func TestWriteLogRecordsWrites(t *testing.T) {
	t.Parallel()
	l := offlineVolume(t)
	os.WriteFile(filepath.Join(l.OffsetsPath(), "g2.json"), []byte(offlineOld), 0o644)
	ctx := context.Background()
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	plans, err := PlanGroups(ctx, Inputs{Layout: l}, ResetOptions{Groups: []string{"g", "g2"}, Scopes: []TopicScope{{Topic: "orders"}}, Spec: Spec{Kind: ToEarliest}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyOffsets(ctx, plans, ApplyOptions{Command: "reset"}); err != nil {
		t.Fatal(err, plans[0].Error)
	}
	if _, err := os.Stat(l.WriteLogPath()); !os.IsNotExist(err) {
		t.Fatalf("a dry-run wrote the log: %v", err)
	}
	plans[1].Refused = InactiveRefusal("g2", "Stable")
	ApplyOffsets(ctx, plans, ApplyOptions{Command: "reset", Execute: true, What: "offsets reset --to-earliest", Now: func() time.Time { return at }})
	recs, warns, err := ReadWriteLog(l, "")
	if err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	if len(recs) != 1 || recs[0].Group != "g" || recs[0].Command != "offsets reset --to-earliest" || recs[0].Method != "file" || !recs[0].Time.Equal(at) || recs[0].By == "" {
		t.Fatalf("records: %+v", recs)
	}
	for _, p := range recs[0].Partitions {
		if p.Before < 0 || p.After >= p.Before {
			t.Errorf("partition %+v: a reset to the earliest goes back", p)
		}
	}
	if only, _, _ := ReadWriteLog(l, "g2"); len(only) != 0 {
		t.Errorf("the refused group is in the log: %+v", only)
	}
}

// The log keeps its last records, skips lines it cannot read, and is
// never written through a planted link.
func TestWriteLogBoundsAndLinks(t *testing.T) {
	t.Parallel()
	data := []byte("a\nb\nc\ntorn")
	if got := string(keepLastLines(data, 2)); got != "b\nc\n" {
		t.Fatalf("keepLastLines: %q", got)
	}
	l := offlineVolume(t)
	path := l.WriteLogPath()
	os.WriteFile(path, []byte("not json\n"), 0o644)
	if err := AppendWriteLog(path, l.ClusterDir, Policy{}, WriteRecord{Time: time.Now(), Group: "g", Command: "offsets delete"}); err != nil {
		t.Fatal(err)
	}
	recs, warns, err := ReadWriteLog(l, "g")
	if err != nil || len(recs) != 1 || len(warns) != 1 || !strings.Contains(warns[0], ":1: not a write record") {
		t.Fatalf("%+v %v %v", recs, warns, err)
	}
	outside := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(outside, []byte("keep\n"), 0o644)
	os.Remove(path)
	if err := os.Symlink(outside, path); err != nil {
		t.Skip(err)
	}
	if err := AppendWriteLog(path, l.ClusterDir, Policy{}, WriteRecord{Time: time.Now(), Group: "g"}); err == nil {
		t.Fatal("appended through a link")
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep\n" {
		t.Fatalf("the link's target was written: %q", b)
	}
}
