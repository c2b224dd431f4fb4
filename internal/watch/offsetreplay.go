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
	var out []HistoryPoint
	dir := ""
	var state map[string]int64
	format := ""
	unsound := false
	for _, r := range records {
		if r.Kind == RecSegment {
			dir = r.Dir
			continue
		}
		if r.Kind == RecGap {
			at := r.Time
			if r.Since != nil {
				at = *r.Since
			}
			if state == nil {
				state = map[string]int64{}
			}
			unsound = true
			out = append(out, HistoryPoint{Time: at, Source: "journal", Kind: RecGap, Problem: r.Problem, Offsets: state, Format: format,
				Changed: map[string]int64{}, Removed: []string{}, Anomalies: []JournalAnomaly{}, Unsound: true})
			continue
		}
		if r.Group != group {
			continue
		}
		file := r.File
		if file == "" && dir != "" {
			file = filepath.Join(dir, group+".json")
		}
		p := HistoryPoint{Time: r.Time, Source: "journal", Kind: r.Kind, File: file, Problem: r.Problem,
			Changed: map[string]int64{}, Removed: []string{}, Anomalies: r.Anomalies}
		if p.Anomalies == nil {
			p.Anomalies = []JournalAnomaly{}
		}
		switch r.Kind {
		case RecSnapshot:
			if !unsound && state != nil && maps.Equal(state, r.Offsets) && (r.Format == "" || r.Format == format) && len(r.Anomalies) == 0 {
				continue
			}
			unsound = false
			var before map[string]int64
			if state != nil {
				before = state
			}
			p.Changed, p.Removed = OffsetDelta(before, r.Offsets)
			if p.Removed == nil {
				p.Removed = []string{}
			}
			state = maps.Clone(r.Offsets)
			if state == nil {
				state = map[string]int64{}
			}
			format = r.Format
		case RecChange:
			if state == nil {
				state = map[string]int64{}
			}
			state = maps.Clone(state)
			for k, v := range r.Changed {
				state[k] = v
			}
			for _, k := range r.Removed {
				delete(state, k)
			}
			if r.Changed != nil {
				p.Changed = r.Changed
			}
			if r.Removed != nil {
				p.Removed = r.Removed
			}
			if r.Format != "" {
				format = r.Format
			}
		case RecCorrupt:
			if state == nil {
				state = map[string]int64{}
			}
		case RecMissing:
			if r.Removed != nil {
				p.Removed = r.Removed
			} else if state != nil {
				_, p.Removed = OffsetDelta(state, nil)
			}
			state, format = map[string]int64{}, ""
			unsound = false
		}
		p.Offsets, p.Format, p.Unsound = state, format, unsound
		out = append(out, p)
	}
	return out
}
