package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitFile waits for path to exist (a guard against hangs, not a timing
// assertion).
func trWaitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Errorf("%s never appeared", path)
}

// waitStderr waits until what a running command wrote to stderr after its
// first n bytes contains want (a guard against hangs, not a timing
// assertion).
func waitStderr(t *testing.T, errb *lockedBuffer, n int, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errb.String()[n:], want) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never reported on stderr after byte %d:\n%s", want, n, errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWatchStreamsMovesAndJournal(t *testing.T) {
	t.Parallel()
	hist := filepath.Join(trLabCopy, "assignment-history")
	read := func(n string) []byte {
		b, err := os.ReadFile(filepath.Join(hist, n))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	v1, v2, v3 := read("assignment-e0-v1-090757.json"), read("assignment-e0-v2-090803.json"), read("assignment-e0-v3-090836.json")
	// A failover: epoch 1, written by skafka-2, skafka-0 gone.
	v4 := []byte(`{"controllerEpoch":1,"assignmentVersion":1,"generatedAt":"2026-11-29T09:09:10Z","controller":"skafka-2","brokers":[{"id":"skafka-2","health":"alive","lastSeen":"2026-11-29T09:09:10Z"}],"partitions":[]}`)

	cd := t.TempDir()
	journal := filepath.Join(t.TempDir(), "journal")
	path := filepath.Join(cd, "assignment.json")
	if err := os.WriteFile(path, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"kaasctl", "watch", "--cluster-dir", cd, "--journal", journal, "--poll-interval", "20ms", "--count", "4", "--timeout", "60s",
			"-g", "lab-group", "-g", "g-alpha", "-g", "g-beta", "-g", "g-gamma", "-g", "g-delta", "-o", "jsonl"},
			&IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	}()
	trWaitFile(t, filepath.Join(journal, "assignment-e0-v1.json"))
	// Replaced by rename, like the controller does.
	os.WriteFile(path+".tmp", v2, 0o644)
	os.Rename(path+".tmp", path)
	trWaitFile(t, filepath.Join(journal, "assignment-e0-v2.json"))
	// Half-written in place (reported, never a version), then complete.
	n := len(errb.String())
	os.WriteFile(path, v3[:len(v3)/3], 0o644)
	waitStderr(t, &errb, n, "half-written")
	os.WriteFile(path, v3, 0o644)
	trWaitFile(t, filepath.Join(journal, "assignment-e0-v3.json"))
	// Missing, then back after a failover.
	n = len(errb.String())
	os.Remove(path)
	waitStderr(t, &errb, n, "missing")
	os.WriteFile(path+".tmp", v4, 0o644)
	os.Rename(path+".tmp", path)
	var code int
	select {
	case code = <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("watch did not stop")
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var events []struct {
		Group, From, To, Cause, Evidence string
		AssignmentVersion                int64
		ControllerEpoch                  int64
	}
	for _, ln := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e struct {
			Group, From, To, Cause, Evidence string
			AssignmentVersion                int64
			ControllerEpoch                  int64
		}
		if err := json.Unmarshal([]byte(ln), &e); err != nil {
			t.Fatalf("%v: %q", err, ln)
		}
		events = append(events, e)
	}
	// v1→v2: 3 moves, v2→v3: 5, v3→e1v1: every group not already on
	// skafka-2 moves there (lab-group, g-gamma; entries retired).
	count := map[int64]int{}
	for _, e := range events {
		count[e.ControllerEpoch*100+e.AssignmentVersion]++
		if e.Evidence != "assignment" || e.Cause == "" {
			t.Errorf("event %+v", e)
		}
		if e.ControllerEpoch == 1 && (e.To != "skafka-2" || e.Cause != "broker_left") {
			t.Errorf("failover event %+v", e)
		}
	}
	if count[2] != 3 || count[3] != 5 || count[101] != 2 {
		t.Errorf("moves per version %v; events %+v", count, events)
	}
	ents, _ := os.ReadDir(journal)
	if len(ents) != 4 {
		t.Errorf("journal has %d files", len(ents))
	}
	if !strings.Contains(errb.String(), "missing") {
		t.Errorf("missing file not reported: %s", errb.String())
	}
	// The journal feeds takeover trace: same moves.
	tout, terr, tcode := trRun(t, "", "takeover", "trace", "--journal", journal, "-g", "lab-group", "-g", "g-alpha", "-g", "g-beta", "-g", "g-gamma", "-g", "g-delta", "-o", "jsonl")
	if tcode != 0 || strings.Count(tout, "\n") != len(events) {
		t.Errorf("trace of the journal: exit %d, %d events, want %d: %s", tcode, strings.Count(tout, "\n"), len(events), terr)
	}

	// Broker logs beside the journal: kubectl-prefixed Rust JSON from the
	// new coordinator confirms one move; a Rust text line (gzip would do
	// too) dates the failover version.
	logs := filepath.Join(t.TempDir(), "logs")
	os.MkdirAll(logs, 0o755)
	os.WriteFile(filepath.Join(logs, "all.log"), []byte(
		`[pod/skafka-0/kaas] {"timestamp":"2026-11-29T09:08:36.100000Z","level":"INFO","fields":{"message":"group coordinator change","group":"lab-group","from":"skafka-1","to":"skafka-0","assignment_version":3,"side":"gained"},"target":"kaas_broker::group_takeover"}`+"\n"+
			`[pod/skafka-2/kaas] 2026-11-29T09:09:09.900000Z  INFO kaas_controller::kube_election: controller lease acquired epoch=1 identity=skafka-2`+"\n"), 0o644)
	tout, terr, tcode = trRun(t, "", "takeover", "trace", "--journal", journal, "--logs", logs, "-g", "lab-group", "-o", "json")
	if tcode != 0 {
		t.Fatalf("trace with logs: exit %d %s", tcode, terr)
	}
	var tr trTraceJSON
	if err := json.Unmarshal([]byte(tout), &tr); err != nil {
		t.Fatal(err)
	}
	var confirmed bool
	for _, e := range tr.Events {
		if e.Group == "lab-group" && e.AssignmentVersion == 3 {
			confirmed = e.Evidence == "both"
		}
	}
	if !confirmed {
		t.Errorf("lab-group's move at v3 not confirmed by the log: %+v", tr.Events)
	}
	var leaseNote bool
	for _, v := range tr.Versions {
		for _, n := range v.Notes {
			leaseNote = leaseNote || strings.Contains(n.Text, "lease acquired by skafka-2")
		}
	}
	if !leaseNote {
		t.Errorf("failover lease line not attached: %+v", tr.Versions)
	}
}

