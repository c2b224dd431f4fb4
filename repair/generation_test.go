package repair

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// A legacy file that is the live file reached another way (a hard link)
// is never moved onto, or away from, itself.
func TestRepairNeverMovesAFileOntoItself(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	l := volume.Layout{DataDir: data, ClusterDir: filepath.Join(data, volume.ClusterSubdir)}
	cur := filepath.Join(l.OffsetsPath(), "g.json")
	os.MkdirAll(l.OffsetsPath(), 0o755)
	os.MkdirAll(l.DataOffsetsPath(), 0o755)
	os.WriteFile(cur, []byte(`{"offsets":{"t/0":5}}`), 0o644)
	if err := os.Link(cur, filepath.Join(l.DataOffsetsPath(), "g.json")); err != nil {
		t.Skip("no hard links here:", err)
	}
	l = l.PinnedTo(volume.Gen018, "test")
	rep, err := RepairVolume(l, RepairOptions{Execute: true, Now: time.Date(2026, 7, 23, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range rep.Actions {
		if a.Group == "g" && (a.Action != ActSkip || !strings.Contains(a.Detail, "same file")) {
			t.Errorf("action %+v", a)
		}
	}
	if b, err := os.ReadFile(cur); err != nil || string(b) != `{"offsets":{"t/0":5}}` {
		t.Fatalf("the live file: %q %v", b, err)
	}
	a := &RepairAction{Action: ActMigrate, Path: cur, Dest: filepath.Join(l.DataOffsetsPath(), "g.json"), expect: &FileState{}}
	if err := applyMigration(a, &repairCtx{l: l}); err == nil || !strings.Contains(err.Error(), "onto itself") {
		t.Errorf("migration onto itself: %v", err)
	}
}

// On an undetermined generation repair does only generation-independent
// fixes and lists the rest as skipped.
func TestRepairUndeterminedGeneration(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	l := volume.Layout{DataDir: data, ClusterDir: filepath.Join(data, volume.ClusterSubdir)}
	os.MkdirAll(l.OffsetsPath(), 0o755)
	os.WriteFile(filepath.Join(l.OffsetsPath(), "plain.json"), []byte(`{"t/0":5}`), 0o644)
	os.WriteFile(filepath.Join(l.OffsetsPath(), "torn.json"), []byte(`{"offsets":`), 0o644)
	rep, err := RepairVolume(l, RepairOptions{Now: time.Date(2026, 7, 23, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range rep.Actions {
		got[filepath.Base(a.Path)] = a.Action
	}
	if got["plain.json"] != ActSkip || got["torn.json"] != ActQuarantine || rep.Skipped != 1 || rep.Changes != 1 {
		t.Errorf("actions %v, report %+v", got, rep)
	}
	if rep.Generation.Source != volume.GenSourceUndetermined {
		t.Errorf("generation %+v", rep.Generation)
	}
}

// A Go-generation group file modified in the future proves no quiet
// period: the migration is refused, and the refusal says the time is in
// the future, not "0s ago".
func TestMigrateFutureModTime(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	l := volume.Layout{DataDir: data, ClusterDir: filepath.Join(data, volume.ClusterSubdir)}
	os.MkdirAll(l.ClusterDir, 0o755)
	os.MkdirAll(l.DataOffsetsPath(), 0o755)
	p := filepath.Join(l.DataOffsetsPath(), "g.json")
	os.WriteFile(p, []byte(`{"offsets":{"t/0":5}}`), 0o644)
	now := time.Date(2026, 7, 23, 12, 0, 0, 0, time.UTC)
	os.Chtimes(p, now.Add(48*time.Hour), now.Add(48*time.Hour))
	rep, err := MigrateVolume(l.PinnedTo(volume.GenGo, "test"), MigrateOptions{To: volume.Gen018, Now: now, QuietPeriod: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Refused, "g.json (modified in the future, 2d ahead") || strings.Contains(rep.Refused, "g.json (0s ago)") {
		t.Errorf("refusal %q", rep.Refused)
	}
}
