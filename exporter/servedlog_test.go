package exporter

import (
	"bytes"
	"context"
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
	// groups health's source (no interval) never compares.
	writeLog(t, l, "orders", 0, 80)
	if o := New(Options{Source: &observe.Source{Layout: &l, Client: cl}}).Refresh(ctx); len(o.ServedBehind) != 0 {
		t.Fatalf("no interval: %+v, want no comparison", o.ServedBehind)
	}
}
