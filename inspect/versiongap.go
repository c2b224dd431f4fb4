package inspect

import (
	"fmt"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// VersionGap is the assignment versions nobody saw between two that were
// seen. kaas numbers versions consecutively with one counter across
// controller epochs (a new controller, Go or Rust, carries the counter on
// from the previous assignment.json), so a jump in the number is a version
// that was written and replaced before a watcher or a journal could read
// it: a coordinator move through it is invisible.
type VersionGap struct {
	// After and Before are the seen versions around the gap.
	After, Before int64
	// Count is how many versions are missing (0: none).
	Count int64
}

// FindVersionGap compares two consecutive observations; a version that
// did not move forward is no gap (see the watch's "went backwards").
func FindVersionGap(prev, cur *volume.Assignment) VersionGap {
	if prev == nil || cur == nil || cur.AssignmentVersion <= prev.AssignmentVersion+1 {
		return VersionGap{}
	}
	return VersionGap{After: prev.AssignmentVersion, Before: cur.AssignmentVersion, Count: cur.AssignmentVersion - prev.AssignmentVersion - 1}
}

// Missing names the versions never seen: "v7" or "v7–v9".
func (g VersionGap) Missing() string {
	switch g.Count {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("v%d", g.After+1)
	}
	return fmt.Sprintf("v%d–v%d", g.After+1, g.Before-1)
}

// Message says which versions were never seen and what that hides.
func (g VersionGap) Message() string {
	switch g.Count {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("%s was never seen: moves between v%d and v%d may hide an intermediate coordinator", g.Missing(), g.After, g.Before)
	}
	return fmt.Sprintf("%s were never seen (%d versions): moves between v%d and v%d may hide intermediate coordinators", g.Missing(), g.Count, g.After, g.Before)
}

// firstVersionNote is said of the first snapshot of a trace when versions
// precede it: they were written before the capture started, or replaced
// before anyone read them (kaas's first version is v1). Not counted as
// missed: the capture may simply have started later.
func firstVersionNote(a *volume.Assignment) string {
	switch v := a.AssignmentVersion; {
	case v == 2:
		return "v1 precedes the first snapshot (written before the capture started, or replaced before it was read)"
	case v > 2:
		return fmt.Sprintf("v1–v%d precede the first snapshot (written before the capture started, or replaced before they were read)", v-1)
	}
	return ""
}
