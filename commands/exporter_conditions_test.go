package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// promRules writes the project's alert rules for a test Prometheus, with
// each 'for:' scaled down to seconds (5m becomes 5s) so a pending alert
// fires while the test watches.
func promRules(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "monitoring", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	scaled := regexp.MustCompile(`(?m)^(\s+for: )(\d+)m$`).ReplaceAll(data, []byte("${1}${2}s"))
	path := filepath.Join(t.TempDir(), "alerts.yml")
	if err := os.WriteFile(path, scaled, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The conditions of a group with the project's alert rules in a real
// Prometheus: an Empty group rewound and then missing a partition shows
// VANISHED at once while REWIND stays, both alerts fire; a stopped group's
// pending alert survives an outage of every broker and fires during it.
func TestExporterConditionsWithPrometheus(t *testing.T) {
	t.Parallel() // beside the other alert scenarios (exporter_prom_test.go says why)
	bin := promBinary(t)
	sb := liveSB(t)
	produceOrders(t, sb, 20)
	commitAdmin(t, sb, "idle", map[int32]int64{0: 20, 1: 20, 2: 20, 3: 20})
	commitAdmin(t, sb, "stopped", map[int32]int64{0: 5, 1: 5, 2: 5, 3: 5})

	addr := startExporterInProcess(t, sb, exporterOptions{listen: "127.0.0.1:0", interval: 300 * time.Millisecond, window: 2 * time.Minute,
		stopAfter: 500 * time.Millisecond, pollInterval: 100 * time.Millisecond, followOffsets: true})
	prom := startPrometheusRules(t, bin, addr, promRules(t))
	alert := func(name, group, state string) string {
		return fmt.Sprintf(`ALERTS{alertname=%q,group=%q,alertstate=%q}`, name, group, state)
	}

	// 1. A rewind of the Empty group, then one of its partitions deleted.
	commitAdmin(t, sb, "idle", map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0})
	waitProm(t, prom, alert("KaasGroupOffsetRewind", "idle", "firing"), "REWIND alert", oneEquals(1))
	if r := live(t, sb, "offsets", "delete", "--data-dir", sb.Layout().DataDir, "-g", "idle", "--topic", "orders:2", "--execute"); r.Code != 0 && r.Code != 3 { // 3: the coordinator still caches it
		t.Fatalf("offsets delete: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	waitProm(t, prom, alert("KaasGroupPartitionsVanished", "idle", "firing"), "VANISHED alert", oneEquals(1))
	// REWIND is still shown and firing next to it.
	waitProm(t, prom, `kaas_group_condition{group="idle"}`, "idle's conditions", func(r []promSample) bool {
		have := map[string]bool{}
		for _, s := range r {
			have[s.Metric["condition"]] = true
		}
		return have["REWIND"] && have["VANISHED"]
	})
	waitProm(t, prom, alert("KaasGroupOffsetRewind", "idle", "firing"), "REWIND alert still firing", oneEquals(1))

	// 2. The stopped group's alert is pending (for: 5s here) when every
	// broker goes down.
	// On a loaded machine step 1 can outlast the rule's 'for': then the
	// alert is already firing, and the outage must not reset it either.
	var stopState string
	waitProm(t, prom, `ALERTS{alertname="KaasGroupStopped",group="stopped"}`, "STOP pending (or already firing)", func(r []promSample) bool {
		if len(r) == 1 && r[0].float() == 1 {
			stopState = r[0].Metric["alertstate"]
			return true
		}
		return false
	})
	t.Logf("the STOP alert was %s when the brokers went down", stopState)
	for _, id := range sb.BrokerIDs() {
		if _, err := sb.StopBroker(id); err != nil {
			t.Fatalf("stop %s: %v", id, err)
		}
	}
	waitProm(t, prom, `kaas_group_condition{group="stopped",condition="ERR"}`, "stopped turns ERR", oneEquals(1))
	// Firing while the group is still unobservable: the outage did not
	// reset it.
	waitProm(t, prom, alert("KaasGroupStopped", "stopped", "firing")+` and on (group) kaas_group_condition{condition="ERR"} == 1`,
		"STOP fires during the outage", func(r []promSample) bool { return len(r) == 1 })
	waitProm(t, prom, `kaas_group_unknown_since_timestamp_seconds{group="stopped"}`, "unknown since", func(r []promSample) bool { return len(r) == 1 && r[0].float() > 0 })
	r, err := promQuery(prom, `ALERTS{alertname="KaasGroupStopped",group="stopped",alertstate="pending"}`)
	if err != nil || len(r) != 0 {
		t.Errorf("STOP went back to pending: %+v (%v)", r, err)
	}
}
