package inspect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/labdata"
	"github.com/kaasctl/kaasctl/internal/logparse"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// coordinatorsAt replays a trace: the coordinator of every group at each
// snapshot version, from the initial placement and the events.
func trCoordinatorsAt(tr *Trace) map[int64]map[string]string {
	cur := map[string]string{}
	for _, p := range tr.Initial {
		cur[p.Group] = p.Coordinator
	}
	out := map[int64]map[string]string{}
	snap := func(v int64) {
		m := map[string]string{}
		for k, x := range cur {
			m[k] = x
		}
		out[v] = m
	}
	for _, v := range tr.Versions {
		for _, e := range tr.Events {
			if e.AssignmentVersion == v.AssignmentVersion && e.ControllerEpoch == v.ControllerEpoch {
				cur[e.Group] = e.To
			}
		}
		snap(v.AssignmentVersion)
	}
	return out
}

// TestLabTraceMatchesFindCoordinator is issue 7's acceptance check: the
// trace of assignment-history names, for every group, the coordinator the
// brokers answered to FindCoordinator in the matching phase (phase 1 ↔ v2,
// phase 2 ↔ v3).
func TestLabTraceMatchesFindCoordinator(t *testing.T) {
	t.Parallel()
	dir, err := labdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	phases := map[int64]string{2: "phase1-steady-3-brokers", 3: "phase2-after-kill9-skafka-1"}
	answers := map[int64]map[string]string{}
	var groups []string
	for v, ph := range phases {
		a, err := labdata.FindCoordinator(filepath.Join(dir, ph, "api-findcoordinator.txt"))
		if err != nil {
			t.Fatal(err)
		}
		answers[v] = a
	}
	for g := range answers[2] {
		groups = append(groups, g)
	}
	hist := volume.LoadAssignmentHistory([]string{filepath.Join(dir, "assignment-history")})
	var ins []logparse.Input
	for _, n := range []string{"broker-skafka-0.log", "broker-skafka-1.log", "broker-skafka-2.log"} {
		ins = append(ins, logparse.Input{Path: filepath.Join(dir, "logs", n)})
	}
	logs, _, errs := logparse.ParseAll(ins, logparse.Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	tr := BuildTrace(TraceInput{Snapshots: hist.Snapshots, Logs: logs, Groups: groups})
	if tr.Groups != 5 || len(tr.Versions) != 3 {
		t.Fatalf("groups %d versions %d", tr.Groups, len(tr.Versions))
	}
	at := trCoordinatorsAt(tr)
	for v, want := range answers {
		for g, w := range want {
			if w == "" {
				t.Fatalf("brokers disagreed about %s in phase %s", g, phases[v])
			}
			if got := at[v][g]; got != w {
				t.Errorf("v%d %s: trace says %s, FindCoordinator answered %s", v, g, got, w)
			}
		}
	}
	// Logs date and explain versions: the lease on v1, the broker-set
	// changes on v2 and v3.
	if len(tr.Versions[0].Notes) != 1 || !strings.Contains(tr.Versions[0].Notes[0].Text, "lease acquired by skafka-0") {
		t.Errorf("v1 notes %+v", tr.Versions[0].Notes)
	}
	if len(tr.Versions[2].Notes) != 1 || !strings.Contains(tr.Versions[2].Notes[0].Text, "left skafka-1") {
		t.Errorf("v3 notes %+v", tr.Versions[2].Notes)
	}
	for _, e := range tr.Events {
		if e.Time.IsZero() || e.Evidence != EvidenceAssignment || e.Cause == "" {
			t.Errorf("event %+v", e)
		}
	}
}

func trSnapshot(a *volume.Assignment) volume.Snapshot {
	return volume.Snapshot{Path: "x", Assignment: a}
}

func TestTraceLogEvidence(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 7, 23, 11, 40, 0, 0, time.UTC)
	b3 := mvAlive("kaas-0", "kaas-1", "kaas-2")
	b2 := mvAlive("kaas-0", "kaas-2")
	g := mvFindGroup(t, "g", func(h uint32) bool { return h%3 == 1 }) // on kaas-1, moves when it leaves
	v1 := mvAsg(4, 57, "kaas-0", b3)
	v1.GeneratedAt = t0.Format(time.RFC3339Nano)
	v2 := mvAsg(4, 58, "kaas-0", b2)
	v2.GeneratedAt = ""
	newTo := NewRoutingState(v2).Router.Group(g).Coordinator
	logs := []logparse.Event{
		{Kind: logparse.AssignmentPublished, Time: t0.Add(5 * time.Second), Epoch: 4, HasEpoch: true, Version: 58, HasVersion: true, Broker: "kaas-0", Source: "kaas-0.log", Line: 10},
		{Kind: logparse.CoordinatorChange, Time: t0.Add(6 * time.Second), Group: g, From: "kaas-1", To: newTo, Version: 58, HasVersion: true, Side: "gained", Broker: newTo, Source: "k.log", Line: 3},
		// A move at a version no snapshot covers.
		{Kind: logparse.BrokerSetChanged, Time: t0.Add(60 * time.Second), Added: []string{"kaas-1"}, Broker: "kaas-0", Source: "kaas-0.log", Line: 20},
		{Kind: logparse.AssignmentPublished, Time: t0.Add(61 * time.Second), Epoch: 4, HasEpoch: true, Version: 59, HasVersion: true, Broker: "kaas-0", Source: "kaas-0.log", Line: 21},
		{Kind: logparse.CoordinatorChange, Time: t0.Add(62 * time.Second), Group: g, From: newTo, To: "kaas-1", Version: 59, HasVersion: true, Epoch: 4, HasEpoch: true, Side: "gained", Broker: "kaas-1", Source: "k1.log", Line: 7},
		{Kind: logparse.CoordinatorChange, Time: t0.Add(62 * time.Second), Group: g, From: newTo, To: "kaas-1", Version: 59, HasVersion: true, Epoch: 4, HasEpoch: true, Side: "lost", Broker: newTo, Source: "k2.log", Line: 8},
	}
	tr := BuildTrace(TraceInput{Snapshots: []volume.Snapshot{trSnapshot(v1), trSnapshot(v2)}, Logs: logs})
	if len(tr.Events) != 2 {
		t.Fatalf("events %+v", tr.Events)
	}
	e := tr.Events[0]
	if e.Evidence != EvidenceBoth || e.Cause != CauseBrokerLeft || !e.Time.Equal(t0.Add(5*time.Second)) || e.TimeSource != "log" {
		t.Errorf("confirmed event %+v", e)
	}
	l := tr.Events[1]
	if l.Evidence != EvidenceLog || l.AssignmentVersion != 59 || l.Cause != CauseBrokerJoined || len(l.Logs) != 2 {
		t.Errorf("log-only event %+v", l)
	}
	if tr.Confirmed != 1 || tr.LogOnlyMoves != 1 {
		t.Errorf("counts %d %d", tr.Confirmed, tr.LogOnlyMoves)
	}
	if len(tr.Versions) != 3 || tr.Versions[2].Source != "log" {
		t.Errorf("versions %+v", tr.Versions)
	}

	// Filters: a group glob that matches nothing, and a time window.
	tr = BuildTrace(TraceInput{Snapshots: []volume.Snapshot{trSnapshot(v1), trSnapshot(v2)}, Logs: logs, Filter: []string{"orders-*"}})
	if len(tr.Events) != 0 || tr.Groups != 0 {
		t.Errorf("filtered: %+v", tr.Events)
	}
	tr = BuildTrace(TraceInput{Snapshots: []volume.Snapshot{trSnapshot(v1), trSnapshot(v2)}, Logs: logs, Since: t0.Add(30 * time.Second)})
	if len(tr.Events) != 1 || tr.Events[0].AssignmentVersion != 59 {
		t.Errorf("since: %+v", tr.Events)
	}
}

