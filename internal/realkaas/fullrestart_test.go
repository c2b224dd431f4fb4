//go:build realkaas && unix

package realkaas

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// TestRealFullRestart (issue 32): every broker killed while a producer runs,
// restarted, the producer still running. Each broker trusts the log end it
// last flushed (Go: the manifest's high watermark at an unchanged epoch;
// Rust 0.2.18: recovery-checkpoint.json), so partitions come back served
// below their segments and the producer appends there. The exporter
// reports the incident at every scrape until its cause is gone (not when
// the served end has caught up again), doctor -b and groups describe name
// it as a stale takeover (not a recreated topic), and a live reset refuses
// to keep or plan an offset past the served end.
func TestRealFullRestart(t *testing.T) {
	t.Parallel()
	forFlavours(t, testRealFullRestart)
}

func testRealFullRestart(t *testing.T, f Flavour) {
	c := newFlavourCluster(t, f, "orders:3")
	brokers := strings.Join(c.Addrs(), ",")
	const group = "g-fr"
	produce(t, c, "orders", 3, 50)
	stopProducing := producing(t, c, 6)
	defer stopProducing()
	expAddr := freePort(t)
	startBG(t, "exporter", "--data-dir", c.Data, "--kaas-version", f.KaasVersion(), "--brokers", brokers, "--listen", expAddr,
		"--interval", "1s", "--poll-interval", "200ms", "--lag-seconds=false", "--window", "1m", "--stop-after", "30s",
		"--served-check-interval", "5s")

	var held map[tp]int64
	var entries map[tp]volume.PartitionEntry
	behind := map[tp]int64{}
	for attempt := 1; attempt <= 6 && len(behind) == 0; attempt++ {
		held, behind, entries = killWhileProducing(t, c, f, group)
		if len(behind) == 0 && !staleEndRule(t, f).NewEpochRescans {
			// Rust 0.2.18 resumes its scan from the checkpoint's byte
			// position, so a kill leaves no stale end: nothing to report.
			t.Logf("%s came back at its segments' end after every broker was killed: %s", f.Name(), fmtOffsets(held))
			nothingStale(t, c, expAddr, group)
			return
		}
	}
	if len(behind) == 0 {
		t.Fatalf("six full restarts and no partition served behind its segments (every takeover at a new epoch?): %v", partitionEntries(t, c))
	}
	t.Logf("served behind their segments: %s (segments %s)", fmtOffsets(behind), fmtOffsets(held))

	rule := staleEndRule(t, f)
	mon := monitorStale(t, expAddr, layoutOf(t, c).AssignmentPath(), behind, entries, rule.NewEpochRescans)
	defer mon.stop()
	mon.waitSeen(t, 30*time.Second)

	// On Go the controller can still take a partition over at a new epoch
	// (a re-scan: the cause gone); each check asks about the partitions
	// still at the epoch they were seen at.
	stale := func() map[tp]int64 {
		if !rule.NewEpochRescans {
			return behind
		}
		now, out := partitionEntries(t, c), map[tp]int64{}
		for k, v := range behind {
			if now[k].Epoch == entries[k].Epoch {
				out[k] = v
			} else {
				t.Logf("%s taken over at epoch %d (seen at %d): re-scanned, no longer stale", k, now[k].Epoch, entries[k].Epoch)
			}
		}
		return out
	}
	doctorNamesStale(t, c, stale())
	describeNamesTakeover(t, c, group, stale())
	refusedStale(t, c, group, "orders", stale())
	refusedCurrent(t, c, group, stale())

	// The producer appends at the stale end: push every partition past
	// what its segments held, so the served end looks normal again.
	gap := int64(0)
	for k, s := range behind {
		gap = max(gap, held[k]-s)
	}
	produce(t, c, "orders", 3, int(gap)+10)
	waitFor(t, 60*time.Second, "the served end past the segments' old end", func() error {
		served := logEnds(t, c, "orders")
		for k := range behind {
			if served[k] <= held[k] {
				return fmt.Errorf("%s served %d, segments held %d", k, served[k], held[k])
			}
		}
		return nil
	})
	caughtUp := time.Now()
	mon.waitScrapes(t, caughtUp, 5)
	until := caughtUp
	if rule.NewEpochRescans {
		// Go: the cause (a takeover at the manifest's epoch) is still
		// there after the served end has caught up; the incident stays
		// until a takeover at a new epoch.
		until = time.Now()
	}
	if missed := mon.missed(mon.firstSeen(), until); len(missed) > 0 {
		t.Errorf("the exporter stopped reporting the stale end while its cause held: %v", missed)
	}
	// The segments are compared at most every --served-check-interval
	// (5 s): a partition the producer reached after the last comparison
	// is reported at the next one.
	waitFor(t, 20*time.Second, "the exporter to report logWrittenTwice on every partition appended over", func() error {
		if written, want := mon.writtenTwiceSince(caughtUp); len(written) != len(want) {
			return fmt.Errorf("reported on %v, want %v", written, want)
		}
		return nil
	})
	if rule.NewEpochRescans {
		restartLeaders(t, c, behind)
		waitFor(t, 60*time.Second, "the exporter to clear the stale end once every leader re-read its segments", func() error {
			ss := mon.snapshot()
			if last := ss[len(ss)-1]; len(last.behind) > 0 {
				return fmt.Errorf("still reported on %v", last.behind)
			}
			return nil
		})
	}
	t.Logf("exporter: %d scrapes, served behind at %d, written twice at %d", mon.scrapes(), mon.seenCount(), mon.writtenCount())
}

