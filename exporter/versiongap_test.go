package exporter

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

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
