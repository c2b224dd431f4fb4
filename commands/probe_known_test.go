package commands

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/views"
)

// The probe never writes a group kaasctl did not create: a group that has
// the first canary id of a broker and offsets a consumer committed keeps
// its file byte for byte, and the next id is the canary. Every canary
// offset is one kaas could hold: the partition's log end.
func TestProbeLeavesForeignGroupsAlone(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	dd := sb.Layout().DataDir
	produceOrders(t, sb, 7)
	// Which id would the probe take for kaas-0? The first canary it routes there.
	first := inspect.CanaryGroups(sb.Assignment(), nil)[0]
	commitAdmin(t, sb, first.Group, map[int32]int64{0: 3, 1: 4})
	path := filepath.Join(sb.Layout().OffsetsPath(), first.Group+".json")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := live(t, sb, "probe", "--data-dir", dd, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("probe: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	v := decodeJSON[views.ProbeView](t, r)
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("the probe rewrote %s:\n%s\nwas\n%s", path, after, before)
	}
	rep := v.Probes[0]
	if rep.Offset < 0 || rep.Offset > 7 {
		t.Errorf("canary offset %d: outside the log of orders/0 (0..7)", rep.Offset)
	}
	for _, b := range v.Brokers {
		if b.Canary == first.Group {
			t.Errorf("%s probed through %s, a group kaasctl did not create", b.Broker, b.Canary)
		}
	}
	if !strings.Contains(r.Err, first.Group) || !strings.Contains(r.Err, "did not commit") {
		t.Errorf("the probe does not say it left %s alone:\n%s", first.Group, r.Err)
	}
	// Its own canaries: metadata "kaasctl probe <ms>", the log end.
	for _, b := range v.Brokers {
		data, err := os.ReadFile(filepath.Join(sb.Layout().OffsetsPath(), b.Canary+".json"))
		if err != nil {
			t.Fatalf("%s: %v", b.Broker, err)
		}
		var f struct {
			Offsets  map[string]int64  `json:"offsets"`
			Metadata map[string]string `json:"metadata"`
		}
		if err := json.Unmarshal(data, &f); err != nil || f.Offsets["orders/0"] != rep.Offset || !strings.HasPrefix(f.Metadata["orders/0"], inspect.ProbeMetadata+" ") {
			t.Errorf("%s's canary file: %s (%v)", b.Broker, data, err)
		}
	}
	// A second probe takes the same canaries again (its own files).
	r2 := live(t, sb, "probe", "--data-dir", dd, "-o", "json")
	v2 := decodeJSON[views.ProbeView](t, r2)
	for i, b := range v2.Brokers {
		if r2.Code != 0 || b.Canary != v.Brokers[i].Canary {
			t.Errorf("second probe: exit %d, %s canary %s (was %s)", r2.Code, b.Broker, b.Canary, v.Brokers[i].Canary)
		}
	}
}

// A broker that is down is dropped by kaas from brokers[] and from its
// metadata; known from --brokers, the probe still names it, failed at the
// step it could not reach, and exits 3.
func TestProbeNamesADownBroker(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	dd := sb.Layout().DataDir
	produceOrders(t, sb, 3)
	victim := sb.BrokerIDs()[2]
	addr, _ := sb.Addr(victim)
	if _, err := sb.StopBroker(victim); err != nil {
		t.Fatal(err)
	}
	for _, b := range sb.Assignment().Brokers {
		if b.ID == victim {
			t.Fatalf("the sandbox still lists %s: %+v", victim, sb.Assignment().Brokers)
		}
	}
	all := strings.Join(append(sb.Bootstrap(), addr), ",")
	r := runCLI(t, "", nil, "probe", "--data-dir", dd, "-b", all, "--timeout", "2s", "-o", "json")
	if r.Code != 3 {
		t.Fatalf("probe with %s down: exit %d\n%s\n%s", victim, r.Code, r.Out, r.Err)
	}
	v := decodeJSON[views.ProbeView](t, r)
	if len(v.Brokers) != 3 {
		t.Fatalf("%d rows, want 3 (the down broker too): %+v", len(v.Brokers), v.Brokers)
	}
	var down *exporter.ProbeBrokerStats
	for i, b := range v.Brokers {
		if b.Addr == addr {
			down = &v.Brokers[i]
		} else if !b.OK {
			t.Errorf("%s failed: %+v", b.Broker, b)
		}
	}
	if down == nil || down.OK || down.FailedStep != wire.StepFindCoordinator || !strings.Contains(down.Error, "--brokers") || len(down.Sources) != 1 || down.Sources[0] != "--brokers" {
		t.Fatalf("the down broker: %+v", down)
	}
	r = runCLI(t, "", nil, "probe", "--data-dir", dd, "-b", all, "--timeout", "2s")
	if r.Code != 3 || !strings.Contains(r.Out, addr) || !strings.Contains(r.Err, "1 broker failed the probe") {
		t.Errorf("table: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
}

// A frozen broker (SIGSTOP: connections accepted, nothing answered) fails
// its probe at FindCoordinator once --timeout has passed, and the probe
// of the others is not held up: the connection check's deadline is the
// only one it is waited for (it used to be waited for twice).
func TestProbeFrozenBrokerOneTimeout(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	dd := sb.Layout().DataDir
	produceOrders(t, sb, 3)
	victim := sb.BrokerIDs()[1]
	// Warm: the canaries exist, the metadata is known.
	if r := live(t, sb, "probe", "--data-dir", dd); r.Code != 0 {
		t.Fatalf("probe: %d %s", r.Code, r.Err)
	}
	if err := sb.FreezeBroker(victim, true); err != nil {
		t.Fatal(err)
	}
	defer sb.FreezeBroker(victim, false)
	const timeout = 700 * time.Millisecond
	r := live(t, sb, "probe", "--data-dir", dd, "--timeout", timeout.String(), "-o", "json")
	if r.Code != 3 {
		t.Fatalf("probe with %s frozen: exit %d\n%s\n%s", victim, r.Code, r.Out, r.Err)
	}
	v := decodeJSON[views.ProbeView](t, r)
	for _, b := range v.Brokers {
		if (b.Broker == victim) == b.OK {
			t.Errorf("%+v", b)
		}
		if b.Broker != victim {
			continue
		}
		// Waited for once, by the connection check: not asked again.
		if b.FailedStep != wire.StepFindCoordinator || !strings.Contains(b.Error, "did not answer when kaasctl connected") || len(b.Steps) != 0 {
			t.Errorf("the frozen broker: %+v", b)
		}
	}
	if testing.Verbose() {
		t.Log(r.Err)
	}
}

// A broker id with a newline (assignment.json is anybody's to write) never
// starts a line of its own in the probe's warnings.
func TestProbeBrokerIDNewline(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 1)
	dd := t.TempDir()
	cd := filepath.Join(dd, "__cluster")
	if err := os.MkdirAll(filepath.Join(cd, "__consumer_offsets"), 0o755); err != nil {
		t.Fatal(err)
	}
	asg := `{"controllerEpoch":1,"assignmentVersion":3,"controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"},{"id":"kaas-9\nwarning: forged line","health":"alive"}],"consumerGroups":[],"partitions":[]}`
	if err := os.WriteFile(filepath.Join(cd, "assignment.json"), []byte(asg), 0o644); err != nil {
		t.Fatal(err)
	}
	r := live(t, sb, "probe", "--data-dir", dd)
	for _, line := range strings.Split(r.Out+r.Err, "\n") {
		if strings.HasPrefix(line, "warning: forged") {
			t.Errorf("a forged line:\n%s\n%s", r.Out, r.Err)
		}
	}
	if r.Code != 3 {
		t.Errorf("exit %d\n%s", r.Code, r.Err)
	}
}

// On a new cluster no group has a file yet, so the volume cannot tell
// which offsets dir is live: the probe still probes (its canaries have no
// file in either dir), and leaves alone a foreign group in either.
func TestProbeOnAVolumeWithoutGroupFiles(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 2)
	dd := t.TempDir()
	b, err := os.ReadFile(sb.Layout().AssignmentPath())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dd, "__cluster/assignment.json", string(b))
	r := live(t, sb, "probe", "--data-dir", dd, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("probe: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	first := inspect.CanaryGroups(sb.Assignment(), nil)[0].Group
	writeFile(t, dd, "__consumer_offsets/"+first+".json", `{"offsets":{"orders/0":1}}`)
	v := decodeJSON[views.ProbeView](t, live(t, sb, "probe", "--data-dir", dd, "-o", "json"))
	for _, b := range v.Brokers {
		if b.Canary == first {
			t.Errorf("%s probed through %s, whose file in the other offsets dir is not the probe's", b.Broker, first)
		}
	}
}
