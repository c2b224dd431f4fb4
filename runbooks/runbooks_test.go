// Package runbooks_test runs every runbook script against a sandbox, as an
// operator would: bash, jq and a freshly built kaasctl on the PATH.
package runbooks_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/volume"
)

var (
	buildOnce sync.Once
	buildDir  string // removed by TestMain: nothing is left in the temp dir
	kaasctl   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// tools builds kaasctl once and checks bash and jq. CI installs jq (.ci/run);
// elsewhere a missing jq skips the runbook tests.
func tools(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("jq is missing in CI: .ci/run must install it")
		}
		t.Skip("jq not installed (apt-get install jq)")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kaasctl-runbooks-")
		if err != nil {
			buildErr = err
			return
		}
		buildDir = dir
		kaasctl = filepath.Join(dir, "kaasctl")
		out, err := exec.Command("go", "build", "-o", kaasctl, "../cmd/kaasctl").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return kaasctl
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs a runbook with KAASCTL_ARGS set.
func run(t *testing.T, args string, script string, scriptArgs ...string) result {
	t.Helper()
	bin := tools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, scriptArgs...)...)
	cmd.Env = append(os.Environ(), "KAASCTL="+bin, "KAASCTL_ARGS="+args)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		// Reported through the result (run may be called from a goroutine,
		// where t.Fatal must not be used); every caller checks the code.
		code = -1
		errb.WriteString(err.Error())
	}
	return result{out.String(), errb.String(), code}
}

