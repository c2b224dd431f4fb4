package commands

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// takeover trace over the lab's history with v2 missing (as a journal
// that missed a version replaced within a moment holds it): the version
// line, every move across the gap and the summary name it; JSON counts it.
func TestTakeoverTraceNamesMissingVersion(t *testing.T) {
	t.Parallel()
	hist := filepath.Join(trLabCopy, "assignment-history")
	dir := t.TempDir()
	for _, n := range []string{"assignment-e0-v1-090757.json", "assignment-e0-v3-090836.json"} {
		b, err := os.ReadFile(filepath.Join(hist, n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	want := "v2 was never seen: moves between v1 and v3 may hide an intermediate coordinator"
	out, errOut, code := trRun(t, "", "takeover", "trace", "--assignments", dir, "-o", "wide")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "epoch 0 v3") || strings.Count(out, want) < 2 || !strings.Contains(out, "1 assignment version never seen") {
		t.Errorf("table:\n%s", out)
	}
	out, errOut, code = trRun(t, "", "takeover", "trace", "--assignments", dir, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var tr struct {
		Trace struct {
			MissedVersions int64 `json:"missedVersions"`
			Versions       []struct {
				AssignmentVersion, MissingBefore int64
				Gap                              string
			} `json:"versions"`
		} `json:"trace"`
		MissedVersions int64 `json:"missedVersions"`
		Versions       []struct {
			AssignmentVersion, MissingBefore int64
			Gap                              string
		} `json:"versions"`
	}
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatal(err)
	}
	missed, vs := tr.MissedVersions, tr.Versions
	if vs == nil {
		missed, vs = tr.Trace.MissedVersions, tr.Trace.Versions
	}
	if missed != 1 || len(vs) != 2 || vs[1].MissingBefore != 1 || vs[1].Gap != want {
		t.Errorf("json: missed %d versions %+v\n%s", missed, vs, out)
	}
	// The full history has no gap and says nothing about one.
	out, _, _ = trRun(t, "", "takeover", "trace", "--assignments", hist)
	if strings.Contains(out, "never seen") {
		t.Errorf("full history:\n%s", out)
	}
}

// watch sees v1 and then v3 (v2 replaced before a poll read it): the gap is
// named on stderr for machine output, with the move it may hide, and
// counted in the JSON view.
func TestWatchNamesMissingVersion(t *testing.T) {
	t.Parallel()
	hist := filepath.Join(trLabCopy, "assignment-history")
	v1, err := os.ReadFile(filepath.Join(hist, "assignment-e0-v1-090757.json"))
	if err != nil {
		t.Fatal(err)
	}
	v3, err := os.ReadFile(filepath.Join(hist, "assignment-e0-v3-090836.json"))
	if err != nil {
		t.Fatal(err)
	}
	cd := t.TempDir()
	path := filepath.Join(cd, "assignment.json")
	os.WriteFile(path, v1, 0o644)
	journal := filepath.Join(t.TempDir(), "journal")
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"kaasctl", "watch", "--cluster-dir", cd, "--journal", journal, "--poll-interval", "20ms", "--count", "2", "--timeout", "60s",
			"-g", "lab-group", "-g", "g-beta", "-o", "json"},
			&IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	}()
	// The baseline is read (journalled), then v1 is replaced by v3.
	trWaitFile(t, filepath.Join(journal, "assignment-e0-v1.json"))
	os.WriteFile(path+".tmp", v3, 0o644)
	os.Rename(path+".tmp", path)
	var code int
	select {
	case code = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("watch did not stop")
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := "v2 was never seen: moves between v1 and v3 may hide an intermediate coordinator"
	if !strings.Contains(errb.String(), want) {
		t.Errorf("stderr lacks the gap:\n%s", errb.String())
	}
	var view struct {
		MissedVersions int64 `json:"missedVersions"`
		Versions       []struct {
			AssignmentVersion int64
			Gap               string
		} `json:"versions"`
		Events []struct{ Group, Detail string } `json:"events"`
	}
	if err := json.Unmarshal(out.Bytes(), &view); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	// g-beta moves v1 → v3 and its move names the gap. lab-group shows
	// no move at all: it was on skafka-0 at v1 and at v3, and on skafka-1
	// at v2 (two rebalances nobody saw) — what the gap warns about.
	if view.MissedVersions != 1 || len(view.Versions) != 2 || view.Versions[1].Gap != want || len(view.Events) != 1 ||
		view.Events[0].Group != "g-beta" || !strings.Contains(view.Events[0].Detail, want) {
		t.Errorf("view %+v", view)
	}
}
