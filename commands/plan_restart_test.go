package commands

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/views"
)

// A Go-flavour volume (offsets in DATA/__consumer_offsets): the plan uses
// the drop failover model, and the table reads as the golden file.
func TestPlanRestartOfflineGolden(t *testing.T) {
	t.Parallel()
	data := "testdata/plan/go-4/data"
	r := runCLI(t, "", nil, "plan", "restart", "--data-dir", data)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	golden(t, "plan-restart-go-4.txt", r.Out)

	r = runCLI(t, "", nil, "plan", "restart", "--data-dir", data, "--brokers-order", "kaas-3,kaas-2", "--brokers-order", "kaas-1,kaas-0", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	var v views.PlanRestartView
	if err := json.Unmarshal([]byte(r.Out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Failover != "drop" || !strings.Contains(v.FailoverWhy, "Go") || v.Given == nil || strings.Join(v.Given.Order, ",") != "kaas-3,kaas-2,kaas-1,kaas-0" {
		t.Fatalf("failover %s (%s), given %+v", v.Failover, v.FailoverWhy, v.Given)
	}
	if v.Search.Method != "exhaustive" || v.Search.Orders != 24 || v.Groups.WithMembers != 7 || v.Groups.Idle != 3 {
		t.Fatalf("search %+v groups %+v", v.Search, v.Groups)
	}
	// Restarting the controller (kaas-0) last in the given order: its
	// failover drops the 7 entries; the plan's score is no worse.
	last := v.Given.Steps[3]
	if !last.Stop.Failover || last.Stop.Entries != 0 || last.Stop.Controller != "kaas-1" {
		t.Fatalf("the controller's restart: %+v", last.Stop)
	}
	if v.Plan.Score.Moves > v.Given.Score.Moves || v.Plan.Score.Moves > v.Naive.Score.Moves || v.Worst.Score.Moves < v.Naive.Score.Moves {
		t.Fatalf("plan %+v given %+v naive %+v worst %+v", v.Plan.Score, v.Given.Score, v.Naive.Score, v.Worst.Score)
	}
	if v.Plan.Score.Moves == v.Worst.Score.Moves {
		t.Fatal("every order costs the same: the fixture proves nothing")
	}

	for _, bad := range [][]string{
		{"--brokers-order", "kaas-0,kaas-1"},
		{"--brokers-order", "kaas-0,kaas-1,kaas-2,kaas-9"},
		{"--failover", "maybe"},
		{"--placement", "random"},
		{"extra-arg"},
	} {
		r := runCLI(t, "", nil, append([]string{"plan", "restart", "--data-dir", data}, bad...)...)
		if r.Code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", bad, r.Code, r.Err)
		}
	}
	if r := runCLI(t, "", nil, "plan", "restart", "--data-dir", t.TempDir()); r.Code == 0 || !strings.Contains(r.Err, "assignment.json") {
		t.Errorf("no assignment: exit %d %s", r.Code, r.Err)
	}
}

// A broker id holding a newline (assignment.json is anybody's to write)
// never starts a line of its own in plan restart's header and steps:
// each id is shown on one line, its newline escaped.
func TestPlanRestartBrokerIDNewline(t *testing.T) {
	t.Parallel()
	dd := t.TempDir()
	evil := "kaas-1\nwarning: forged line"
	asg := map[string]any{"controllerEpoch": 1, "assignmentVersion": 3, "controller": evil,
		"brokers":        []map[string]string{{"id": "kaas-0", "health": "alive"}, {"id": evil, "health": "alive"}},
		"consumerGroups": []map[string]string{{"groupId": "orders-app", "broker": evil}}, "partitions": []any{}}
	b, _ := json.Marshal(asg)
	writeFile(t, dd, "__cluster/assignment.json", string(b))
	r := runCLI(t, "", nil, "plan", "restart", "--data-dir", dd, "--steps-of-all")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	forged := 0
	for _, line := range strings.Split(r.Out+r.Err, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "warning: forged") {
			forged++
		}
	}
	if forged > 0 || !strings.Contains(r.Out, `kaas-1\nwarning: forged line`) {
		t.Errorf("%d forged lines:\n%s\n%s", forged, r.Out, r.Err)
	}
}
