package commands

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/views"
)

// parseMetrics parses the Prometheus text format.
func parseMetrics(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("metrics do not parse: %v\n%s", err, text)
	}
	return mfs
}

// metricValue finds the sample of name whose labels include want.
func metricValue(mfs map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	mf := mfs[name]
	if mf == nil {
		return math.NaN(), false
	}
	for _, m := range mf.GetMetric() {
		ok := true
		for k, v := range want {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			ok = ok && found
		}
		if !ok {
			continue
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Untyped != nil:
			return m.GetUntyped().GetValue(), true
		}
	}
	return math.NaN(), false
}

func TestExporterOnceMatchesGroupsDescribe(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 20)
	commitAdmin(t, sb, "lagging", map[int32]int64{0: 5, 1: 5, 2: 5, 3: 5})
	commitAdmin(t, sb, "idle", map[int32]int64{0: 20, 1: 20, 2: 20, 3: 20})
	dd := sb.Layout().DataDir

	r := live(t, sb, "exporter", "--once", "--data-dir", dd, "--partition-metrics")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	mfs := parseMetrics(t, r.Out)
	if testing.Verbose() {
		t.Log(r.Out)
	}
	d := decodeJSON[views.GroupsDescribeLiveView](t, live(t, sb, "groups", "describe", "--data-dir", dd, "lagging", "idle", "-o", "json"))
	for _, grp := range d.Groups {
		got, ok := metricValue(mfs, "kaas_group_lag", map[string]string{"group": grp.Group})
		if !ok || int64(got) != grp.TotalLag {
			t.Errorf("kaas_group_lag{group=%q} = %v (present %v), groups describe says %d", grp.Group, got, ok, grp.TotalLag)
		}
		for _, p := range grp.Partitions {
			labels := map[string]string{"group": grp.Group, "topic": p.Topic, "partition": itoa32(p.Partition)}
			if got, ok := metricValue(mfs, "kaas_group_partition_committed_offset", labels); !ok || int64(got) != p.Committed {
				t.Errorf("committed %v %v = %v, describe %d", grp.Group, labels, got, p.Committed)
			}
		}
		co, ok := metricValue(mfs, "kaas_group_coordinator_info", map[string]string{"group": grp.Group, "broker": grp.Coordinator.Coordinator, "wire_broker": grp.WireCoordinator})
		if !ok || co != 1 {
			t.Errorf("no coordinator info for %s on %s (wire %s)", grp.Group, grp.Coordinator.Coordinator, grp.WireCoordinator)
		}
	}
	// Lag in seconds: the lagging group's committed records exist; the idle group is caught up.
	if v, ok := metricValue(mfs, "kaas_group_lag_seconds", map[string]string{"group": "lagging"}); !ok || v < 0 {
		t.Errorf("kaas_group_lag_seconds{group=lagging} = %v (present %v)", v, ok)
	}
	if v, ok := metricValue(mfs, "kaas_group_lag_seconds", map[string]string{"group": "idle"}); !ok || v != 0 {
		t.Errorf("kaas_group_lag_seconds{group=idle} = %v (present %v), want 0", v, ok)
	}
	a := sb.Assignment()
	if v, _ := metricValue(mfs, "kaas_assignment_version", nil); int64(v) != a.AssignmentVersion {
		t.Errorf("kaas_assignment_version %v, assignment says %d", v, a.AssignmentVersion)
	}
	if v, _ := metricValue(mfs, "kaas_assignment_brokers_alive", nil); int(v) != 3 {
		t.Errorf("kaas_assignment_brokers_alive %v", v)
	}
	// Sparse health: an OK group has no kaas_group_health and no
	// kaas_group_condition series (its coordinator series says it is
	// observed).
	for _, s := range inspect.HealthStates {
		if v, ok := metricValue(mfs, "kaas_group_health", map[string]string{"group": "idle", "state": s}); ok {
			t.Errorf("kaas_group_health{group=idle,state=%s} = %v for an OK group", s, v)
		}
		if v, ok := metricValue(mfs, "kaas_group_condition", map[string]string{"group": "idle", "condition": s}); ok {
			t.Errorf("kaas_group_condition{group=idle,condition=%s} = %v for an OK group", s, v)
		}
	}
	for _, name := range []string{"kaas_exporter_build_info", "kaas_exporter_refresh_duration_seconds", "kaas_broker_up", "kaas_broker_reachable",
		"kaas_coordinator_moves_total", "kaas_group_members", "kaas_exporter_broker_requests_total", "kaas_assignment_explicit_entries"} {
		if mfs[name] == nil {
			t.Errorf("metric %s missing", name)
		}
	}
	// Issue series and per-group counters are sparse: nothing is wrong
	// with these groups, so none is present.
	for _, name := range []string{"kaas_group_tiers_disagree", "kaas_group_stale_listings", "kaas_group_file_only", "kaas_group_wire_mismatch",
		"kaas_group_offset_rewinds_total", "kaas_group_vanished_partitions_total", "kaas_group_not_draining"} {
		if mfs[name] != nil {
			t.Errorf("sparse metric %s present for healthy groups: %v", name, mfs[name])
		}
	}
	// Without --partition-metrics no per-partition series.
	r = live(t, sb, "exporter", "--once", "--data-dir", dd)
	for name := range parseMetrics(t, r.Out) {
		if strings.HasPrefix(name, "kaas_group_partition_") {
			t.Errorf("per-partition series %s without --partition-metrics", name)
		}
	}
}

func TestExporterFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	journal := filepath.Join(t.TempDir(), "journal")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"exporter", "--once"}, "nothing to observe"},
		{[]string{"exporter", "--once", "--data-dir", dir, "--group-regex", "("}, "--group-regex"},
		{[]string{"exporter", "--once", "--data-dir", dir, "--interval", "0s"}, "must be positive"},
		{[]string{"exporter", "--once", "--data-dir", dir, "--max-groups", "-1"}, "--max-groups"},
		{[]string{"exporter", "--once", "--data-dir", dir, "--served-check-interval", "-1s"}, "--served-check-interval"},
		{[]string{"exporter", "--once", "--data-dir", dir, "--window", "30s", "--stop-after", "1m"}, "--stop-after"},
		{[]string{"groups", "health", "--data-dir", dir, "--window", "1s", "--interval", "2s"}, "longer than --window"},
		{[]string{"exporter", "--once", "--data-dir", dir, "--journal", journal}, "--once"},
		{[]string{"exporter", "--data-dir", dir, "--journal", journal, "--follow-offsets=false"}, "--follow-offsets"},
		{[]string{"exporter", "--data-dir", dir, "--journal", journal, "--journal-max-bytes", "lots"}, "--journal-max-bytes"},
		{[]string{"exporter", "--data-dir", dir, "--journal", journal, "--journal-max-age", "-1h"}, "must not be negative"},
		{[]string{"exporter", "-b", "127.0.0.1:1", "--listen", "127.0.0.1:0", "--journal", journal}, "give the volume"},
	} {
		r := runCLI(t, "", nil, c.args...)
		if r.Code != 2 || !strings.Contains(r.Err, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want usage error naming %q", c.args, r.Code, r.Err, c.want)
		}
	}
}

func TestExporterPartitionMetricsOff(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 2, Topics: []sandbox.Topic{{Name: "orders", Partitions: 4}}})
	produceOrders(t, sb, 3)
	commitAdmin(t, sb, "g1", map[int32]int64{0: 1})
	r := live(t, sb, "exporter", "--once", "--data-dir", sb.Layout().DataDir, "--partition-metrics=false", "--group-regex", "^g1$")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	mfs := parseMetrics(t, r.Out)
	if mfs["kaas_group_partition_lag"] != nil || mfs["kaas_group_partition_committed_offset"] != nil {
		t.Fatalf("partition series with --partition-metrics=false")
	}
	if v, ok := metricValue(mfs, "kaas_group_lag", map[string]string{"group": "g1"}); !ok || v != 2 {
		t.Fatalf("kaas_group_lag{g1} = %v, want 2 (log end 3, committed 1)", v)
	}
	if v, _ := metricValue(mfs, "kaas_exporter_groups", nil); v != 1 {
		t.Fatalf("kaas_exporter_groups %v, want 1 (--group-regex)", v)
	}
}

