package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/views"
)

// Direct tests: each command's run function called with Globals built by
// GlobalsFor and its options, no cli.Context.

// mustGlobals is GlobalsFor over ios for a direct test of a run function:
// an empty environment and an empty stdin unless ios sets them.
func mustGlobals(t *testing.T, ios *IOStreams, args ...string) *Globals {
	t.Helper()
	if ios.Getenv == nil {
		ios.Getenv = func(string) string { return "" }
	}
	if ios.In == nil {
		ios.In = strings.NewReader("")
	}
	g, err := GlobalsFor(ios, args...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// directGlobals resolves args over fresh buffers with the clock pinned at
// now.
func directGlobals(t *testing.T, now time.Time, args ...string) (*Globals, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var out, errb bytes.Buffer
	return mustGlobals(t, &IOStreams{Out: &out, Err: &errb, Now: func() time.Time { return now }}, args...), &out, &errb
}

func decodeOut[T any](t *testing.T, out *bytes.Buffer) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("not JSON (%v):\n%s", err, out)
	}
	return v
}

// doctor offline on a small volume: the volume checks run at the run's
// clock, the live check is skipped for --offline; without a volume there
// is nothing to check, --offline or not (a usage error, not HEALTHY).
func TestRunDoctorDirect(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	g, out, errb := directGlobals(t, now, "--data-dir", data, "-o", "json")
	err := runDoctor(context.Background(), g, doctorOptions{minSeverity: volume.SevInfo, offline: true})
	if code := exit.Code(err); code != exit.OK && code != exit.Problems {
		t.Fatalf("doctor: %v\n%s", err, errb)
	}
	v := decodeOut[views.DoctorView](t, out)
	ran := map[string]inspect.CheckRun{}
	for _, c := range v.Checks {
		ran[c.Name] = c
	}
	if v.Mode != inspect.DoctorOffline || !ran[inspect.CheckVolume].Ran || !ran[inspect.CheckEntries].Ran || ran[inspect.CheckLive].Ran {
		t.Errorf("mode %s, checks %+v", v.Mode, v.Checks)
	}
	if n := ran[inspect.CheckTxn].Note; n != "evaluated at 2026-12-01T09:30:00Z" {
		t.Errorf("txn check evaluated %q, want the run's clock", n)
	}
	if n := ran[inspect.CheckLive].Note; n != "skipped (--offline)" {
		t.Errorf("live check note %q", n)
	}
	if v.Sources.Generation == nil || v.Sources.OffsetFiles != 1 {
		t.Errorf("sources %+v", v.Sources)
	}
	for _, offline := range []bool{true, false} {
		g, _, _ := directGlobals(t, now, "-o", "json")
		err := runDoctor(context.Background(), g, doctorOptions{minSeverity: volume.SevInfo, offline: offline})
		if exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), "nothing to check") {
			t.Errorf("no volume, offline %v: %v, want the usage error", offline, err)
		}
	}
}

// groups health over the volume alone: every group evaluated, a group
// asked for by name that does not exist is an error naming it.
func TestRunGroupsHealthDirect(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	g, out, _ := directGlobals(t, time.Now(), "--data-dir", data, "-o", "json", "-q")
	o := groupsHealthOptions{window: 40 * time.Millisecond, interval: 20 * time.Millisecond, maxGroups: 10}
	if err := runGroupsHealth(context.Background(), g, o); exit.Code(err) == exit.Error || exit.Code(err) == exit.Usage {
		t.Fatalf("groups health: %v", err)
	}
	v := decodeOut[views.GroupsHealthView](t, out)
	if v.Source != "observed" || len(v.Groups) != 1 || v.Groups[0].Group != "g" || v.Groups[0].Samples != 3 {
		t.Fatalf("view %+v", v)
	}
	g, _, _ = directGlobals(t, time.Now(), "--data-dir", data, "-o", "json", "-q")
	o.names = []string{"g", "nobody"}
	if err := runGroupsHealth(context.Background(), g, o); err == nil || !strings.Contains(err.Error(), `"nobody"`) {
		t.Errorf("a group that does not exist: %v", err)
	}
}

