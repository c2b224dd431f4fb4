//go:build realkaas && unix

package realkaas

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Scenarios of issue 39's alert items on real kaas: a stopped group whose
// coordinator is frozen (SIGSTOP) and thawed (SIGCONT), a throttled
// consumer draining in turns and then keeping up, a killed broker the
// probe still names.

// condition reports whether the exporter at addr exports condition c for
// group (kaas_group_condition is sparse: present only while active);
// "NOT_DRAINING" is kaas_group_not_draining.
func condition(m metrics, group, c string) bool {
	if c == "NOT_DRAINING" {
		v, ok := m.get("kaas_group_not_draining", "group", group)
		return ok && v == 1
	}
	v, ok := m.get("kaas_group_condition", "group", group, "condition", c)
	return ok && v == 1
}

// adminCommit commits off on every partition of orders as an admin
// (generation -1: the group stays Empty).
func adminCommit(t *testing.T, c *Cluster, group string, partitions int32, off int64) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, c))
	o := kadm.Offsets{}
	for p := int32(0); p < partitions; p++ {
		o.Add(kadm.Offset{Topic: "orders", Partition: p, At: off, LeaderEpoch: -1})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := adm.CommitAllOffsets(ctx, group, o); err != nil {
		t.Fatalf("committing %s: %v", group, err)
	}
}

// brokerIndex is the index of broker id (skafka-N) in c.
func brokerIndex(t *testing.T, c *Cluster, id string) int {
	t.Helper()
	for i, b := range c.Brokers {
		if b.ID == id {
			return i
		}
	}
	t.Fatalf("no broker %s in %v", id, c.Addrs())
	return -1
}

// freeze stops broker i's process group as SIGSTOP does (a paused VM, a
// debugger): its sockets accept, nothing answers; thaw is SIGCONT. The
// cleanup thaws it, so the cluster's stop can kill it.
func freeze(t *testing.T, c *Cluster, i int) (thaw func()) {
	t.Helper()
	pid := c.Brokers[i].cmd.Process.Pid
	if err := syscall.Kill(-pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %s: %v", c.Brokers[i].ID, err)
	}
	var once sync.Once
	thaw = func() { once.Do(func() { syscall.Kill(-pid, syscall.SIGCONT) }) }
	t.Cleanup(thaw)
	return thaw
}

// watchConditions scrapes the exporter every 500 ms until stop is closed
// and counts the scrapes at which each of want was missing and each of
// never was present (for group).
type conditionWatch struct {
	mu              sync.Mutex
	scrapes         int
	missing, extras map[string]int
}

func watchConditions(t *testing.T, addr, group string, want, never []string) (*conditionWatch, func()) {
	w := &conditionWatch{missing: map[string]int{}, extras: map[string]int{}}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			m, err := scrape(addr)
			if err != nil {
				continue
			}
			w.mu.Lock()
			w.scrapes++
			for _, c := range want {
				if !condition(m, group, c) {
					w.missing[c]++
				}
			}
			for _, c := range never {
				if condition(m, group, c) {
					w.extras[c]++
				}
			}
			w.mu.Unlock()
		}
	}()
	var once sync.Once
	end := func() { once.Do(func() { close(stop); <-done }) }
	t.Cleanup(end)
	return w, end
}

func (w *conditionWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("%d scrapes; missing %v; present %v", w.scrapes, w.missing, w.extras)
}

func (w *conditionWatch) clean() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.missing) == 0 && len(w.extras) == 0 && w.scrapes > 0
}