// Brokers only (no volume): groups the brokers list, coordinators from
// FindCoordinator, no volume families; a volume only: offsets from the
// files, coordinators from the volume's tiers, no broker families.
func TestExporterOneSource(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 2, Topics: []sandbox.Topic{{Name: "orders", Partitions: 4}}})
	produceOrders(t, sb, 3)
	commitAdmin(t, sb, "g1", map[int32]int64{0: 1, 1: 3, 2: 3, 3: 3})

	// A group with a live member: the brokers list it.
	cl, err := sb.Client(sandbox.ConsumerOpts("g2", "orders")...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithCancel(context.Background())
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	}()
	defer func() { cancel(); <-polled }()
	var mfs map[string]*dto.MetricFamily
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := live(t, sb, "exporter", "--once")
		if r.Code != 0 {
			t.Fatalf("brokers only: exit %d: %s", r.Code, r.Err)
		}
		mfs = parseMetrics(t, r.Out)
		if v, ok := metricValue(mfs, "kaas_group_state", map[string]string{"group": "g2", "state": "Stable"}); ok && v == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("brokers only: g2 never Stable with its member:\n%s", r.Out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v, ok := metricValue(mfs, "kaas_group_members", map[string]string{"group": "g2"}); !ok || v != 1 {
		t.Errorf("brokers only: kaas_group_members{g2} = %v, want 1", v)
	}
	// Without a volume, brokers are named by node id.
	node, _ := inspect.BrokerOrdinal(sb.Coordinator("g2"))
	if _, ok := metricValue(mfs, "kaas_group_coordinator_info", map[string]string{"group": "g2", "tier": "wire", "broker": fmt.Sprintf("node %d", node)}); !ok {
		t.Errorf("brokers only: no coordinator info from FindCoordinator for g2 (node %d)", node)
	}
	if mfs["kaas_assignment_version"] != nil || mfs["kaas_group_tiers_disagree"] != nil {
		t.Errorf("brokers only: volume families present")
	}

	// A corrupt offset file: a volume finding, and the group's health ERR.
	writeFile(t, sb.Layout().OffsetsPath(), "broken.json", `{"offsets":{"orders/0":`)
	r := runCLI(t, "", nil, "exporter", "--once", "--data-dir", sb.Layout().DataDir, "--partition-metrics")
	if r.Code != 0 {
		t.Fatalf("volume only: exit %d: %s", r.Code, r.Err)
	}
	mfs = parseMetrics(t, r.Out)
	if v, ok := metricValue(mfs, "kaas_group_partition_committed_offset", map[string]string{"group": "g1", "partition": "0"}); !ok || v != 1 {
		t.Errorf("volume only: committed offset of g1/0 = %v, want 1 (from the offset file)", v)
	}
	if mfs["kaas_broker_reachable"] != nil || mfs["kaas_group_state"] != nil {
		t.Errorf("volume only: broker families present")
	}
	if _, ok := metricValue(mfs, "kaas_group_coordinator_info", map[string]string{"group": "g1", "broker": sb.Coordinator("g1")}); !ok {
		t.Errorf("volume only: no coordinator info for g1 from the volume's tiers")
	}
	if v, ok := metricValue(mfs, "kaas_volume_findings", map[string]string{"severity": "error", "code": "offsets.corruptFile"}); !ok || v < 1 {
		t.Errorf("volume only: kaas_volume_findings for the corrupt file = %v", v)
	}
	if v, ok := metricValue(mfs, "kaas_group_health", map[string]string{"group": "broken", "state": "ERR"}); !ok || v != 1 {
		t.Errorf("volume only: health of the group with a corrupt file = %v, want ERR", v)
	}
}

// The exporter's journal is refused where 'watch --offsets' refuses it:
// at the data-dir root (kaas's operator deletes it), and on a volume whose
// generation cannot be decided (which offsets dir is live?).
func TestExporterJournalRefusals(t *testing.T) {
	t.Parallel()
	data, _ := offsetsVolume(t)
	r := runCLI(t, "", nil, "exporter", "--data-dir", data, "--listen", "127.0.0.1:0", "--journal", filepath.Join(data, "journal"))
	if r.Code != 4 || !strings.Contains(r.Err, "operator deletes unknown directories") {
		t.Errorf("journal at the data-dir root: exit %d %q", r.Code, r.Err)
	}
	writeFile(t, data, "__consumer_offsets/legacy.json", `{"offsets":{"orders/0":1}}`)
	r = runCLI(t, "", nil, "exporter", "--data-dir", data, "--listen", "127.0.0.1:0", "--journal", filepath.Join(t.TempDir(), "j"))
	if r.Code != 4 || !strings.Contains(r.Err, "--kaas-version") {
		t.Errorf("ambiguous generation: exit %d %q", r.Code, r.Err)
	}
}

// kaas_volume_generation_info names the generation the exporter assumed
// and why: pinned, detected, or undetermined.
func TestExporterGenerationInfo(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	for _, c := range []struct {
		args             []string
		generation, from string
	}{
		{[]string{"--kaas-version", "0.2.18"}, "0.2.18", "pinned"},
		{[]string{"--kaas-version", "0.1.190"}, "go", "pinned"},
		{nil, "unknown", "undetermined"}, // only the cluster dir holds offsets: 0.2.16 or 0.2.18
	} {
		r := runCLI(t, "", nil, append([]string{"exporter", "--once", "--data-dir", data}, c.args...)...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d %s", c.args, r.Code, r.Err)
		}
		mfs := parseMetrics(t, r.Out)
		if v, ok := metricValue(mfs, "kaas_volume_generation_info", map[string]string{"generation": c.generation, "source": c.from}); !ok || v != 1 {
			t.Errorf("%v: kaas_volume_generation_info{generation=%q,source=%q} = %v, %v\n%s", c.args, c.generation, c.from, v, ok, r.Out)
		}
		if fam := mfs["kaas_volume_generation_info"]; fam == nil || len(fam.Metric) != 1 {
			t.Errorf("%v: want exactly one kaas_volume_generation_info series", c.args)
		}
	}
	writeFile(t, data, "__consumer_offsets/old.json", `{"orders/0":1}`)
	os.Remove(filepath.Join(data, "__cluster", "__consumer_offsets", "g.json"))
	r := runCLI(t, "", nil, "exporter", "--once", "--data-dir", data)
	if v, ok := metricValue(parseMetrics(t, r.Out), "kaas_volume_generation_info", map[string]string{"generation": "go", "source": "detected"}); !ok || v != 1 {
		t.Errorf("Go-generation volume: %v %v\n%s%s", v, ok, r.Out, r.Err)
	}
}
