package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/views"
)

// testGlobals is Globals over buffers, as a run function gets them.
func testGlobals(t *testing.T, out, errb interface{ Write([]byte) (int, error) }, args ...string) *Globals {
	t.Helper()
	return mustGlobals(t, &IOStreams{Out: out, Err: errb}, args...)
}

// runPlanAssignment without a cli.Context: hypothetical members on the
// committed topics; a --remove naming nobody is a usage error.
func TestRunPlanAssignmentDirect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "__cluster/assignment.json", `{"controllerEpoch":1,"assignmentVersion":3,"generatedAt":"2026-12-01T00:00:00Z","controller":"kaas-0",`+
		`"brokers":[{"id":"kaas-0","health":"alive","lastSeen":"2026-12-01T00:00:00Z"}],`+
		`"partitions":[{"topic":"t","partition":0,"broker":"kaas-0","epoch":1,"role":"leader"},{"topic":"t","partition":5,"broker":"kaas-0","epoch":1,"role":"leader"}]}`)
	writeFile(t, dir, "__cluster/__consumer_offsets/g.json", `{"offsets":{"t/0":1}}`)
	var out, errb bytes.Buffer
	g := testGlobals(t, &out, &errb, "--data-dir", dir, "--kaas-version", "0.2.18", "-o", "json")
	o := planAssignmentOptions{Group: "g", Members: 3, Remove: []string{"member-3"}, Assignor: "roundrobin"}
	if err := runPlanAssignment(context.Background(), g, o); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var v views.PlanAssignmentView
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Partitions["t"] != 6 || len(v.Members) != 3 || v.Members[2].Status != "leaves" || v.Members[2].Lost != 2 || len(v.Moves) != 4 {
		t.Fatalf("plan %+v", v)
	}
	o.Remove = []string{"member-9"}
	if err := runPlanAssignment(context.Background(), g, o); exit.Code(err) != 2 || !strings.Contains(err.Error(), "member-9") {
		t.Fatalf("unknown member: %v (exit %d)", err, exit.Code(err))
	}
}

// runPlanRestart without a cli.Context, on the Go-flavour fixture.
func TestRunPlanRestartDirect(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	g := testGlobals(t, &out, &errb, "--data-dir", "testdata/plan/go-4/data", "-o", "json")
	o := planRestartOptions{Placement: "rendezvous", AllActive: true, Order: []string{"kaas-0", "kaas-1", "kaas-2", "kaas-3"}}
	if err := runPlanRestart(context.Background(), g, o); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var v views.PlanRestartView
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Groups.WithMembers != v.Groups.Known || v.Groups.Known != 10 || v.Failover != "drop" || v.Given == nil || !strings.HasPrefix(v.Sources.Activity, "assumed (--all-active)") {
		t.Fatalf("groups %+v failover %s given %v activity %q", v.Groups, v.Failover, v.Given, v.Sources.Activity)
	}
	o.Order = []string{"kaas-0"}
	if err := runPlanRestart(context.Background(), g, o); exit.Code(err) != 2 {
		t.Fatalf("an order missing brokers: %v", err)
	}
}

// runPlanRestart --follow without a cli.Context, offline: a broker
// stopped out of the planned order ends the follow with exit 3.
func TestRunPlanRestartFollowDirect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"__cluster/assignment.json", "__consumer_offsets/orders-app.json"} {
		b, err := os.ReadFile(filepath.Join("testdata/plan/go-4/data", name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, name, string(b))
	}
	var out, errb planLockedBuffer
	g := testGlobals(t, &out, &errb, "--data-dir", dir, "-o", "jsonl")
	o := planRestartOptions{Placement: "rendezvous", Follow: followOptions{On: true, PollInterval: 10 * time.Millisecond, Timeout: 60 * time.Second}}
	done := make(chan error, 1)
	go func() { done <- runPlanRestart(context.Background(), g, o) }()
	var first views.FollowEvent
	if err := sandbox.WaitUntil(20*time.Second, func() bool {
		line, _, _ := strings.Cut(out.String(), "\n")
		return json.Unmarshal([]byte(line), &first) == nil && first.Kind == "following"
	}); err != nil {
		t.Fatalf("follow did not start: %v\n%s\n%s", err, out.String(), errb.String())
	}
	// Stop a broker other than the one the plan restarts first.
	path := filepath.Join(dir, "__cluster/assignment.json")
	var a map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	var alive []any
	stopped := ""
	for _, br := range a["brokers"].([]any) {
		if id := br.(map[string]any)["id"].(string); id != first.Next && stopped == "" {
			stopped = id
			continue
		}
		alive = append(alive, br)
	}
	a["brokers"], a["assignmentVersion"] = alive, 18
	b, _ = json.Marshal(a)
	writeFile(t, dir, "__cluster/assignment.json.tmp", string(b))
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("follow did not stop")
	}
	if exit.Code(err) != 3 {
		t.Fatalf("exit %d (%v), want 3\n%s", exit.Code(err), err, out.String())
	}
	var dev views.FollowEvent
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e views.FollowEvent
		if json.Unmarshal([]byte(line), &e) == nil && e.Kind == "version" {
			dev = e
		}
	}
	if dev.AsPlanned || dev.Event != "stop" || dev.Broker != stopped || dev.Expected != "stop "+first.Next || dev.Version != 18 {
		t.Fatalf("the out-of-order stop: %+v\n%s", dev, out.String())
	}
}

// plan restart --follow: a version older than the one followed (a stale
// controller, a restored file) is a deviation, not "as planned": kaas's
// brokers skip it, even when its brokers look like the planned stop.
func TestRunPlanRestartFollowBackwardsVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"__cluster/assignment.json", "__consumer_offsets/orders-app.json"} {
		b, err := os.ReadFile(filepath.Join("testdata/plan/go-4/data", name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, name, string(b))
	}
	var out, errb planLockedBuffer
	g := testGlobals(t, &out, &errb, "--data-dir", dir, "-o", "jsonl")
	o := planRestartOptions{Placement: "rendezvous", Follow: followOptions{On: true, PollInterval: 10 * time.Millisecond, Timeout: 60 * time.Second}}
	done := make(chan error, 1)
	go func() { done <- runPlanRestart(context.Background(), g, o) }()
	var first views.FollowEvent
	if err := sandbox.WaitUntil(20*time.Second, func() bool {
		line, _, _ := strings.Cut(out.String(), "\n")
		return json.Unmarshal([]byte(line), &first) == nil && first.Kind == "following"
	}); err != nil {
		t.Fatalf("follow did not start: %v\n%s\n%s", err, out.String(), errb.String())
	}
	path := filepath.Join(dir, "__cluster/assignment.json")
	var a map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	var alive []any
	for _, br := range a["brokers"].([]any) {
		if br.(map[string]any)["id"].(string) != first.Next {
			alive = append(alive, br)
		}
	}
	a["brokers"], a["assignmentVersion"] = alive, first.Version-3
	b, _ = json.Marshal(a)
	writeFile(t, dir, "__cluster/assignment.json.tmp", string(b))
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("follow did not stop")
	}
	if exit.Code(err) != 3 {
		t.Fatalf("exit %d (%v), want 3\n%s", exit.Code(err), err, out.String())
	}
	var dev views.FollowEvent
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e views.FollowEvent
		if json.Unmarshal([]byte(line), &e) == nil && e.Kind == "version" {
			dev = e
		}
	}
	if dev.AsPlanned || len(dev.Deviations) == 0 || !strings.Contains(dev.Deviations[0], "went backwards") || dev.Version != first.Version-3 {
		t.Fatalf("the backwards version: %+v\n%s", dev, out.String())
	}
}
