package watch

import (
	"time"

	"github.com/kaasctl/kaasctl/internal/anomaly"
)

// OffsetChange is one change of a group's offset file as `kaasctl watch
// --offsets` reports it (-o jsonl streams them; -o json lists them).
type OffsetChange struct {
	Time      time.Time         `json:"time"`
	Group     string            `json:"group"`
	File      string            `json:"file"`
	Kind      string            `json:"kind"` // snapshot | change | corrupt | missing
	Format    string            `json:"format"`
	Changed   map[string]int64  `json:"changed"`
	Removed   []string          `json:"removed"`
	Problem   string            `json:"problem,omitempty"`
	Anomalies []anomaly.Anomaly `json:"anomalies"`
}

// ChangeOf is what an event says: a removed file (missing), an unreadable
// one (corrupt), a file seen for the first time (snapshot: Changed holds
// all its offsets) or a change. Lists are empty, never nil.
func ChangeOf(ev OffsetEvent) OffsetChange {
	c := ev.Cur
	ch := OffsetChange{Time: c.Time, Group: c.Group, File: c.File, Format: c.Format, Changed: ev.Changed,
		Removed: ev.Removed, Problem: c.Problem, Anomalies: ev.Anomalies}
	switch {
	case c.Missing:
		ch.Kind = RecMissing
	case c.Corrupt:
		ch.Kind = RecCorrupt
	case ev.Prev == nil:
		ch.Kind, ch.Changed = RecSnapshot, c.Offsets
	default:
		ch.Kind = RecChange
	}
	if ch.Changed == nil {
		ch.Changed = map[string]int64{}
	}
	if ch.Removed == nil {
		ch.Removed = []string{}
	}
	if ch.Anomalies == nil {
		ch.Anomalies = []anomaly.Anomaly{}
	}
	return ch
}

// OffsetSelection decides which changes an offsets watch shows, and when
// it has shown enough; it counts the offset files present and the
// anomalies of the selected groups.
type OffsetSelection struct {
	// Match selects groups (nil: all).
	Match func(group string) bool
	// ShowBaseline shows the files of the first scan that no earlier run
	// saw; otherwise they are the baseline, not news.
	ShowBaseline bool
	// AnomaliesOnly shows only changes with anomalies.
	AnomaliesOnly bool
	// Max stops after this many changes shown, a file's first sight not
	// counted (0: no limit).
	Max int

	// Shown counts the changes shown; Anomalies the anomalies of the
	// selected groups, shown or not.
	Shown     int
	Anomalies int
	files     map[string]bool
}

// Seen marks files an earlier run saw (the journal's state) as present.
func (s *OffsetSelection) Seen(obs []anomaly.Observation) {
	for _, o := range obs {
		s.mark(o.File, true)
	}
}

func (s *OffsetSelection) mark(file string, present bool) {
	if s.files == nil {
		s.files = map[string]bool{}
	}
	s.files[file] = present
}

// Selected is what one batch of events shows.
type Selected struct {
	Changes []OffsetChange
	// Baseline counts the selected files first seen in the first scan.
	Baseline int
	// Done: Max changes have been shown.
	Done bool
}

// Take selects from one batch of events.
func (s *OffsetSelection) Take(evs []OffsetEvent) Selected {
	var out Selected
	for _, ev := range evs {
		s.mark(ev.Cur.File, !ev.Cur.Missing)
		if s.Match != nil && !s.Match(ev.Cur.Group) {
			continue
		}
		firstSight := ev.Initial && ev.Prev == nil
		if firstSight {
			out.Baseline++
		}
		s.Anomalies += len(ev.Anomalies)
		switch {
		case firstSight && !s.ShowBaseline:
		case s.AnomaliesOnly && len(ev.Anomalies) == 0:
		case s.Max > 0 && s.Shown >= s.Max:
		default:
			out.Changes = append(out.Changes, ChangeOf(ev))
			if ev.Prev != nil {
				s.Shown++
			}
		}
	}
	out.Done = s.Max > 0 && s.Shown >= s.Max
	return out
}

// Files counts the offset files present (seen and not removed since).
func (s *OffsetSelection) Files() int {
	n := 0
	for _, present := range s.files {
		if present {
			n++
		}
	}
	return n
}

// SeenAny reports whether any offset file was seen, present or removed.
func (s *OffsetSelection) SeenAny() bool { return len(s.files) > 0 }