// exporter --once over the volume alone prints the metrics a scrape would
// serve; with --probe and no brokers it is a usage error.
func TestRunExporterCmdDirect(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	g, out, _ := directGlobals(t, time.Now(), "--data-dir", data, "-q")
	o := exporterOptions{once: true, interval: time.Second, window: time.Minute, maxGroups: 10}
	if err := runExporterCmd(context.Background(), g, o); err != nil {
		t.Fatalf("exporter --once: %v", err)
	}
	if !strings.Contains(out.String(), `kaas_group_coordinator_info{group="g",broker="kaas-0",tier="hash"`) {
		t.Errorf("no series for group g:\n%s", out)
	}
	o.probe = true
	if err := runExporterCmd(context.Background(), g, o); exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), "--probe needs") {
		t.Errorf("--probe without brokers: %v", err)
	}
}

// probe and doctor against the sandbox: every broker passes two probe
// rounds; doctor merges the volume with the brokers and runs every check.
// Then the sources are refused the way the command line refuses them.
func TestRunProbeAndDoctorDirect(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	dd := sb.Layout().DataDir
	brokers := strings.Join(sb.Bootstrap(), ",")
	g, out, errb := directGlobals(t, time.Now(), "--data-dir", dd, "--brokers", brokers, "--timeout", "3s", "-o", "json")
	if err := runProbe(context.Background(), g, probeOptions{count: 2, interval: 10 * time.Millisecond}); err != nil {
		t.Fatalf("probe: %v\n%s\n%s", err, errb, out) // out: each broker's steps, the failed one's error
	}
	pv := decodeOut[views.ProbeView](t, out)
	if pv.Rounds != 2 || len(pv.Probes) != 2 || len(pv.Brokers) != 3 {
		t.Fatalf("probe view: %d rounds, %d probes, %d brokers", pv.Rounds, len(pv.Probes), len(pv.Brokers))
	}
	for _, b := range pv.Brokers {
		if !b.OK || b.Rounds != 2 {
			t.Errorf("broker %+v", b)
		}
	}

	g, out, errb = directGlobals(t, time.Now(), "--data-dir", dd, "--brokers", brokers, "--timeout", "3s", "-o", "json")
	err := runDoctor(context.Background(), g, doctorOptions{minSeverity: volume.SevInfo})
	if code := exit.Code(err); code != exit.OK && code != exit.Problems {
		t.Fatalf("doctor: %v\n%s", err, errb)
	}
	dv := decodeOut[views.DoctorView](t, out)
	if dv.Mode != inspect.DoctorMerged || !dv.Sources.Live || len(dv.Sources.Brokers) != 3 {
		t.Errorf("doctor: mode %s, sources %+v", dv.Mode, dv.Sources)
	}
	for _, c := range dv.Checks {
		if !c.Ran {
			t.Errorf("check %s did not run: %s", c.Name, c.Note)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--brokers", brokers}, "probe needs the volume"},
		{[]string{"--data-dir", dd}, "probe needs brokers"},
	} {
		g, _, _ := directGlobals(t, time.Now(), c.args...)
		err := runProbe(context.Background(), g, probeOptions{count: 1})
		if exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("probe %v: %v, want %q", c.args, err, c.want)
		}
	}
	// Brokers that cannot be reached: the probe needs them, so the error
	// does not advise running on the volume alone.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g, _, _ = directGlobals(t, time.Now(), "--data-dir", dd, "--brokers", brokers, "--timeout", "3s")
	if err := runProbe(ctx, g, probeOptions{count: 1}); err == nil || strings.Contains(err.Error(), "without brokers") {
		t.Errorf("probe with no broker reachable: %v", err)
	}
}
