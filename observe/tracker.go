package observe

import (
	"slices"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// staleTracker keeps each partition a leader served below its segments
// reported until the cause is gone, by the generation's rule
// (volume.StaleEndRule): a takeover at a new epoch on Go; on Rust 0.2.18,
// which keeps the stale end through takeovers, a served end that reaches
// what the segments held. Producers append at the stale end, so a later
// comparison of the served end with the segments' last batch sees nothing
// wrong: it is not what clears the incident.
type staleTracker struct {
	open map[volume.TopicPartition]*staleSeen
}

// staleSeen is one partition's incident: as first seen, and the last
// served end.
type staleSeen struct {
	sb     inspect.ServedBehind
	since  time.Time
	epoch  uint32
	segEnd int64
}

// update merges this refresh's findings (detected: nil when the segments
// were not compared this time) with the open incidents and returns every
// incident still open, sorted.
func (t *staleTracker) update(now time.Time, detected []inspect.ServedBehind, _ bool, served map[volume.TopicPartition]int64, a *volume.Assignment, rule volume.StaleEndRule) []inspect.ServedBehind {
	if t.open == nil {
		t.open = map[volume.TopicPartition]*staleSeen{}
	}
	for _, sb := range detected {
		tp, ok := splitKey(sb.Partition)
		if !ok {
			continue
		}
		if s := t.open[tp]; s != nil {
			s.sb.Served = sb.Served
			s.segEnd = max(s.segEnd, sb.LogEnd)
			continue
		}
		t.open[tp] = &staleSeen{sb: sb, since: now, epoch: sb.Epoch, segEnd: sb.LogEnd}
	}
	epochs := partitionEpochs(a)
	for tp, s := range t.open {
		if end, ok := served[tp]; ok {
			s.sb.Served = end
		}
		if staleGone(s, epochs[tp], rule) {
			delete(t.open, tp)
		}
	}
	out := make([]inspect.ServedBehind, 0, len(t.open))
	for _, s := range t.open {
		sb := s.sb
		sb.LogEnd, sb.Since = s.segEnd, s.since
		if e, ok := epochs[splitKeyMust(sb.Partition)]; ok {
			sb.Leader, sb.Epoch = e.Broker, e.Epoch
		}
		out = append(out, sb)
	}
	slices.SortFunc(out, func(x, y inspect.ServedBehind) int { return inspect.CompareOffsetKeys(x.Partition, y.Partition) })
	return out
}

// current is every open incident as last updated.
func (t *staleTracker) current() []inspect.ServedBehind {
	out := make([]inspect.ServedBehind, 0, len(t.open))
	for _, s := range t.open {
		sb := s.sb
		sb.LogEnd, sb.Since = s.segEnd, s.since
		out = append(out, sb)
	}
	slices.SortFunc(out, func(x, y inspect.ServedBehind) int { return inspect.CompareOffsetKeys(x.Partition, y.Partition) })
	return out
}

// staleGone reports whether the cause of an incident is gone.
func staleGone(s *staleSeen, now volume.PartitionEntry, rule volume.StaleEndRule) bool {
	if rule.NewEpochRescans {
		return now.Topic != "" && now.Epoch > s.epoch
	}
	return s.sb.Served >= s.segEnd
}

// partitionEpochs are assignment.json's leader and epoch per partition.
func partitionEpochs(a *volume.Assignment) map[volume.TopicPartition]volume.PartitionEntry {
	out := map[volume.TopicPartition]volume.PartitionEntry{}
	if a == nil {
		return out
	}
	for _, e := range a.Partitions {
		out[volume.TopicPartition{Topic: e.Topic, Partition: e.Partition}] = e
	}
	return out
}

// servedEnds are the log ends the leaders served this refresh, for the
// partitions with an open incident.
func (t *staleTracker) servedEnds(described map[string]*wire.GroupDescription) map[volume.TopicPartition]int64 {
	out := map[volume.TopicPartition]int64{}
	if len(t.open) == 0 {
		return out
	}
	for _, d := range described {
		for _, pl := range d.Partitions {
			tp := volume.TopicPartition{Topic: pl.Topic, Partition: pl.Partition}
			if _, open := t.open[tp]; open && pl.End >= 0 && pl.LogErr == "" {
				out[tp] = pl.End
			}
		}
	}
	return out
}

func splitKey(k string) (volume.TopicPartition, bool) {
	t, p, err := volume.SplitOffsetKey(k)
	return volume.TopicPartition{Topic: t, Partition: p}, err == nil
}

func splitKeyMust(k string) volume.TopicPartition {
	tp, _ := splitKey(k)
	return tp
}
