package commands

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/sandbox"
)

// TestExporterShardsAtScale is TestExporterShardsWithPrometheus at
// 100,000 groups, too heavy for 'make test': 'make test-scale' runs it
// (KAASCTL_SCALE=1; .ci/run after 'make test'), KAASCTL_SCALE_GROUPS sets
// the number of file-only groups. Three shards and one unsharded exporter
// run as kaasctl processes (KAASCTL_BIN, else built here) on the sandbox
// and its volume; Debian's prometheus scrapes them at the exporters'
// interval, keeping only what the checks read (a group's coordinator and
// lag, the totals and versions). A broker is stopped and started, moving
// groups between shards. Then, at every scrape in the window from before
// the stop to after the start, Prometheus' state is checked: every scrape
// succeeded; wherever the shards split by the same assignment version as
// the unsharded exporter read, each group's series is on exactly one
// shard, the shards' groups (and those with a lag) are the unsharded
// exporter's, and the lag and group counts summed across the shards are
// its own. The instants between two versions (the documented takeover
// rule: a group may be on two shards or none until each has refreshed)
// come only after a version change, within the longest refresh plus two
// scrape intervals. The wall time, the refreshes' durations and each
// process' peak resident memory are logged.
func TestExporterShardsAtScale(t *testing.T) {
	// No t.Parallel(): Prometheus runs on the wall clock.
	n := scaleGroups(t)
	began := time.Now()
	prom := promBinary(t)
	kaasctl := kaasctlBinary(t)
	sb := liveSB(t)
	produceOrders(t, sb, 20)
	for i := range 6 {
		commitAdmin(t, sb, fmt.Sprintf("live-%d", i), map[int32]int64{0: int64(i), 1: 3, 2: 5, 3: 20})
	}
	writeBulkGroups(t, sb.Layout().OffsetsPath(), n)
	t.Logf("%d file-only groups written in %s", n, time.Since(began).Round(time.Second))

	interval := scaleInterval(t)
	var procs []*exporterProc
	for k := range 3 {
		procs = append(procs, startExporterProc(t, kaasctl, sb, fmt.Sprintf("shard %d/3", k), interval, "--shard", fmt.Sprintf("%d/3", k)))
	}
	procs = append(procs, startExporterProc(t, kaasctl, sb, "unsharded", interval))
	for _, p := range procs {
		p.awaitFirstRefresh(t)
	}
	t.Logf("four exporters refreshed once, %s after the start", time.Since(began).Round(time.Second))
	base, promCmd := startPrometheusCmd(t, prom, scaleScrapeConfig(procs, interval))

	s := scaleRun{t: t, prom: base, groups: n, interval: interval}
	from, v := s.agree("at the start", 0)
	victim := "kaas-1"
	s.changes = append(s.changes, time.Now().UnixMilli())
	if _, err := sb.StopBroker(victim); err != nil {
		t.Fatal(err)
	}
	stopped, v := s.agree(victim+" stopped", v+1)
	s.changes = append(s.changes, time.Now().UnixMilli())
	if _, err := sb.StartBroker(victim); err != nil {
		t.Fatal(err)
	}
	started, _ := s.agree(victim+" started again", v+1)
	to := s.scrapedSince(started)
	h := s.checkEveryScrape(from, to)
	if moved := movedGroups(h.owners(from), h.owners(stopped)); moved == 0 {
		t.Errorf("no group changed shard when %s stopped", victim)
	} else {
		t.Logf("%d groups changed shard when %s stopped, %d when it started again", moved, victim, movedGroups(h.owners(stopped), h.owners(to)))
	}
	logPeaks(t, procs, promCmd, time.Since(began))
}

// scaleGroups is how many file-only groups the test writes; it skips
// unless KAASCTL_SCALE is set.
func scaleGroups(t *testing.T) int {
	t.Helper()
	if os.Getenv("KAASCTL_SCALE") == "" {
		t.Skip("the 100,000-group shards test runs with KAASCTL_SCALE=1 ('make test-scale'; .ci/run runs it)")
	}
	n := 100000
	if v := os.Getenv("KAASCTL_SCALE_GROUPS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("KAASCTL_SCALE_GROUPS=%q: want a number of groups", v)
		}
	}
	return n
}

