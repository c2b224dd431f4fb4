package runbooks_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/watch"
)

// TestRestoreGroup: watch --offsets records a group's offsets while a stale
// commit rewinds one partition and a partial rewrite drops another; the
// runbook finds both, restores the last good state and verifies it. Then
// the group progresses and a second stale commit rewinds it: the runbook
// restores the state just before that new incident, not the one before the
// first (which would make the group re-process everything since).
func TestRestoreGroup(t *testing.T) {
	bin := tools(t)
	s := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: []sandbox.Topic{{Name: "orders", Partitions: 3}}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := s.Produce(ctx, "orders", 3, 10); err != nil {
		t.Fatal(err)
	}
	good := map[string]map[int32]int64{"orders": {0: 8, 1: 9, 2: 10}}
	if err := s.Commit(ctx, "app", good); err != nil {
		t.Fatal(err)
	}
	data := s.Layout().DataDir
	journal := filepath.Join(t.TempDir(), "journal")
	w := exec.CommandContext(ctx, bin, "watch", "--offsets", "--data-dir", data, "--journal", journal, "--poll-interval", "50ms",
		"--anomalies-only", "--count", "3", "--timeout", "60s", "-q", "-o", "jsonl")
	var wout strings.Builder
	w.Stdout = &wout
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	waitState := func(what string, ok func(map[string]int64) bool) {
		t.Helper()
		s.WaitFor(t, "journal: "+what, 30*time.Second, func() bool {
			jd, err := watch.ResolveOffsetJournal(journal)
			if err != nil {
				return false
			}
			jr, err := watch.ReadOffsetJournal(jd, watch.JournalReadOptions{Group: "app"})
			pts := watch.ReplayGroup(jr.Records, "app")
			return err == nil && len(pts) > 0 && ok(pts[len(pts)-1].Offsets)
		})
	}
	waitState("baseline", func(o map[string]int64) bool { return o["orders/2"] == 10 })
	// A stale commit (kaas takes any commit) moves orders/1 back.
	if err := s.Commit(ctx, "app", map[string]map[int32]int64{"orders": {1: 2}}); err != nil {
		t.Fatal(err)
	}
	waitState("rewind", func(o map[string]int64) bool { return o["orders/1"] == 2 })
	// A coordinator that has not loaded the group rewrites the file with
	// only what the commit carries: orders/1 and orders/2 vanish.
	s.ForgetOffsets("app")
	if err := s.Commit(ctx, "app", map[string]map[int32]int64{"orders": {0: 8}}); err != nil {
		t.Fatal(err)
	}
	waitState("wipe", func(o map[string]int64) bool { _, ok := o["orders/2"]; return !ok })

	dir := t.TempDir()
	t.Setenv("RUNBOOK_DIR", dir)
	t.Setenv("RUNBOOK_YES", "1")
	r := run(t, "--data-dir "+data+" -b "+strings.Join(s.Bootstrap(), ",")+" -q", "restore-group.sh", "app", journal)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var anomalies, restored int
	for _, m := range jsonLines(t, r.stdout) {
		switch m["event"] {
		case "anomaly":
			anomalies++
		case "restored":
			restored++
			if m["result"] != "OK" {
				t.Errorf("not verified: %v", m)
			}
		}
	}
	if anomalies != 3 || restored != 3 {
		t.Errorf("%d anomalies (want REWIND + 2 VANISHED), %d restored partitions\n%s\n%s", anomalies, restored, r.stdout, r.stderr)
	}
	got, _ := s.CommittedOffsets("app")
	if got["orders/0"] != 8 || got["orders/1"] != 9 || got["orders/2"] != 10 || len(got) != 3 {
		t.Errorf("after the restore the file holds %v", got)
	}
	rbs, _ := filepath.Glob(filepath.Join(dir, "rollback-*.csv"))
	if len(rbs) != 1 {
		t.Fatalf("rollback files %v", rbs)
	}
	if rb, err := os.ReadFile(rbs[0]); err != nil || !strings.Contains(string(rb), "orders,0,8") {
		t.Errorf("rollback: %s %v", rb, err)
	}

	// The group goes on (all read), then a second stale commit rewinds orders/0.
	waitState("the restore", func(o map[string]int64) bool { return o["orders/2"] == 10 })
	if err := s.Commit(ctx, "app", map[string]map[int32]int64{"orders": {0: 10, 1: 10, 2: 10}}); err != nil {
		t.Fatal(err)
	}
	waitState("progress", func(o map[string]int64) bool { return o["orders/0"] == 10 && o["orders/1"] == 10 })
	if err := s.Commit(ctx, "app", map[string]map[int32]int64{"orders": {0: 3}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Wait(); err != nil {
		t.Fatalf("watch: %v\n%s", err, wout.String())
	}
	if strings.Count(wout.String(), `"kind":"REWIND"`) != 2 || !strings.Contains(wout.String(), `"kind":"VANISHED"`) {
		t.Errorf("watch --anomalies-only printed:\n%s", wout.String())
	}
	r = run(t, "--data-dir "+data+" -b "+strings.Join(s.Bootstrap(), ",")+" -q", "restore-group.sh", "app", journal)
	if r.code != 0 {
		t.Fatalf("second restore: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got, _ = s.CommittedOffsets("app")
	if got["orders/0"] != 10 || got["orders/1"] != 10 || got["orders/2"] != 10 || len(got) != 3 {
		t.Errorf("after the second restore the file holds %v (want the state before the latest rewind: 10, 10, 10)", got)
	}

	if r := run(t, "--data-dir "+data+" -q", "restore-group.sh", "app"); r.code != 2 {
		t.Errorf("usage: exit %d", r.code)
	}
}
