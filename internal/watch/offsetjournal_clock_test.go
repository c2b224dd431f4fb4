package watch

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A clock that steps back under a running writer starts a new segment
// (whose name is earlier than the one before): the journal's order is the
// segments' sequence, no segment's records go back, history's last state
// is the last one written, and a time bound is taken at its latest pass.
func TestOffsetJournalClockStepsBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := &OffsetJournal{Dir: dir, OffsetsDir: "/d"}
	var prev *OffsetEvent
	write := func(at time.Time, o int64) {
		t.Helper()
		cur := obs("app", at, map[string]int64{"orders/0": o})
		var ev OffsetEvent
		if prev == nil {
			ev = step(nil, cur)
			ev.Initial = true
		} else {
			p := prev.Cur
			ev = step(&p, cur)
		}
		if err := j.Append([]OffsetEvent{ev}); err != nil {
			t.Fatal(err)
		}
		prev = &ev
	}
	for i, o := range []int64{10, 20, 30} {
		write(t0.Add(time.Duration(i)*time.Minute), o)
	}
	first := j.Segment()
	write(t0.Add(-2*time.Minute), 31) // the clock stepped back 4 minutes
	write(t0.Add(-time.Minute), 40)
	j.Close()
	if j.Segment() == first {
		t.Fatal("the step back did not start a new segment")
	}
	segs, err := listSegments(dir)
	if err != nil || len(segs) != 2 || segs[0].seq != 1 || segs[1].seq != 2 || filepath.Join(dir, segs[1].name) != j.Segment() {
		t.Fatalf("segments %+v %v (want seq 1 then 2, the later one named earlier)", segs, err)
	}
	jr := readAll(t, dir, JournalReadOptions{Group: "app"})
	pts := ReplayGroup(jr.Records, "app")
	if len(pts) == 0 || pts[len(pts)-1].Offsets["orders/0"] != 40 {
		t.Errorf("last state %+v, want 40", pts)
	}
	if len(jr.Warnings) != 1 || !strings.Contains(jr.Warnings[0], "clock stepped back once") {
		t.Errorf("warnings %v", jr.Warnings)
	}
	// t0 was passed twice: at 10, then (the second time) at 40.
	jr = readAll(t, dir, JournalReadOptions{Group: "app", Until: t0})
	pts = ReplayGroup(jr.Records, "app")
	if len(pts) == 0 || pts[len(pts)-1].Offsets["orders/0"] != 40 {
		t.Errorf("state until %s: %+v, want 40 (its latest pass)", t0, pts)
	}
	// Before the step, a bounded read still seeks by time.
	jr = readAll(t, dir, JournalReadOptions{Group: "app", Until: t0.Add(-3 * time.Minute)})
	if pts = ReplayGroup(jr.Records, "app"); len(pts) != 0 {
		t.Errorf("nothing was recorded before %s: %+v", t0.Add(-3*time.Minute), pts)
	}
}
