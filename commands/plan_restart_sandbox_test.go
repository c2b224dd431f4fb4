package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/views"
)

// waitGroupsStable waits until every group has members and is Stable.
func waitGroupsStable(t *testing.T, sb *sandbox.Sandbox, groups []string) {
	t.Helper()
	cl, err := sb.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var last string
	err = sandbox.WaitUntil(60*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		ds, err := adm.DescribeGroups(ctx, groups...)
		if err != nil {
			last = err.Error()
			return false
		}
		for _, g := range groups {
			d, ok := ds[g]
			if !ok || d.Err != nil || d.State != "Stable" || len(d.Members) == 0 {
				last = fmt.Sprintf("%s: %+v %v", g, d.State, d.Err)
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatalf("groups not Stable: %v (last: %s)", err, last)
	}
}

type planMoves map[string][2]string // group → from, to

func predictedMoves(v inspect.RestartVersion) planMoves {
	m := planMoves{}
	for _, mv := range v.Moves {
		m[mv.Group] = [2]string{mv.From, mv.To}
	}
	return m
}

// diffMoves runs 'assignment diff OLD NEW -o json' and keeps the groups'
// coordinator changes.
func diffMoves(t *testing.T, data, old, cur string) planMoves {
	t.Helper()
	r := runCLI(t, "", nil, "assignment", "diff", "--data-dir", data, old, cur, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("assignment diff: exit %d: %s", r.Code, r.Err)
	}
	var d struct {
		Moves []struct{ Kind, Key, From, To string }
	}
	if err := json.Unmarshal([]byte(r.Out), &d); err != nil {
		t.Fatalf("assignment diff json: %v\n%s", err, r.Out)
	}
	m := planMoves{}
	for _, mv := range d.Moves {
		if mv.Kind == "group" {
			m[mv.Key] = [2]string{mv.From, mv.To}
		}
	}
	return m
}

func snapshot(t *testing.T, sb *sandbox.Sandbox, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(sb.Layout().AssignmentPath())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The done-when of plan restart: on the sandbox with the demo running,
// restarting the brokers in the planned order through the control
// interface moves exactly the groups the plan predicted at each version
// (checked against the sandbox's own report and 'assignment diff' over
// the versions written), and the plan moves no more groups than the
// listed order.
func TestPlanRestartPredictsTheSandbox(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n        int
		failover sandbox.Failover
	}{{3, sandbox.FailoverReload}, {5, sandbox.FailoverReload}, {4, sandbox.FailoverDrop}} {
		n := tc.n
		t.Run(fmt.Sprintf("%d-brokers-%s", n, tc.failover), func(t *testing.T) {
			t.Parallel()
			sb := sandbox.Start(t, sandbox.Options{Brokers: n, Topics: sandbox.DemoTopics, Failover: tc.failover})
			if err := sb.StartDemo(); err != nil {
				t.Fatal(err)
			}
			active := []string{"orders-app", "billing", "audit", "fraud-check"}
			waitGroupsStable(t, sb, active)
			// A first restart gives the active groups their entries, so the
			// plan starts from a cluster that has both tiers in use.
			if _, err := sb.Restart(fmt.Sprintf("kaas-%d", n-1)); err != nil {
				t.Fatal(err)
			}
			waitGroupsStable(t, sb, active)
			data := sb.Layout().DataDir
			r := runCLI(t, "", nil, "plan", "restart", "--data-dir", data, "-b", strings.Join(sb.Bootstrap(), ","), "--failover", string(tc.failover), "-o", "json")
			if r.Code != 0 {
				t.Fatalf("plan restart: exit %d: %s", r.Code, r.Err)
			}
			var view views.PlanRestartView
			if err := json.Unmarshal([]byte(r.Out), &view); err != nil {
				t.Fatalf("%v\n%s", err, r.Out)
			}
			p := view.RestartPlan
			if p.Groups.WithMembers != len(active) {
				t.Fatalf("plan sees %d groups with members, want %d (%+v)", p.Groups.WithMembers, len(active), p.Groups)
			}
			if p.Plan.Score.Moves > p.Naive.Score.Moves || p.Naive.Score.Moves > p.Worst.Score.Moves {
				t.Fatalf("moves: plan %d, naive %d, worst %d", p.Plan.Score.Moves, p.Naive.Score.Moves, p.Worst.Score.Moves)
			}
			t.Logf("%d brokers: plan %v %+v; naive %+v; worst %v %+v", n, p.Plan.Order, p.Plan.Score, p.Naive.Score, p.Worst.Order, p.Worst.Score)
			dir := t.TempDir()
			moved := 0
			for _, s := range p.Plan.Steps {
				for _, v := range []inspect.RestartVersion{s.Stop, s.Start} {
					old := snapshot(t, sb, dir, fmt.Sprintf("step%d-%s-before.json", s.N, v.Event))
					res, err := sb.Change(v.Event, s.Broker)
					if err != nil {
						t.Fatal(err)
					}
					cur := snapshot(t, sb, dir, fmt.Sprintf("step%d-%s-after.json", s.N, v.Event))
					if res.AssignmentVersion != v.Version {
						t.Errorf("step %d %s %s: version %d written, predicted %d", s.N, v.Event, s.Broker, res.AssignmentVersion, v.Version)
					}
					if a := sb.Assignment(); a.Controller != v.Controller || a.ControllerEpoch != v.ControllerEpoch {
						t.Errorf("step %d %s: controller %s epoch %d, predicted %s epoch %d", s.N, v.Event, a.Controller, a.ControllerEpoch, v.Controller, v.ControllerEpoch)
					}
					want := predictedMoves(v)
					got := planMoves{}
					for _, m := range res.Moved {
						got[m.Group] = [2]string{m.From, m.To}
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("step %d %s %s: the sandbox moved %v, the plan predicted %v", s.N, v.Event, s.Broker, got, want)
					}
					if d := diffMoves(t, data, old, cur); fmt.Sprint(d) != fmt.Sprint(want) {
						t.Errorf("step %d %s %s: assignment diff says %v, the plan predicted %v", s.N, v.Event, s.Broker, d, want)
					}
					moved += len(want)
					waitGroupsStable(t, sb, active)
				}
			}
			if moved == 0 {
				t.Fatal("no group moved in the whole restart: the test proves nothing")
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader.
type planLockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *planLockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *planLockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// --follow: a restart in the planned order is reported step by step as
// planned; a broker restarted out of order is a deviation (exit 3).
func TestPlanRestartFollowReportsADeviation(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: []sandbox.Topic{{Name: "orders", Partitions: 1}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 12; i++ {
		if err := sb.Commit(ctx, fmt.Sprintf("svc-%d", i), map[string]map[int32]int64{"orders": {0: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	data := sb.Layout().DataDir
	boot := strings.Join(sb.Bootstrap(), ",")
	r := runCLI(t, "", nil, "plan", "restart", "--data-dir", data, "-b", boot, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("plan restart: exit %d: %s", r.Code, r.Err)
	}
	var view views.PlanRestartView
	if err := json.Unmarshal([]byte(r.Out), &view); err != nil {
		t.Fatal(err)
	}
	order := view.Plan.Order
	var out, errb planLockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"kaasctl", "plan", "restart", "--follow", "--data-dir", data, "-b", boot, "--poll-interval", "20ms",
			"--follow-timeout", "60s", "-o", "jsonl"},
			&IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	}()
	if err := sandbox.WaitUntil(20*time.Second, func() bool { return strings.Contains(out.String(), `"kind":"following"`) }); err != nil {
		t.Fatalf("follow did not start: %v\n%s\n%s", err, out.String(), errb.String())
	}
	// The first step as planned, then the last broker instead of the second.
	if _, err := sb.Restart(order[0]); err != nil {
		t.Fatal(err)
	}
	if err := sandbox.WaitUntil(20*time.Second, func() bool { return strings.Count(out.String(), `"kind":"version"`) >= 2 }); err != nil {
		t.Fatalf("follow did not see the first step: %v\n%s", err, out.String())
	}
	if _, err := sb.StopBroker(order[2]); err != nil {
		t.Fatal(err)
	}
	var code int
	select {
	case code = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("follow did not stop")
	}
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, out.String(), errb.String())
	}
	var events []views.FollowEvent
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e views.FollowEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		events = append(events, e)
	}
	var versions []views.FollowEvent
	for _, e := range events {
		if e.Kind == "version" {
			versions = append(versions, e)
		}
	}
	if len(versions) != 3 {
		t.Fatalf("%d versions reported, want 3:\n%s", len(versions), out.String())
	}
	for i, v := range versions[:2] {
		if !v.AsPlanned || v.Broker != order[0] || v.Step != 1 {
			t.Errorf("version %d of the planned step: %+v", i, v)
		}
	}
	dev := versions[2]
	if dev.AsPlanned || dev.Event != "stop" || dev.Broker != order[2] || dev.Expected != "stop "+order[1] ||
		!slices.ContainsFunc(dev.Deviations, func(s string) bool { return strings.Contains(s, "out of order") }) {
		t.Fatalf("the out-of-order stop: %+v", dev)
	}
	if last := events[len(events)-1]; last.Kind != "done" {
		t.Fatalf("last event %+v", last)
	}
}
