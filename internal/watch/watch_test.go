package watch

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func asgJSON(epoch, version int, brokers ...string) []byte {
	var bs []string
	for _, b := range brokers {
		bs = append(bs, fmt.Sprintf(`{"id":%q,"health":"alive","lastSeen":"2026-07-23T11:40:02Z"}`, b))
	}
	return fmt.Appendf(nil, `{"controllerEpoch":%d,"assignmentVersion":%d,"generatedAt":"2026-07-23T11:40:%02dZ","controller":"kaas-0","brokers":[%s],"partitions":[]}`,
		epoch, version, version%60, strings.Join(bs, ","))
}

// replace writes like kaas's controller: tmp file, then rename.
func replace(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Error(err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Error(err)
	}
}

type recorder struct {
	mu       sync.Mutex
	versions []string
	problems []string
	seen     chan string
}

func (r *recorder) onVersion(v Version) {
	r.mu.Lock()
	k := fmt.Sprintf("e%d-v%d", v.Assignment.ControllerEpoch, v.Assignment.AssignmentVersion)
	if v.Rewritten {
		k += "-rewritten"
	}
	r.versions = append(r.versions, k)
	r.mu.Unlock()
	r.seen <- k
}

func (r *recorder) onProblem(msg string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ok {
		msg = "ok"
	}
	r.problems = append(r.problems, msg)
}

// waitFor waits until the watcher reports want (a deadline only guards
// against a hang; nothing here asserts on timing).
func waitFor(t *testing.T, r *recorder, want string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case got := <-r.seen:
			if got == want {
				return
			}
		case <-deadline:
			t.Fatalf("never saw %s; versions %v problems %v", want, r.versions, r.problems)
		}
	}
}

func runWatch(t *testing.T, pollOnly bool) {
	dir := t.TempDir()
	path := filepath.Join(dir, "assignment.json")
	r := &recorder{seen: make(chan string, 100)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Path: path, PollInterval: 20 * time.Millisecond, FullReadEvery: 3, PollOnly: pollOnly,
			OnVersion: r.onVersion, OnProblem: r.onProblem})
	}()
	// The file does not exist yet: reported as missing; then a torn file
	// (reported as half-written, never as a version); then the real one.
	waitProblem(t, r, "missing")
	torn := asgJSON(1, 1, "kaas-0")
	replace(t, path, torn[:len(torn)-9])
	waitProblem(t, r, "half-written")
	replace(t, path, asgJSON(1, 1, "kaas-0"))
	waitFor(t, r, "e1-v1")
	// Replaced by rename.
	replace(t, path, asgJSON(1, 2, "kaas-0", "kaas-1"))
	waitFor(t, r, "e1-v2")
	// Half-written in place (a writer without tmp+rename), then completed.
	full := asgJSON(1, 3, "kaas-0")
	n := r.problemCount()
	if err := os.WriteFile(path, full[:len(full)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	// The torn file is reported (and never becomes a version) before the
	// complete one is written.
	waitProblemAfter(t, r, n, "half-written")
	if err := os.WriteFile(path, full, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r, "e1-v3")
	// Missing for a while, then back with a failover.
	n = r.problemCount()
	os.Remove(path)
	waitProblemAfter(t, r, n, "missing")
	replace(t, path, asgJSON(2, 1, "kaas-1"))
	waitFor(t, r, "e2-v1")
	// Same version, different bytes.
	replace(t, path, asgJSON(2, 1, "kaas-1", "kaas-2"))
	waitFor(t, r, "e2-v1-rewritten")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{"e1-v1", "e1-v2", "e1-v3", "e2-v1", "e2-v1-rewritten"}
	if strings.Join(r.versions, ",") != strings.Join(want, ",") {
		t.Errorf("versions %v, want %v", r.versions, want)
	}
	if r.problems[len(r.problems)-1] != "ok" {
		t.Errorf("problems %v: last should be readable again", r.problems)
	}
}

func (r *recorder) problemCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.problems)
}

func waitProblem(t *testing.T, r *recorder, prefix string) {
	t.Helper()
	waitProblemAfter(t, r, 0, prefix)
}

// waitProblemAfter waits for a problem starting with prefix among those
// reported after the first n (a deadline only guards against a hang).
func waitProblemAfter(t *testing.T, r *recorder, n int, prefix string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for _, p := range r.problems[min(n, len(r.problems)):] {
			if strings.HasPrefix(p, prefix) {
				r.mu.Unlock()
				return
			}
		}
		r.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t.Fatalf("problem %q never reported after the first %d: %v", prefix, n, r.problems)
}

func TestWatchNotify(t *testing.T)   { runWatch(t, false) }
func TestWatchPollOnly(t *testing.T) { runWatch(t, true) }

func TestJournal(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "journal")
	j := &Journal{Dir: dir}
	a := asgJSON(3, 7, "kaas-0")
	p, err := j.Write(3, 7, a, sha256.Sum256(a))
	if err != nil || filepath.Base(p) != "assignment-e3-v7.json" {
		t.Fatalf("%s %v", p, err)
	}
	// Same content again: no new file.
	if p2, _ := j.Write(3, 7, a, sha256.Sum256(a)); p2 != p {
		t.Errorf("duplicate written to %s", p2)
	}
	b := asgJSON(3, 7, "kaas-1")
	p3, err := j.Write(3, 7, b, sha256.Sum256(b))
	if err != nil || p3 == p || !strings.HasPrefix(filepath.Base(p3), "assignment-e3-v7-") {
		t.Errorf("conflict: %s %v", p3, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("journal holds %d files (tmp files left?)", len(ents))
	}
	got, _ := os.ReadFile(p)
	if string(got) != string(a) {
		t.Errorf("content %s", got)
	}
}

func TestCheckJournalDir(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	// Where the operator's sweep deletes it: refused.
	for _, bad := range []string{data, filepath.Join(data, "journal"), filepath.Join(data, "kaasctl", "journal"),
		filepath.Join(data, "orders", "journal"), filepath.Join(data, ".deleting-x", "journal"), filepath.Join(data, "a", "..", "journal")} {
		if _, err := CheckJournalDir(bad, data); err == nil || !strings.Contains(err.Error(), "outside the kaas volume") {
			t.Errorf("%s accepted: %v", bad, err)
		}
	}
	// Kept by the sweep, but on kaas's disk: a warning.
	for _, warn := range []string{filepath.Join(data, ".kaasctl-journal"), filepath.Join(data, "__cluster", "journal")} {
		if w, err := CheckJournalDir(warn, data); err != nil || !strings.Contains(w, "outside the kaas volume") {
			t.Errorf("%s: %q %v", warn, w, err)
		}
	}
	// A link into the data dir is where it points.
	link := filepath.Join(t.TempDir(), "j")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckJournalDir(filepath.Join(link, "journal"), data); err == nil {
		t.Error("a link into the data-dir root accepted")
	}
	if w, err := CheckJournalDir(t.TempDir(), data); err != nil || w != "" {
		t.Errorf("outside: %q %v", w, err)
	}
}
