package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

// A real Prometheus (Debian's prometheus package, installed by .ci/run)
// scrapes 'kaasctl exporter' on the sandbox; the test asks Prometheus's
// HTTP API what it stored.
//
// The tests named ...WithPrometheus wait on the wall clock (scrapes, rule
// evaluations, health windows of a few seconds), not the CPU: they run
// beside each other, and 'make test' runs them in a go test process of
// their own (scripts/test.sh), so the package's CPU-bound parallel tests
// do not delay an in-process exporter's refresh or a scrape past its
// timeout. The shards scenario (four exporters of 1,006 groups) runs
// before them, alone, for the same reason.

// promBinary finds the prometheus server: absent means skip, except in CI.
func promBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("prometheus is not installed (CI is set: .ci/run installs Debian's prometheus package): %v", err)
		}
		t.Skip("prometheus is not installed: apt-get install prometheus (Debian's package) to run this test; .ci/run does")
	}
	return p
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startPrometheus runs prometheus scraping target every 500ms; it returns
// the API base URL once Prometheus is ready.
func startPrometheus(t *testing.T, bin, target string) string {
	t.Helper()
	return startPrometheusRules(t, bin, target, "")
}

// startPrometheusRules is startPrometheus with a rule file (evaluated every
// 500ms; "" for none). A scrape may take the whole interval: one that timed
// out marks every series stale, which resolves a firing alert (a loaded
// machine took a scrape of the in-process exporter past 400ms).
func startPrometheusRules(t *testing.T, bin, target, rules string) string {
	t.Helper()
	ruleFiles := ""
	if rules != "" {
		ruleFiles = fmt.Sprintf("rule_files: [%q]\n", rules)
	}
	cfg := ruleFiles + fmt.Sprintf(`global:
  scrape_interval: 500ms
  evaluation_interval: 500ms
scrape_configs:
  - job_name: kaasctl
    scrape_interval: 500ms
    scrape_timeout: 500ms
    static_configs:
      - targets: [%q]
`, target)
	return startPrometheusConfig(t, bin, cfg)
}

// startPrometheusConfig runs prometheus with the configuration cfg; it
// returns the API base URL once Prometheus is ready.
func startPrometheusConfig(t *testing.T, bin, cfg string) string {
	t.Helper()
	base, _ := startPrometheusCmd(t, bin, cfg)
	return base
}

// startPrometheusCmd is startPrometheusConfig that also returns the
// running process (its resident memory is read from /proc).
func startPrometheusCmd(t *testing.T, bin, cfg string) (string, *exec.Cmd) {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var logs bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", logs.String())
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base, cmd
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus did not become ready: %v\n%s", err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s promSample) float() float64 {
	f, _ := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64)
	return f
}

func promQuery(base, q string) ([]promSample, error) {
	return promQueryAt(base, q, time.Time{})
}

// promQueryAt is promQuery evaluated at the instant at (zero: now).
func promQueryAt(base, q string, at time.Time) ([]promSample, error) {
	u := base + "/api/v1/query?query=" + url.QueryEscape(q)
	if !at.IsZero() {
		u += "&time=" + strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)
	}
	resp, err := http.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", body, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, r.Error)
	}
	return r.Data.Result, nil
}

