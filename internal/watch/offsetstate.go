package watch

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/anomaly"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// What the follower keeps of each file, compact: an exporter follows
// 100,000 of them. An observation kept is its time, format, problem and
// offsets as a slice sorted by key whose keys the follower shares between
// files (a map of four offsets and its keys took 300 bytes); its path and
// group are the file's name in the followed dir. The last observation
// that could be read is the last one itself (goodIsLast) unless a corrupt
// write came after it; the offsets a journal reader holds are its offsets
// (none after a removal). Events still carry whole observations, made
// when a file changes.

// keptObs is one observation of a file, kept.
type keptObs struct {
	time             time.Time
	format, problem  string
	missing, corrupt bool
	// seen: an observation was kept (a file just found has none).
	seen    bool
	offsets []anomaly.Offset
}

// keep is o as kept (its keys interned).
func (f *offsetFollower) keep(o anomaly.Observation) keptObs {
	k := keptObs{time: o.Time, format: internFormat(o.Format), problem: o.Problem, missing: o.Missing, corrupt: o.Corrupt, seen: true}
	if len(o.Offsets) > 0 {
		k.offsets = make([]anomaly.Offset, 0, len(o.Offsets))
		for key, v := range o.Offsets {
			k.offsets = append(k.offsets, anomaly.Offset{Key: f.intern(key), Offset: v})
		}
		slices.SortFunc(k.offsets, func(a, b anomaly.Offset) int { return strings.Compare(a.Key, b.Key) })
	}
	return k
}

// intern is key as the follower shares it.
func (f *offsetFollower) intern(key string) string {
	if s, ok := f.keys[key]; ok {
		return s
	}
	if f.keys == nil {
		f.keys = map[string]string{}
	}
	f.keys[key] = key
	return key
}

// internFormat gives the formats kaas writes as the package's constants.
func internFormat(format string) string {
	switch format {
	case volume.FormatEnvelope:
		return volume.FormatEnvelope
	case volume.FormatPlainMap:
		return volume.FormatPlainMap
	}
	return format
}

// observation is k as an observation of the file name (nil when none was
// kept).
func (f *offsetFollower) observation(k *keptObs, name string) *anomaly.Observation {
	if k == nil || !k.seen {
		return nil
	}
	o := &anomaly.Observation{Time: k.time, Group: strings.TrimSuffix(name, ".json"), File: filepath.Join(f.opt.Dir, name),
		Format: k.format, Missing: k.missing, Corrupt: k.corrupt, Problem: k.problem, Offsets: offsetMap(k.offsets)}
	return o
}

func offsetMap(offs []anomaly.Offset) map[string]int64 {
	m := make(map[string]int64, len(offs))
	for _, o := range offs {
		m[o.Key] = o.Offset
	}
	return m
}

// goodObs is the last observation of the file that could be read (nil:
// none, or it was removed since).
func (fl *followed) goodObs() *keptObs {
	if fl.goodIsLast {
		return &fl.last
	}
	return fl.good
}

// state is the offsets a journal reader holds for the group: the last
// readable observation's, none after a removal.
func (fl *followed) state() map[string]int64 {
	if g := fl.goodObs(); g != nil {
		return offsetMap(g.offsets)
	}
	return map[string]int64{}
}

// stateEquals reports whether offsets are the state, without making it.
func (fl *followed) stateEquals(offsets map[string]int64) bool {
	var kept []anomaly.Offset
	if g := fl.goodObs(); g != nil {
		kept = g.offsets
	}
	if len(kept) != len(offsets) {
		return false
	}
	for _, o := range kept {
		if v, ok := offsets[o.Key]; !ok || v != o.Offset {
			return false
		}
	}
	return true
}

// observed records cur, the file's new observation: the last one, and
// the last readable one unless cur is corrupt (a removal forgets it).
func (fl *followed) observed(f *offsetFollower, cur anomaly.Observation) {
	switch {
	case cur.Missing:
		fl.good, fl.goodIsLast = nil, false
	case cur.Corrupt:
		if fl.goodIsLast {
			g := fl.last
			fl.good, fl.goodIsLast = &g, false
		}
	default:
		fl.good, fl.goodIsLast = nil, true
	}
	fl.last = f.keep(cur)
}
