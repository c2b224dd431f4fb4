package commands

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
)

var labPhases = []string{"phase1-steady-3-brokers", "phase2-after-kill9-skafka-1"}

// findCoordinatorAnswers parses api-findcoordinator.txt: group -> skafka-N,
// checking that every broker gave the same answer.
func findCoordinatorAnswers(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	re := regexp.MustCompile(`FindCoordinator\(([^)]*)\) via \S+ \(v\d+\): node=(\d+) .* err=0`)
	ans := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		node := "skafka-" + m[2]
		if prev, ok := ans[m[1]]; ok && prev != node {
			t.Fatalf("%s: brokers disagree on %s: %s vs %s", path, m[1], prev, node)
		}
		ans[m[1]] = node
	}
	if len(ans) == 0 {
		t.Fatalf("%s: no FindCoordinator answers parsed", path)
	}
	return ans
}

func TestWhoisMatchesLabFindCoordinator(t *testing.T) {
	t.Parallel()
	for _, phase := range labPhases {
		t.Run(phase, func(t *testing.T) {
			dir := repoTestdata("lab", "lab-go-kaas", phase)
			want := findCoordinatorAnswers(t, dir+"/api-findcoordinator.txt")
			var keys []string
			for k := range want {
				keys = append(keys, k)
			}
			r := runCLI(t, "", nil, append([]string{"whois-coordinator", "--data-dir", dir, "-o", "json"}, keys...)...)
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Err)
			}
			var got []inspect.WhoisResult
			if err := json.Unmarshal([]byte(r.Out), &got); err != nil {
				t.Fatalf("bad json: %v\n%s", err, r.Out)
			}
			if len(got) != len(keys) {
				t.Fatalf("%d results for %d keys", len(got), len(keys))
			}
			for _, g := range got {
				if g.Coordinator != want[g.Key] {
					t.Errorf("%s: whois says %s, brokers answered %s", g.Key, g.Coordinator, want[g.Key])
				}
			}
		})
	}
}

func TestWhoisTableGolden(t *testing.T) {
	t.Parallel()
	dir := repoTestdata("lab", "lab-go-kaas", "phase2-after-kill9-skafka-1")
	r := runCLI(t, "", nil, "whois", "lab-group", "g-beta", "g-gamma", "--data-dir", dir)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	golden(t, "whois-phase2.txt", r.Out)
	r = runCLI(t, "", nil, "whois", "-o", "wide", "--what-if-down", "skafka-2", "--data-dir", dir, "lab-group", "g-beta", "g-gamma")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	golden(t, "whois-whatif-wide.txt", r.Out)
}

func labCluster(t *testing.T) string {
	return repoTestdata("lab", "lab-go-kaas", "phase2-after-kill9-skafka-1")
}

func TestWhoisFieldsAndWarnings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "assignment.json", `{"controllerEpoch":2,"assignmentVersion":9,"generatedAt":"2026-07-23T11:40:02.120000000Z","controller":"kaas-1",
"brokers":[{"id":"kaas-0","health":"alive"},{"id":"kaas-1","health":"alive"},{"id":"kaas-2","health":"dead"}],"partitions":[],
"consumerGroups":[{"groupId":"on-dead","broker":"kaas-2","epoch":1},{"groupId":"on-ghost","broker":"kaas-9","epoch":1},{"groupId":"fine","broker":"kaas-0","epoch":3}]}`)
	r := runCLI(t, "", nil, "whois", "--cluster-dir", dir, "-o", "json", "on-dead", "on-ghost", "fine", "billing", "a/b")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(r.Out), &got); err != nil {
		t.Fatal(err)
	}
	by := map[string]map[string]any{}
	for _, g := range got {
		by[g["key"].(string)] = g
		for _, f := range []string{"key", "kind", "coordinator", "tier", "hashCoordinator", "preferred", "slot", "numBrokers", "warnings"} {
			if _, ok := g[f]; !ok {
				t.Errorf("%v: field %q missing", g["key"], f)
			}
		}
		if _, ok := g["warnings"].([]any); !ok {
			t.Errorf("%v: warnings must be an array, got %v", g["key"], g["warnings"])
		}
	}
	if d := by["on-dead"]; d["coordinator"] != "kaas-2" || d["tier"] != "explicit" || d["explicitBroker"] != "kaas-2" ||
		!strings.Contains(fmt.Sprint(d["warnings"]), "NOT_COORDINATOR") {
		t.Errorf("entry on a dead broker: %v", d)
	}
	if d := by["on-ghost"]; !strings.Contains(fmt.Sprint(d["warnings"]), "not in brokers[]") {
		t.Errorf("entry on an absent broker: %v", d)
	}
	if d := by["billing"]; d["tier"] == "explicit" || d["explicitBroker"] != nil || d["numBrokers"] != 3.0 {
		t.Errorf("hash-tier group: %v", d)
	}
	if d := by["a/b"]; !strings.Contains(fmt.Sprint(d["warnings"]), "contains '/'") {
		t.Errorf("hostile group id not flagged: %v", d)
	}
	// The fallback tier shows when the slot's broker is dead.
	found := false
	for i := 0; i < 200 && !found; i++ {
		k := fmt.Sprintf("grp-%d", i)
		r := runCLI(t, "", nil, "whois", "--cluster-dir", dir, "-o", "json", k)
		var res []inspect.WhoisResult
		json.Unmarshal([]byte(r.Out), &res)
		if res[0].Tier == "hash-fallback" {
			found = true
			if res[0].Preferred != "kaas-2" || res[0].Coordinator == "kaas-2" || len(res[0].Warnings) == 0 {
				t.Errorf("fallback answer: %+v", res[0])
			}
		}
	}
	if !found {
		t.Error("no key fell back among 200 (one in three should)")
	}
}