// restartLeaders restarts the leader of every partition of behind and
// waits until the controller has moved its partitions (a takeover at a new
// epoch), as doctor's fix for the Go flavour says.
func restartLeaders(t *testing.T, c *Cluster, behind map[tp]int64) {
	t.Helper()
	entries := partitionEntries(t, c)
	done := map[string]bool{}
	for k := range behind {
		id := entries[k].Broker
		if done[id] {
			continue
		}
		done[id] = true
		i := indexOf(c, id)
		if err := c.Term(i); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 60*time.Second, "the partitions of "+id+" taken over at a new epoch", func() error {
			now := partitionEntries(t, c)
			for k := range behind {
				if entries[k].Broker == id && now[k].Epoch <= entries[k].Epoch {
					return fmt.Errorf("%s still at epoch %d on %s", k, now[k].Epoch, now[k].Broker)
				}
			}
			return nil
		})
		if err := c.StartBroker(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitSettled(context.Background(), 60*time.Second); err != nil {
		t.Fatal(err)
	}
}

// staleEndRule is the volume model's rule for what ends a stale end on f.
func staleEndRule(t *testing.T, f Flavour) volume.StaleEndRule {
	g, err := volume.ParseKaasVersion(f.KaasVersion())
	if err != nil {
		t.Fatal(err)
	}
	spec, ok := g.Spec()
	if !ok {
		t.Fatalf("no volume-model row for %s", f.KaasVersion())
	}
	return spec.Broker.StaleEnd
}

// killWhileProducing restarts every broker gracefully (each flushes the
// log end it holds), lets the producer and group run on, kills every
// broker with the producer running, starts them again and returns the log
// ends the segments held at the kill and the partitions then served below
// them.
func killWhileProducing(t *testing.T, c *Cluster, f Flavour, group string) (held, behind map[tp]int64, entries map[tp]volume.PartitionEntry) {
	t.Helper()
	termAll(t, c)
	startAll(t, c)
	produce(t, c, "orders", 3, 150)
	want := logEnds(t, c, "orders")
	cs := startConsumer(t, c, group, "orders")
	waitFor(t, 60*time.Second, group+" committed up to "+fmtOffsets(want), func() error {
		got, err := committedErr(t, c, group)
		if err != nil {
			return err
		}
		for k, v := range want {
			if got[k] < v {
				return fmt.Errorf("committed %s", fmtOffsets(got))
			}
		}
		return nil
	})
	cs.stop()
	for i := range c.Brokers {
		if err := c.Kill(i); err != nil {
			t.Fatal(err)
		}
	}
	held, file := offlineEndsOf(t, c, f, group)
	t.Logf("killed with the producer running: segments end at %s, %s committed %s", fmtOffsets(held), group, fmtOffsets(file))
	startAll(t, c)
	behind = map[tp]int64{}
	eventually(t, 30*time.Second, "every partition served again after the full restart", func() error {
		served := logEnds(t, c, "orders")
		for k, end := range held {
			s, ok := served[k]
			switch {
			case !ok || s == 0:
				return fmt.Errorf("%s not served yet (%s)", k, fmtOffsets(served))
			case s < end:
				behind[k] = s
			}
		}
		return nil
	})
	// The controller may still move partitions (a takeover at a new epoch
	// re-scans the segments on Go): once it has settled, what is served
	// behind is what stays so.
	if err := c.WaitSettled(context.Background(), 60*time.Second); err != nil {
		t.Fatal(err)
	}
	before := partitionEntries(t, c)
	served := logEnds(t, c, "orders")
	entries = partitionEntries(t, c)
	for k, s := range behind {
		if served[k] >= held[k] || entries[k].Epoch != before[k].Epoch {
			t.Logf("%s served %d right after the restart, %d once the controller settled (epoch %d, then %d)", k, s, served[k], before[k].Epoch, entries[k].Epoch)
			delete(behind, k)
		}
	}
	return held, behind, entries
}

// nothingStale: with every partition served at least at its segments' end,
// the exporter, doctor -b and groups describe report no stale end.
func nothingStale(t *testing.T, c *Cluster, expAddr, group string) {
	t.Helper()
	since := time.Now()
	waitFor(t, 30*time.Second, "3 exporter refreshes after the restart", func() error {
		m, err := scrape(expAddr)
		if err != nil {
			return err
		}
		if v, _ := m.get("kaas_exporter_last_refresh_timestamp_seconds"); v < float64(since.Add(3*time.Second).Unix()) {
			return fmt.Errorf("last refresh at %v", v)
		}
		if v, ok := m.get("kaas_partition_served_behind_log_records"); ok {
			t.Errorf("the exporter reports a partition served behind its segments (%v records) after a restart that left none", v)
		}
		return nil
	})
	r := kaasctl(t, "doctor", "--data-dir", c.Data, "--brokers", strings.Join(c.Addrs(), ","), "-o", "json")
	if strings.Contains(r.stdout, "live.servedBehindLog") {
		t.Errorf("doctor names a stale end that kaas does not serve:\n%s", r.stdout)
	}
	d := kaasctl(t, "groups", "describe", "--data-dir", c.Data, "--brokers", strings.Join(c.Addrs(), ","), "-o", "json", group)
	if strings.Contains(d.stdout, `"servedBehindLog": true`) {
		t.Errorf("groups describe marks a stale end that kaas does not serve:\n%s", d.stdout)
	}
}

// offlineEndsOf is every partition's log end as kaasctl reads the segments
// offline (every broker down) and the group's committed offsets in its
// offset file.
func offlineEndsOf(t *testing.T, c *Cluster, f Flavour, group string) (ends, committed map[tp]int64) {
	t.Helper()
	od := decode[offlineDescribe](t, ok(t, "groups", "describe", group, "--data-dir", c.Data, "--kaas-version", f.KaasVersion(), "-o", "json"))
	ends, committed = map[tp]int64{}, map[tp]int64{}
	for _, g := range od.Groups {
		for _, p := range g.Partitions {
			k := tp{p.Topic, p.Partition}
			committed[k] = p.Committed
			if p.HighWatermark != nil {
				ends[k] = *p.HighWatermark
			}
		}
	}
	return ends, committed
}

// describeNamesTakeover: groups describe with the brokers marks each
// partition served behind its segments, and names the group's commit past
// the served end as a stale takeover, never as a recreated topic.
func describeNamesTakeover(t *testing.T, c *Cluster, group string, behind map[tp]int64) {
	t.Helper()
	describeMarksStale(t, c, group, behind)
	v := describeLive(t, c, group)
	for _, g := range v.Groups {
		for _, p := range g.Partitions {
			if _, stale := behind[tp{p.Topic, p.Partition}]; !stale {
				continue
			}
			var past string
			for _, in := range p.Incidents {
				if in.Code == "committedPastServedEnd" {
					past = in.Detail
				}
			}
			switch {
			case past == "":
				t.Errorf("groups describe: %s/%d committed past its served end has no committedPastServedEnd incident: %+v", p.Topic, p.Partition, p.Incidents)
			case strings.Contains(past, "recreated"):
				t.Errorf("groups describe calls a stale takeover of %s/%d a recreated topic: %s", p.Topic, p.Partition, past)
			default:
				t.Logf("groups describe: %s/%d: %s", p.Topic, p.Partition, past)
			}
		}
	}
	table := kaasctl(t, "groups", "describe", "--data-dir", c.Data, "--brokers", strings.Join(c.Addrs(), ","), group)
	if strings.Contains(table.stdout, "recreated") {
		t.Errorf("groups describe's table calls the stale takeover a recreated topic:\n%s", table.stdout)
	}
}

// refusedCurrent: a live offsets reset --to-current --execute keeps no
// commit past the served end of a partition served behind its segments:
// it is refused (exit 4) and nothing is written.
func refusedCurrent(t *testing.T, c *Cluster, group string, behind map[tp]int64) {
	t.Helper()
	before := committed(t, c, group)
	r := kaasctl(t, "offsets", "reset", "--data-dir", c.Data, "--brokers", strings.Join(c.Addrs(), ","), "--group", group,
		"--topic", "orders", "--to-current", "--execute", "-o", "json")
	v := decode[resetView](t, r)
	if r.code != 4 || len(v.Groups) != 1 || v.Groups[0].Executed {
		t.Errorf("live offsets reset --to-current past the served end: want exit 4 and nothing executed, got %v", r)
	}
	for _, g := range v.Groups {
		for _, row := range g.Rows {
			if _, stale := behind[tp{row.Topic, row.Partition}]; stale {
				t.Logf("--to-current on %s/%d: %s", row.Topic, row.Partition, row.Error)
			}
		}
	}
	if after := committed(t, c, group); fmtOffsets(after) != fmtOffsets(before) {
		t.Errorf("the refused --to-current changed the offset file: %s, was %s", fmtOffsets(after), fmtOffsets(before))
	}
}

// staleMonitor scrapes the exporter every 300 ms and records, per scrape,
// which of the partitions carry kaas_partition_served_behind_log_records
// and kaas_partition_incident_groups{incident="logWrittenTwice"}.
type staleMonitor struct {
	addr string
	// epochs are the stale partitions' epochs when they were seen; a
	// takeover at a new epoch re-scans on the Go flavour (the cause gone).
	epochs map[tp]uint32
	path   string
	// rescans: the generation's takeover at a new epoch ends the incident.
	rescans bool
	mu      sync.Mutex
	samples []staleSample
	stopped chan struct{}
	done    chan struct{}
}

type staleSample struct {
	at      time.Time
	behind  map[string]bool
	written map[string]bool
	// moved: read after the scrape, the stale partitions no longer at the
	// epoch they were seen at.
	moved map[string]bool
}

func monitorStale(t *testing.T, addr, assignment string, parts map[tp]int64, entries map[tp]volume.PartitionEntry, rescans bool) *staleMonitor {
	m := &staleMonitor{addr: addr, path: assignment, epochs: map[tp]uint32{}, rescans: rescans, stopped: make(chan struct{}), done: make(chan struct{})}
	for k := range parts {
		m.epochs[k] = entries[k].Epoch
	}
	go func() {
		defer close(m.done)
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-m.stopped:
				return
			case <-tick.C:
			}
			got, err := scrape(addr)
			if err != nil {
				continue
			}
			s := staleSample{at: time.Now(), behind: map[string]bool{}, written: map[string]bool{}}
			for k := range parts {
				p := fmt.Sprint(k.Partition)
				if v, ok := got.get("kaas_partition_served_behind_log_records", "topic", k.Topic, "partition", p); ok {
					s.behind[k.String()] = true
					if v < 0 {
						t.Errorf("kaas_partition_served_behind_log_records of %s reads %v: records short cannot be negative", k, v)
					}
				}
				if v, ok := got.get("kaas_partition_incident_groups", "topic", k.Topic, "partition", p, "incident", "logWrittenTwice"); ok && v > 0 {
					s.written[k.String()] = true
				}
			}
			s.moved = m.movedEpochs()
			m.mu.Lock()
			m.samples = append(m.samples, s)
			m.mu.Unlock()
		}
	}()
	t.Cleanup(m.stop)
	return m
}

