package exporter

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/observe"
)

// followEvent is the event the offsets follower emits for a change of the
// group's file from prev to cur.
func followEvent(od, group string, at time.Time, prev, cur map[string]int64) watch.OffsetEvent {
	file := filepath.Join(od, group+".json")
	p := inspect.OffsetObservation{Time: at.Add(-time.Millisecond), Group: group, File: file, Format: volume.FormatEnvelope, Offsets: prev}
	c := inspect.OffsetObservation{Time: at, Group: group, File: file, Format: volume.FormatEnvelope, Offsets: cur}
	ev := watch.OffsetEvent{Prev: &p, Cur: c, Anomalies: inspect.CompareOffsetObservations(p, c, false)}
	ev.Changed, ev.Removed = watch.OffsetDelta(prev, cur)
	return ev
}

// A rewind and a partial rewrite that are both undone before the next
// refresh: the files two refreshes read are the same, yet the follower's
// events set REWIND (the worst) with the VANISHED evidence, and count
// each once however many refreshes follow. Groups outside --group-regex
// are not kept.
func TestExporterFollowerAnomaliesBetweenRefreshes(t *testing.T) {
	t.Parallel()
	l, od := offsetsVolume(t, `{"offsets":{"orders/0":20,"orders/1":20}}`, "app", "other")
	full := map[string]int64{"orders/0": 20, "orders/1": 20}
	e := New(Options{Source: &observe.Source{Layout: &l, Filter: regexp.MustCompile("^app$")}, Window: time.Hour,
		Offsets: &OffsetsFollow{Dir: od, Generation: volume.Gen018}})
	e.following.Store(true) // as Run does once the follower's first scan is done
	ctx := context.Background()
	e.Refresh(ctx)

	now := time.Now()
	e.onOffsetEvents([]watch.OffsetEvent{
		followEvent(od, "app", now, full, map[string]int64{"orders/0": 3, "orders/1": 20}),
		followEvent(od, "other", now, full, map[string]int64{"orders/0": 0, "orders/1": 20}),
	})
	e.onOffsetEvents([]watch.OffsetEvent{followEvent(od, "app", now.Add(time.Millisecond), map[string]int64{"orders/0": 3, "orders/1": 20}, full)})
	e.onOffsetEvents([]watch.OffsetEvent{followEvent(od, "app", now.Add(2*time.Millisecond), full, map[string]int64{"orders/0": 20})})
	e.onOffsetEvents([]watch.OffsetEvent{followEvent(od, "app", now.Add(3*time.Millisecond), map[string]int64{"orders/0": 20}, full)})
	if len(e.kick) != 1 {
		t.Error("an anomaly did not ask for an early refresh")
	}
	for range 3 {
		e.Refresh(ctx)
	}
	h := e.Health()
	if len(h) != 1 || h[0].Group != "app" || h[0].State != inspect.HealthRewind {
		t.Fatalf("health %+v", h)
	}
	var states []string
	for _, ev := range h[0].Evidence {
		states = append(states, ev.State+" "+ev.Partition)
	}
	if strings.Join(states, ",") != "REWIND orders/0,VANISHED orders/1" {
		t.Errorf("evidence %q", states)
	}
	if ev := h[0].Evidence[0]; ev.Before != 20 || ev.After != 3 || ev.File != filepath.Join(od, "app.json") {
		t.Errorf("REWIND evidence %+v", ev)
	}
	var b bytes.Buffer
	if err := e.WriteMetrics(&b, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`kaas_group_offset_rewinds_total{group="app"} 1`, `kaas_group_vanished_partitions_total{group="app"} 1`,
		"kaas_exporter_offsets_following 1", "kaas_exporter_offset_file_changes_total 5"} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(b.String(), "kaas_exporter_journal_") {
		t.Error("journal metrics without a journal")
	}
}

// Without the follower (it stopped, or --follow-offsets=false) the files
// read at two refreshes are compared, as before.
func TestExporterNoFollowerComparesRefreshes(t *testing.T) {
	t.Parallel()
	l, od := offsetsVolume(t, "")
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(od, "app.json"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"offsets":{"orders/0":20}}`)
	e := New(Options{Source: &observe.Source{Layout: &l}, Window: time.Hour, Offsets: &OffsetsFollow{Dir: od}})
	ctx := context.Background()
	e.Refresh(ctx)
	write(`{"offsets":{"orders/0":4}}`)
	e.Refresh(ctx)
	if h := e.Health(); len(h) != 1 || h[0].State != inspect.HealthRewind {
		t.Fatalf("health %+v", h)
	}
	var b bytes.Buffer
	e.WriteMetrics(&b, nil)
	if !strings.Contains(b.String(), "kaas_exporter_offsets_following 0\n") || !strings.Contains(b.String(), `kaas_group_offset_rewinds_total{group="app"} 1`) {
		t.Errorf("metrics:\n%s", b.String())
	}
}

// offsetsVolume is a volume in a temp dir whose offsets dir holds, for each
// of groups, a file with body; it returns the layout and the offsets dir.
func offsetsVolume(t *testing.T, body string, groups ...string) (volume.Layout, string) {
	t.Helper()
	data := t.TempDir()
	l := volume.Layout{DataDir: data, ClusterDir: filepath.Join(data, "__cluster")}
	od := l.OffsetsPath()
	if err := os.MkdirAll(od, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		if err := os.WriteFile(filepath.Join(od, g+".json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The partitions the bodies name, 20 records each (kaas's segments:
	// the log ends are known, so the lag is).
	for p := range 2 {
		if err := volume.WriteRecords(l.PartitionDir("orders", int32(p)), 0, 20, 1); err != nil {
			t.Fatal(err)
		}
	}
	return l, od
}