func TestWhoisTxn(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", nil, "whois", "--txn", "--data-dir", labCluster(t), "-o", "json", "tx-commit", "payments-tx-0")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	var got []inspect.WhoisResult
	if err := json.Unmarshal([]byte(r.Out), &got); err != nil {
		t.Fatal(err)
	}
	if got[0].Kind != "txn" || got[0].TxnSlotFile != "slot-9.json" || got[1].TxnSlotFile != "slot-32.json" {
		t.Errorf("txn answers: %+v", got)
	}
	// g-beta has an explicit entry, but transactional ids ignore entries.
	r = runCLI(t, "", nil, "whois", "--txn", "--data-dir", labCluster(t), "-o", "json", "g-beta")
	if strings.Contains(r.Out, `"explicit"`) {
		t.Errorf("txn resolution used the explicit tier: %s", r.Out)
	}
}

func TestWhoisStdinStreams(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	var keys []string
	for i := 0; i < 5000; i++ {
		k := fmt.Sprintf("group-%d", i)
		keys = append(keys, k)
		in.WriteString(k + "\r\n")
		if i%1000 == 0 {
			in.WriteString("\n") // blank lines are skipped
		}
	}
	in.WriteString("g-beta") // no trailing newline
	keys = append(keys, "g-beta")
	for _, format := range []string{"jsonl", "json", "csv", "table", "yaml"} {
		t.Run(format, func(t *testing.T) {
			r := runCLI(t, in.String(), nil, "whois", "--stdin", "--data-dir", labCluster(t), "-o", format)
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Err)
			}
			switch format {
			case "jsonl":
				lines := strings.Split(strings.TrimSuffix(r.Out, "\n"), "\n")
				if len(lines) != len(keys) {
					t.Fatalf("%d lines for %d keys", len(lines), len(keys))
				}
				for i, l := range lines {
					var res inspect.WhoisResult
					if err := json.Unmarshal([]byte(l), &res); err != nil || res.Key != keys[i] {
						t.Fatalf("line %d: %v %q", i, err, l)
					}
				}
			case "json":
				var res []inspect.WhoisResult
				if err := json.Unmarshal([]byte(r.Out), &res); err != nil || len(res) != len(keys) {
					t.Fatalf("json array: %v, %d results", err, len(res))
				}
				if res[len(res)-1].Tier != "explicit" {
					t.Errorf("last key g-beta should be explicit: %+v", res[len(res)-1])
				}
			case "csv":
				if n := strings.Count(r.Out, "\n"); n != len(keys)+1 {
					t.Errorf("csv has %d lines, want %d", n, len(keys)+1)
				}
			case "table":
				if n := strings.Count(r.Out, "\ngroup-"); n != len(keys)-1 {
					t.Errorf("table has %d group rows, want %d", n, len(keys)-1)
				}
			case "yaml":
				if n := strings.Count(r.Out, "- schemaVersion: 1\n  generation:\n"); n != len(keys) {
					t.Errorf("yaml has %d items, want %d", n, len(keys))
				}
			}
		})
	}
}

func TestWhoisStdinEmptyIsValidJSON(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", nil, "whois", "--stdin", "--data-dir", labCluster(t), "-o", "json")
	var res []inspect.WhoisResult
	if r.Code != 0 || json.Unmarshal([]byte(r.Out), &res) != nil || res == nil || len(res) != 0 {
		t.Fatalf("exit %d out %q", r.Code, r.Out)
	}
}

