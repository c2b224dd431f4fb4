package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

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

// noneOver asserts that q had no sample over the window that ends at the
// instant at (zero: now; a series that existed at any evaluation shows in
// max_over_time).
func noneOver(t *testing.T, base, q, window string, at time.Time, what string) {
	t.Helper()
	r, err := promQueryAt(base, fmt.Sprintf("max_over_time((%s)[%s:250ms])", q, window), at)
	if err != nil {
		t.Fatal(err)
	}
	if len(r) > 0 {
		until := "now"
		if !at.IsZero() {
			until = at.Format(time.StampMilli)
		}
		t.Errorf("%s: %s had samples over the %s until %s: %+v", what, q, window, until, r)
	}
}

// waitPromPast waits until Prometheus has scraped its targets and
// evaluated its rules past the instant at, so a query evaluated at at
// sees everything up to it.
func waitPromPast(t *testing.T, base string, at time.Time) {
	t.Helper()
	secs := float64(at.UnixMilli()) / 1000
	waitProm(t, base, fmt.Sprintf(`min(timestamp(up)) > %.3f`, secs), "a scrape after "+at.Format(time.StampMilli), func(r []promSample) bool {
		if len(r) != 1 {
			return false
		}
		resp, err := http.Get(base + "/api/v1/rules")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var rules struct {
			Data struct {
				Groups []struct {
					LastEvaluation time.Time `json:"lastEvaluation"`
				} `json:"groups"`
			} `json:"data"`
		}
		if json.NewDecoder(resp.Body).Decode(&rules) != nil {
			return false
		}
		for _, g := range rules.Data.Groups {
			if !g.LastEvaluation.After(at) {
				return false
			}
		}
		return true
	})
}