// TestRealStopThroughAFrozenCoordinator (issue 39.1): a group stopped with
// lag, its coordinator frozen by SIGSTOP for longer than the exporter's
// health window and thawed by SIGCONT, then one partition deleted with
// offsets delete. STOP is exported at every scrape from its first to the
// end (carried through ERR, back as it was after it, and no commit in the
// delete), and STALL never.
func TestRealStopThroughAFrozenCoordinator(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "orders:3")
	brokers := strings.Join(c.Addrs(), ",")
	produce(t, c, "orders", 3, 40)
	const group = "g-frozen"
	adminCommit(t, c, group, 3, 5)
	expAddr := freePort(t)
	startBG(t, "exporter", "--data-dir", c.Data, "--kaas-version", "go", "--brokers", brokers, "--listen", expAddr, "--timeout", "2s",
		"--interval", "1s", "--poll-interval", "200ms", "--lag-seconds=false", "--window", "15s", "--stop-after", "5s")
	waitFor(t, 60*time.Second, group+" STOP", func() error {
		m, err := scrape(expAddr)
		if err != nil || !condition(m, group, "STOP") {
			return fmt.Errorf("not yet STOP (%v)", err)
		}
		return nil
	})
	w, end := watchConditions(t, expAddr, group, []string{"STOP"}, []string{"STALL"})

	coord, err := wireCoordinators(c, 0, []string{group})
	if err != nil {
		t.Fatal(err)
	}
	i := brokerIndex(t, c, coord[group])
	t.Logf("freezing %s, the coordinator of %s", coord[group], group)
	thaw := freeze(t, c, i)
	waitFor(t, 60*time.Second, group+" ERR while its coordinator is frozen", func() error {
		m, err := scrape(expAddr)
		if err != nil || !condition(m, group, "ERR") {
			return fmt.Errorf("not ERR (%v)", err)
		}
		return nil
	})
	frozen := time.Now()
	// A probe of the frozen broker takes one --timeout, not two.
	pr := kaasctl(t, "probe", "--data-dir", c.Data, "--brokers", brokers, "--timeout", "2s", "-o", "json")
	if pr.code != 3 || !strings.Contains(pr.stdout, `"failedStep": "FindCoordinator"`) {
		t.Errorf("probe with %s frozen: %v", coord[group], pr)
	}
	waitFor(t, 60*time.Second, "the freeze to outlast the window", func() error {
		if d := time.Since(frozen); d < 20*time.Second {
			return fmt.Errorf("frozen for %s", d.Round(time.Second))
		}
		return nil
	})
	thaw()
	waitFor(t, 60*time.Second, group+" observed again after SIGCONT", func() error {
		m, err := scrape(expAddr)
		if err != nil || condition(m, group, "ERR") {
			return fmt.Errorf("still ERR (%v)", err)
		}
		return nil
	})
	thawed := time.Now()
	r := kaasctl(t, "offsets", "delete", "--data-dir", c.Data, "--kaas-version", "go", "--brokers", brokers, "-g", group, "--topic", "orders:2", "--execute")
	if r.code != 0 && r.code != 3 { // 3: the coordinator still caches the partition
		t.Fatalf("offsets delete: %v", r)
	}
	waitFor(t, 60*time.Second, "observed for a window after the thaw and the delete", func() error {
		if d := time.Since(thawed); d < 20*time.Second {
			return fmt.Errorf("%s since the thaw", d.Round(time.Second))
		}
		return nil
	})
	end()
	if !w.clean() {
		t.Errorf("STOP of %s was not exported at every scrape, or STALL was: %s", group, w)
	}
	t.Logf("%s: %s", group, w)
}

// throttled is a franz-go consumer that fetches from one broker at a time
// and consumes at most rate records a second: it serves its partitions in
// turns, as the consumer of the real-kaas run that the old time to drain
// called "not draining" did.
func throttled(t *testing.T, c *Cluster, group string, rate int) (stop func()) {
	t.Helper()
	cl := newClient(t, c, kgo.ConsumerGroup(group), kgo.ConsumeTopics("orders"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MaxConcurrentFetches(1), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.SessionTimeout(10*time.Second), kgo.HeartbeatInterval(500*time.Millisecond),
		kgo.AdjustFetchOffsetsFn(func(_ context.Context, m map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
			for _, ps := range m {
				for p, o := range ps {
					ps[p] = o.WithEpoch(-1)
				}
			}
			return m, nil
		}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond) // rate/10 records a tick
		defer tick.Stop()
		for ctx.Err() == nil {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			fs := cl.PollRecords(ctx, max(1, rate/10))
			cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
			if fs.NumRecords() > 0 {
				cl.CommitUncommittedOffsets(cctx)
			}
			ccancel()
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done; cl.Close() }) }
	t.Cleanup(stop)
	return stop
}

// producing writes perSecond records a second to orders (round robin
// over its partitions) until the returned stop.
func producing(t *testing.T, c *Cluster, perSecond int) (stop func()) {
	t.Helper()
	cl := newClient(t, c, kgo.ProducerLinger(0))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second / time.Duration(perSecond))
		defer tick.Stop()
		for i := 0; ctx.Err() == nil; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			cl.Produce(ctx, &kgo.Record{Topic: "orders", Value: []byte(fmt.Sprint(i))}, nil)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done; cl.Close() }) }
	t.Cleanup(stop)
	return stop
}

