package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/sandbox"
)

// promAlert is one alert in Prometheus's /api/v1/alerts.
type promAlert struct {
	Labels   map[string]string `json:"labels"`
	State    string            `json:"state"`
	ActiveAt time.Time         `json:"activeAt"`
}

func promAlerts(t *testing.T, base string) []promAlert {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Data struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return r.Data.Alerts
}

// firingSince is when the named alert of group became active, if it fires.
func firingSince(t *testing.T, base, name, group string) (time.Time, bool) {
	for _, a := range promAlerts(t, base) {
		if a.Labels["alertname"] == name && a.Labels["group"] == group && a.State == "firing" {
			return a.ActiveAt, true
		}
	}
	return time.Time{}, false
}

// noneOver asserts that q had no sample over the last window (a series
// that existed at any evaluation shows in max_over_time).
func noneOver(t *testing.T, base, q, window, what string) {
	t.Helper()
	r, err := promQuery(base, fmt.Sprintf("max_over_time((%s)[%s:250ms])", q, window))
	if err != nil {
		t.Fatal(err)
	}
	if len(r) > 0 {
		t.Errorf("%s: %s had samples over the last %s: %+v", what, q, window, r)
	}
}

// A stopped group with the project's rules in a real Prometheus, through
// the sequence that silenced its page on real kaas: stopped, its
// coordinator frozen (SIGSTOP: ERR) for longer than the health window,
// thawed, then one of its partitions deleted with offsets delete. STOP
// comes back as it was after the freeze and stays STOP through the
// delete: the firing KaasGroupStopped never resolves (its activeAt stays)
// and STALL never appears.
func TestStopThroughFreezeThawAndDeleteWithPrometheus(t *testing.T) {
	// No t.Parallel(): Prometheus evaluates on the wall clock.
	bin := promBinary(t)
	sb := liveSB(t)
	produceOrders(t, sb, 20)
	const group = "frozen-stop"
	commitAdmin(t, sb, group, map[int32]int64{0: 5, 1: 5, 2: 5, 3: 5})
	addr := startExporterInProcess(t, sb, exporterOptions{listen: "127.0.0.1:0", interval: 250 * time.Millisecond, window: 2 * time.Second,
		stopAfter: 700 * time.Millisecond, pollInterval: 100 * time.Millisecond, followOffsets: true})
	prom := startPrometheusRules(t, bin, addr, promRules(t))

	var since time.Time
	waitProm(t, prom, fmt.Sprintf(`ALERTS{alertname="KaasGroupStopped",group=%q,alertstate="firing"}`, group), "STOP fires", func(r []promSample) bool {
		var ok bool
		since, ok = firingSince(t, prom, "KaasGroupStopped", group)
		return len(r) == 1 && ok
	})
	// Freeze the coordinator past the window (2 s): the group is ERR.
	coord := sb.Coordinator(group)
	if err := sb.FreezeBroker(coord, true); err != nil {
		t.Fatal(err)
	}
	waitProm(t, prom, fmt.Sprintf(`kaas_group_condition{group=%q,condition="ERR"}`, group), "ERR during the freeze", oneEquals(1))
	frozenAt := time.Now()
	waitProm(t, prom, `vector(time())`, "the freeze outlasts the window", func(r []promSample) bool {
		return time.Since(frozenAt) > 3500*time.Millisecond && len(r) == 1
	})
	if err := sb.FreezeBroker(coord, false); err != nil {
		t.Fatal(err)
	}
	waitProm(t, prom, fmt.Sprintf(`absent(kaas_group_condition{group=%q,condition="ERR"})`, group), "ERR over after the thaw", oneEquals(1))
	thawed := time.Now()
	// A delete of one partition (the group is Empty): no commit.
	if r := live(t, sb, "offsets", "delete", "--data-dir", sb.Layout().DataDir, "-g", group, "--topic", "orders:3", "--execute"); r.Code != 0 && r.Code != 3 {
		t.Fatalf("offsets delete: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	waitProm(t, prom, fmt.Sprintf(`kaas_group_condition{group=%q,condition="VANISHED"}`, group), "the delete is seen", oneEquals(1))
	waitProm(t, prom, `vector(time())`, "observed past the window after the delete", func(r []promSample) bool {
		return time.Since(thawed) > 3500*time.Millisecond && len(r) == 1
	})
	if at, ok := firingSince(t, prom, "KaasGroupStopped", group); !ok || !at.Equal(since) {
		t.Errorf("KaasGroupStopped resolved in between: firing %v, active since %v (first fired active since %v)", ok, at, since)
	}
	// From the first firing on (5 s after STOP began).
	window := fmt.Sprintf("%ds", int(time.Since(since).Seconds())-6)
	noneOver(t, prom, fmt.Sprintf(`kaas_group_condition{group=%q,condition="STALL"}`, group), window, "STALL")
	noneOver(t, prom, fmt.Sprintf(`absent(kaas_group_condition{group=%q,condition="STOP"})`, group), window, "a gap in STOP")
}

// Two groups the old time to drain got wrong, with the project's rules in
// a real Prometheus: a throttled consumer serving its partitions in turns
// (two partitions at a time, the others still) that drains at group
// level, and a consumer that keeps up (a few records behind, consumed as
// fast as produced). Neither is "not draining" at any evaluation, neither
// is STALL or STOP, and KaasGroupNotDraining never even pends.
func TestDrainInTurnsAndKeepingUpWithPrometheus(t *testing.T) {
	// No t.Parallel(): Prometheus evaluates on the wall clock.
	bin := promBinary(t)
	sb := sandbox.Start(t, sandbox.Options{Brokers: 1, Topics: []sandbox.Topic{{Name: "orders", Partitions: 4}}})
	produceOrders(t, sb, 400)
	commitAdmin(t, sb, "turns", map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0})
	commitAdmin(t, sb, "steady", map[int32]int64{0: 397, 1: 397, 2: 397, 3: 397})
	addr := startExporterInProcess(t, sb, exporterOptions{listen: "127.0.0.1:0", interval: 250 * time.Millisecond, window: 3 * time.Second,
		stopAfter: time.Second, pollInterval: 100 * time.Millisecond, followOffsets: true})
	prom := startPrometheusRules(t, bin, addr, promRules(t))
	waitProm(t, prom, `kaas_group_lag{group="turns"}`, "the exporter is scraped", func(r []promSample) bool { return len(r) == 1 })

	start := time.Now()
	turns := [4]int64{}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for i := 0; time.Since(start) < 9*time.Second; i++ {
		<-tick.C
		produceOrders(t, sb, 2) // 2 records per partition and tick: 8/s each
		ends := [4]int64{}
		for p := range ends {
			ends[p] = 400 + 2*int64(i+1)
		}
		// The throttled consumer: two partitions per 2-second turn, 12
		// records a tick each (48/s, 24/s over both turns, against 8/s
		// produced: it drains in about 25 s, after the test ends).
		pair := (i / 8) % 2
		offs := map[int32]int64{}
		for p := range turns {
			if p/2 == pair {
				turns[p] = min(ends[p], turns[p]+12)
			}
			offs[int32(p)] = turns[p]
		}
		commitAdmin(t, sb, "turns", offs)
		commitAdmin(t, sb, "steady", map[int32]int64{0: ends[0] - 3, 1: ends[1] - 3, 2: ends[2] - 3, 3: ends[3] - 3})
	}
	waitProm(t, prom, `kaas_group_drain_seconds{group="turns"} > 0`, "turns drains", func(r []promSample) bool { return len(r) == 1 })
	waitProm(t, prom, `kaas_group_drain_seconds{group="steady"} == 0`, "steady keeps up", func(r []promSample) bool { return len(r) == 1 })
	window := fmt.Sprintf("%ds", int(time.Since(start).Seconds())-3) // from the first full window on
	for _, g := range []string{"turns", "steady"} {
		noneOver(t, prom, fmt.Sprintf(`kaas_group_not_draining{group=%q}`, g), window, g+" not draining")
		noneOver(t, prom, fmt.Sprintf(`kaas_group_condition{group=%q,condition=~"STALL|STOP"}`, g), window, g+" STALL or STOP")
		noneOver(t, prom, fmt.Sprintf(`ALERTS{alertname="KaasGroupNotDraining",group=%q}`, g), window, g+" KaasGroupNotDraining")
	}
	if testing.Verbose() {
		r, _ := promQuery(prom, `kaas_group_drain_seconds`)
		t.Logf("drain seconds: %+v", r)
	}
}
