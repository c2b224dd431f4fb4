package commands

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/labdata"
)

type trTraceJSON struct {
	Sources struct {
		Snapshots int `json:"snapshots"`
		LogStats  struct {
			Lines int `json:"lines"`
		} `json:"logStats"`
	} `json:"sources"`
	Versions []struct {
		AssignmentVersion int64 `json:"assignmentVersion"`
		Notes             []struct {
			Text string `json:"text"`
		} `json:"notes"`
	} `json:"versions"`
	Events []struct {
		Time              string `json:"time"`
		Group             string `json:"group"`
		From              string `json:"from"`
		To                string `json:"to"`
		AssignmentVersion int64  `json:"assignmentVersion"`
		ControllerEpoch   int64  `json:"controllerEpoch"`
		Cause             string `json:"cause"`
		Evidence          string `json:"evidence"`
	} `json:"events"`
	Initial []struct {
		Group, Coordinator string
	} `json:"initial"`
	Groups int `json:"groups"`
}

// TestTakeoverTraceLab runs the command on the lab capture and checks,
// for every group, that replaying the trace gives the coordinator the
// brokers answered to FindCoordinator in each phase.
func TestTakeoverTraceLab(t *testing.T) {
	t.Parallel()
	dir, err := labdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := labdata.FindCoordinator(filepath.Join(dir, "phase1-steady-3-brokers", "api-findcoordinator.txt"))
	p2, _ := labdata.FindCoordinator(filepath.Join(dir, "phase2-after-kill9-skafka-1", "api-findcoordinator.txt"))
	args := []string{"takeover", "trace", "--assignments", filepath.Join(dir, "assignment-history"), "--logs", filepath.Join(dir, "logs"), "-o", "json"}
	for g := range p1 {
		args = append(args, "--group", g)
	}
	out, errOut, code := trRun(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var tr trTraceJSON
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if tr.Sources.Snapshots != 3 || tr.Groups != 5 || tr.Sources.LogStats.Lines != 31 {
		t.Fatalf("sources %+v groups %d", tr.Sources, tr.Groups)
	}
	cur := map[string]string{}
	for _, p := range tr.Initial {
		cur[p.Group] = p.Coordinator
	}
	at := map[int64]map[string]string{}
	for _, v := range []int64{1, 2, 3} {
		for _, e := range tr.Events {
			if e.AssignmentVersion == v {
				if cur[e.Group] != e.From {
					t.Errorf("v%d %s: moves from %s but was on %s", v, e.Group, e.From, cur[e.Group])
				}
				cur[e.Group] = e.To
			}
		}
		at[v] = map[string]string{}
		for g, c := range cur {
			at[v][g] = c
		}
	}
	for g := range p1 {
		if at[2][g] != p1[g] || at[3][g] != p2[g] {
			t.Errorf("%s: trace v2 %s v3 %s, FindCoordinator phase1 %s phase2 %s", g, at[2][g], at[3][g], p1[g], p2[g])
		}
	}
	for _, e := range tr.Events {
		if e.Time == "" || e.Cause == "" || e.Evidence != "assignment" {
			t.Errorf("event %+v", e)
		}
	}

	// --placements states it directly: every group's coordinator per version.
	out, _, code = trRun(t, "", append(args, "--placements")...)
	var pv struct {
		Versions []struct {
			AssignmentVersion int64 `json:"assignmentVersion"`
			Placements        []struct {
				Group, Coordinator string
			} `json:"placements"`
		} `json:"versions"`
	}
	if err := json.Unmarshal([]byte(out), &pv); err != nil || code != 0 {
		t.Fatalf("placements: %v exit %d", err, code)
	}
	phase := map[int64]map[string]string{2: p1, 3: p2}
	checked := 0
	for _, v := range pv.Versions {
		want, ok := phase[v.AssignmentVersion]
		if !ok {
			continue
		}
		for _, pl := range v.Placements {
			checked++
			if want[pl.Group] != pl.Coordinator {
				t.Errorf("v%d %s: placement %s, FindCoordinator %s", v.AssignmentVersion, pl.Group, pl.Coordinator, want[pl.Group])
			}
		}
	}
	if checked != 10 {
		t.Errorf("checked %d placements, want 10", checked)
	}
}

func TestTakeoverTraceGoldenAndFormats(t *testing.T) {
	t.Parallel()
	hist := filepath.Join(trLabCopy, "assignment-history")
	logs := filepath.Join(trLabCopy, "logs")
	base := []string{"takeover", "trace", hist, "--logs", logs, "-g", "lab-group", "-g", "g-alpha", "-g", "g-beta", "-g", "g-gamma", "-g", "g-delta"}
	out, errOut, code := trRun(t, "", base...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "takeover-trace-lab.txt", out)
	out, _, _ = trRun(t, "", append(base, "-o", "wide")...)
	golden(t, "takeover-trace-lab-wide.txt", out)
	out, _, _ = trRun(t, "", append(base, "-o", "csv")...)
	golden(t, "takeover-trace-lab.csv", out)
	out, _, _ = trRun(t, "", append(base, "-o", "jsonl")...)
	if n := len(strings.Split(strings.TrimSpace(out), "\n")); n != 8 {
		t.Errorf("jsonl: %d events:\n%s", n, out)
	}
	out, _, code = trRun(t, "", append(base, "-o", "yaml")...)
	if code != 0 || !strings.Contains(out, "events:") {
		t.Errorf("yaml: %d\n%s", code, out)
	}
	// A glob and a time window: only g-* moves at v3.
	out, _, _ = trRun(t, "", "takeover", "trace", hist, "-g", "g-*", "-g", "g-alpha", "-g", "g-delta", "--since", "2026-11-29T09:08:30Z", "-o", "json")
	var tr trTraceJSON
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatal(err)
	}
	for _, e := range tr.Events {
		if e.AssignmentVersion != 3 || !strings.HasPrefix(e.Group, "g-") {
			t.Errorf("filtered event %+v", e)
		}
	}
	if len(tr.Events) != 4 {
		t.Errorf("want 4 events (g-alpha, g-beta, g-delta, g-gamma at v3), got %+v", tr.Events)
	}
}