func TestTraceGapAndFailover(t *testing.T) {
	t.Parallel()
	b3 := mvAlive("kaas-0", "kaas-1", "kaas-2")
	b2 := mvAlive("kaas-0", "kaas-2")
	g := mvFindGroup(t, "g", func(h uint32) bool { return h%3 == 0 && h%2 == 1 })
	snaps := []volume.Snapshot{trSnapshot(mvAsg(1, 3, "kaas-1", b3)), trSnapshot(mvAsg(1, 7, "kaas-1", b3)), trSnapshot(mvAsg(2, 8, "kaas-0", b2))}
	tr := BuildTrace(TraceInput{Snapshots: snaps, Groups: []string{g}})
	if tr.Versions[1].MissingBefore != 3 {
		t.Errorf("gap %d", tr.Versions[1].MissingBefore)
	}
	if len(tr.Events) != 1 || tr.Events[0].Cause != CauseControllerFailover || tr.Events[0].ControllerEpoch != 2 {
		t.Errorf("events %+v", tr.Events)
	}
}

// BenchmarkTrace100MBLogs traces ~100 MB of generated broker logs with a
// 200-version history of 10,000 groups in which a broker leaves or joins
// every 10 versions.
func BenchmarkTrace100MBLogs(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "kaas-0.log")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	if err := logparse.Synthesize(f, 100<<20); err != nil {
		b.Fatal(err)
	}
	f.Close()
	var snaps []volume.Snapshot
	for v := 1; v <= 200; v++ {
		bs := mvAlive("kaas-0", "kaas-1", "kaas-2", "kaas-3", "kaas-4")
		if (v/10)%2 == 1 {
			bs = bs[:4]
		}
		snaps = append(snaps, trSnapshot(mvAsg(1, int64(v), "kaas-0", bs)))
	}
	groups := make([]string, 10000)
	for i := range groups {
		groups[i] = "group-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + trItoa(i)
	}
	b.SetBytes(100 << 20)
	b.ResetTimer()
	var events int
	for i := 0; i < b.N; i++ {
		logs, _, _ := logparse.ParseAll([]logparse.Input{{Path: p}}, logparse.Options{})
		tr := BuildTrace(TraceInput{Snapshots: snaps, Logs: logs, Groups: groups})
		events = len(tr.Events)
	}
	b.ReportMetric(float64(events), "moves")
}