// movedEpochs reads assignment.json: the stale partitions no longer at the
// epoch they were seen at (every one when it cannot be read).
func (m *staleMonitor) movedEpochs() map[string]bool {
	out := map[string]bool{}
	a, _, err := volume.ReadAssignment(m.path)
	for k, ep := range m.epochs {
		out[k.String()] = err != nil
		if err == nil {
			for _, e := range a.Partitions {
				if e.Topic == k.Topic && e.Partition == k.Partition && e.Epoch != ep {
					out[k.String()] = true
				}
			}
		}
	}
	return out
}

// covered: s reports every stale partition, or on a generation whose
// takeover at a new epoch re-scans the segments, each one it leaves out
// was taken over at a new epoch (the cause gone).
func (m *staleMonitor) covered(s staleSample) (missing []string) {
	for k := range m.epochs {
		if !s.behind[k.String()] && !(m.rescans && s.moved[k.String()]) {
			missing = append(missing, k.String())
		}
	}
	slices.Sort(missing)
	return missing
}

func (m *staleMonitor) stop() {
	select {
	case <-m.stopped:
	default:
		close(m.stopped)
	}
	<-m.done
}

func (m *staleMonitor) snapshot() []staleSample {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.samples)
}

// firstSeen is the first scrape at which every partition was reported.
func (m *staleMonitor) firstSeen() time.Time {
	for _, s := range m.snapshot() {
		if len(s.behind) > 0 && len(m.covered(s)) == 0 {
			return s.at
		}
	}
	return time.Time{}
}