// waitProm polls Prometheus until cond holds for the query's result (a
// bounded deadline; nothing here measures speed).
func waitProm(t *testing.T, base, q, what string, cond func([]promSample) bool) []promSample {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last []promSample
	var lastErr error
	for time.Now().Before(deadline) {
		last, lastErr = promQuery(base, q)
		if lastErr == nil && cond(last) {
			return last
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: Prometheus never showed it; last answer to %s: %+v (err %v)", what, q, last, lastErr)
	return nil
}

func oneEquals(v float64) func([]promSample) bool {
	return func(r []promSample) bool { return len(r) == 1 && r[0].float() == v }
}

// startExporterInProcess runs the exporter command's serving path
// (runExporter) on loopback until the test ends.
func startExporterInProcess(t *testing.T, sb *sandbox.Sandbox, o exporterOptions) string {
	t.Helper()
	cl, err := wire.NewClient(&wire.Settings{Brokers: sb.Bootstrap(), Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	l := sb.Layout()
	src := &observe.Source{Layout: &l, Client: cl, LagSeconds: true, Blockers: true, Shard: o.shard} // as exporterSource and runExporterCmd build it
	g := &Globals{IO: &IOStreams{Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }},
		Printer: &render.Printer{Format: render.Table, Out: io.Discard, Err: io.Discard}, Quiet: true}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- runExporter(ctx, g, src, o, func(a string) { ready <- a }) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("exporter did not start: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("exporter: %v", err)
		}
		cl.Close()
	})
	return addr
}

func TestExporterWithPrometheus(t *testing.T) {
	t.Parallel() // beside the other alert scenarios (the note at the top of this file says why)
	bin := promBinary(t)
	sb := liveSB(t)
	produceOrders(t, sb, 20)
	commitAdmin(t, sb, "lagging", map[int32]int64{0: 5, 1: 5, 2: 5, 3: 5})
	commitAdmin(t, sb, "idle", map[int32]int64{0: 20, 1: 20, 2: 20, 3: 20})
	commitAdmin(t, sb, "partial", map[int32]int64{0: 10, 1: 10, 2: 10, 3: 10})

	addr := startExporterInProcess(t, sb, exporterOptions{listen: "127.0.0.1:0", interval: 300 * time.Millisecond, window: 2 * time.Minute,
		partitionMetrics: true, lagSeconds: true, pollInterval: 100 * time.Millisecond, followOffsets: true})
	prom := startPrometheus(t, bin, addr)

	// Every metric family the exporter promises is in Prometheus.
	want := []string{"kaas_assignment_version", "kaas_assignment_controller_epoch", "kaas_assignment_brokers_listed", "kaas_assignment_brokers_alive",
		"kaas_assignment_explicit_entries", "kaas_coordinator_moves_total", "kaas_broker_up", "kaas_broker_reachable",
		"kaas_group_state", "kaas_group_members", "kaas_group_coordinator_info",
		"kaas_group_lag", "kaas_group_lag_seconds", "kaas_group_partition_committed_offset", "kaas_group_partition_lag",
		"kaas_group_partition_lag_seconds", "kaas_group_health",
		"kaas_exporter_refresh_duration_seconds_count", "kaas_exporter_broker_errors_total", "kaas_exporter_build_info", "kaas_exporter_broker_requests_total"}
	waitProm(t, prom, `count by (__name__) ({__name__=~"kaas_.+"})`, "every kaas_ family", func(r []promSample) bool {
		have := map[string]bool{}
		for _, s := range r {
			have[s.Metric["__name__"]] = true
		}
		for _, w := range want {
			if !have[w] {
				return false
			}
		}
		return true
	})

	// 1. The lag of a demo group matches 'groups describe'.
	dd := sb.Layout().DataDir
	d := decodeJSON[views.GroupsDescribeLiveView](t, live(t, sb, "groups", "describe", "--data-dir", dd, "lagging", "-o", "json"))
	if len(d.Groups) != 1 || !d.Groups[0].LagKnown {
		t.Fatalf("groups describe: %+v", d)
	}
	waitProm(t, prom, `kaas_group_lag{group="lagging"}`, "lag of lagging", oneEquals(float64(d.Groups[0].TotalLag)))
	waitProm(t, prom, `kaas_group_partition_lag{group="lagging",topic="orders",partition="2"}`, "partition lag", oneEquals(15))
	waitProm(t, prom, `kaas_group_lag_seconds{group="lagging"} > 0`, "lag in seconds of lagging", func(r []promSample) bool { return len(r) == 1 })

	// 2. A stopped broker shows in the move counter and the coordinator info.
	victim := sb.Coordinator("lagging")
	if _, err := sb.StopBroker(victim); err != nil {
		t.Fatal(err)
	}
	waitProm(t, prom, `sum(kaas_coordinator_moves_total)`, "moves after "+victim+" stopped", func(r []promSample) bool { return len(r) == 1 && r[0].float() >= 1 })
	now := sb.Coordinator("lagging")
	waitProm(t, prom, fmt.Sprintf(`kaas_group_coordinator_info{group="lagging",broker=%q}`, now), "lagging's coordinator is "+now, oneEquals(1))
	waitProm(t, prom, fmt.Sprintf(`kaas_broker_up{broker=%q}`, victim), victim+" down", oneEquals(0))
	waitProm(t, prom, `kaas_assignment_brokers_alive`, "two brokers alive", oneEquals(2))

	// 3. A reset of an idle group shows as REWIND.
	commitAdmin(t, sb, "idle", map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0})
	waitProm(t, prom, `kaas_group_health{group="idle",state="REWIND"}`, "idle REWIND", oneEquals(1))
	waitProm(t, prom, `kaas_group_offset_rewinds_total{group="idle"}`, "idle rewinds counted", func(r []promSample) bool { return len(r) == 1 && r[0].float() == 4 })

	// 4. A partial rewrite of an offset file shows as VANISHED.
	path := filepath.Join(sb.Layout().OffsetsPath(), "partial.json")
	partialRewrite(t, path, "orders/0")
	waitProm(t, prom, `kaas_group_health{group="partial",state="VANISHED"}`, "partial VANISHED", oneEquals(1))
	waitProm(t, prom, `kaas_group_vanished_partitions_total{group="partial"}`, "vanished partitions counted", oneEquals(3))

	// The exporter's evaluation, as 'groups health --exporter' reads it.
	r := runCLI(t, "", nil, "groups", "health", "--exporter", "http://"+addr, "-o", "json", "idle", "partial")
	if r.Code != 3 {
		t.Fatalf("groups health --exporter: exit %d (want 3: groups not OK): %s", r.Code, r.Err)
	}
	v := decodeJSON[views.GroupsHealthView](t, r)
	states := map[string]inspect.GroupHealth{}
	for _, h := range v.Groups {
		states[h.Group] = h
	}
	if states["idle"].State != inspect.HealthRewind || states["partial"].State != inspect.HealthVanished {
		t.Fatalf("groups health --exporter: %+v", v.Groups)
	}
	ev := states["partial"].Evidence[0]
	if ev.File != path || ev.Before != 10 || ev.After != -1 || ev.Partition == "orders/0" {
		t.Fatalf("VANISHED evidence %+v", ev)
	}
}

// partialRewrite rewrites a group's offset file keeping only the given
// partitions, as kaas does on a commit to a group it has not loaded.
func partialRewrite(t *testing.T, path string, keep ...string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Offsets  map[string]int64  `json:"offsets"`
		Metadata map[string]string `json:"metadata,omitempty"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	kept := map[string]int64{}
	for _, k := range keep {
		if v, ok := f.Offsets[k]; ok {
			kept[k] = v
		}
	}
	if len(kept) != len(keep) || len(f.Offsets) <= len(keep) {
		t.Fatalf("%s holds %v; cannot keep %v", path, f.Offsets, keep)
	}
	f.Offsets = kept
	for k := range f.Metadata {
		if !strings.Contains(strings.Join(keep, "\x00"), k) {
			delete(f.Metadata, k)
		}
	}
	out, _ := json.Marshal(f)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
