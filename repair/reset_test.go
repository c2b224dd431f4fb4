package repair

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

const (
	offlineOld = `{"offsets":{"audit/0":4,"orders/0":10,"orders/1":20},"metadata":{"audit/0":"m-a","orders/0":"m-o"}}`
	// to-earliest on orders (log start 2 and 3 from the manifests); audit
	// and every metadata kept.
	offlineNew = `{"offsets":{"audit/0":4,"orders/0":2,"orders/1":3},"metadata":{"audit/0":"m-a","orders/0":"m-o"}}`
)

// writeLog writes a partition's segment files in kaas's format: one
// segment from start holding the records up to end (exclusive).
func writeLog(t testing.TB, dir string, start, end int64) {
	t.Helper()
	if err := volume.WriteRecords(dir, start, end, 1_700_000_000_000); err != nil {
		t.Fatal(err)
	}
}

// offlineVolume is a data dir with one group file and two partitions:
// segment files ([2,30) and [3,40)) and manifests that agree.
func offlineVolume(t testing.TB) volume.Layout {
	t.Helper()
	data := t.TempDir()
	l := volume.Layout{DataDir: data, ClusterDir: filepath.Join(data, "__cluster")}
	must := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must(filepath.Join(l.ClusterDir, "assignment.json"), `{"version":1,"brokers":[{"id":"kaas-0","health":"alive"}]}`)
	must(filepath.Join(l.OffsetsPath(), "g.json"), offlineOld)
	must(filepath.Join(data, "orders", "0", "manifest.json"), `{"epoch":1,"highWatermark":30,"logStartOffset":2}`)
	must(filepath.Join(data, "orders", "1", "manifest.json"), `{"epoch":1,"highWatermark":40,"logStartOffset":3}`)
	writeLog(t, filepath.Join(data, "orders", "0"), 2, 30)
	writeLog(t, filepath.Join(data, "orders", "1"), 3, 40)
	return l
}

