package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/observe/watchrun"
	"github.com/kaasctl/kaasctl/views"
)

// Direct tests of the run functions of watch, takeover trace and
// assignment show/diff: Globals from GlobalsFor, options as parse would
// make them, no cli.Context.

// runGlobals builds Globals over fresh buffers with the lab clock.
func runGlobals(t *testing.T, out interface{ Write([]byte) (int, error) }, args ...string) (*Globals, *lockedBuffer) {
	t.Helper()
	errb := &lockedBuffer{}
	return mustGlobals(t, &IOStreams{Out: out, Err: errb, Now: trLabNow}, args...), errb
}

var labGroups = []string{"lab-group", "g-alpha", "g-beta", "g-gamma", "g-delta"}

func TestRunWatchFollowsVersions(t *testing.T) {
	t.Parallel()
	hist := filepath.Join(trLabCopy, "assignment-history")
	cd := t.TempDir()
	path := filepath.Join(cd, "assignment.json")
	v1, _ := os.ReadFile(filepath.Join(hist, "assignment-e0-v1-090757.json"))
	v2, err := os.ReadFile(filepath.Join(hist, "assignment-e0-v2-090803.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, cd, "assignment.json", string(v1))
	journal := filepath.Join(t.TempDir(), "journal")
	var out lockedBuffer
	g, errb := runGlobals(t, &out, "--cluster-dir", cd, "-o", "jsonl")
	o := watchOptions{journal: journal, groups: labGroups, pollInterval: 20 * time.Millisecond, count: 2, timeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- runWatch(context.Background(), g, o) }()
	trWaitFile(t, filepath.Join(journal, "assignment-e0-v1.json"))
	writeFile(t, cd, "assignment.json.tmp", string(v2))
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v: %s", err, errb.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatal("watch did not stop after --count 2")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, ln := range lines {
		var e struct {
			AssignmentVersion int64
			Cause             string
		}
		if err := json.Unmarshal([]byte(ln), &e); err != nil || e.AssignmentVersion != 2 || e.Cause == "" {
			t.Errorf("event %q: %v", ln, err)
		}
	}
	if len(lines) != 3 {
		t.Errorf("v1→v2: %d moves, want 3:\n%s", len(lines), out.String())
	}
}

func TestRunWatchOnce(t *testing.T) {
	t.Parallel()
	cd := trLabVolume(t)
	var out bytes.Buffer
	g, errb := runGlobals(t, &out, "--cluster-dir", cd, "-o", "json")
	if err := runWatch(context.Background(), g, watchOptions{once: true, pollInterval: time.Second}); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var v watchrun.WatchOnceView
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, c := range v.Coordinators {
		total += c.Groups
	}
	if v.KnownGroups != 3 || total != 3 || v.Version.AssignmentVersion != 3 {
		t.Errorf("%+v", v)
	}
	// --group narrows the groups counted.
	out.Reset()
	if err := runWatch(context.Background(), g, watchOptions{once: true, pollInterval: time.Second, groups: []string{"lab-*"}}); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.KnownGroups != 1 {
		t.Errorf("filtered: %v %+v", err, v)
	}
}

func TestRunWatchOffsetsOnce(t *testing.T) {
	t.Parallel()
	data, od := offsetsVolume(t)
	var out bytes.Buffer
	g, errb := runGlobals(t, &out, "--data-dir", data, "-o", "json")
	o := watchOptions{offsets: true, once: true, pollInterval: time.Second, groups: []string{"app"}}
	if err := runWatch(context.Background(), g, o); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var v watchrun.WatchOffsetsView
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Dir != od || v.Files != 2 || len(v.Events) != 1 || v.Events[0].Group != "app" || v.Events[0].Kind != "snapshot" {
		t.Errorf("%+v", v)
	}
}

// failingWriter fails every write, as a closed pipe does.
type failingWriter struct{}

var errClosedPipe = errors.New("write |1: broken pipe")

func (failingWriter) Write([]byte) (int, error) { return 0, errClosedPipe }

// A watch whose output cannot be written stops with that error instead
// of following on (both streams check every write).
func TestRunWatchStopsOnAWriteError(t *testing.T) {
	t.Parallel()
	cd := trLabVolume(t)
	g, _ := runGlobals(t, failingWriter{}, "--cluster-dir", cd)
	err := runWatch(context.Background(), g, watchOptions{pollInterval: 20 * time.Millisecond, timeout: time.Minute})
	if !errors.Is(err, errClosedPipe) {
		t.Errorf("watch: %v, want the write error", err)
	}
	data, od := offsetsVolume(t)
	g, _ = runGlobals(t, failingWriter{}, "--data-dir", data, "-o", "jsonl")
	done := make(chan error, 1)
	go func() {
		done <- runWatch(context.Background(), g, watchOptions{offsets: true, pollInterval: 20 * time.Millisecond, timeout: time.Minute})
	}()
	// The baseline is not printed: wait until it is taken, then change a
	// file so there is something to write.
	deadline := time.Now().Add(30 * time.Second)
	for i := 11; ; i++ {
		writeFile(t, od, "app.json.tmp", `{"offsets":{"orders/0":`+strconv.Itoa(i)+`,"orders/1":20}}`)
		os.Rename(filepath.Join(od, "app.json.tmp"), filepath.Join(od, "app.json"))
		select {
		case err := <-done:
			if !errors.Is(err, errClosedPipe) {
				t.Errorf("watch --offsets: %v, want the write error", err)
			}
			return
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("watch --offsets did not stop on the write error")
		}
	}
}

func TestRunTakeoverTrace(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	g, errb := runGlobals(t, &out, "-o", "json")
	o := takeoverTraceOptions{assignments: []string{filepath.Join(trLabCopy, "assignment-history")}, groups: labGroups}
	if err := runTakeoverTrace(context.Background(), g, o); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var tr trTraceJSON
	if err := json.Unmarshal(out.Bytes(), &tr); err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != 8 { // v1→v2: 3, v2→v3: 5
		t.Errorf("%d events: %+v", len(tr.Events), tr.Events)
	}
	// --since after the last move: none left, and the filter is named.
	out.Reset()
	o.since = time.Date(2026, 11, 29, 9, 9, 0, 0, time.UTC)
	if err := runTakeoverTrace(context.Background(), g, o); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Filters []string `json:"filters"`
		Events  []any    `json:"events"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || len(v.Events) != 0 || !strings.Contains(strings.Join(v.Filters, ","), "since 2026-11-29T09:09:00Z") {
		t.Errorf("since: %v %+v", err, v)
	}
	// Nothing to read: a usage error.
	if err := runTakeoverTrace(context.Background(), g, takeoverTraceOptions{}); exit.Code(err) != exit.Usage {
		t.Errorf("nothing to trace: %v (exit %d)", err, exit.Code(err))
	}
}

func TestRunAssignmentShowAndDiff(t *testing.T) {
	t.Parallel()
	cd := trLabVolume(t)
	var out bytes.Buffer
	g, errb := runGlobals(t, &out, "--cluster-dir", cd, "-o", "json")
	if err := runAssignmentShow(context.Background(), g, assignmentShowOptions{groups: []string{"extra-group"}}); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var s struct {
		KnownGroups int `json:"knownGroups"`
		ExtraGroups int `json:"extraGroups"`
		Brokers     []struct {
			ID string `json:"id"`
		} `json:"brokers"`
	}
	if err := json.Unmarshal(out.Bytes(), &s); err != nil || s.KnownGroups != 4 || s.ExtraGroups != 1 || len(s.Brokers) == 0 {
		t.Errorf("show: %v %+v", err, s)
	}

	h := filepath.Join(trLabCopy, "assignment-history")
	out.Reset()
	o := assignmentDiffOptions{files: []string{filepath.Join(h, "assignment-e0-v2-090803.json"), filepath.Join(h, "assignment-e0-v3-090836.json")},
		groups: []string{"g-alpha", "g-delta", "lab-group"}, exitCode: true}
	if err := runAssignmentDiff(context.Background(), g, o); exit.Code(err) != exit.Problems {
		t.Errorf("diff --exit-code: %v (exit %d)", err, exit.Code(err))
	}
	var d struct {
		Moves []struct{ Key string } `json:"moves"`
	}
	if err := json.Unmarshal(out.Bytes(), &d); err != nil || len(d.Moves) == 0 {
		t.Errorf("diff: %v %+v", err, d)
	}
	// Swapped: still compared, with a warning that OLD is newer.
	o.files[0], o.files[1], o.exitCode = o.files[1], o.files[0], false
	if err := runAssignmentDiff(context.Background(), g, o); err != nil || !strings.Contains(errb.String(), "is newer than NEW") {
		t.Errorf("swapped: %v %s", err, errb.String())
	}
	// No file: the volume's, audited.
	out.Reset()
	if err := runAssignmentDiff(context.Background(), g, assignmentDiffOptions{}); err != nil {
		t.Fatal(err)
	}
	var a views.AssignmentAuditView
	if err := json.Unmarshal(out.Bytes(), &a); err != nil || a.Assignment.AssignmentVersion != 3 {
		t.Errorf("audit: %v %+v", err, a)
	}
}
