package observe

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// Reads of a whole volume in bounded memory (groups prune over 100,000
// groups): the names first, without reading a file, then the groups in
// batches, each batch's files and states dropped before the next is read.

// GroupNames lists, sorted and once each, the groups of the volume's
// offset files (every offsets dir) that pick takes, without reading the
// files.
func GroupNames(l volume.Layout, pick func(string) bool) ([]string, volume.ScanResult, error) {
	var names []string
	res, err := volume.ScanOffsets(l, volume.ScanOptions{NamesOnly: true}, func(it *volume.OffsetScanItem) error {
		if pick == nil || pick(it.Group) {
			names = append(names, it.Group)
		}
		return nil
	})
	slices.Sort(names)
	return slices.Compact(names), res, err
}

// ReadBatches reads names (sorted) n groups at a time and hands each
// batch's read to fn, the partitions' bounds shared through logs (nil:
// each batch reads its own). fn's error ends the reading.
func ReadBatches(l volume.Layout, a *volume.Assignment, names []string, n int, logs *Logs, fn func(*VolumeRead, []string) error) error {
	for i := 0; i < len(names); i += n {
		batch := names[i:min(i+n, len(names))]
		v, err := ReadVolume(l, a, Selection{Names: batch})
		if err != nil {
			return err
		}
		if logs != nil {
			v.Logs = logs
		}
		if err := fn(v, batch); err != nil {
			return err
		}
	}
	return nil
}

// LiveBatch is the live state of groups read on v: their description on
// their coordinators (DescribeOnWire: members, committed offsets, the
// leaders' log ends, with the segments read first), and whether each
// coordinator holds the group, from listings (every broker's ListGroups,
// asked once for the whole run). The states are in the order of the
// descriptions, which are keyed by group.
func LiveBatch(ctx context.Context, cl *wire.Client, v *VolumeRead, groups []string, listings []wire.BrokerGroups, at time.Time) ([]*inspect.GroupState, map[string]*wire.GroupDescription, []string, error) {
	v.Prefetch(groups)
	described, warnings, err := DescribeOnWire(ctx, cl, groups, shownFilePartitions(v.Files, groups), true)
	if err != nil {
		return nil, nil, warnings, err
	}
	held := wire.ListedHolds(holdWant(described), listings)
	states := make([]*inspect.GroupState, 0, len(described))
	by := make(map[string]*wire.GroupDescription, len(described))
	for i := range described {
		d := &described[i]
		by[d.Group] = d
		states = append(states, v.LiveState(d, HeldOf(held, d.Group), at))
	}
	return states, by, warnings, nil
}

// firstBatches caches the partitions' first batches (Logs.FirstBatch).
type firstBatches struct {
	mu sync.Mutex
	m  map[partKey]firstBatch
}

type firstBatch struct {
	head *volume.BatchHead
	err  error
}

// FirstBatch is the header of the first record batch of a partition's
// log on the volume (read once per partition): where the log as it is
// now begins and when its first records were written.
func (lg *Logs) FirstBatch(topic string, p int32) (*volume.BatchHead, error) {
	if lg == nil {
		return nil, &volume.FileError{Path: topic, Problem: "no data dir: the partition's segments are not known"}
	}
	k := partKey{topic, p}
	lg.first.mu.Lock()
	defer lg.first.mu.Unlock()
	if fb, ok := lg.first.m[k]; ok {
		return fb.head, fb.err
	}
	dir := lg.l.PartitionDir(topic, p)
	var fb firstBatch
	if dir == "" {
		fb.err = &volume.FileError{Path: topic, Problem: "no partition dir for this topic name on the volume"}
	} else {
		fb.head, fb.err = volume.FirstBatch(dir)
	}
	if lg.first.m == nil {
		lg.first.m = map[partKey]firstBatch{}
	}
	lg.first.m[k] = fb
	return fb.head, fb.err
}