func (m *staleMonitor) waitSeen(t *testing.T, within time.Duration) {
	t.Helper()
	waitFor(t, within, "the exporter reporting every partition served behind its segments", func() error {
		if m.firstSeen().IsZero() {
			return fmt.Errorf("%d scrapes, none with every partition; the last:\n%s", len(m.snapshot()), m.lastOrders())
		}
		return nil
	})
}

func (m *staleMonitor) waitScrapes(t *testing.T, since time.Time, n int) {
	t.Helper()
	waitFor(t, 60*time.Second, fmt.Sprintf("%d scrapes", n), func() error {
		got := 0
		for _, s := range m.snapshot() {
			if s.at.After(since) {
				got++
			}
		}
		if got < n {
			return fmt.Errorf("%d scrapes", got)
		}
		return nil
	})
}

// missed lists the scrapes between from and until that left a partition
// out of kaas_partition_served_behind_log_records.
func (m *staleMonitor) missed(from, until time.Time) []string {
	var out []string
	for _, s := range m.snapshot() {
		if from.IsZero() || s.at.Before(from) || s.at.After(until) {
			continue
		}
		if miss := m.covered(s); len(miss) > 0 {
			out = append(out, fmt.Sprintf("%v left out at %s", miss, s.at.Format("15:04:05.000")))
		}
	}
	return out
}

