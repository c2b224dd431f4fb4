package exporter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
)

// writeLog replaces the partition's dir of the volume (volume's layout
// decides where) with segment files holding the records [0, end).
func writeLog(t *testing.T, l volume.Layout, topic string, part int32, end int64) {
	t.Helper()
	dir := l.PartitionDir(topic, part)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := volume.WriteRecords(dir, 0, end, 1_700_000_000_000); err != nil {
		t.Fatal(err)
	}
}

// TestExporterServedBehindLog: with a volume and brokers, a partition whose
// segments, read before the brokers were asked, hold more than its leader
// serves is exported with the records it is short and logged once, naming
// the generation assumed; a partition served at its segments' end is not.
// Once the leader serves the log end again, the series goes and one note
// says so. With --served-check-interval, refreshes within it keep the last
// comparison.
func TestExporterServedBehindLog(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 2, Topics: []sandbox.Topic{{Name: "orders", Partitions: 2}}})
	ctx := context.Background()
	if err := sb.Produce(ctx, "orders", 2, 10); err != nil {
		t.Fatal(err)
	}
	if err := sb.Commit(ctx, "g1", map[string]map[int32]int64{"orders": {0: 5, 1: 5}}); err != nil {
		t.Fatal(err)
	}
	l := sb.Layout()
	sb.PlantLogs() // the test's segments stay as written
	// The brokers serve both partitions at 10.
	writeLog(t, l, "orders", 0, 25)
	writeLog(t, l, "orders", 1, 10)
	cl, err := wire.NewClient(&wire.Settings{Brokers: sb.Bootstrap(), Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var logs, notes []string
	src := &observe.Source{Layout: &l, Client: cl, ServedCheckInterval: time.Nanosecond}
	e := New(Options{Source: src,
		Logf:  func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) },
		Notef: func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }})
	metrics := func() string {
		var b bytes.Buffer
		if err := e.WriteMetrics(&b, nil); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	o := e.Refresh(ctx)
	if len(o.ServedBehind) != 1 || o.ServedBehind[0].Partition != "orders/0" || o.ServedBehind[0].Served != 10 || o.ServedBehind[0].LogEnd != 25 {
		t.Fatalf("served behind: %+v, want orders/0 served at 10 below 25", o.ServedBehind)
	}
	m := metrics()
	if !strings.Contains(m, `kaas_partition_served_behind_log_records{topic="orders",partition="0"} 15`) || strings.Contains(m, `kaas_partition_served_behind_log_records{topic="orders",partition="1"}`) {
		t.Errorf("metrics: want orders/0 15 records short and no orders/1 series:\n%s", m)
	}
	e.Refresh(ctx)
	if len(logs) != 1 || !strings.Contains(logs[0], "orders/0 served at 10, its segments end at 25") || !strings.Contains(logs[0], "kaas") ||
		!strings.Contains(logs[0], "kaas_partition_served_behind_log_records") {
		t.Fatalf("want one log line naming orders/0, both ends and the generation over two refreshes, got %q", logs)
	}
	// The segments are read again and end where the leader serves (as
	// they do once producers appended at the stale end): the cause is not
	// gone, so the incident stays (the sandbox emulates Rust 0.2.18, whose
	// stale end survives takeovers: it ends when the served end reaches
	// what the segments held).
	writeLog(t, l, "orders", 0, 10)
	if o := e.Refresh(ctx); len(o.ServedBehind) != 1 || o.ServedBehind[0].LogEnd != 25 || o.ServedBehind[0].Since.IsZero() {
		t.Fatalf("served behind once the segments end at the served end: %+v, want orders/0 kept, below 25, with its since", o.ServedBehind)
	}
	if !strings.Contains(metrics(), `kaas_partition_served_behind_log_records{topic="orders",partition="0"} 15`) {
		t.Error("the series went while the cause stays")
	}
	// The leader serves what the segments held: gone, and one note says so.
	if err := sb.Produce(ctx, "orders", 1, 15); err != nil {
		t.Fatal(err)
	}
	if o := e.Refresh(ctx); len(o.ServedBehind) != 0 {
		t.Fatalf("served behind after the served end reached 25: %+v", o.ServedBehind)
	}
	if m := metrics(); strings.Contains(m, "kaas_partition_served_behind_log_records{") {
		t.Errorf("the series stays after the fix:\n%s", m)
	}
	if len(logs) != 1 || len(notes) == 0 || !strings.Contains(notes[len(notes)-1], "served at the log end of its segments again") {
		t.Errorf("want one note when it clears, got logs %q notes %q", logs, notes)
	}

	// With an interval, a refresh within it keeps the last comparison
	// (no segment read), and the first past it compares again.
	writeLog(t, l, "orders", 0, 40)
	now := time.Now()
	spaced := &observe.Source{Layout: &l, Client: cl, ServedCheckInterval: time.Minute, Now: func() time.Time { return now }}
	e2 := New(Options{Source: spaced})
	if o := e2.Refresh(ctx); len(o.ServedBehind) != 1 || o.ServedBehind[0].Served != 25 {
		t.Fatalf("first refresh: %+v, want orders/0 served at 25", o.ServedBehind)
	}
	writeLog(t, l, "orders", 0, 10)
	now = now.Add(30 * time.Second)
	if o := e2.Refresh(ctx); len(o.ServedBehind) != 1 || o.ServedBehind[0].LogEnd != 40 {
		t.Fatalf("within the interval: %+v, want the last comparison kept", o.ServedBehind)
	}
	now = now.Add(31 * time.Second)
	if o := e2.Refresh(ctx); len(o.ServedBehind) != 1 {
		t.Fatalf("past the interval: %+v, want it kept (compared again: nothing new, the cause stays)", o.ServedBehind)
	}
	if err := sb.Produce(ctx, "orders", 1, 15); err != nil {
		t.Fatal(err)
	}
	if o := e2.Refresh(ctx); len(o.ServedBehind) != 0 {
		t.Fatalf("the served end reached 40: %+v, want none", o.ServedBehind)
	}
	// A new assignment version (a takeover, when a leader comes to serve a
	// stale end) brings the comparison forward.
	hourly := &observe.Source{Layout: &l, Client: cl, ServedCheckInterval: time.Hour, Now: func() time.Time { return now }}
	e3 := New(Options{Source: hourly})
	if o := e3.Refresh(ctx); len(o.ServedBehind) != 0 {
		t.Fatalf("served at 40 over 40: %+v", o.ServedBehind)
	}
	writeLog(t, l, "orders", 0, 60)
	now = now.Add(time.Second)
	if o := e3.Refresh(ctx); len(o.ServedBehind) != 0 {
		t.Fatalf("within the hour and no new version: %+v, want no comparison", o.ServedBehind)
	}
	bumpAssignment(t, l)
	now = now.Add(time.Second)
	if o := e3.Refresh(ctx); len(o.ServedBehind) != 1 || o.ServedBehind[0].LogEnd != 60 {
		t.Fatalf("after a new assignment version: %+v, want orders/0 compared again (segments at 60)", o.ServedBehind)
	}
	writeLog(t, l, "orders", 0, 40)
	// groups health's source (no interval) never compares.
	writeLog(t, l, "orders", 0, 80)
	if o := New(Options{Source: &observe.Source{Layout: &l, Client: cl}}).Refresh(ctx); len(o.ServedBehind) != 0 {
		t.Fatalf("no interval: %+v, want no comparison", o.ServedBehind)
	}
}

