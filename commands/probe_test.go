package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/views"
)

// kaasctl probe on the sandbox: every broker OK, each through its own
// canary; with one broker's coordination broken, the probe names it and
// the failing step, and the others stay OK. The canaries' files are all
// it writes, and no listing shows them.
func TestProbeSandbox(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	dd := sb.Layout().DataDir
	offsets := sb.Layout().OffsetsPath()
	before, _ := os.ReadDir(offsets)

	r := live(t, sb, "probe", "--data-dir", dd, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("probe: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	v := decodeJSON[views.ProbeView](t, r)
	if len(v.Brokers) != 3 || v.Topic != "orders" {
		t.Fatalf("probe view %+v", v)
	}
	for _, b := range v.Brokers {
		if !b.OK || !strings.HasPrefix(b.Canary, inspect.CanaryPrefix+b.Broker+"-") || sb.Coordinator(b.Canary) != b.Broker || len(b.Steps) != 3 {
			t.Errorf("broker %+v (the sandbox routes its canary to %s)", b, sb.Coordinator(b.Canary))
		}
	}
	// What it wrote: one offset file per canary, nothing else.
	after, _ := os.ReadDir(offsets)
	var added []string
	for _, e := range after {
		if !slices_contains(before, e.Name()) {
			added = append(added, e.Name())
		}
	}
	if len(added) != 3 {
		t.Errorf("files written: %v", added)
	}
	for _, n := range added {
		if !strings.HasPrefix(n, inspect.CanaryPrefix) || filepath.Ext(n) != ".json" {
			t.Errorf("the probe wrote %s", n)
		}
	}
	// Listings leave the canaries out.
	if r := live(t, sb, "groups", "list", "--data-dir", dd); strings.Contains(r.Out, inspect.CanaryPrefix) {
		t.Errorf("groups list shows canaries:\n%s", r.Out)
	}
	if r := runCLI(t, "", nil, "exporter", "--data-dir", dd, "--once"); strings.Contains(r.Out, inspect.CanaryPrefix) {
		t.Errorf("exporter --once shows canaries")
	}

	// One broker cannot coordinate: named, with the failing step.
	victim := sb.BrokerIDs()[1]
	if err := sb.BreakCoordination(victim, true); err != nil {
		t.Fatal(err)
	}
	r = live(t, sb, "probe", "--data-dir", dd, "--count", "2", "--interval", "10ms", "-o", "json")
	if r.Code != 3 {
		t.Fatalf("broken %s: exit %d\n%s\n%s", victim, r.Code, r.Err, r.Out)
	}
	v = decodeJSON[views.ProbeView](t, r)
	for _, b := range v.Brokers {
		broken := b.Broker == victim
		if b.OK == broken || broken && (b.FailedStep != wire.StepOffsetCommit || b.Failures != 2 || !strings.Contains(b.Error, "COORDINATOR_NOT_AVAILABLE")) {
			t.Errorf("broker %+v", b)
		}
	}
	// The table names it too.
	r = live(t, sb, "probe", "--data-dir", dd)
	if r.Code != 3 || !strings.Contains(r.Out, "FAILED") || !strings.Contains(r.Out, "OffsetCommit") || !strings.Contains(r.Out+r.Err, victim+" ("+wire.StepOffsetCommit+")") {
		t.Errorf("table: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	if testing.Verbose() {
		t.Log(r.Out + r.Err)
	}
}

func slices_contains(es []os.DirEntry, name string) bool {
	for _, e := range es {
		if e.Name() == name {
			return true
		}
	}
	return false
}

// exporter --probe: per broker success, step latencies and the failing
// step, with one broker's coordination broken.
func TestExporterProbe(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	victim := sb.BrokerIDs()[2]
	if err := sb.BreakCoordination(victim, true); err != nil {
		t.Fatal(err)
	}
	r := live(t, sb, "exporter", "--data-dir", sb.Layout().DataDir, "--once", "--probe")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Err)
	}
	for _, want := range []string{
		`kaas_probe_success{broker="kaas-0"} 1`, `kaas_probe_success{broker="` + victim + `"} 0`,
		`kaas_probe_failures_total{broker="` + victim + `",step="OffsetCommit"} 1`,
		`kaas_probe_step_duration_seconds_count{broker="kaas-0",step="OffsetFetch"} 1`,
		`kaas_probe_canary_info{broker="kaas-1",group="` + inspect.CanaryPrefix + `kaas-1-`,
	} {
		if !strings.Contains(r.Out, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(r.Out, `kaas_group_lag{group="`+inspect.CanaryPrefix) {
		t.Error("a canary group has group metrics")
	}
	if !strings.Contains(r.Err, victim+" at OffsetCommit") {
		t.Errorf("the log does not name %s: %s", victim, r.Err)
	}
}