// TestRealDrainInTurns (issue 39.2): a throttled consumer (one fetch at a
// time, about 45 records/s) drains a backlog of 1,500 records a partition
// while 15 records/s are produced: each fetch brings one partition's
// backlog, so it serves the partitions in turns and the others stand still
// for half a minute and more, as in the real-kaas run the old time to
// drain called "not draining" (and groups health STALL). Then it keeps up.
// At no scrape is the group not draining, STALL, STOP or WARN; groups
// health and groups describe --drain-window over 30 s during the drain say
// it drains; after it, that it keeps up.
func TestRealDrainInTurns(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "orders:3")
	brokers := strings.Join(c.Addrs(), ",")
	produce(t, c, "orders", 3, 1500)
	const group = "g-turns"
	expAddr := freePort(t)
	startBG(t, "exporter", "--data-dir", c.Data, "--kaas-version", "go", "--brokers", brokers, "--listen", expAddr,
		"--interval", "2s", "--poll-interval", "200ms", "--lag-seconds=false", "--window", "30s", "--stop-after", "10s")
	stopProducing := producing(t, c, 15)
	defer stopProducing()
	throttled(t, c, group, 45)
	waitFor(t, 2*time.Minute, group+" committed on every partition", func() error {
		if got := committed(t, c, group); len(got) < 3 {
			return fmt.Errorf("committed %s", fmtOffsets(got))
		}
		return nil
	})
	w, end := watchConditions(t, expAddr, group, nil, []string{"STALL", "STOP", "WARN", "NOT_DRAINING"})
	// During the drain: health over 30 s (partitions still meanwhile) and
	// describe's time to drain.
	h := kaasctl(t, "groups", "health", group, "--data-dir", c.Data, "--kaas-version", "go", "--brokers", brokers, "--window", "30s", "--interval", "5s", "-o", "json")
	if hv := decode[healthView](t, h); h.code != 0 || len(hv.Groups) != 1 || hv.Groups[0].State != "OK" {
		t.Errorf("groups health of a consumer draining in turns: %v", h)
	}
	r := kaasctl(t, "groups", "describe", group, "--data-dir", c.Data, "--kaas-version", "go", "--brokers", brokers, "--drain-window", "30s")
	if r.code != 0 || strings.Contains(r.stdout, "not draining") || !strings.Contains(r.stdout, "consumed") {
		t.Errorf("groups describe --drain-window while it drains in turns: %v", r)
	}
	// Through the drain (4,500 records at 30/s net) and 35 s of keeping up.
	drained, logged, estimates := time.Time{}, time.Now(), 0
	waitFor(t, 6*time.Minute, group+" drained and kept up for a window", func() error {
		m, err := scrape(expAddr)
		if err != nil {
			return err
		}
		lag, _ := m.get("kaas_group_lag", "group", group)
		ds, ok := m.get("kaas_group_drain_seconds", "group", group)
		if ok && ds > 0 {
			estimates++
		}
		if time.Since(logged) > 15*time.Second {
			logged = time.Now()
			t.Logf("%s: lag %v, drain %vs", group, lag, ds)
		}
		if lag < 50 && drained.IsZero() {
			drained = time.Now()
		}
		if drained.IsZero() || time.Since(drained) < 35*time.Second {
			return fmt.Errorf("lag %v", lag)
		}
		return nil
	})
	end()
	if !w.clean() {
		t.Errorf("%s: %s", group, w)
	}
	if estimates == 0 {
		t.Errorf("no drain estimate of %s while it drained", group)
	}
	r = kaasctl(t, "groups", "describe", group, "--data-dir", c.Data, "--kaas-version", "go", "--brokers", brokers, "--drain-window", "15s")
	if r.code != 0 || strings.Contains(r.stdout, "not draining") {
		t.Errorf("groups describe --drain-window of a consumer keeping up: %v", r)
	}
}

// TestRealProbeKilledBroker (issue 39.5): a killed broker leaves kaas's
// brokers[] and its metadata; probe, given every broker, still names it,
// failed at FindCoordinator, and exits 3; the exporter, started after the
// kill, exports it down.
func TestRealProbeKilledBroker(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "orders:3")
	all := strings.Join(c.Addrs(), ",")
	produce(t, c, "orders", 3, 10)
	ok(t, "probe", "--data-dir", c.Data, "--brokers", all)
	victim := c.Brokers[2]
	if err := c.Kill(2); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, victim.ID+" out of assignment.json", func() error {
		a := readAssignment(t, layoutOf(t, c).AssignmentPath())
		for _, b := range a.Brokers {
			if b.ID == victim.ID {
				return fmt.Errorf("still listed (%s)", b.Health)
			}
		}
		return nil
	})
	type probeRow struct {
		Broker     string   `json:"broker"`
		Addr       string   `json:"addr"`
		OK         bool     `json:"ok"`
		FailedStep string   `json:"failedStep"`
		Sources    []string `json:"sources"`
	}
	var rows []probeRow
	eventually(t, 60*time.Second, "probe names the killed broker", func() error {
		r := kaasctl(t, "probe", "--data-dir", c.Data, "--brokers", all, "--timeout", "3s", "-o", "json")
		v := decode[struct {
			Brokers []probeRow `json:"brokers"`
		}](t, r)
		rows = v.Brokers
		if r.code != 3 || len(rows) != 3 {
			return fmt.Errorf("exit %d, %d rows: %v", r.code, len(rows), r)
		}
		for _, b := range rows {
			if (b.Addr == victim.Addr()) == b.OK || b.Addr == victim.Addr() && b.FailedStep != "FindCoordinator" {
				return fmt.Errorf("row %+v", b)
			}
		}
		return nil
	})
	expAddr := freePort(t)
	startBG(t, "exporter", "--data-dir", c.Data, "--kaas-version", "go", "--brokers", all, "--listen", expAddr, "--interval", "1s", "--timeout", "3s")
	eventually(t, 60*time.Second, "the exporter exports "+victim.Addr()+" down", func() error {
		m, err := scrape(expAddr)
		if v, ok := m.get("kaas_broker_up", "broker", victim.Addr()); err != nil || !ok || v != 0 {
			return fmt.Errorf("kaas_broker_up %v %v (%v)", v, ok, err)
		}
		return nil
	})
}