func trItoa(i int) string {
	const d = "0123456789"
	if i < 10 {
		return d[i : i+1]
	}
	return trItoa(i/10) + d[i%10:i%10+1]
}

// A failover seen only in logs: the lease line and the published line
// create the version, a coordinator-change line without an epoch lands
// on it, and the lease explains the move.
func TestTraceLogOnlyFailover(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 29, 9, 9, 0, 0, time.UTC)
	v1 := mvAsg(0, 3, "kaas-0", mvAlive("kaas-0", "kaas-2"))
	v1.GeneratedAt = t0.Format(time.RFC3339Nano)
	logs := []logparse.Event{
		{Kind: logparse.LeaseAcquired, Time: t0.Add(10 * time.Second), Epoch: 1, HasEpoch: true, Identity: "kaas-2", Source: "r.log", Line: 1},
		{Kind: logparse.AssignmentPublished, Time: t0.Add(17 * time.Second), Epoch: 1, HasEpoch: true, Version: 4, HasVersion: true, Source: "r.log", Line: 2},
		{Kind: logparse.CoordinatorChange, Time: t0.Add(18 * time.Second), Group: "orders", From: "kaas-0", To: "kaas-2", Version: 4, HasVersion: true, Side: "gained", Source: "r.log", Line: 3},
	}
	tr := BuildTrace(TraceInput{Snapshots: []volume.Snapshot{trSnapshot(v1)}, Logs: logs})
	if len(tr.Versions) != 2 || tr.Versions[1].Source != "log" || tr.Versions[1].Controller != "kaas-2" || tr.Versions[1].ControllerEpoch != 1 {
		t.Fatalf("versions %+v", tr.Versions)
	}
	if len(tr.Events) != 1 {
		t.Fatalf("events %+v", tr.Events)
	}
	e := tr.Events[0]
	if e.ControllerEpoch != 1 || e.Cause != CauseControllerFailover || e.Evidence != EvidenceLog || e.Group != "orders" {
		t.Errorf("event %+v", e)
	}
}

// FuzzTraceLogs feeds arbitrary log bytes through the parser into a trace
// over two snapshots: whatever the lines claim (versions, epochs, groups),
// the trace must build without panicking and keep its invariants.
func FuzzTraceLogs(f *testing.F) {
	f.Add([]byte(`{"timestamp":"2026-07-23T11:40:05Z","level":"INFO","fields":{"message":"group coordinator change","group":"g","from":"kaas-1","to":"kaas-0","assignment_version":-9223372036854775808,"side":"lost"},"target":"x"}`))
	f.Add([]byte(`2026-07-23T11:40:02Z  INFO kaas::cluster: controller active: assignment published epoch=9223372036854775807 version=1` + "\n" +
		`2026-07-23T11:39:02Z  INFO kaas::cluster: controller: broker set changed prev={"kaas-0"} cur={}`))
	f.Add([]byte(`{"time":"2026-07-23T11:40:02Z","msg":"controller acquired lease","epoch":-1}`))
	b3 := mvAlive("kaas-0", "kaas-1", "kaas-2")
	v1 := mvAsg(4, 57, "kaas-0", b3)
	v2 := mvAsg(4, 60, "kaas-1", b3[:2], volume.GroupEntry{GroupID: "g", Broker: "kaas-9"})
	v2.GeneratedAt = "2026-07-23T11:41:00Z"
	f.Fuzz(func(t *testing.T, data []byte) {
		var logs []logparse.Event
		logparse.Parse(strings.NewReader(string(data)), logparse.Options{Source: "f.log"}, func(e logparse.Event) { logs = append(logs, e) })
		logparse.SortEvents(logs)
		tr := BuildTrace(TraceInput{Snapshots: []volume.Snapshot{trSnapshot(v1), trSnapshot(v2)}, Logs: logs, Groups: []string{"g", "h"}, Placements: true})
		n := 0
		for _, c := range tr.EventsBy {
			n += c.Count
		}
		if n != len(tr.Events) {
			t.Fatalf("cause counts %d, events %d", n, len(tr.Events))
		}
		for _, e := range tr.Events {
			if e.Evidence == "" || e.Cause == "" {
				t.Fatalf("event without evidence or cause: %+v", e)
			}
		}
	})
}