func TestTakeoverTraceStdinAndGarbage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A log with garbage around a Rust text line, fed on stdin with --broker.
	stdin := "\x00\x01binary controller junk\n" +
		`{"timestamp":"2026-07-23T11:40:0` + "\n" +
		"[pod/kaas-1/kaas] 2026-07-23T11:40:02.123456Z  INFO kaas_broker::group_takeover: group coordinator change group=orders from=kaas-0 to=kaas-1 assignment_version=58 side=gained\n"
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello\nworld\n"), 0o644)
	out, errOut, code := trRun(t, stdin, "takeover", "trace", "--logs", "-", "--logs", filepath.Join(dir, "notes.txt"), "--broker", "kaas-9", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var tr trTraceJSON
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != 1 || tr.Events[0].Group != "orders" || tr.Events[0].Evidence != "log" || tr.Events[0].To != "kaas-1" {
		t.Errorf("events %+v", tr.Events)
	}
	for _, want := range []string{"notes.txt: no line in a known kaas log format", "lines skipped"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q: %s", want, errOut)
		}
	}
}

func TestTakeoverTraceUsage(t *testing.T) {
	t.Parallel()
	if _, _, code := trRun(t, "", "takeover", "trace"); code != 2 {
		t.Errorf("no inputs: exit %d, want 2", code)
	}
	if _, errOut, code := trRun(t, "", "takeover", "trace", trLabCopy+"/assignment-history", "--since", "yesterday"); code != 2 || !strings.Contains(errOut, "--since") {
		t.Errorf("bad --since: exit %d %s", code, errOut)
	}
	if _, _, code := trRun(t, "", "takeover", "trace", trLabCopy+"/assignment-history", "--since", "1h", "--until", "2h"); code != 2 {
		t.Errorf("until before since: exit %d", code)
	}
	// Only unreadable sources: error, with the files named.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.json"), []byte(`{"brokers":[`), 0o644)
	_, errOut, code := trRun(t, "", "takeover", "trace", dir)
	if code != 1 || !strings.Contains(errOut, "a.json") {
		t.Errorf("unreadable: exit %d %s", code, errOut)
	}
	// A volume: the live file joins the history (duplicate of v3 dropped).
	cd := trLabVolume(t)
	out, errOut, code := trRun(t, "", "takeover", "trace", "--cluster-dir", cd, "--assignments", trLabCopy+"/assignment-history", "-o", "json")
	if code != 0 {
		t.Fatalf("volume: exit %d %s", code, errOut)
	}
	var tr trTraceJSON
	json.Unmarshal([]byte(out), &tr)
	if tr.Sources.Snapshots != 3 || tr.Groups != 3 {
		t.Errorf("volume trace: snapshots %d groups %d", tr.Sources.Snapshots, tr.Groups)
	}
}

