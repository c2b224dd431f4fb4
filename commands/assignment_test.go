package commands

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/labdata"
)

// trRun adapts runCLI to the (stdout, stderr, code) triple these tests
// read.
func trRun(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	r := runCLI(t, stdin, nil, args...)
	return r.Out, r.Err, r.Code
}

// The repository's fixed copy of the lab capture, for golden output.
const trLabCopy = "../testdata/lab/lab-go-kaas"

// trLabNow is a clock pinned just after the lab capture, for stable ages.
func trLabNow() time.Time { return time.Date(2026, 11, 29, 9, 10, 0, 0, time.UTC) }

// trRunAt is trRun with the clock pinned at trLabNow.
func trRunAt(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	r := runCLIAt(t, trLabNow, stdin, nil, args...)
	return r.Out, r.Err, r.Code
}

// labVolume builds a cluster dir with the phase-2 assignment and offset
// files for the three groups the lab consumers committed.
func trLabVolume(t *testing.T) string {
	t.Helper()
	cd := t.TempDir()
	data, err := os.ReadFile(filepath.Join(trLabCopy, "phase2-after-kill9-skafka-1", "assignment.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cd, "assignment.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	od := filepath.Join(cd, "__consumer_offsets")
	if err := os.MkdirAll(od, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"lab-group", "g-beta", "g-gamma"} {
		if err := os.WriteFile(filepath.Join(od, g+".json"), []byte(`{"offsets":{"lab-events/0":17}}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Ignored: a stray tmp and a subdirectory.
	os.WriteFile(filepath.Join(od, "lab-group.json.tmp"), []byte("{"), 0o644)
	os.MkdirAll(filepath.Join(od, "a"), 0o755)
	return cd
}

func TestAssignmentShow(t *testing.T) {
	t.Parallel()
	cd := trLabVolume(t)
	out, errOut, code := trRunAt(t, "", "assignment", "show", "--cluster-dir", cd)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "assignment-show.txt", strings.ReplaceAll(out, cd, "CD"))
	for _, want := range []string{"skafka-0", "skafka-2", "3 offset files", "explicit 1, hash 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	out, _, code = trRunAt(t, "", "assignment", "show", "--cluster-dir", cd, "-o", "json")
	if code != 0 {
		t.Fatal(code)
	}
	var v struct {
		AssignmentVersion int64 `json:"assignmentVersion"`
		KnownGroups       int   `json:"knownGroups"`
		Brokers           []struct {
			ID             string `json:"id"`
			Partitions     int    `json:"partitions"`
			Groups         int    `json:"groups"`
			ExplicitGroups int    `json:"explicitGroups"`
			HashGroups     int    `json:"hashGroups"`
		} `json:"brokers"`
		Findings []any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if v.AssignmentVersion != 3 || v.KnownGroups != 3 || len(v.Brokers) != 2 || v.Findings == nil {
		t.Fatalf("json view: %+v", v)
	}
	// lab-group hashes to skafka-0 with 2 brokers; g-gamma is explicit on
	// skafka-0, g-beta explicit on skafka-2.
	if b := v.Brokers[0]; b.ID != "skafka-0" || b.Partitions != 3 || b.Groups != 2 || b.ExplicitGroups != 1 || b.HashGroups != 1 {
		t.Errorf("skafka-0: %+v", b)
	}
	if b := v.Brokers[1]; b.ID != "skafka-2" || b.Groups != 1 || b.ExplicitGroups != 1 {
		t.Errorf("skafka-2: %+v", b)
	}

	// --assignment FILE without a volume; csv has every column.
	out, _, code = trRunAt(t, "", "assignment", "show", "--assignment", filepath.Join(trLabCopy, "assignment-history", "assignment-e0-v2-090803.json"), "-o", "csv")
	if code != 0 {
		t.Fatal(code)
	}
	golden(t, "assignment-show-v2.csv", out)

	// Missing file: exit 1 naming the file.
	_, errOut, code = trRunAt(t, "", "assignment", "show", "--assignment", filepath.Join(cd, "nope.json"))
	if code != 1 || !strings.Contains(errOut, "nope.json") {
		t.Errorf("missing file: exit %d, %q", code, errOut)
	}
	// No volume at all: usage.
	if _, _, code = trRunAt(t, "", "assignment", "show"); code != 2 {
		t.Errorf("no volume: exit %d, want 2", code)
	}
}

func TestAssignmentDiffTwoFiles(t *testing.T) {
	t.Parallel()
	h := filepath.Join(trLabCopy, "assignment-history")
	v2 := filepath.Join(h, "assignment-e0-v2-090803.json")
	v3 := filepath.Join(h, "assignment-e0-v3-090836.json")
	args := []string{"assignment", "diff", v2, v3, "--group", "g-alpha", "--group", "g-delta", "--group", "lab-group"}
	out, errOut, code := trRun(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "assignment-diff-v2-v3.txt", out)

	out, _, code = trRun(t, "", append(args, "-o", "json", "--exit-code")...)
	if code != 3 {
		t.Errorf("--exit-code with differences: exit %d, want 3", code)
	}
	var d struct {
		Moves []struct {
			Key, From, To, Cause string
		} `json:"moves"`
		Brokers []struct{ ID, Change string }    `json:"brokers"`
		Entries []struct{ Group, Change string } `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(d.Moves) != 5 || len(d.Brokers) != 1 || len(d.Entries) != 2 {
		t.Fatalf("diff json: %+v", d)
	}

	// Same file twice: no differences, exit 0 even with --exit-code.
	if _, _, code = trRun(t, "", "assignment", "diff", v3, v3, "--exit-code"); code != 0 {
		t.Errorf("identical files: exit %d", code)
	}
	// jsonl streams moves.
	out, _, _ = trRun(t, "", append(args, "-o", "jsonl")...)
	if n := strings.Count(strings.TrimSpace(out), "\n") + 1; n != 5 {
		t.Errorf("jsonl: %d lines:\n%s", n, out)
	}
	// With a volume, its offset files name the groups to check.
	out, _, code = trRun(t, "", "assignment", "diff", v2, v3, "--cluster-dir", trLabVolume(t), "-o", "json")
	var dv struct {
		GroupsChecked int                    `json:"groupsChecked"`
		Moves         []struct{ Key string } `json:"moves"`
	}
	if err := json.Unmarshal([]byte(out), &dv); err != nil || code != 0 {
		t.Fatalf("volume diff: %v exit %d", err, code)
	}
	if dv.GroupsChecked != 3 || len(dv.Moves) != 3 {
		t.Errorf("volume diff: %+v", dv)
	}
	// Too many args.
	if _, _, code = trRun(t, "", "assignment", "diff", v2, v3, v3); code != 2 {
		t.Errorf("three files: exit %d, want 2", code)
	}
}

// TestAssignmentDiffLabAcceptance: diffing consecutive versions of the lab
// history, with the groups the lab's clients asked about, names exactly the
// groups whose FindCoordinator answer changed between the phases.
func TestAssignmentDiffLabAcceptance(t *testing.T) {
	t.Parallel()
	dir, err := labdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := labdata.FindCoordinator(filepath.Join(dir, "phase1-steady-3-brokers", "api-findcoordinator.txt"))
	p2, _ := labdata.FindCoordinator(filepath.Join(dir, "phase2-after-kill9-skafka-1", "api-findcoordinator.txt"))
	args := []string{"assignment", "diff", filepath.Join(dir, "assignment-history", "assignment-e0-v2-090803.json"),
		filepath.Join(dir, "assignment-history", "assignment-e0-v3-090836.json"), "-o", "json"}
	for g := range p1 {
		args = append(args, "--group", g)
	}
	out, errOut, code := trRun(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d struct {
		Moves []struct{ Key, From, To string } `json:"moves"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	moved := map[string]bool{}
	for _, m := range d.Moves {
		moved[m.Key] = true
		if p1[m.Key] != m.From || p2[m.Key] != m.To {
			t.Errorf("%s: %s → %s, FindCoordinator said %s then %s", m.Key, m.From, m.To, p1[m.Key], p2[m.Key])
		}
	}
	for g := range p1 {
		if (p1[g] != p2[g]) != moved[g] {
			t.Errorf("%s: FindCoordinator %s → %s, diff moved=%v", g, p1[g], p2[g], moved[g])
		}
	}
	if len(moved) != 5 {
		t.Errorf("moved %v, want the 5 lab groups", moved)
	}
}

func TestAssignmentDiffAudit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	os.WriteFile(p, []byte(`{"controllerEpoch":2,"assignmentVersion":9,"generatedAt":"2026-07-23T11:40:02.120000000Z","controller":"kaas-0",
"brokers":[{"id":"kaas-0","health":"alive"},{"id":"kaas-1","health":"dead"},{"id":"kaas-2","health":"alive"}],"partitions":[],
"consumerGroups":[{"groupId":"orders","broker":"kaas-0","epoch":1},{"groupId":"billing","broker":"kaas-1","epoch":2},{"groupId":"ghost","broker":"kaas-7","epoch":1},{"groupId":"orders","broker":"kaas-2","epoch":1}]}`), 0o644)
	out, errOut, code := trRun(t, "", "assignment", "diff", p, "--exit-code")
	if code != 3 {
		t.Fatalf("exit %d, want 3: %s", code, errOut)
	}
	golden(t, "assignment-diff-audit.txt", strings.ReplaceAll(out, dir, "DIR"))
	out, _, _ = trRun(t, "", "assignment", "diff", "--cluster-dir", dir, "-o", "json")
	if !strings.Contains(out, `"no such`) && code == 0 {
		t.Log(out)
	}
	// Through the volume: the file is CD/assignment.json.
	os.Rename(p, filepath.Join(dir, "assignment.json"))
	out, errOut, code = trRun(t, "", "assignment", "diff", "--cluster-dir", dir, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		Counts  map[string]int `json:"counts"`
		Entries []struct {
			Group, Status string
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Entries) != 4 || v.Counts["deadBroker"] != 1 || v.Counts["unknownBroker"] != 1 || v.Counts["duplicate"] != 1 {
		t.Errorf("audit: %+v", v)
	}
}

func TestAssignmentDiffBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"trunc.json": `{"controllerEpoch":1,"brokers":[{"id":"k`,
		"null.json":  `null`,
		"empty.json": ``,
		"bin.json":   "\x00\x01\xff",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		_, errOut, code := trRun(t, "", "assignment", "diff", p, p)
		if code != 1 || !strings.Contains(errOut, name) {
			t.Errorf("%s: exit %d, stderr %q", name, code, errOut)
		}
		_, _, code = trRun(t, "", "assignment", "show", "--assignment", p)
		if code != 1 {
			t.Errorf("show %s: exit %d", name, code)
		}
	}
}

// Hostile group names (control characters, escapes, invalid UTF-8, 10 kB)
// reach the tables escaped and on one line, and intact in JSON.
func TestAssignmentHostileNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := strings.Repeat("x", 10000)
	names := []string{"evil\x1b[31m\nsecond line", "bad\xffutf8", "../x", "/abs", long}
	var entries []string
	for i, n := range names {
		b, _ := json.Marshal(n)
		entries = append(entries, fmt.Sprintf(`{"groupId":%s,"broker":"kaas-%d","epoch":1}`, b, i%2))
	}
	p := filepath.Join(dir, "a.json")
	os.WriteFile(p, []byte(`{"controllerEpoch":1,"assignmentVersion":2,"controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"},{"id":"kaas-1","health":"alive"}],"partitions":[],"consumerGroups":[`+strings.Join(entries, ",")+`]}`), 0o644)
	q := filepath.Join(dir, "b.json")
	os.WriteFile(q, []byte(`{"controllerEpoch":1,"assignmentVersion":3,"controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"}],"partitions":[]}`), 0o644)
	for _, args := range [][]string{{"assignment", "diff", p}, {"assignment", "diff", p, q}, {"takeover", "trace", p, q}, {"assignment", "show", "--assignment", p}} {
		out, errOut, code := trRun(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		if strings.Contains(out, "\x1b") || strings.Contains(out, "second line\n") || strings.Contains(out, long) {
			t.Errorf("%v: raw hostile name in the table:\n%s", args, out)
		}
	}
	out, _, _ := trRun(t, "", "assignment", "diff", p, "-o", "json")
	var d struct {
		Entries []struct{ Group string } `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Entries) != len(names) || d.Entries[0].Group != names[0] || d.Entries[4].Group != long {
		t.Errorf("json lost the exact names: %d entries", len(d.Entries))
	}
}
