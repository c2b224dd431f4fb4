package commands

import (
	"context"
	"slices"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// servedNotFiled finds the groups whose offset file lacks partitions their
// coordinator serves: it reads the live offset file of every group a
// broker coordinates, asks the coordinators (one OffsetFetch round) for
// every partition of the topics the file or the members name, then
// re-reads the files that seem to lack some (a commit may have reached
// the coordinator's memory and not yet its file) and keeps what still
// lacks.
func servedNotFiled(ctx context.Context, cl *wire.Client, files []inspect.GroupFile, gg *wire.GatheredGroups) ([]inspect.ServedNotFiled, error) {
	var paths []inspect.GroupFile
	for _, f := range files {
		if f.Layout == volume.OffsetsCurrent && gg.Coords()[f.Group].Found() {
			paths = append(paths, f)
		}
	}
	before := readGroupOffsetFiles(paths, nil)
	topics := inspect.ServedTopics(before, gg.Described())
	var all []string
	for _, ts := range topics {
		all = append(all, ts...)
	}
	slices.Sort(all)
	if all = slices.Compact(all); len(all) == 0 {
		return nil, nil
	}
	meta, err := cl.Metadata(ctx, all)
	if err != nil {
		return nil, err
	}
	live := cl.FetchCommitted(ctx, inspect.ServedWant(topics, meta.Topics), gg.Coords())
	seeming := inspect.FindServedNotFiled(live, before)
	if len(seeming) == 0 {
		return nil, nil
	}
	again := map[string]bool{}
	for _, s := range seeming {
		again[s.Group] = true
	}
	return inspect.FindServedNotFiled(live, readGroupOffsetFiles(paths, again)), nil
}

// readGroupOffsetFiles reads the offset files of groups (only those in
// only, when set); a file that cannot be read now is left out (volume
// check reports it).
func readGroupOffsetFiles(files []inspect.GroupFile, only map[string]bool) map[string]*volume.OffsetFile {
	out := make(map[string]*volume.OffsetFile, len(files))
	for _, f := range files {
		if only != nil && !only[f.Group] {
			continue
		}
		if of, _, err := volume.ReadOffsetFile(f.Path); err == nil && of != nil {
			out[f.Group] = of
		}
	}
	return out
}

// servedBehindLog asks the leaders for the log end of every partition whose
// segments the volume check read (logs, read before any broker was asked)
// and keeps the partitions served below them (inspect.FindServedBehind).
func servedBehindLog(ctx context.Context, cl *wire.Client, logs []volume.LogBounds, a *volume.Assignment) ([]inspect.ServedBehind, error) {
	if len(logs) == 0 {
		return nil, nil
	}
	served, err := cl.ListLogOffsets(ctx, inspect.LogPartitions(logs))
	if err != nil {
		return nil, err
	}
	return inspect.FindServedBehind(inspect.PairServedEnds(logs, served), a), nil
}
