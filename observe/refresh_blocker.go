package observe

import (
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// The refresh's blocker step (Source.Blockers): at each refresh, the
// blocker of every lagging partition whose committed offset stayed since
// the refresh before, read through BlockerSources as groups describe
// --why reads it; health's BLOCKED and the exporter's series carry it.

// stuckSeen is what the refreshes saw of one partition: its committed
// offset since when, and the group's liveness then.
type stuckSeen struct {
	offset   int64
	since    time.Time
	samples  int
	rewrites int
	mod      time.Time
	seen     int64 // the refresh that last saw it
	// others is the sum of the offsets of the consumer's other
	// partitions since (progress.others): when it changes, the consumer
	// worked elsewhere and this partition's clock starts again.
	others int64
}

// readBlockerSources reads the slot files and the marker queue once per
// refresh (with a volume, when the source names blockers).
func (r *refreshRun) readBlockerSources() {
	s := r.s
	if !s.Blockers || s.Layout == nil {
		return
	}
	lim := s.BlockerLimits
	if lim == (volume.RecordLimits{}) {
		lim = volume.DefaultRecordLimits()
	}
	r.bsrc = ReadBlockerSources(*s.Layout, r.o.Assignment, r.o.Time, lim)
	r.bsrc.Flags = s.BlockerFlags
	if s.stuck == nil {
		s.stuck = map[stuckKey]*stuckSeen{}
	}
	s.refreshNo++
}

// blockers names the blockers of group g's lagging partitions (b holds
// its states) into its sample and g.Blockers.
func (r *refreshRun) blockers(b *groupBuilder, g *GroupObs, sample *inspect.HealthSample) {
	if r.bsrc == nil {
		return
	}
	s := r.s
	members, live := 0, g.Live != nil && g.Live.Err == ""
	if live {
		members = len(g.Live.Members)
	}
	var pr *progress
	for k := range b.states {
		p := &b.states[k]
		if !p.LagKnown || p.Lag <= 0 || p.Resume.Source == "" {
			continue
		}
		if pr == nil {
			pg := progressOf(g.Row.Group, b.states, g.Live)
			pr = &pg
		}
		key := stuckKey{g.Row.Group, p.Topic, p.Partition}
		others := pr.others(key, p.Resume.Value)
		seen := s.stuck[key]
		if seen == nil || seen.offset != p.Resume.Value || seen.seen != s.refreshNo-1 || seen.others != others {
			s.stuck[key] = &stuckSeen{offset: p.Resume.Value, since: r.o.Time, samples: 1, mod: sample.FileModTime, seen: s.refreshNo, others: others}
			if s.BlockersAtOnce {
				r.blockerAtOnce(g, p, live, members)
			}
			continue // moved, first seen, or its consumer worked elsewhere: nothing sits yet
		}
		seen.samples++
		seen.seen = s.refreshNo
		if !sample.FileModTime.Equal(seen.mod) {
			seen.rewrites++
			seen.mod = sample.FileModTime
		}
		st := &inspect.Stuck{Offset: seen.offset, Since: seen.since, Until: r.o.Time, Samples: seen.samples}
		switch {
		case members > 0:
			st.Alive, st.AliveBy = true, "members on its coordinator"
		case !live && seen.rewrites > 0:
			st.Alive, st.AliveBy = true, "its offset file was rewritten since the offset stopped moving"
		}
		r.bsrc.Stuck = func(string, string, int32) *inspect.Stuck { return st }
		bl := r.bsrc.Blocker(g.Row.Group, p, live, members)
		r.bsrc.Stuck = nil
		if !inspect.Blocking(bl.Kind) {
			continue
		}
		g.Blockers = append(g.Blockers, bl)
		sample.Blockers = append(sample.Blockers, inspect.SampleBlockerOf(&bl, seen.since))
	}
}

// blockerAtOnce names the blocker of a partition seen for the first time
// into g.Blockers alone (Source.BlockersAtOnce), as groups describe --why
// names it without a window: no sample carries it, so no BLOCKED.
func (r *refreshRun) blockerAtOnce(g *GroupObs, p *inspect.PartitionState, live bool, members int) {
	if bl := r.bsrc.Blocker(g.Row.Group, p, live, members); inspect.Blocking(bl.Kind) {
		g.Blockers = append(g.Blockers, bl)
	}
}

// forgetStuck drops what the refreshes saw of partitions this refresh did
// not see lagging with an unmoved offset.
func (s *Source) forgetStuck() {
	for k, v := range s.stuck {
		if v.seen != s.refreshNo {
			delete(s.stuck, k)
		}
	}
}
