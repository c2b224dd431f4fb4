//go:build realkaas && unix

package realkaas

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A rolling restart of the Rust cluster in the order plan restart found,
// with the waits it prints (each broker down until the groups its stop
// moved re-joined, at least stopToStartSeconds), followed with plan restart
// --follow --keep-going: every version kaas writes is as planned, or one the
// plan allowed (a failover's last broker to connect).

type followLine struct {
	Kind       string   `json:"kind"`
	Version    int64    `json:"assignmentVersion"`
	Event      string   `json:"event"`
	Broker     string   `json:"broker"`
	AsPlanned  bool     `json:"asPlanned"`
	Deviations []string `json:"deviations"`
	Notes      []string `json:"notes"`
	Message    string   `json:"message"`
	Moves      []struct {
		Group     string `json:"group"`
		To        string `json:"to"`
		Predicted string `json:"predicted"`
	} `json:"moves"`
}

func followLines(b *bg) []followLine {
	var out []followLine
	for _, l := range strings.Split(b.output(), "\n") {
		var f followLine
		if strings.HasPrefix(l, "{") && json.Unmarshal([]byte(l), &f) == nil {
			out = append(out, f)
		}
	}
	return out
}

func countKind(ls []followLine, kinds ...string) int {
	n := 0
	for _, l := range ls {
		for _, k := range kinds {
			if l.Kind == k {
				n++
			}
		}
	}
	return n
}

func TestRustRollingRestart(t *testing.T) {
	t.Parallel()
	c := newRustCluster(t, "orders:3")
	rec := recordAssignments(t, c)
	activeGroups(t, c, rec)
	brokers := strings.Join(c.Addrs(), ",")
	pr := ok(t, "plan", "restart", "--data-dir", c.Data, "--kaas-version", "0.2.18", "--brokers", brokers)
	t.Logf("plan restart:\n%s\n%s", pr.stdout, pr.stderr)
	plan := decode[struct {
		StopToStartSeconds int `json:"stopToStartSeconds"`
		Plan               struct {
			Order []string `json:"order"`
			Steps []struct {
				WaitFor []string `json:"waitFor"`
			} `json:"steps"`
		} `json:"plan"`
	}](t, ok(t, "plan", "restart", "--data-dir", c.Data, "--kaas-version", "0.2.18", "--brokers", brokers, "-o", "json"))
	if plan.StopToStartSeconds < 10 || len(plan.Plan.Order) != 3 {
		t.Fatalf("plan: %+v", plan)
	}
	waits := strings.Join(plan.Plan.Steps[0].WaitFor, "\n")
	for _, want := range []string{"Stable on the new coordinator", "at least 15s after the stop", "3–6 s after the stop"} {
		if !strings.Contains(waits, want) && !strings.Contains(waits, "no group with members moves") {
			t.Errorf("plan restart's first step does not say %q:\n%s", want, waits)
		}
	}
	t.Logf("plan: %s; step 1 waits:\n%s", strings.Join(plan.Plan.Order, " → "), waits)
	fol := startBG(t, "plan", "restart", "--follow", "--keep-going", "--data-dir", c.Data, "--kaas-version", "0.2.18", "--brokers", brokers,
		"--follow-timeout", "4m", "--poll-interval", "100ms", "-o", "jsonl")
	waitFor(t, 30*time.Second, "plan restart --follow to start", func() error {
		if countKind(followLines(fol), "following") == 0 {
			return fmt.Errorf("output: %s", fol.output())
		}
		return nil
	})
	for step, id := range plan.Plan.Order {
		i := indexOf(c, id)
		stopped := time.Now()
		if err := c.Term(i); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 60*time.Second, id+"'s stop version in the follow", func() error {
			if countKind(followLines(fol), "waiting") <= step {
				return fmt.Errorf("output: %s", fol.output())
			}
			return nil
		})
		t.Logf("step %d: %s stopped; its version came %s later", step+1, id, time.Since(stopped).Round(100*time.Millisecond))
		// The wait plan restart prescribes between stop and start: the
		// groups the stop version moved Stable on their new coordinator
		// for 2 s, and at least stopToStartSeconds after the stop.
		var moved []string
		for _, l := range followLines(fol) {
			if l.Kind == "version" && l.Event == "stop" && l.Broker == id {
				moved = moved[:0]
				for _, m := range l.Moves {
					moved = append(moved, m.Group)
				}
			}
		}
		for _, g := range moved {
			waitGroupState(t, c, g, "Stable")
		}
		wait := 2 * time.Second
		if left := time.Duration(plan.StopToStartSeconds)*time.Second - time.Since(stopped); left > wait {
			wait = left
		}
		time.Sleep(wait)
		if err := c.StartBroker(i); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 90*time.Second, id+"'s step settled in the follow", func() error {
			if n := countKind(followLines(fol), "settled", "unsettled", "done"); n <= step {
				return fmt.Errorf("%d steps settled", n)
			}
			return nil
		})
	}
	waitFor(t, 60*time.Second, "the follow to finish", func() error {
		select {
		case <-fol.done:
			return nil
		default:
			return fmt.Errorf("still following")
		}
	})
	vs := rec.versions()
	for v := int64(1); v <= 20; v++ {
		if p, ok := vs[v]; ok {
			a := readAssignment(t, p)
			t.Logf("kaas wrote v%d epoch %d controller %s alive %v entries %s", v, a.ControllerEpoch, a.Controller, aliveIDs(a), fmtMap(entriesOf(a)))
		}
	}
	versions := 0
	for _, l := range followLines(fol) {
		if l.Kind != "version" {
			continue
		}
		versions++
		t.Logf("v%d %s %s: as planned %v %v %v", l.Version, l.Event, l.Broker, l.AsPlanned, l.Deviations, l.Notes)
		if !l.AsPlanned {
			t.Errorf("v%d (%s %s) deviated from the plan although every wait was kept: %v", l.Version, l.Event, l.Broker, l.Deviations)
		}
	}
	if versions < 2*len(plan.Plan.Order) {
		t.Errorf("the follow checked %d versions for %d restarts:\n%s", versions, len(plan.Plan.Order), fol.output())
	}
	if fol.cmd.ProcessState == nil || fol.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("plan restart --follow ended with %v:\n%s", fol.cmd.ProcessState, fol.output())
	}
}