// A stopped group with the project's rules in a real Prometheus, through
// the sequence that silenced its page on real kaas: stopped, its
// coordinator frozen (SIGSTOP: ERR) for longer than the health window,
// thawed, then one of its partitions deleted with offsets delete. STOP
// comes back as it was after the freeze and stays STOP through the
// delete: the firing KaasGroupStopped never resolves (its activeAt stays)
// and STALL never appears.
func TestStopThroughFreezeThawAndDeleteWithPrometheus(t *testing.T) {
	t.Parallel() // beside the other alert scenarios (exporter_prom_test.go says why)
	bin := promBinary(t)
	sb := liveSB(t)
	produceOrders(t, sb, 20)
	const group = "frozen-stop"
	commitAdmin(t, sb, group, map[int32]int64{0: 5, 1: 5, 2: 5, 3: 5})
	addr := startExporterInProcess(t, sb, exporterOptions{listen: "127.0.0.1:0", interval: 250 * time.Millisecond, window: 2 * time.Second,
		stopAfter: 700 * time.Millisecond, pollInterval: 100 * time.Millisecond, followOffsets: true})
	prom := startPrometheusRules(t, bin, addr, promRules(t))
	began := time.Now()
	defer logPromHistory(t, prom, began, fmt.Sprintf(`kaas_group_condition{group=%q}`, group), fmt.Sprintf(`ALERTS{group=%q}`, group),
		`up`, `scrape_duration_seconds`, `increase(kaas_exporter_refresh_duration_seconds_count[1s])`)

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
	t.Logf("%.2f: froze %s", time.Since(began).Seconds(), coord)
	waitProm(t, prom, fmt.Sprintf(`kaas_group_condition{group=%q,condition="ERR"}`, group), "ERR during the freeze", oneEquals(1))
	frozenAt := time.Now()
	waitProm(t, prom, `vector(time())`, "the freeze outlasts the window", func(r []promSample) bool {
		return time.Since(frozenAt) > 3500*time.Millisecond && len(r) == 1
	})
	if err := sb.FreezeBroker(coord, false); err != nil {
		t.Fatal(err)
	}
	t.Logf("%.2f: thawed %s", time.Since(began).Seconds(), coord)
	waitProm(t, prom, fmt.Sprintf(`absent(kaas_group_condition{group=%q,condition="ERR"})`, group), "ERR over after the thaw", oneEquals(1))
	thawed := time.Now()
	t.Logf("%.2f: ERR over", time.Since(began).Seconds())
	// A delete of one partition (the group is Empty): no commit.
	if r := live(t, sb, "offsets", "delete", "--data-dir", sb.Layout().DataDir, "-g", group, "--topic", "orders:3", "--execute"); r.Code != 0 && r.Code != 3 {
		t.Fatalf("offsets delete: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	t.Logf("%.2f: deleted orders:3", time.Since(began).Seconds())
	waitProm(t, prom, fmt.Sprintf(`kaas_group_condition{group=%q,condition="VANISHED"}`, group), "the delete is seen", oneEquals(1))
	waitProm(t, prom, `vector(time())`, "observed past the window after the delete", func(r []promSample) bool {
		return time.Since(thawed) > 3500*time.Millisecond && len(r) == 1
	})
	if at, ok := firingSince(t, prom, "KaasGroupStopped", group); !ok || !at.Equal(since) {
		t.Errorf("KaasGroupStopped resolved in between: firing %v, active since %v (first fired active since %v)", ok, at, since)
	}
	// From the first firing on (5 s after STOP began).
	window := fmt.Sprintf("%ds", int(time.Since(since).Seconds())-6)
	noneOver(t, prom, fmt.Sprintf(`kaas_group_condition{group=%q,condition="STALL"}`, group), window, time.Time{}, "STALL")
	noneOver(t, prom, fmt.Sprintf(`absent(kaas_group_condition{group=%q,condition="STOP"})`, group), window, time.Time{}, "a gap in STOP")
}

// Two groups the old time to drain got wrong, with the project's rules in
// a real Prometheus: a throttled consumer serving its partitions in turns
// (two partitions at a time, the others still) that drains at group
// level, and a consumer that keeps up (a few records behind, consumed as
// fast as produced). Neither is "not draining" at any evaluation, neither
// is STALL or STOP, and KaasGroupNotDraining never even pends.
func TestDrainInTurnsAndKeepingUpWithPrometheus(t *testing.T) {
	t.Parallel() // beside the other alert scenarios (exporter_prom_test.go says why)
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
	produceInTurnsAndKeepingUp(t, sb, 9*time.Second)
	// Once production stops, both groups rightly stop draining (no commit,
	// lag left): every question is about the loop, asked at its end.
	end := time.Now()
	waitPromPast(t, prom, end)
	// Seen in the loop's last window (a steady pair's fitted rates differ
	// by noise: at some refreshes steady "drains" its few records).
	for _, c := range []struct{ q, what string }{
		{`kaas_group_drain_seconds{group="turns"} > 0`, "turns drains"},
		{`kaas_group_drain_seconds{group="steady"} == 0`, "steady keeps up"},
	} {
		if r, err := promQueryAt(prom, fmt.Sprintf("max_over_time((%s)[3s:250ms])", c.q), end); err != nil || len(r) != 1 {
			t.Errorf("%s: %s in the loop's last 3 s: %+v (err %v)", c.what, c.q, r, err)
		}
	}
	window := fmt.Sprintf("%ds", int(end.Sub(start).Seconds())-3) // from the first full window on
	for _, g := range []string{"turns", "steady"} {
		noneOver(t, prom, fmt.Sprintf(`kaas_group_not_draining{group=%q}`, g), window, end, g+" not draining")
		noneOver(t, prom, fmt.Sprintf(`kaas_group_condition{group=%q,condition=~"STALL|STOP"}`, g), window, end, g+" STALL or STOP")
		noneOver(t, prom, fmt.Sprintf(`ALERTS{alertname="KaasGroupNotDraining",group=%q}`, g), window, end, g+" KaasGroupNotDraining")
	}
	if testing.Verbose() {
		r, _ := promQueryAt(prom, `kaas_group_drain_seconds`, end)
		t.Logf("drain seconds at the loop's end: %+v", r)
	}
}

// produceInTurnsAndKeepingUp produces 2 records to each partition every
// 250ms for d (8/s each) and commits for both groups after each round:
// "turns" two partitions per 2-second turn, 12 records a round each (48/s,
// 24/s over both turns, against 8/s produced: it drains in about 25 s,
// after the test ends), "steady" 3 records behind the log end. One
// producer and one admin client for the whole loop, so a round stays a
// few milliseconds on a loaded machine (a client per call made rounds of
// a second, and a window of 3 s saw too few for its rates).
func produceInTurnsAndKeepingUp(t *testing.T, sb *sandbox.Sandbox, d time.Duration) {
	t.Helper()
	prod := sbClient(t, sb, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(sbClient(t, sb))
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	commit := func(group string, offs [4]int64) {
		os := kadm.Offsets{}
		for p, o := range offs {
			os.AddOffset("orders", int32(p), o, -1)
		}
		if err := adm.CommitAllOffsets(ctx, group, os); err != nil {
			t.Fatalf("commit %s: %v", group, err)
		}
	}
	var turns, ends [4]int64
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for start, i := time.Now(), 0; time.Since(start) < d; i++ {
		<-tick.C
		var rs []*kgo.Record
		for p := range int32(4) {
			rs = append(rs, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("a")}, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("b")})
		}
		if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
		pair := (i / 8) % 2
		var steady [4]int64
		for p := range ends {
			ends[p] = 400 + 2*int64(i+1)
			if p/2 == pair {
				turns[p] = min(ends[p], turns[p]+12)
			}
			steady[p] = ends[p] - 3
		}
		commit("turns", turns)
		commit("steady", steady)
	}
}