func TestWhoisWhatIf(t *testing.T) {
	t.Parallel()
	dir := repoTestdata("lab", "lab-go-kaas", "phase1-steady-3-brokers")
	phase2 := findCoordinatorAnswers(t, repoTestdata("lab", "lab-go-kaas", "phase2-after-kill9-skafka-1", "api-findcoordinator.txt"))
	// Phase 1 has no explicit entries; killing skafka-1 there, the hash tier
	// over the two survivors must give phase 2's answers for hash-routed groups.
	r := runCLI(t, "", nil, "whois", "--data-dir", dir, "--what-if-down", "skafka-1", "-o", "json", "lab-group", "g-alpha", "g-delta")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	var got []inspect.WhoisResult
	if err := json.Unmarshal([]byte(r.Out), &got); err != nil {
		t.Fatal(err)
	}
	for _, g := range got {
		if g.Coordinator != phase2[g.Key] {
			t.Errorf("%s: what-if says %s, phase 2 brokers said %s", g.Key, g.Coordinator, phase2[g.Key])
		}
		if g.CurrentCoordinator == nil || g.Moves == nil || *g.Moves != (*g.CurrentCoordinator != g.Coordinator) {
			t.Errorf("%s: current/moves fields wrong: %+v", g.Key, g)
		}
	}
	// --keep-listed keeps the divisor: nobody but skafka-1's groups moves.
	r = runCLI(t, "", nil, "whois", "--data-dir", dir, "--what-if-down", "skafka-1", "--keep-listed", "-o", "json", "lab-group", "g-beta", "g-gamma")
	json.Unmarshal([]byte(r.Out), &got)
	for _, g := range got {
		if *g.CurrentCoordinator != "skafka-1" && *g.Moves {
			t.Errorf("%s moved from %s with a stable divisor", g.Key, *g.CurrentCoordinator)
		}
		if *g.CurrentCoordinator == "skafka-1" && g.Tier != "hash-fallback" {
			t.Errorf("%s: want hash-fallback, got %s", g.Key, g.Tier)
		}
	}
	r = runCLI(t, "", nil, "whois", "--data-dir", dir, "--what-if-brokers", "skafka-0,skafka-2", "-o", "json", "lab-group")
	json.Unmarshal([]byte(r.Out), &got)
	if got[0].Coordinator != phase2["lab-group"] {
		t.Errorf("--what-if-brokers: %+v", got[0])
	}
	r = runCLI(t, "", nil, "whois", "--data-dir", dir, "--what-if-down", "kaas-7", "g")
	if r.Code != 2 || !strings.Contains(r.Err, "no such broker") {
		t.Errorf("unknown what-if broker: exit %d %q", r.Code, r.Err)
	}
}

func TestWhoisUsageErrors(t *testing.T) {
	t.Parallel()
	dir := labCluster(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"whois", "--data-dir", dir}, "at least one KEY"},
		{[]string{"whois", "--data-dir", dir, "-o", "xml", "g"}, "unknown output format"},
		{[]string{"whois", "--data-dir", dir, "--bogus", "g"}, "unknown flag --bogus"},
		{[]string{"whois", "g"}, "no volume given"},
		{[]string{"whois", "--data-dir", dir, "--stdin", "g"}, "not both"},
		{[]string{"whois", "--data-dir", dir, "--keep-listed", "g"}, "--keep-listed goes with --what-if-down"},
		{[]string{"nosuch"}, "unknown command"},
	} {
		r := runCLI(t, "", nil, tc.args...)
		if r.Code != 2 || !strings.Contains(r.Err, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with %q", tc.args, r.Code, r.Err, tc.want)
		}
	}
}

func TestWhoisEnvironment(t *testing.T) {
	t.Parallel()
	dir := labCluster(t)
	r := runCLI(t, "", map[string]string{"KAAS_DATA_DIR": dir}, "whois", "g-beta")
	if r.Code != 0 || !strings.Contains(r.Out, "skafka-2") {
		t.Fatalf("KAAS_DATA_DIR: exit %d %s %s", r.Code, r.Out, r.Err)
	}
	r = runCLI(t, "", map[string]string{"KAAS_CLUSTER_DIR": dir, "KAAS_DATA_DIR": "/nonexistent"}, "whois", "g-beta")
	if r.Code != 1 || !strings.Contains(r.Err, "/nonexistent") {
		t.Fatalf("a missing data dir must be named: exit %d %s", r.Code, r.Err)
	}
	// Flags beat the environment.
	r = runCLI(t, "", map[string]string{"KAAS_CLUSTER_DIR": "/nonexistent"}, "whois", "--data-dir", dir, "g-beta")
	if r.Code != 0 {
		t.Fatalf("--data-dir must beat KAAS_CLUSTER_DIR: exit %d %s", r.Code, r.Err)
	}
}