// bumpAssignment rewrites the volume's assignment.json one version on, as
// a controller's next write.
func bumpAssignment(t *testing.T, l volume.Layout) {
	t.Helper()
	p := l.AssignmentPath()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	v, _ := doc["assignmentVersion"].(float64)
	doc["assignmentVersion"] = v + 1
	out, _ := json.Marshal(doc)
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestExporterKeepsWrittenTwice: a leader that took a partition over at a
// stale end appended there, so the segment holds a range twice and its last
// batch no longer shows how far it reached. Refreshes between two
// comparisons of the served ends keep the incident (and the end the earlier
// copy reached), read from the segments at the last comparison: the
// evidence is still on the volume.
func TestExporterKeepsWrittenTwice(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 1, Topics: []sandbox.Topic{{Name: "orders", Partitions: 1}}})
	ctx := context.Background()
	if err := sb.Produce(ctx, "orders", 1, 12); err != nil {
		t.Fatal(err)
	}
	if err := sb.Commit(ctx, "g1", map[string]map[int32]int64{"orders": {0: 20}}); err != nil {
		t.Fatal(err)
	}
	l := sb.Layout()
	sb.PlantLogs()
	dir := l.PartitionDir("orders", 0)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(dir, 0o755)
	// Offsets 0–24, then 10–11 again: the served end (12) is the last batch's.
	seg := append(volume.EncodeBatch(0, 25, 1_700_000_000_000, nil), volume.EncodeBatch(10, 2, 1_700_000_000_000, nil)...)
	if err := os.WriteFile(dir+"/"+volume.SegmentLogName(0, 1), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	cl, err := wire.NewClient(&wire.Settings{Brokers: sb.Bootstrap(), Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	now := time.Now()
	e := New(Options{Source: &observe.Source{Layout: &l, Client: cl, ServedCheckInterval: time.Hour, Now: func() time.Time { return now }}})
	codes := func(o *observe.Observation) map[string]int64 {
		out := map[string]int64{}
		for _, g := range o.Groups {
			for _, in := range g.Incidents {
				out[in.Code] = in.SegmentsEnd
			}
		}
		return out
	}
	for i := range 3 {
		o := e.Refresh(ctx)
		got := codes(o)
		if end, ok := got["logWrittenTwice"]; !ok || end != 25 {
			t.Errorf("refresh %d: incidents %v, want logWrittenTwice with the segments reaching 25", i, got)
		}
		if _, ok := got["servedBehindLog"]; !ok || len(o.ServedBehind) != 1 || o.ServedBehind[0].LogEnd != 25 {
			t.Errorf("refresh %d: served behind %+v (incidents %v), want orders/0 served at 12 below the 25 its segments held", i, o.ServedBehind, got)
		}
		now = now.Add(time.Second)
	}
}
