package commands

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
)

// whois --what-if-down on the controller, per generation, on the lab's
// phase-2 assignment (v3, controller skafka-0, entries g-beta → skafka-2
// and g-gamma → skafka-0). On the real Go cluster the controller that
// took over wrote its first version with no consumerGroups: every group
// fell back to the hash tier. A Rust controller reloads the entries.
func TestWhoisWhatIfControllerDownPerGeneration(t *testing.T) {
	t.Parallel()
	dir := labCluster(t)
	keys := []string{"g-beta", "g-gamma", "lab-group"}
	run := func(args ...string) (map[string]inspect.WhoisResult, cliResult) {
		t.Helper()
		r := runCLI(t, "", nil, append(append([]string{"whois", "--data-dir", dir, "--what-if-down", "skafka-0", "-o", "json"}, args...), keys...)...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.Code, r.Err)
		}
		var rs []inspect.WhoisResult
		if err := json.Unmarshal([]byte(r.Out), &rs); err != nil {
			t.Fatal(err)
		}
		out := map[string]inspect.WhoisResult{}
		for _, x := range rs {
			out[x.Key] = x
		}
		return out, r
	}

	// Go: every entry dropped, every group on the hash tier over the
	// survivors (skafka-2 alone), the dropped ones say so.
	got, r := run("--kaas-version", "go")
	for _, k := range keys {
		if g := got[k]; g.Tier != "hash" || g.Coordinator != "skafka-2" || g.ExplicitBroker != "" {
			t.Errorf("go: %s: %+v", k, g)
		}
	}
	// g-beta's entry (on skafka-2, alive) would survive the broker change:
	// the failover alone drops it, and its answer says so. g-gamma's was
	// on the stopped broker, retired either way.
	if ws := strings.Join(got["g-beta"].Warnings, ";"); !strings.Contains(ws, "explicit entry is dropped") {
		t.Errorf("go: g-beta warnings %q", ws)
	}
	for _, want := range []string{"the controller skafka-0 stops", "writes v4 at controller epoch 1 or later", "no consumerGroups: all 2 explicit entries dropped", "Go / Rust ≤ 0.2.15", "real 3-broker Go-flavour kaas cluster", "pin --failover reload"} {
		if !strings.Contains(r.Err, want) {
			t.Errorf("go: stderr lacks %q:\n%s", want, r.Err)
		}
	}

	// Rust 0.2.18: the entry on an alive broker is reloaded and kept; the
	// one on the stopped controller is retired.
	got, r = run("--kaas-version", "0.2.18")
	if g := got["g-beta"]; g.Tier != "explicit" || g.Coordinator != "skafka-2" || len(g.Warnings) != 0 {
		t.Errorf("0.2.18: g-beta %+v", g)
	}
	if g := got["g-gamma"]; g.Tier != "hash" || g.Coordinator != "skafka-2" {
		t.Errorf("0.2.18: g-gamma %+v", g)
	}
	for _, want := range []string{"reloading the previous entries: 1 of 2 kept", "Rust 0.2.18, pinned", "assignment_writer.rs"} {
		if !strings.Contains(r.Err, want) {
			t.Errorf("0.2.18: stderr lacks %q:\n%s", want, r.Err)
		}
	}

	// The data dir here is the cluster dir: the generation cannot be told,
	// the newest kaas is assumed and said; --failover overrides.
	_, r = run()
	if !strings.Contains(r.Err, "undetermined, assuming Rust 0.2.18") || !strings.Contains(r.Err, "1 of 2 kept") {
		t.Errorf("unknown generation: %s", r.Err)
	}
	got, r = run("--kaas-version", "0.2.18", "--failover", "drop")
	if got["g-beta"].Tier != "hash" || !strings.Contains(r.Err, "model drop from --failover") {
		t.Errorf("--failover drop: %+v %s", got["g-beta"], r.Err)
	}

	// The table names the failover in its scenario line; a broker that is
	// not the controller implies none.
	r = runCLI(t, "", nil, "whois", "--data-dir", dir, "--kaas-version", "go", "--what-if-down", "skafka-0", "g-beta")
	if r.Code != 0 || !strings.Contains(r.Out, "the controller skafka-0 stops") || !strings.Contains(r.Out, "explicit entry is dropped") {
		t.Errorf("table: %d %s %s", r.Code, r.Out, r.Err)
	}
	r = runCLI(t, "", nil, "whois", "--data-dir", dir, "--kaas-version", "go", "--what-if-down", "skafka-2", "g-beta")
	if r.Code != 0 || strings.Contains(r.Out, "controller skafka") {
		t.Errorf("not the controller: %s", r.Out)
	}
	// --what-if-brokers without the controller is a failover too.
	r = runCLI(t, "", nil, "whois", "--data-dir", dir, "--kaas-version", "go", "--what-if-brokers", "skafka-1,skafka-2", "g-gamma")
	if r.Code != 0 || !strings.Contains(r.Out, "the controller skafka-0 stops") {
		t.Errorf("--what-if-brokers: %s %s", r.Out, r.Err)
	}
	for _, c := range []struct{ args []string }{
		{[]string{"--failover", "drop", "g"}},
		{[]string{"--what-if-down", "skafka-0", "--failover", "maybe", "g"}},
	} {
		r = runCLI(t, "", nil, append([]string{"whois", "--data-dir", dir}, c.args...)...)
		if r.Code != 2 || !strings.Contains(r.Err, "--failover") {
			t.Errorf("%v: exit %d %q", c.args, r.Code, r.Err)
		}
	}
}

// The prediction is what the sandbox's controller writes when the
// controller itself stops, for each failover behaviour: the Go flavour's
// (drop) and the Rust controller's (reload).
func TestWhoisWhatIfControllerDownSandbox(t *testing.T) {
	t.Parallel()
	for _, fo := range []sandbox.Failover{sandbox.FailoverDrop, sandbox.FailoverReload} {
		t.Run(string(fo), func(t *testing.T) {
			args := []string{"--what-if-down", "kaas-0"}
			if fo == sandbox.FailoverDrop {
				// The sandbox keeps a Rust volume layout: the Go flavour's
				// failover is named.
				args = append(args, "--failover", "drop")
			}
			p := predictStop(t, sandbox.Options{Failover: fo}, "kaas-0", args...)
			if !strings.Contains(p.stderr, "the controller kaas-0 stops") {
				t.Fatalf("no failover named: %s", p.stderr)
			}
			explicit := 0
			for i, g := range p.groups {
				got := p.actual[i]
				if p.want(i) != got.Coordinator || (fo == sandbox.FailoverDrop && got.Tier != "hash") {
					t.Errorf("%s: predicted %s (%s), the new controller's version says %s (%s)", g, p.want(i), p.predicted[i].Tier, got.Coordinator, got.Tier)
				}
				if got.Tier == "explicit" {
					explicit++
				}
			}
			if fo == sandbox.FailoverReload && explicit == 0 {
				t.Error("no entry was reloaded: the test proves nothing")
			}
		})
	}
}
