package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestControlEndpoint(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3, Topics: []Topic{{Name: "orders", Partitions: 1}}})
	commitGroups(t, sb, "orders", groupNames(12)...)
	quit := make(chan struct{})
	cs, err := sb.ServeControl("127.0.0.1:0", func() { close(quit) })
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(method, path string, wantCode int, v any) {
		t.Helper()
		req, _ := http.NewRequest(method, cs.URL()+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != wantCode {
			t.Fatalf("%s %s: status %d, want %d", method, path, resp.StatusCode, wantCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	var st Status
	call("GET", "/status", 200, &st)
	if st.AssignmentVersion != 1 || len(st.Brokers) != 3 || st.Controller != "kaas-0" || len(st.Groups) != 12 {
		t.Fatalf("status = %+v", st)
	}
	var ch ChangeResult
	call("POST", "/stop?broker=kaas-2", 200, &ch)
	if !ch.Changed || ch.AssignmentVersion != 2 || strings.Join(ch.Brokers, ",") != "kaas-0,kaas-1" {
		t.Fatalf("stop = %+v", ch)
	}
	for _, m := range ch.Moved {
		if m.From == m.To || sb.Coordinator(m.Group) != m.To {
			t.Fatalf("move %+v does not match the routing (%s)", m, sb.Coordinator(m.Group))
		}
	}
	if sb.Running("kaas-2") {
		t.Fatal("kaas-2 still running")
	}
	var e map[string]string
	call("POST", "/stop?broker=kaas-7", 404, &e)
	if !strings.Contains(e["error"], "unknown broker") {
		t.Fatalf("error = %v", e)
	}
	call("POST", "/stop", 400, &e)
	call("GET", "/stop?broker=kaas-1", 405, &struct{}{})
	call("POST", "/start?broker=kaas-2", 200, &ch)
	if !ch.Changed || ch.AssignmentVersion != 3 || !sb.Running("kaas-2") {
		t.Fatalf("start = %+v", ch)
	}
	var qk map[string]any
	call("POST", "/quirk?name=zero-timestamp-offsets&state=on", 200, &qk)
	if qk["on"] != true || !sb.zeroTimeOffsets.Load() {
		t.Fatalf("quirk on = %v, sandbox %v", qk, sb.zeroTimeOffsets.Load())
	}
	call("POST", "/quirk?name=zero-timestamp-offsets&state=off", 200, &qk)
	if qk["on"] != false || sb.zeroTimeOffsets.Load() {
		t.Fatalf("quirk off = %v, sandbox %v", qk, sb.zeroTimeOffsets.Load())
	}
	call("POST", "/quirk?name=nope&state=on", 400, &e)
	if strings.Contains(ControlHelp, `\n`) || !strings.Contains(ControlHelp, "POST /quirk") {
		t.Fatalf("ControlHelp must list POST /quirk and hold no literal \\n:\n%s", ControlHelp)
	}
	var q map[string]bool
	call("POST", "/quit", 200, &q)
	select {
	case <-quit:
	case <-time.After(5 * time.Second):
		t.Fatal("POST /quit did not call onQuit")
	}

	p, err := sb.WriteStateFile(cs.URL())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(p) != sb.Layout().DataDir || !strings.HasPrefix(filepath.Base(p), ".") {
		t.Fatalf("state file %s must be a dot-file at the data-dir root", p)
	}
	var sf stateFile
	data, _ := os.ReadFile(p)
	if err := json.Unmarshal(data, &sf); err != nil || sf.Control != cs.URL() || sf.Bootstrap != strings.Join(sb.Bootstrap(), ",") {
		t.Fatalf("state file %s: %v", data, err)
	}
}

func TestCommandLines(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 2, Topics: []Topic{{Name: "orders", Partitions: 1}}})
	if _, err := sb.Command("quit"); !errors.Is(err, ErrQuit) {
		t.Fatalf("quit: %v", err)
	}
	if out, err := sb.Command("  "); out != "" || err != nil {
		t.Fatalf("blank line: %q %v", out, err)
	}
	if _, err := sb.Command("stop"); err == nil || !strings.Contains(err.Error(), "usage: stop kaas-N") {
		t.Fatalf("stop without a broker: %v", err)
	}
	out, err := sb.Command("STOP kaas-1")
	if err != nil || !strings.Contains(out, "stopped kaas-1: assignment.json v2 written (brokers: kaas-0)") {
		t.Fatalf("stop: %q %v", out, err)
	}
	if out, _ := sb.Command("status"); !strings.Contains(out, "kaas-1  1     ") || !strings.Contains(out, "stopped") {
		t.Fatalf("status:\n%s", out)
	}
	if out, _ := sb.Command("groups"); out != "no groups yet" {
		t.Fatalf("groups on an empty sandbox: %q", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sb.Commit(ctx, "g1", map[string]map[int32]int64{"orders": {0: 1}}); err != nil {
		t.Fatal(err)
	}
	if out, _ := sb.Command("groups"); !strings.Contains(out, `"g1"   kaas-0`) || !strings.Contains(out, "hash") {
		t.Fatalf("groups:\n%s", out)
	}
}

func TestDemoGroupsCommitAndFollowTheirCoordinator(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3, Topics: DemoTopics, PollInterval: 50 * time.Millisecond})
	if err := sb.StartDemo(); err != nil {
		t.Fatal(err)
	}
	sb.WaitFor(t, "every demo group's offsets file", 20*time.Second, func() bool {
		for _, g := range DemoGroupNames() {
			if _, err := os.Stat(filepath.Join(sb.Layout().OffsetsPath(), g+".json")); err != nil {
				return false
			}
		}
		return true
	})
	coord := sb.Coordinator("orders-app")
	before, _ := readOffsets(t, sb, "orders-app")
	if _, err := sb.StopBroker(coord); err != nil {
		t.Fatal(err)
	}
	sb.WaitFor(t, "orders-app to commit again after its coordinator "+coord+" stopped", 20*time.Second, func() bool {
		after, ok := readOffsets(t, sb, "orders-app")
		if !ok {
			return false
		}
		for k, v := range after.Offsets {
			if v > before.Offsets[k] {
				return true
			}
		}
		return false
	})
	if sb.Coordinator("orders-app") == coord {
		t.Fatal("orders-app still routed to the stopped broker")
	}
	// Manifests exist for the demo topics.
	if _, err := os.Stat(filepath.Join(sb.Layout().DataDir, "orders", "5", "manifest.json")); err != nil {
		t.Fatal(err)
	}
}

func TestChurnKeepsDemoGroupsCommitting(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 4, Topics: DemoTopics, PollInterval: 50 * time.Millisecond})
	if err := sb.StartDemo(); err != nil {
		t.Fatal(err)
	}
	sb.WaitFor(t, "the first commit of orders-app", 20*time.Second, func() bool {
		_, ok := readOffsets(t, sb, "orders-app")
		return ok
	})
	last := sb.Assignment().AssignmentVersion
	for i, step := range []string{"stop kaas-1", "stop kaas-0", "start kaas-1", "stop kaas-3", "start kaas-0", "start kaas-3"} {
		if _, err := sb.Command(step); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		v := sb.Assignment().AssignmentVersion
		if v != last+1 {
			t.Fatalf("step %d (%s): version %d after %d", i, step, v, last)
		}
		last = v
		assertFindCoordinator(t, sb, DemoGroupNames())
		time.Sleep(150 * time.Millisecond)
	}
	before, _ := readOffsets(t, sb, "audit")
	sb.WaitFor(t, "audit to commit progress after the churn", 20*time.Second, func() bool {
		after, _ := readOffsets(t, sb, "audit")
		for k, v := range after.Offsets {
			if v > before.Offsets[k] {
				return true
			}
		}
		return false
	})
	a := sb.Assignment()
	// kaas-1 was down when kaas-0 stopped, so kaas-2 won the lease and kept it.
	if a.ControllerEpoch != 2 || a.Controller != "kaas-2" {
		t.Fatalf("controller after stopping kaas-0: %s epoch %d, want kaas-2 epoch 2", a.Controller, a.ControllerEpoch)
	}
	if !strings.Contains(readLog(t, sb, "kaas-0"), "controller stack shut down") {
		t.Fatal("kaas-0 did not log the end of its controller term")
	}
}
