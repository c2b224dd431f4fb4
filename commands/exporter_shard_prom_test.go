package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
)

// Debian's prometheus scrapes three shards and one unsharded exporter of
// the sandbox (its groups and 1,000 file-only ones) while a broker is
// stopped and started, moving groups between shards. Once the shards have
// read the new assignment version, every group is in exactly one shard
// and the sums across the shards are the unsharded exporter's.
func TestExporterShardsWithPrometheus(t *testing.T) {
	// No t.Parallel(): its four exporters refreshing 1,006 groups each
	// second took the alert scenarios' exporters (same process) past their
	// refresh deadline and Prometheus's scrapes past their timeout; it runs
	// before them (exporter_prom_test.go says why).
	bin := promBinary(t)
	sb := liveSB(t)
	produceOrders(t, sb, 20)
	for i := range 6 {
		commitAdmin(t, sb, fmt.Sprintf("live-%d", i), map[int32]int64{0: int64(i), 1: 3, 2: 5, 3: 20})
	}
	od := sb.Layout().OffsetsPath()
	for i := range 1000 {
		body := fmt.Sprintf(`{"offsets":{"orders/0":%d,"orders/1":%d}}`, i%20, (i+7)%20)
		if err := os.WriteFile(filepath.Join(od, fmt.Sprintf("bulk-%04d.json", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Four exporters and Prometheus on a shared machine: a second apart.
	o := exporterOptions{listen: "127.0.0.1:0", interval: time.Second, window: time.Minute, pollInterval: 200 * time.Millisecond}
	var shards []string
	for k := range 3 {
		so := o
		so.shard = mustShard(t, fmt.Sprintf("%d/3", k))
		shards = append(shards, startExporterInProcess(t, sb, so))
	}
	whole := startExporterInProcess(t, sb, o)
	prom := startPrometheusConfig(t, bin, fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: shards
    static_configs: [{targets: ["%s"]}]
  - job_name: whole
    static_configs: [{targets: [%q]}]
`, strings.Join(shards, `", "`), whole))

	before, v := shardsAgree(t, prom, "at the start", 0)
	victim := "kaas-1"
	if _, err := sb.StopBroker(victim); err != nil {
		t.Fatal(err)
	}
	stopped, v := shardsAgree(t, prom, victim+" stopped", v+1)
	moved := movedGroups(before, stopped)
	if moved == 0 {
		t.Errorf("no group changed shard when %s stopped", victim)
	}
	if _, err := sb.StartBroker(victim); err != nil {
		t.Fatal(err)
	}
	shardsAgree(t, prom, victim+" started again", v+1)
	// Between two versions shards may disagree for up to an interval (the
	// documented rule): how often a scrape saw a group twice is logged.
	twice, _ := promQuery(prom, `count_over_time((max(count by (group) (kaas_group_coordinator_info{job="shards"})) > 1)[3m:1s])`)
	t.Logf("%d groups changed shard when %s stopped; instants with a group on two shards: %v", moved, victim, twice)
}

func mustShard(t *testing.T, s string) *inspect.Shard {
	t.Helper()
	sh, err := inspect.ParseShard(s)
	if err != nil {
		t.Fatal(err)
	}
	return &sh
}

// shardsAgree waits until every shard split by the version shard 0 reads
// (the whole exporter's too), each group is exported by one shard, the
// shards' groups are the whole exporter's and their lag sums to its; it
// returns each group's shard and the version, at least minVersion.
func shardsAgree(t *testing.T, prom, when string, minVersion float64) (map[string]string, float64) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var why string
	for time.Now().Before(deadline) {
		owners, v, problem := shardState(prom)
		if problem == "" && v < minVersion {
			problem = fmt.Sprintf("assignment version %v, want at least %v", v, minVersion)
		}
		if problem == "" {
			return owners, v
		}
		why = problem
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s: the shards never agreed with the unsharded exporter: %s", when, why)
	return nil, 0
}

// shardState is each group's shard and the assignment version, or what
// does not hold yet.
func shardState(prom string) (map[string]string, float64, string) {
	q := func(expr string) []promSample {
		r, err := promQuery(prom, expr)
		if err != nil {
			return nil
		}
		return r
	}
	versions := q(`kaas_exporter_shard_assignment_version or kaas_assignment_version{job="whole"}`)
	if len(versions) != 4 {
		return nil, 0, fmt.Sprintf("%d versions known, want 3 shards and the whole exporter: %v", len(versions), versions)
	}
	for _, v := range versions[1:] {
		if v.float() != versions[0].float() {
			return nil, 0, fmt.Sprintf("versions differ: %v", versions)
		}
	}
	owners := map[string]string{}
	for _, s := range q(`kaas_group_coordinator_info{job="shards"}`) {
		g := s.Metric["group"]
		if prev, ok := owners[g]; ok {
			return nil, 0, fmt.Sprintf("group %s on %s and %s", g, prev, s.Metric["instance"])
		}
		owners[g] = s.Metric["instance"]
	}
	all := q(`kaas_group_coordinator_info{job="whole"}`)
	if len(all) < 1006 || len(owners) != len(all) {
		return nil, 0, fmt.Sprintf("%d groups across the shards, %d unsharded", len(owners), len(all))
	}
	for _, s := range all {
		if _, ok := owners[s.Metric["group"]]; !ok {
			return nil, 0, "group " + s.Metric["group"] + " on no shard"
		}
	}
	sums := q(`sum by (job) (kaas_group_lag)`)
	if len(sums) != 2 || sums[0].float() != sums[1].float() {
		return nil, 0, fmt.Sprintf("lag sums by job: %v", sums)
	}
	if c := q(`count by (job) (kaas_broker_up)`); len(c) != 2 || c[0].float() != c[1].float() {
		return nil, 0, fmt.Sprintf("broker series by job (shard 0 alone among the shards): %v", c)
	}
	return owners, versions[0].float(), ""
}

// movedGroups counts the groups whose shard differs.
func movedGroups(a, b map[string]string) int {
	n := 0
	for g, s := range a {
		if b[g] != "" && b[g] != s {
			n++
		}
	}
	return n
}