// jsonLines decodes one JSON object per stdout line.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func startSandbox(t *testing.T, groups int) *sandbox.Sandbox {
	t.Helper()
	s := sandbox.Start(t, sandbox.Options{Brokers: 3, Placement: sandbox.PlacementHash, Topics: []sandbox.Topic{{Name: "orders", Partitions: 3}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < groups; i++ {
		if err := s.Commit(ctx, fmt.Sprintf("app-%d", i), map[string]map[int32]int64{"orders": {0: 0, 1: 0, 2: 0}}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// coordinators reads who coordinates each group from the sandbox's volume.
func coordinators(t *testing.T, s *sandbox.Sandbox) map[string]string {
	t.Helper()
	a, _, err := volume.ReadAssignment(s.Layout().AssignmentPath())
	if err != nil {
		t.Fatal(err)
	}
	rt := a.Router()
	out := map[string]string{}
	for i := 0; i < 12; i++ {
		g := fmt.Sprintf("app-%d", i)
		out[g] = rt.Group(g).Coordinator
	}
	return out
}

func TestWhatMovesIfDown(t *testing.T) {
	t.Parallel()
	tools(t)
	s := startSandbox(t, 12)
	args := "--data-dir " + s.Layout().DataDir + " -q"
	before := coordinators(t, s)
	r := run(t, args, "what-moves-if-down.sh", "kaas-1")
	if r.code != 3 {
		t.Fatalf("exit %d (want 3: groups move)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	predicted := map[string]string{}
	for _, m := range jsonLines(t, r.stdout) {
		predicted[m["group"].(string)] = m["to"].(string)
		if m["from"] != before[m["group"].(string)] {
			t.Errorf("%v: from %v, but the volume says %s", m["group"], m["from"], before[m["group"].(string)])
		}
	}
	if !strings.Contains(r.stderr, "of 12 groups move if kaas-1 goes down") {
		t.Errorf("summary: %q", r.stderr)
	}
	// Now really stop kaas-1: the prediction must be what the controller does.
	if _, err := s.StopBroker("kaas-1"); err != nil {
		t.Fatal(err)
	}
	after := coordinators(t, s)
	for g, was := range before {
		want, moves := predicted[g]
		if !moves {
			want = was
		}
		if after[g] != want {
			t.Errorf("%s: predicted %s, the cluster moved it to %s", g, want, after[g])
		}
	}
	if r := run(t, args, "what-moves-if-down.sh"); r.code != 1 || !strings.Contains(r.stderr, "usage") {
		t.Errorf("no broker: exit %d %q", r.code, r.stderr)
	}
}

func TestEntriesDisagree(t *testing.T) {
	t.Parallel()
	tools(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "assignment.json"), []byte(`{"controllerEpoch":2,"assignmentVersion":5,"controller":"kaas-0",
"brokers":[{"id":"kaas-0","health":"alive"},{"id":"kaas-1","health":"alive"},{"id":"kaas-2","health":"dead"}],"partitions":[],
"consumerGroups":[{"groupId":"on-dead","broker":"kaas-2","epoch":1},{"groupId":"ghost","broker":"kaas-7","epoch":1}]}`), 0o644)
	r := run(t, "--cluster-dir "+dir+" -q", "entries-disagree.sh")
	if r.code != 3 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got := map[string]string{}
	for _, m := range jsonLines(t, r.stdout) {
		got[m["group"].(string)] = m["status"].(string)
	}
	if got["on-dead"] != "deadBroker" || got["ghost"] != "unknownBroker" {
		t.Errorf("statuses %v", got)
	}
	// The sandbox places entries with the routing hash: nothing to report.
	s := startSandbox(t, 4)
	if _, err := s.StopBroker("kaas-2"); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "--data-dir "+s.Layout().DataDir+" -q", "entries-disagree.sh"); r.code != 0 || r.stdout != "" {
		t.Errorf("hash placement: exit %d out %q err %q", r.code, r.stdout, r.stderr)
	}
}

func TestWatchRollingRestart(t *testing.T) {
	// Not parallel: t.Setenv.
	tools(t)
	s := startSandbox(t, 8)
	journal := filepath.Join(t.TempDir(), "journal")
	t.Setenv("PLAN_ARGS", "--placement hash") // the test sandbox places entries by the routing hash
	args := "--data-dir " + s.Layout().DataDir + " --brokers " + strings.Join(s.Bootstrap(), ",") + " -q"
	done := make(chan result, 1)
	go func() {
		done <- run(t, args, "watch-rolling-restart.sh", journal, "60s")
	}()
	// The plan is written before the follow starts; then the brokers are
	// restarted in its order, each version waited for in the journal.
	var plan struct {
		Plan struct{ Order []string }
	}
	versions := func() int { ents, _ := os.ReadDir(journal); return len(ents) }
	if err := sandbox.WaitUntil(30*time.Second, func() bool {
		b, err := os.ReadFile(journal + ".plan.json")
		f, _ := os.ReadFile(journal + ".follow.jsonl")
		return err == nil && json.Unmarshal(b, &plan) == nil && len(plan.Plan.Order) == 3 && versions() >= 1 &&
			strings.Contains(string(f), `"kind":"following"`)
	}); err != nil {
		t.Fatalf("no plan: %v", err)
	}
	for _, b := range plan.Plan.Order {
		for _, step := range []func(string) (bool, error){s.StopBroker, s.StartBroker} {
			n := versions()
			if _, err := step(b); err != nil {
				t.Fatal(err)
			}
			if err := sandbox.WaitUntil(10*time.Second, func() bool { return versions() > n }); err != nil {
				select {
				case r := <-done:
					t.Fatalf("the runbook ended early: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
				default:
				}
				t.Fatalf("the journal did not get the version: %v", err)
			}
		}
	}
	r := <-done
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var asPlanned, summaries int
	for _, m := range jsonLines(t, r.stdout) {
		switch {
		case m["event"] == "version":
			if m["asPlanned"] != true {
				t.Errorf("a version deviated: %v", m)
			}
			asPlanned++
		case m["moves"] != nil && m["group"] != nil:
			summaries++
		}
	}
	if asPlanned < 3 || summaries == 0 {
		t.Errorf("%d versions as planned, %d summaries:\n%s\n%s", asPlanned, summaries, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "restart in this order: "+strings.Join(plan.Plan.Order, " → ")) || !strings.Contains(r.stderr, "completed as planned") {
		t.Errorf("stderr: %q", r.stderr)
	}
}

// The upgrade runbook restarts every broker through a command (here the
// sandbox's control endpoint), in the planned order, each step checked by
// plan restart --follow.
func TestUpgradeFewestRebalances(t *testing.T) {
	tools(t)
	s := startSandbox(t, 8)
	cs, err := s.ServeControl("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	t.Setenv("PLAN_ARGS", "--placement hash")
	args := "--data-dir " + s.Layout().DataDir + " --brokers " + strings.Join(s.Bootstrap(), ",") + " -q"
	r := run(t, args, "upgrade-fewest-rebalances.sh", `curl -sf -X POST "`+cs.URL()+`/restart?broker={}" >/dev/null`, "60s")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	brokers := map[string]bool{}
	for _, m := range jsonLines(t, r.stdout) {
		if m["asPlanned"] != true {
			t.Errorf("a version deviated: %v", m)
		}
		brokers[m["broker"].(string)] = true
	}
	if len(brokers) != 3 || !strings.Contains(r.stderr, "3 of 3 broker(s) restarted, 0 versions deviated") {
		t.Errorf("brokers %v\n%s", brokers, r.stderr)
	}
	if a := s.Assignment(); a.AssignmentVersion < 7 || len(a.Brokers) != 3 {
		t.Errorf("after the upgrade: v%d with %d brokers", a.AssignmentVersion, len(a.Brokers))
	}
	// A failing restart command stops the run (exit 1).
	r = run(t, args, "upgrade-fewest-rebalances.sh", "false", "30s")
	if r.code != 1 || !strings.Contains(r.stderr, "restart command failed") {
		t.Errorf("failing command: exit %d\n%s", r.code, r.stderr)
	}
}

func TestSafeReset(t *testing.T) {
	tools(t)
	s := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: []sandbox.Topic{{Name: "orders", Partitions: 2}, {Name: "audit", Partitions: 1}}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.Produce(ctx, "orders", 2, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.Produce(ctx, "audit", 1, 5); err != nil {
		t.Fatal(err)
	}
	// A live consumer that has read and committed everything.
	consumer, err := s.Client(sandbox.ConsumerOpts("app", "orders", "audit")...)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 25; {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consuming: %v", ctx.Err())
		}
		n += fs.NumRecords()
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	args := "--data-dir " + s.Layout().DataDir + " --brokers " + strings.Join(s.Bootstrap(), ",") + " -q"
	dir := t.TempDir()
	t.Setenv("RUNBOOK_DIR", dir)
	t.Setenv("RUNBOOK_YES", "1")
	before, _ := os.ReadFile(filepath.Join(s.Layout().OffsetsPath(), "app.json"))

	r := run(t, args, "safe-reset.sh", "app", "--topic", "orders", "--to-earliest")
	if r.code != 4 || !strings.Contains(r.stderr, "stop its consumers first") {
		t.Fatalf("active group: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(s.Layout().OffsetsPath(), "app.json")); string(after) != string(before) {
		t.Fatal("the refused reset changed the offset file")
	}

	consumer.Close() // leaves the group: Empty
	s.WaitFor(t, "group app Empty", 20*time.Second, func() bool {
		r := run(t, args, "safe-reset.sh", "app", "--topic", "orders", "--to-earliest")
		return r.code == 0
	})
	off, ok := s.CommittedOffsets("app")
	if !ok || off["orders/0"] != 0 || off["orders/1"] != 0 || off["audit/0"] != 5 {
		t.Errorf("after the reset: %v (orders to 0, audit kept at 5)", off)
	}
	for _, f := range []string{"plan.csv", "rollback.csv"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || len(b) == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The rollback plan puts the old offsets back.
	r = run(t, args, "safe-reset.sh", "app", "--from-file", filepath.Join(dir, "rollback.csv"))
	if r.code != 0 {
		t.Fatalf("rollback: exit %d\n%s", r.code, r.stderr)
	}
	if off, _ := s.CommittedOffsets("app"); off["orders/0"] != 10 || off["orders/1"] != 10 {
		t.Errorf("after the rollback: %v", off)
	}
}

func TestStaleAndFileOnly(t *testing.T) {
	t.Parallel()
	tools(t)
	s := startSandbox(t, 0)
	s.EmulateStaleGroups(true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Commit(ctx, "live-app", map[string]map[int32]int64{"orders": {0: 1}}); err != nil {
		t.Fatal(err)
	}
	// kaas-2 keeps listing a group it does not coordinate.
	coord := coordinators(t, s)["app-0"]
	stale := "kaas-2"
	if coord == stale {
		stale = "kaas-1"
	}
	if err := s.Commit(ctx, "app-0", map[string]map[int32]int64{"orders": {0: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := s.MakeStale(stale, "app-0", "Empty"); err != nil {
		t.Fatal(err)
	}
	// An offset file no broker has in memory.
	os.WriteFile(filepath.Join(s.Layout().OffsetsPath(), "retired-app.json"), []byte(`{"offsets":{"orders/0":9}}`), 0o644)

	args := "--data-dir " + s.Layout().DataDir + " --brokers " + strings.Join(s.Bootstrap(), ",") + " -q"
	r := run(t, args, "stale-and-file-only.sh")
	if r.code != 3 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got := map[string]map[string]any{}
	for _, m := range jsonLines(t, r.stdout) {
		got[m["group"].(string)+"/"+m["issue"].(string)] = m
	}
	if m := got["app-0/staleOnNonCoordinator"]; m == nil || !strings.Contains(fmt.Sprint(m["listedBy"]), stale) || !strings.Contains(m["fix"].(string), "restart "+stale) {
		t.Errorf("stale group not reported with its broker: %v", got)
	}
	if got["retired-app/fileOnly"] == nil {
		t.Errorf("file-only group not reported: %v", got)
	}
	if got["live-app/fileOnly"] != nil || got["live-app/staleOnNonCoordinator"] != nil {
		t.Errorf("a healthy group was reported: %v", got)
	}
	// Without brokers the runbook says it needs them.
	if r := run(t, "--data-dir "+s.Layout().DataDir+" -q", "stale-and-file-only.sh"); r.code != 1 || !strings.Contains(r.stderr, "no broker answered") {
		t.Errorf("offline: exit %d %q", r.code, r.stderr)
	}
}
