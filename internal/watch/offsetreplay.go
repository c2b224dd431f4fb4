package watch

import (
	"maps"
	"path/filepath"
	"time"
)

// HistoryPoint is a group's committed offsets right after one recorded
// observation: the full state, what changed, and what was flagged.
type HistoryPoint struct {
	Time time.Time `json:"time"`
	// Source is "journal" (a watch --offsets record) or "backup" (a copy
	// kaasctl kept before it rewrote the file).
	Source string `json:"source"`
	// Kind is the record kind (snapshot, change, corrupt, missing).
	Kind   string `json:"kind"`
	File   string `json:"file"`
	Format string `json:"format"`
	// Offsets is the group's full committed set after this point.
	Offsets   map[string]int64 `json:"offsets"`
	Changed   map[string]int64 `json:"changed"`
	Removed   []string         `json:"removed"`
	Problem   string           `json:"problem,omitempty"`
	Anomalies []JournalAnomaly `json:"anomalies"`
	// Unsound marks a state rebuilt across a gap in the journal (a "gap"
	// point, and every later point until the group's next snapshot):
	// records are deltas, so Offsets may be wrong. A restore refuses it.
	Unsound bool `json:"unsound,omitempty"`
}

// ReplayGroup rebuilds one group's timeline from journal records (in
// journal order): snapshots set the state, changes apply their deltas, a
// corrupt write leaves it, a removed file empties it. A segment-start
// snapshot that repeats the state adds no point. A gap (changes the
// journal lost or cannot read) adds a "gap" point at its start, and the
// state is unsound from there until the group's next snapshot (or the
// removal of its file, which is known whole).
func ReplayGroup(records []JournalRecord, group string) []HistoryPoint {
	rp := &groupReplay{group: group}
	for i := range records {
		r := &records[i]
		switch {
		case r.Kind == RecSegment:
			rp.dir = r.Dir
		case r.Kind == RecGap:
			rp.gap(r)
		case r.Group == group:
			rp.record(r)
		}
	}
	return rp.out
}

// groupReplay is ReplayGroup's state between records: the offsets dir of
// the current segment (a record without a file path is in it), the
// group's offsets and file format so far, and whether a gap made them
// unsound.
type groupReplay struct {
	group   string
	dir     string
	state   map[string]int64
	format  string
	unsound bool
	out     []HistoryPoint
}

// gap adds the "gap" point at the start of the lost changes and marks the
// state unsound.
func (rp *groupReplay) gap(r *JournalRecord) {
	at := r.Time
	if r.Since != nil {
		at = *r.Since
	}
	if rp.state == nil {
		rp.state = map[string]int64{}
	}
	rp.unsound = true
	rp.out = append(rp.out, HistoryPoint{Time: at, Source: "journal", Kind: RecGap, Problem: r.Problem, Offsets: rp.state, Format: rp.format,
		Changed: map[string]int64{}, Removed: []string{}, Anomalies: []JournalAnomaly{}, Unsound: true})
}

// record applies one of the group's records to the state and adds its
// point (none for a snapshot that repeats a sound state).
func (rp *groupReplay) record(r *JournalRecord) {
	file := r.File
	if file == "" && rp.dir != "" {
		file = filepath.Join(rp.dir, rp.group+".json")
	}
	p := HistoryPoint{Time: r.Time, Source: "journal", Kind: r.Kind, File: file, Problem: r.Problem,
		Changed: map[string]int64{}, Removed: []string{}, Anomalies: r.Anomalies}
	if p.Anomalies == nil {
		p.Anomalies = []JournalAnomaly{}
	}
	switch r.Kind {
	case RecSnapshot:
		if !rp.snapshot(r, &p) {
			return
		}
	case RecChange:
		rp.change(r, &p)
	case RecCorrupt:
		if rp.state == nil {
			rp.state = map[string]int64{}
		}
	case RecMissing:
		if r.Removed != nil {
			p.Removed = r.Removed
		} else if rp.state != nil {
			_, p.Removed = OffsetDelta(rp.state, nil)
		}
		rp.state, rp.format = map[string]int64{}, ""
		rp.unsound = false
	}
	p.Offsets, p.Format, p.Unsound = rp.state, rp.format, rp.unsound
	rp.out = append(rp.out, p)
}

// snapshot sets the state to a snapshot's offsets (sound again), with
// what changed since the previous state in p; it reports false, and
// changes nothing, when the snapshot repeats a sound state with nothing
// flagged.
func (rp *groupReplay) snapshot(r *JournalRecord, p *HistoryPoint) bool {
	if !rp.unsound && rp.state != nil && maps.Equal(rp.state, r.Offsets) && (r.Format == "" || r.Format == rp.format) && len(r.Anomalies) == 0 {
		return false
	}
	rp.unsound = false
	var before map[string]int64
	if rp.state != nil {
		before = rp.state
	}
	p.Changed, p.Removed = OffsetDelta(before, r.Offsets)
	if p.Removed == nil {
		p.Removed = []string{}
	}
	rp.state = maps.Clone(r.Offsets)
	if rp.state == nil {
		rp.state = map[string]int64{}
	}
	rp.format = r.Format
	return true
}

// change applies a change record's delta to a copy of the state (earlier
// points keep theirs) and puts the delta in p.
func (rp *groupReplay) change(r *JournalRecord, p *HistoryPoint) {
	if rp.state == nil {
		rp.state = map[string]int64{}
	}
	rp.state = maps.Clone(rp.state)
	for k, v := range r.Changed {
		rp.state[k] = v
	}
	for _, k := range r.Removed {
		delete(rp.state, k)
	}
	if r.Changed != nil {
		p.Changed = r.Changed
	}
	if r.Removed != nil {
		p.Removed = r.Removed
	}
	if r.Format != "" {
		rp.format = r.Format
	}
}