func planOffline(t testing.TB, l volume.Layout, spec Spec, scopes ...TopicScope) *GroupPlan {
	t.Helper()
	plans, err := PlanGroups(context.Background(), Inputs{Layout: l}, ResetOptions{Groups: []string{"g"}, Scopes: scopes, Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if plans[0].Error != "" {
		t.Fatalf("plan error: %s", plans[0].Error)
	}
	return plans[0]
}

func TestOfflineResetKeepsOtherTopicsAndMetadata(t *testing.T) {
	t.Parallel()
	l := offlineVolume(t)
	gp := planOffline(t, l, Spec{Kind: ToEarliest}, TopicScope{Topic: "orders"})
	if len(gp.Rows) != 2 || gp.Kept != 1 || gp.StateSource != "offline" || gp.State != StateUnknown {
		t.Fatalf("plan %+v", gp)
	}
	WriteFile(gp, nil)
	if gp.Failed != 0 {
		t.Fatalf("failed: %+v", gp)
	}
	got, _ := os.ReadFile(gp.Path)
	if string(got) != offlineNew {
		t.Errorf("file %s\nwant %s", got, offlineNew)
	}
	if b, err := os.ReadFile(gp.Backup); err != nil || string(b) != offlineOld {
		t.Errorf("backup %q: %v", b, err)
	}
	for _, r := range gp.Rows {
		if r.Result != ResultOK {
			t.Errorf("row %+v", r)
		}
	}
}

func TestOfflineDeleteRewritesEnvelope(t *testing.T) {
	t.Parallel()
	l := offlineVolume(t)
	plans, err := PlanGroups(context.Background(), Inputs{Layout: l}, ResetOptions{Groups: []string{"g"}, Scopes: []TopicScope{{Topic: "orders", Partitions: []int32{1, 7}}}, Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	gp := plans[0]
	WriteFile(gp, nil)
	got, _ := os.ReadFile(gp.Path)
	want := `{"offsets":{"audit/0":4,"orders/0":10},"metadata":{"audit/0":"m-a","orders/0":"m-o"}}`
	if string(got) != want || gp.Failed != 0 {
		t.Errorf("file %s (failed %d)\nwant %s", got, gp.Failed, want)
	}
	if !gp.Rows[0].Changed || gp.Rows[1].Changed || len(gp.Rows[1].Warnings) == 0 {
		t.Errorf("rows %+v", gp.Rows)
	}
}

// A file changed by a broker between the plan and the write is never
// overwritten.
func TestOfflineResetConcurrentWriter(t *testing.T) {
	t.Parallel()
	l := offlineVolume(t)
	gp := planOffline(t, l, Spec{Kind: ToEarliest}, TopicScope{Topic: "orders"})
	broker := `{"offsets":{"orders/0":11}}`
	os.WriteFile(gp.Path, []byte(broker), 0o644)
	WriteFile(gp, nil)
	if gp.Failed == 0 {
		t.Fatal("a concurrent write went unnoticed")
	}
	if got, _ := os.ReadFile(gp.Path); string(got) != broker {
		t.Errorf("clobbered: %s", got)
	}
	if !strings.Contains(strings.Join(gp.Warnings, " "), "changed since kaasctl read it") {
		t.Errorf("warnings %v", gp.Warnings)
	}
}

func TestPlanRefusesUnreadableFile(t *testing.T) {
	t.Parallel()
	l := offlineVolume(t)
	os.WriteFile(filepath.Join(l.OffsetsPath(), "g.json"), []byte(`{"offsets":{"orders/0":1`), 0o644)
	plans, err := PlanGroups(context.Background(), Inputs{Layout: l}, ResetOptions{Groups: []string{"g", "../x", "a/b"}, AllTopics: true, Spec: Spec{Kind: ToEarliest}})
	if err != nil {
		t.Fatal(err)
	}
	for _, gp := range plans {
		if gp.Error == "" || !gp.Blocked(true) {
			t.Errorf("%s: not blocked: %+v", gp.Group, gp)
		}
	}
	if !strings.Contains(plans[0].Error, "volume repair") {
		t.Errorf("error %q", plans[0].Error)
	}
}

func TestOfflineTimeSpecNeedsBrokers(t *testing.T) {
	t.Parallel()
	l := offlineVolume(t)
	_, err := PlanGroups(context.Background(), Inputs{Layout: l}, ResetOptions{Groups: []string{"g"}, AllTopics: true, Spec: Spec{Kind: ByDuration, Time: time.Now().Add(-time.Hour)}})
	if err == nil || !strings.Contains(err.Error(), "needs live brokers") {
		t.Fatalf("err %v", err)
	}
}

func TestOfflinePlainMapIsConverted(t *testing.T) {
	t.Parallel()
	l := offlineVolume(t)
	os.WriteFile(filepath.Join(l.OffsetsPath(), "g.json"), []byte(`{"orders/0":10,"audit/0":4}`), 0o644)
	l = l.PinnedTo(volume.Gen018, "test") // a plain map is a hazard on 0.2.18 only
	gp := planOffline(t, l, Spec{Kind: ToCurrent}, TopicScope{Topic: "orders", Partitions: []int32{0}})
	if !gp.PlainMap || !gp.Changes() {
		t.Fatalf("plain map not noticed: %+v", gp)
	}
	WriteFile(gp, nil)
	if got, _ := os.ReadFile(gp.Path); string(got) != `{"offsets":{"audit/0":4,"orders/0":10}}` {
		t.Errorf("file %s", got)
	}
}

// A failure injected after each step of the offline write leaves the
// old or the new content, never a mix, and no temp file.
func TestOfflineResetFailureAfterEachStep(t *testing.T) {
	for _, failAt := range allSteps {
		t.Run(failAt, func(t *testing.T) {
			l := offlineVolume(t)
			gp := planOffline(t, l, Spec{Kind: ToEarliest}, TopicScope{Topic: "orders"})
			boom := errors.New("injected")
			writeFileHook = func(s string) error {
				if s == failAt {
					return boom
				}
				return nil
			}
			defer func() { writeFileHook = nil }()
			WriteFile(gp, nil)
			if gp.Failed == 0 {
				t.Fatal("the injected failure was not reported")
			}
			got, _ := os.ReadFile(gp.Path)
			if string(got) != offlineOld && string(got) != offlineNew {
				t.Fatalf("partial file: %q", got)
			}
			if l := leftovers(t, gp.Path); len(l) != 0 {
				t.Errorf("temp files left: %v", l)
			}
		})
	}
}

// The process dies after each step of an offline reset: the group file is
// the old or the new content.
func TestOfflineResetCrashAfterEachStep(t *testing.T) {
	if dir := os.Getenv("KAASCTL_RESET_CRASH_DIR"); dir != "" {
		step := os.Getenv("KAASCTL_RESET_CRASH_STEP")
		l := volume.Layout{DataDir: dir, ClusterDir: filepath.Join(dir, "__cluster")}
		gp := planOffline(t, l, Spec{Kind: ToEarliest}, TopicScope{Topic: "orders"})
		writeFileHook = func(s string) error {
			if s == step {
				os.Exit(7)
			}
			return nil
		}
		WriteFile(gp, nil)
		os.Exit(0)
	}
	for _, step := range allSteps {
		t.Run(step, func(t *testing.T) {
			l := offlineVolume(t)
			cmd := exec.Command(os.Args[0], "-test.run=^TestOfflineResetCrashAfterEachStep$")
			cmd.Env = append(os.Environ(), "KAASCTL_RESET_CRASH_DIR="+l.DataDir, "KAASCTL_RESET_CRASH_STEP="+step)
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 7 {
				t.Fatalf("writer did not die at %s: %v", step, err)
			}
			p := filepath.Join(l.OffsetsPath(), "g.json")
			got, _ := os.ReadFile(p)
			if string(got) != offlineOld && string(got) != offlineNew {
				t.Fatalf("partial file after a crash at %s: %q", step, got)
			}
			if of, fs, err := volume.ReadOffsetFile(p); err != nil || len(fs) != 0 || of.Format != volume.FormatEnvelope {
				t.Errorf("after a crash at %s the file does not decode cleanly: %v %v", step, err, fs)
			}
		})
	}
}

func TestMergeEntries(t *testing.T) {
	t.Parallel()
	file := []volume.OffsetEntry{{Topic: "a", Partition: 0, Offset: 5, Metadata: "x"}, {Topic: "b", Partition: 1, Offset: 7}}
	got := MergeEntries(file, []PlanRow{{Topic: "a", Partition: 0, New: 1}, {Topic: "c", Partition: 2, New: 3}, {Topic: "b", Partition: 1, New: 99, Error: "no"}}, map[tpKey]bool{})
	want := []volume.OffsetEntry{{Topic: "a", Partition: 0, Offset: 1, Metadata: "x"}, {Topic: "b", Partition: 1, Offset: 7}, {Topic: "c", Partition: 2, Offset: 3}}
	if len(got) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %+v want %+v", i, got[i], want[i])
		}
	}
	if string(EncodeEnvelope(got)) != `{"offsets":{"a/0":1,"b/1":7,"c/2":3},"metadata":{"a/0":"x"}}` {
		t.Errorf("envelope %s", EncodeEnvelope(got))
	}
	if string(EncodeEnvelope(nil)) != `{"offsets":{}}` {
		t.Errorf("empty envelope %s", EncodeEnvelope(nil))
	}
}

func TestPlanRefusesLegacyOnlyGroup(t *testing.T) {
	t.Parallel()
	l := offlineVolume(t)
	os.MkdirAll(filepath.Join(l.DataDir, "__consumer_offsets"), 0o755)
	os.WriteFile(filepath.Join(l.DataDir, "__consumer_offsets", "old.json"), []byte(`{"offsets":{"orders/0":7}}`), 0o644)
	// Both offsets dirs hold files: the live one cannot be told until pinned.
	plans, err := PlanGroups(context.Background(), Inputs{Layout: l}, ResetOptions{Groups: []string{"old"}, Scopes: []TopicScope{{Topic: "orders"}}, Spec: Spec{Kind: ToEarliest}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plans[0].Error, "--kaas-version") {
		t.Errorf("ambiguous volume: group not stopped: %+v", plans[0])
	}
	// Pinned to 0.2.18 the data-dir file is legacy: repair migrates it first.
	plans, err = PlanGroups(context.Background(), Inputs{Layout: l.PinnedTo(volume.Gen018, "test")}, ResetOptions{Groups: []string{"old"}, Scopes: []TopicScope{{Topic: "orders"}}, Spec: Spec{Kind: ToEarliest}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plans[0].Error, "volume repair") {
		t.Errorf("legacy-only group not stopped: %+v", plans[0])
	}
	// Pinned to the Go generation the data-dir file is the live one.
	plans, err = PlanGroups(context.Background(), Inputs{Layout: l.PinnedTo(volume.GenGo, "test")}, ResetOptions{Groups: []string{"old"}, Scopes: []TopicScope{{Topic: "orders"}}, Spec: Spec{Kind: ToEarliest}})
	if err != nil {
		t.Fatal(err)
	}
	if plans[0].Error != "" || plans[0].Path != filepath.Join(l.DataDir, "__consumer_offsets", "old.json") {
		t.Errorf("Go generation: plan %+v", plans[0])
	}
}
