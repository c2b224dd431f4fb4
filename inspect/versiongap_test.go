package inspect

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/labdata"
	"github.com/kaasctl/kaasctl/internal/volume"
)

func TestFindVersionGap(t *testing.T) {
	t.Parallel()
	a := func(e, v int64) *volume.Assignment {
		return &volume.Assignment{ControllerEpoch: e, AssignmentVersion: v}
	}
	for _, c := range []struct {
		prev, cur *volume.Assignment
		count     int64
		msg       string
	}{
		{nil, a(0, 5), 0, ""},
		{a(0, 5), a(0, 6), 0, ""},
		{a(0, 6), a(0, 6), 0, ""}, // a rewrite
		{a(1, 9), a(2, 3), 0, ""}, // backwards: the watch warns about it, no gap
		{a(0, 6), a(0, 8), 1, "v7 was never seen: moves between v6 and v8 may hide an intermediate coordinator"},
		// One counter across controller epochs: a failover that skips a
		// number is a missed version too.
		{a(0, 6), a(1, 8), 1, "v7 was never seen: moves between v6 and v8 may hide an intermediate coordinator"},
		{a(3, 10), a(3, 14), 3, "v11–v13 were never seen (3 versions): moves between v10 and v14 may hide intermediate coordinators"},
	} {
		g := FindVersionGap(c.prev, c.cur)
		if g.Count != c.count || g.Message() != c.msg {
			t.Errorf("%+v → %+v: %+v %q", c.prev, c.cur, g, g.Message())
		}
	}
}

// The lab's real history (v1, v2, v3 of one controller epoch) has no gap;
// the same history without v2 names it, at v3 and on every move v3 shows.
func TestTraceVersionGapsLab(t *testing.T) {
	t.Parallel()
	dir, err := labdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	h := volume.LoadAssignmentHistory([]string{filepath.Join(dir, "assignment-history")})
	if len(h.Snapshots) != 3 {
		t.Fatalf("lab history: %d snapshots", len(h.Snapshots))
	}
	tr := BuildTrace(TraceInput{Snapshots: h.Snapshots})
	if tr.MissedVersions != 0 {
		t.Errorf("lab history: %d versions missed", tr.MissedVersions)
	}
	for _, v := range tr.Versions {
		if v.MissingBefore != 0 || v.Gap != "" {
			t.Errorf("lab v%d: %+v", v.AssignmentVersion, v)
		}
	}

	tr = BuildTrace(TraceInput{Snapshots: []volume.Snapshot{h.Snapshots[0], h.Snapshots[2]}})
	want := "v2 was never seen: moves between v1 and v3 may hide an intermediate coordinator"
	if tr.MissedVersions != 1 || tr.Versions[1].MissingBefore != 1 || tr.Versions[1].Gap != want {
		t.Fatalf("without v2: missed %d, %+v", tr.MissedVersions, tr.Versions[1])
	}
	if len(tr.Events) == 0 {
		t.Fatal("v1 → v3 moves nothing: the test proves nothing")
	}
	for _, e := range tr.Events {
		if !strings.Contains(e.Detail, want) {
			t.Errorf("%s: detail %q", e.Group, e.Detail)
		}
	}
	// Starting at v3: v1 and v2 precede the capture, named, not counted.
	tr = BuildTrace(TraceInput{Snapshots: h.Snapshots[2:]})
	if tr.MissedVersions != 0 || !strings.Contains(tr.Versions[0].Gap, "v1–v2 precede the first snapshot") {
		t.Errorf("from v3: %d %q", tr.MissedVersions, tr.Versions[0].Gap)
	}

	// The watch's step by step view says the same.
	st := NextStep(nil, nil, h.Snapshots[0].Assignment, nil, nil, h.Snapshots[0].Assignment.GeneratedTime())
	step := NextStep(st.State, h.Snapshots[0].Assignment, h.Snapshots[2].Assignment, []string{"g-alpha", "g-beta", "g-gamma", "lab-group"}, nil, h.Snapshots[2].Assignment.GeneratedTime())
	if step.Version.MissingBefore != 1 || step.Version.Gap != want || len(step.Events) == 0 || !strings.Contains(step.Events[0].Detail, want) {
		t.Errorf("NextStep: %+v %+v", step.Version, step.Events)
	}
}

// A synthetic failover history with a version missing at the failover:
// Go controller epoch 0 wrote v6, the new controller (epoch 1) wrote v7
// and v8 within a moment; the watcher saw v6 and v8.
func TestTraceVersionGapAcrossFailover(t *testing.T) {
	t.Parallel()
	b3 := mvAlive("kaas-0", "kaas-1", "kaas-2")
	b2 := mvAlive("kaas-1", "kaas-2")
	g := mvFindGroup(t, "g", func(h uint32) bool { return h%3 == 0 })
	snaps := []volume.Snapshot{trSnapshot(mvAsg(0, 5, "kaas-0", b3)), trSnapshot(mvAsg(0, 6, "kaas-0", b3)), trSnapshot(mvAsg(1, 8, "kaas-1", b2))}
	tr := BuildTrace(TraceInput{Snapshots: snaps, Groups: []string{g}})
	if tr.MissedVersions != 1 || tr.Versions[2].Gap != "v7 was never seen: moves between v6 and v8 may hide an intermediate coordinator" {
		t.Fatalf("missed %d, %+v", tr.MissedVersions, tr.Versions[2])
	}
	if len(tr.Events) != 1 || !strings.Contains(tr.Events[0].Detail, "v7 was never seen") {
		t.Errorf("events %+v", tr.Events)
	}
}
