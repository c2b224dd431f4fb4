package exporter

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/labdata"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/observe"
)

// The watch hands the exporter v1 and then v3 of the lab's real history:
// v2 was written and replaced unseen. The exporter names it and counts it
// in kaas_assignment_versions_missed_total; consecutive versions count
// nothing.
func TestExporterCountsMissedVersions(t *testing.T) {
	t.Parallel()
	dir, err := labdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	h := volume.LoadAssignmentHistory([]string{filepath.Join(dir, "assignment-history")})
	if len(h.Snapshots) != 3 {
		t.Fatalf("%d snapshots", len(h.Snapshots))
	}
	l := volume.Layout{ClusterDir: filepath.Join(dir, "phase1-steady-3-brokers"), DataDir: filepath.Join(dir, "phase1-steady-3-brokers")}
	metric := func(e *Exporter) string {
		t.Helper()
		e.Refresh(context.Background())
		var b bytes.Buffer
		if err := e.WriteMetrics(&b, nil); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, c := range []struct {
		seen   []int
		missed int
		note   string
	}{
		{[]int{0, 1, 2}, 0, ""},
		{[]int{0, 2}, 1, "v2 was never seen: moves between v1 and v3 may hide an intermediate coordinator"},
	} {
		var notes []string
		e := New(Options{Source: &observe.Source{Layout: &l}, Notef: func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }})
		for _, i := range c.seen {
			e.onVersion(watch.Version{Assignment: h.Snapshots[i].Assignment})
		}
		want := fmt.Sprintf("kaas_assignment_versions_missed_total %d\n", c.missed)
		if m := metric(e); !strings.Contains(m, want) || !strings.Contains(m, "# HELP kaas_assignment_versions_missed_total") {
			t.Errorf("%v: metrics lack %q", c.seen, want)
		}
		joined := strings.Join(notes, "\n")
		if (c.note == "") != !strings.Contains(joined, "never seen") || (c.note != "" && !strings.Contains(joined, "epoch 0 v3: "+c.note)) {
			t.Errorf("%v: notes %q", c.seen, joined)
		}
	}
}

// A version that goes backwards (a stale controller, a restored file) is
// skipped by kaas's brokers (a lower version in the same epoch, or a
// lower epoch, is never applied): the exporter counts no move for it,
// nor for the return to the newest, reports no version in between as
// missed, and counts and logs the file going backwards.
func TestExporterIgnoresABackwardsVersion(t *testing.T) {
	t.Parallel()
	dir, err := labdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	h := volume.LoadAssignmentHistory([]string{filepath.Join(dir, "assignment-history")})
	l := volume.Layout{ClusterDir: filepath.Join(dir, "phase1-steady-3-brokers"), DataDir: filepath.Join(dir, "phase1-steady-3-brokers")}
	var logs []string
	e := New(Options{Source: &observe.Source{Layout: &l}, Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }})
	for _, i := range []int{0, 1, 2} {
		e.onVersion(watch.Version{Assignment: h.Snapshots[i].Assignment})
	}
	movesBefore, missedBefore := e.c.moves, e.c.versionsMissed
	total := func(m map[inspect.Cause]int64) (n int64) {
		for _, v := range m {
			n += v
		}
		return n
	}
	before := total(movesBefore)
	e.onVersion(watch.Version{Assignment: h.Snapshots[0].Assignment}) // back to v1
	e.onVersion(watch.Version{Assignment: h.Snapshots[2].Assignment}) // the newest again
	if got := total(e.c.moves); got != before || e.c.versionsMissed != missedBefore {
		t.Errorf("moves %d -> %d, missed %d -> %d: the backwards version counted", before, got, missedBefore, e.c.versionsMissed)
	}
	e.Refresh(context.Background())
	var b bytes.Buffer
	if err := e.WriteMetrics(&b, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "kaas_assignment_versions_backwards_total 1\n") {
		t.Errorf("metrics lack the backwards count:\n%s", grepLines(b.String(), "kaas_assignment_"))
	}
	if j := strings.Join(logs, "\n"); !strings.Contains(j, "went backwards") {
		t.Errorf("logs %q", j)
	}
}