// Without a volume, hash-tier groups are unknown by name: the trace says so
// and points to --data-dir / --group, unless groups were named.
func TestTakeoverTraceHintWithoutVolume(t *testing.T) {
	t.Parallel()
	hist := filepath.Join(trLabCopy, "assignment-history")
	_, errOut, code := trRun(t, "", "takeover", "trace", hist)
	if code != 0 || !strings.Contains(errOut, "hint: no volume given") || !strings.Contains(errOut, "--data-dir") || !strings.Contains(errOut, "--group") {
		t.Errorf("no hint without a volume: %d %q", code, errOut)
	}
	// The moves shown are of the groups followed (hash-tier ones named in
	// logs included): the hint must not say such moves are not shown.
	out, errOut, _ := trRun(t, "", "takeover", "trace", hist, "-o", "json")
	var tr trTraceJSON
	if err := json.Unmarshal([]byte(out), &tr); err != nil || len(tr.Events) == 0 {
		t.Fatalf("the lab history shows no moves (%v): %s", err, out)
	}
	if strings.Contains(errOut, "are not shown") || !strings.Contains(errOut, fmt.Sprintf("the %d groups followed", tr.Groups)) || !strings.Contains(errOut, "moves shown above included") {
		t.Errorf("the hint contradicts the moves shown: %q", errOut)
	}
	// A history where nothing named moves: the hint qualifies "no moves".
	dir := t.TempDir()
	for v := 1; v <= 2; v++ {
		writeFile(t, dir, fmt.Sprintf("a-%d.json", v), fmt.Sprintf(`{"controllerEpoch":1,"assignmentVersion":%d,"controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"},{"id":"kaas-1","health":"%s"}],"partitions":[]}`, v, map[int]string{1: "alive", 2: "dead"}[v]))
	}
	_, errOut, _ = trRun(t, "", "takeover", "trace", "--journal", dir)
	if !strings.Contains(errOut, "'no coordinator moves' covers only the 0 groups named") {
		t.Errorf("no qualified hint: %q", errOut)
	}
	// Named groups: no hint.
	_, errOut, _ = trRun(t, "", "takeover", "trace", hist, "-g", "g-alpha")
	if strings.Contains(errOut, "hint:") {
		t.Errorf("hint despite --group: %q", errOut)
	}
}

// Every time flag reads the same forms: takeover trace's --since takes what
// offsets history's does.
func TestTimeFlagsShareOneGrammar(t *testing.T) {
	t.Parallel()
	hist := trLabCopy + "/assignment-history"
	for _, since := range []string{"2026-11-29T09:08:30Z", "2026-11-29T10:08:30+01:00", "2026-11-29", "1795000000", "1795000000000", "90m", "1d", "PT30M"} {
		if _, errOut, code := trRunAt(t, "", "takeover", "trace", hist, "--since", since, "-o", "json"); code != 0 {
			t.Errorf("--since %s: exit %d: %s", since, code, errOut)
		}
	}
	if _, errOut, code := trRunAt(t, "", "takeover", "trace", hist, "--since", "2026-11-29T09:08:30"); code != 0 || !strings.Contains(errOut, "UTC") {
		t.Errorf("a time without a zone is read as UTC and said so: exit %d %q", code, errOut)
	}
}