// writtenTwiceSince is the partitions the last scrape after since reports
// written twice, and those it must: every stale partition still at the
// epoch it was seen at (one taken over at a new epoch before a producer
// reached its stale end was re-scanned and written once).
func (m *staleMonitor) writtenTwiceSince(since time.Time) (written, want []string) {
	ss := m.snapshot()
	if len(ss) == 0 || !ss[len(ss)-1].at.After(since) {
		return nil, []string{"a scrape after " + since.Format("15:04:05.000")}
	}
	last := ss[len(ss)-1]
	for k := range m.epochs {
		switch {
		case last.written[k.String()]:
			written = append(written, k.String())
			want = append(want, k.String())
		case !last.moved[k.String()]:
			want = append(want, k.String())
		}
	}
	slices.Sort(written)
	slices.Sort(want)
	return written, want
}

// lastOrders is what a scrape now exports about the topic orders.
func (m *staleMonitor) lastOrders() string {
	got, err := scrape(m.addr)
	if err != nil {
		return err.Error()
	}
	var lines []string
	for k, v := range got {
		if strings.Contains(k, "orders") || strings.Contains(k, "findings") || strings.Contains(k, "g-fr") {
			lines = append(lines, fmt.Sprintf("%s %v", k, v))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func (m *staleMonitor) scrapes() int { return len(m.snapshot()) }

func (m *staleMonitor) seenCount() int {
	n := 0
	for _, s := range m.snapshot() {
		if len(s.behind) > 0 {
			n++
		}
	}
	return n
}

func (m *staleMonitor) writtenCount() int {
	n := 0
	for _, s := range m.snapshot() {
		if len(s.written) > 0 {
			n++
		}
	}
	return n
}