// Malformed assignment files: exit 1, a message naming the file, no panic.
func TestWhoisHostileAssignment(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"empty":        "",
		"whitespace":   "  \n",
		"truncated":    `{"controllerEpoch":1,"brokers":[{"id":"kaas-0","hea`,
		"not-json":     "kaas-0 alive\n",
		"null":         "null",
		"array":        `[{"id":"kaas-0"}]`,
		"wrong-type":   `{"brokers":"kaas-0"}`,
		"wrong-nested": `{"brokers":[{"id":7}]}`,
		"binary":       "\x00\x01\xff\xfe{",
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := writeFile(t, dir, "assignment.json", content)
			r := runCLI(t, "", nil, "whois", "--cluster-dir", dir, "g")
			if r.Code != 1 || !strings.Contains(r.Err, p) {
				t.Errorf("exit %d, stderr %q: want exit 1 naming %s", r.Code, r.Err, p)
			}
			if r.Out != "" {
				t.Errorf("nothing may be printed on stdout: %q", r.Out)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		r := runCLI(t, "", nil, "whois", "--cluster-dir", dir, "g")
		if r.Code != 1 || !strings.Contains(r.Err, "assignment.json: file does not exist") {
			t.Errorf("exit %d, stderr %q", r.Code, r.Err)
		}
	})
	// Oddities kaas tolerates are answered, with a warning.
	tolerated := map[string]string{
		"null-brokers":      `{"brokers":null,"partitions":[]}`,
		"dup-broker":        `{"brokers":[{"id":"kaas-0","health":"alive"},{"id":"kaas-0","health":"alive"}],"partitions":[]}`,
		"dup-entry":         `{"brokers":[{"id":"kaas-0","health":"alive"}],"partitions":[],"consumerGroups":[{"groupId":"g","broker":"kaas-0"},{"groupId":"g","broker":"kaas-1"}]}`,
		"unknown-health":    `{"brokers":[{"id":"kaas-0","health":"sleepy"}],"partitions":[]}`,
		"null-groups":       `{"brokers":[{"id":"kaas-0","health":"alive"}],"partitions":null,"consumerGroups":null}`,
		"unknown-fields":    `{"brokers":[{"id":"kaas-0","health":"alive","zone":"a"}],"partitions":[],"futureField":{"x":1}}`,
		"huge-version":      `{"assignmentVersion":9223372036854775807,"brokers":[{"id":"kaas-0","health":"alive"}],"partitions":[]}`,
		"hostile-broker-id": `{"brokers":[{"id":"../../etc\u0000x","health":"alive"}],"partitions":[]}`,
	}
	for name, content := range tolerated {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "assignment.json", content)
			r := runCLI(t, "", nil, "whois", "--cluster-dir", dir, "-o", "json", "g")
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Err)
			}
			var res []inspect.WhoisResult
			if err := json.Unmarshal([]byte(r.Out), &res); err != nil || len(res) != 1 {
				t.Fatalf("json: %v %q", err, r.Out)
			}
		})
	}
	dir := t.TempDir()
	writeFile(t, dir, "assignment.json", tolerated["dup-broker"])
	if r := runCLI(t, "", nil, "whois", "--cluster-dir", dir, "g"); !strings.Contains(r.Err, "listed more than once") {
		t.Errorf("duplicate broker not reported: %q", r.Err)
	}
}

// On the real lab data, the controller's rendezvous placement is what
// happened: killing skafka-1 in phase 1 gave g-beta and g-gamma (active on
// surviving brokers) explicit entries, and lab-group (on skafka-1) fell back
// to the hash tier. The prediction from phase 1 alone matches phase 2's
// assignment and FindCoordinator answers.
func TestWhatIfRendezvousMatchesTheLab(t *testing.T) {
	t.Parallel()
	phase1 := repoTestdata("lab", "lab-go-kaas", "phase1-steady-3-brokers")
	phase2 := findCoordinatorAnswers(t, repoTestdata("lab", "lab-go-kaas", "phase2-after-kill9-skafka-1", "api-findcoordinator.txt"))
	r := runCLI(t, "", nil, "whois", "--data-dir", phase1, "--what-if-down", "skafka-1", "--placement", "rendezvous", "-o", "json", "g-beta", "g-gamma", "lab-group")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	var got []inspect.WhoisResult
	if err := json.Unmarshal([]byte(r.Out), &got); err != nil {
		t.Fatal(err)
	}
	wantTier := map[string]string{"g-beta": "explicit", "g-gamma": "explicit", "lab-group": "hash"}
	for _, g := range got {
		if g.Coordinator != phase2[g.Key] || g.Tier != wantTier[g.Key] {
			t.Errorf("%s: predicted %s (%s), phase 2 answered %s (%s)", g.Key, g.Coordinator, g.Tier, phase2[g.Key], wantTier[g.Key])
		}
	}
}