// scaleInterval is the exporters' refresh interval and Prometheus' scrape
// interval: KAASCTL_SCALE_INTERVAL, else 30s, which a shard's refresh of
// its third of 100,000 groups with brokers took well within on two busy
// cores (14 to 20 s; the unsharded exporter's, of all of them, up to 35
// s: the sandbox answers every exporter's requests on one loop).
func scaleInterval(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv("KAASCTL_SCALE_INTERVAL")
	if v == "" {
		return 30 * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second {
		t.Fatalf("KAASCTL_SCALE_INTERVAL=%q: want a duration of 1s or more", v)
	}
	return d
}

// kaasctlBinary is KAASCTL_BIN, else kaasctl built into a temp dir.
func kaasctlBinary(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("KAASCTL_BIN"); b != "" {
		abs, err := filepath.Abs(b)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	out := filepath.Join(t.TempDir(), "kaasctl")
	if b, err := exec.Command("go", "build", "-o", out, "../cmd/kaasctl").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// writeBulkGroups writes n offset files of file-only groups into dir: one
// in ten behind on orders/0 and orders/1 (as in the 1,000-group test),
// the others at their end (20). A group lagging without a consumer is
// STOP and names a blocker on each lagging partition at every refresh:
// all 100,000 so, the unsharded exporter held 1.3 GB.
func writeBulkGroups(t *testing.T, dir string, n int) {
	t.Helper()
	for i := range n {
		a, b := 20, 20
		if i%10 == 0 {
			a, b = i%20, (i+7)%20
		}
		body := fmt.Sprintf(`{"offsets":{"orders/0":%d,"orders/1":%d}}`, a, b)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("bulk-%06d.json", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// exporterProc is one 'kaasctl exporter' process.
type exporterProc struct {
	name, addr string
	cmd        *exec.Cmd
	logPath    string
	// exited is closed when the process has ended.
	exited chan struct{}
}

// startExporterProc starts 'kaasctl exporter' on the sandbox's volume and
// brokers (every group, refreshed every interval, the default window) with
// the extra flags; it is stopped with SIGTERM when the test ends.
func startExporterProc(t *testing.T, bin string, sb *sandbox.Sandbox, name string, interval time.Duration, flags ...string) *exporterProc {
	t.Helper()
	p := &exporterProc{name: name, addr: freeAddr(t), logPath: filepath.Join(t.TempDir(), "exporter.log"), exited: make(chan struct{})}
	logf, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"exporter", "--data-dir", sb.Layout().DataDir, "--listen", p.addr, "--max-groups", "0", "--interval", interval.String()}, flags...)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), "KAASCTL_BROKERS="+strings.Join(sb.Bootstrap(), ","), "KAASCTL_TIMEOUT=5s")
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(15 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(p.logPath)
			t.Logf("%s's log:\n%s", p.name, b)
		}
	})
	return p
}

// awaitFirstRefresh waits until the exporter serves a refresh (/healthz).
func (p *exporterProc) awaitFirstRefresh(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		resp, err := scaleHTTP.Get("http://" + p.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never refreshed: %v", p.name, err)
		}
		select {
		case <-p.exited:
			t.Fatalf("%s ended before its first refresh", p.name)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// peakMB is the process' peak resident memory (VmHWM), in MB (-1: unknown).
func peakMB(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return kb / 1024
		}
	}
	return -1
}

// logPeaks logs the wall time and every process' peak resident memory.
func logPeaks(t *testing.T, procs []*exporterProc, prom *exec.Cmd, wall time.Duration) {
	t.Helper()
	parts := []string{fmt.Sprintf("prometheus %d MB", peakMB(prom.Process.Pid))}
	for _, p := range procs {
		parts = append(parts, fmt.Sprintf("%s %d MB", p.name, peakMB(p.cmd.Process.Pid)))
	}
	t.Logf("wall time %s; peak resident memory (VmHWM): %s", wall.Round(time.Second), strings.Join(parts, ", "))
}

// scaleKept are the families Prometheus keeps: two per group (its
// coordinator, present for every group observed, and its lag, for the
// sums), the groups each exporter observed, the versions the shards split
// by and the unsharded exporter read, and the refresh durations.
const scaleKept = "kaas_group_coordinator_info|kaas_group_lag|kaas_exporter_groups|kaas_exporter_shard_assignment_version|kaas_assignment_version|kaas_exporter_last_refresh_duration_seconds"

// scaleDropped are the labels of kaas_group_coordinator_info the checks do
// not read (one series a group either way).
const scaleDropped = "broker|tier|hash_broker|explicit_broker|wire_broker"

// scaleScrapeConfig scrapes the shards (job shards) and the unsharded
// exporter (job whole) once an interval, keeping scaleKept.
func scaleScrapeConfig(procs []*exporterProc, interval time.Duration) string {
	job := func(name string, ps []*exporterProc) string {
		var targets []string
		for _, p := range ps {
			targets = append(targets, strconv.Quote(p.addr))
		}
		return fmt.Sprintf(`  - job_name: %s
    static_configs: [{targets: [%s]}]
    metric_relabel_configs:
      - {source_labels: [__name__], regex: '%s', action: keep}
      - {regex: '%s', action: labeldrop}
`, name, strings.Join(targets, ", "), scaleKept, scaleDropped)
	}
	return fmt.Sprintf("global:\n  scrape_interval: %dms\n  scrape_timeout: %dms\nscrape_configs:\n", interval.Milliseconds(), (interval*9/10).Milliseconds()) +
		job("shards", procs[:3]) + job("whole", procs[3:])
}

// scaleHTTP asks the exporters and Prometheus (reading 100,000 series
// over minutes takes a minute on a loaded machine).
var scaleHTTP = &http.Client{Timeout: 5 * time.Minute}

// promVectorAt is an instant query q evaluated at instant at ("": now),
// through scaleHTTP.
func promVectorAt(base, q, at string) ([]promSample, error) {
	var r struct {
		Result []promSample `json:"result"`
	}
	err := promAPI(base, q, at, &r)
	return r.Result, err
}

// promQueryMatrix evaluates a range-vector selector q at instant at.
func promQueryMatrix(base, q, at string) ([]promSeries, error) {
	var r struct {
		Result []promSeries `json:"result"`
	}
	err := promAPI(base, q, at, &r)
	return r.Result, err
}

// promAPI asks Prometheus' query API and decodes its data into data.
func promAPI(base, q, at string, data any) error {
	v := url.Values{"query": {q}}
	if at != "" {
		v.Set("time", at)
	}
	resp, err := scaleHTTP.Get(base + "/api/v1/query?" + v.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return fmt.Errorf("query %s: %v", q, err)
	}
	if r.Status != "success" {
		return fmt.Errorf("query %s: %s", q, r.Error)
	}
	return json.Unmarshal(r.Data, data)
}