func TestWatchOnceAndUsage(t *testing.T) {
	t.Parallel()
	cd := trLabVolume(t)
	out, errOut, code := trRun(t, "", "watch", "--cluster-dir", cd, "--once", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	var v struct {
		KnownGroups  int `json:"knownGroups"`
		Coordinators []struct {
			Broker string
			Groups int
		} `json:"coordinators"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.KnownGroups != 3 || len(v.Coordinators) != 2 {
		t.Errorf("once: %v %+v", err, v)
	}
	out, _, _ = trRun(t, "", "watch", "--cluster-dir", cd, "--once")
	if !strings.Contains(out, "epoch 0 v3") {
		t.Errorf("once table: %s", out)
	}
	// Journal at the data-dir root: refused (exit 4).
	data := t.TempDir()
	os.MkdirAll(filepath.Join(data, "__cluster"), 0o755)
	os.WriteFile(filepath.Join(data, "__cluster", "assignment.json"), []byte(`{"brokers":[],"partitions":[]}`), 0o644)
	if _, errOut, code := trRun(t, "", "watch", "--data-dir", data, "--journal", filepath.Join(data, "journal"), "--once"); code != 4 {
		t.Errorf("journal at root: exit %d %s", code, errOut)
	}
	// Nothing to watch: usage.
	if _, _, code := trRun(t, "", "watch"); code != 2 {
		t.Errorf("no volume: exit %d", code)
	}
	// Missing file with --once: error naming it.
	if _, errOut, code := trRun(t, "", "watch", "--assignment", filepath.Join(cd, "nope.json"), "--once"); code != 1 || !strings.Contains(errOut, "nope.json") {
		t.Errorf("missing: exit %d %s", code, errOut)
	}
	// A file that never becomes readable: the timeout ends the watch, exit 1.
	bad := filepath.Join(t.TempDir(), "assignment.json")
	os.WriteFile(bad, []byte(`{"controllerEpoch":`), 0o644)
	_, errOut, code = trRun(t, "", "watch", "--assignment", bad, "--timeout", "100ms", "--poll-interval", "20ms")
	if code != 1 || !strings.Contains(errOut, "half-written") {
		t.Errorf("never readable: exit %d %s", code, errOut)
	}
}
