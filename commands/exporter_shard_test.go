package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// shardVolume is a volume of n file-only groups over three brokers, one of
// them dead, with explicit entries for every fifth group (some on the dead
// broker: mid-takeover) and one group on a broker brokers[] does not list.
func shardVolume(t *testing.T, n int) string {
	t.Helper()
	data := t.TempDir()
	cd := filepath.Join(data, "__cluster")
	od := filepath.Join(cd, "__consumer_offsets")
	if err := os.MkdirAll(od, 0o755); err != nil {
		t.Fatal(err)
	}
	var a strings.Builder
	a.WriteString(`{"controllerEpoch":2,"assignmentVersion":7,"controller":"kaas-0","brokers":[` +
		`{"id":"kaas-0","health":"alive"},{"id":"kaas-1","health":"dead"},{"id":"kaas-2","health":"alive"}],"partitions":[],"consumerGroups":[`)
	for i := 0; i < n; i += 5 {
		if i > 0 {
			a.WriteByte(',')
		}
		fmt.Fprintf(&a, `{"groupId":"svc-%04d","broker":"kaas-%d","epoch":2}`, i, i%3)
	}
	a.WriteString(`,{"groupId":"svc-0001","broker":"kaas-9","epoch":2}]}`)
	if err := os.WriteFile(filepath.Join(cd, "assignment.json"), []byte(a.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		body := fmt.Sprintf(`{"offsets":{"orders/0":%d,"orders/1":3}}`, i)
		if err := os.WriteFile(filepath.Join(od, fmt.Sprintf("svc-%04d.json", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return data
}

// groupsOf is the group label of every series of the family.
func groupsOf(mf *dto.MetricFamily) []string {
	var out []string
	for _, m := range mf.GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "group" {
				out = append(out, lp.GetValue())
			}
		}
	}
	return out
}

// Three shards export every group of one unsharded exporter exactly once,
// each the groups whose coordinator (by assignment.json's two tiers) has
// its rank among brokers[]; the cluster's series come from shard 0 alone.
func TestExporterShardsSplitByCoordinator(t *testing.T) {
	t.Parallel()
	const n = 200
	dd := shardVolume(t, n)
	whole := runCLI(t, "", nil, "exporter", "--once", "--data-dir", dd, "--max-groups", "0")
	if whole.Code != 0 {
		t.Fatalf("unsharded: exit %d: %s", whole.Code, whole.Err)
	}
	all := parseMetrics(t, whole.Out)
	want := groupsOf(all["kaas_group_coordinator_info"])
	if len(want) != n {
		t.Fatalf("unsharded: %d groups, want %d", len(want), n)
	}
	seen := map[string]int{}
	for k := range 3 {
		r := runCLI(t, "", nil, "exporter", "--once", "--data-dir", dd, "--max-groups", "0", "--shard", fmt.Sprintf("%d/3", k))
		if r.Code != 0 {
			t.Fatalf("shard %d/3: exit %d: %s", k, r.Code, r.Err)
		}
		mfs := parseMetrics(t, r.Out)
		checkShard(t, k, mfs, seen, n)
	}
	for _, g := range want {
		if seen[g] != 1 {
			t.Errorf("group %s exported by %d shards, want 1", g, seen[g])
		}
	}
}

// checkShard checks one shard's page and counts its groups into seen.
func checkShard(t *testing.T, k int, mfs map[string]*dto.MetricFamily, seen map[string]int, n int) {
	t.Helper()
	mine := 0
	for _, m := range mfs["kaas_group_coordinator_info"].GetMetric() {
		var group, broker string
		for _, lp := range m.GetLabel() {
			switch lp.GetName() {
			case "group":
				group = lp.GetValue()
			case "broker":
				broker = lp.GetValue()
			}
		}
		seen[group]++
		mine++
		if want := fmt.Sprintf("kaas-%d", k); broker != want && broker != "kaas-9" {
			t.Errorf("shard %d/3 exports %s coordinated by %s", k, group, broker)
		}
	}
	if mine == 0 {
		t.Errorf("shard %d/3 exports no group", k)
	}
	if v, _ := metricValue(mfs, "kaas_exporter_shard_other_groups", nil); int(v)+mine != n {
		t.Errorf("shard %d/3: %d groups and %v owned elsewhere, want %d in all", k, mine, v, n)
	}
	if v, ok := metricValue(mfs, "kaas_exporter_shard_info", map[string]string{"shard": fmt.Sprint(k), "shards": "3"}); !ok || v != 1 {
		t.Errorf("shard %d/3: kaas_exporter_shard_info missing", k)
	}
	_, cluster := mfs["kaas_assignment_version"]
	if cluster != (k == 0) {
		t.Errorf("shard %d/3: kaas_assignment_version present %v, want only on shard 0", k, cluster)
	}
	if _, ok := mfs["kaas_exporter_refreshes_total"]; !ok {
		t.Errorf("shard %d/3: the exporter's own series are missing", k)
	}
}

func TestExporterShardFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, bad := range []string{"3/3", "1", "-1/2", "a/b", "0/0"} {
		r := runCLI(t, "", nil, "exporter", "--once", "--data-dir", dir, "--shard", bad)
		if r.Code != 2 || !strings.Contains(r.Err, "--shard") {
			t.Errorf("--shard %s: exit %d, stderr %q; want a usage error naming --shard", bad, r.Code, r.Err)
		}
	}
}
