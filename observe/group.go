package observe

import (
	"slices"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// GroupInput is what the sources said about one group.
type GroupInput struct {
	Group string
	// Volume: a volume was read; Files are the group's offset files on it
	// in scan order (inspect.PickFile says which counts).
	Volume bool
	Files  []inspect.GroupFileData
	Gen    volume.GenerationInfo
	// Live is the brokers' description (nil: not asked); AskedAt when.
	Live    *wire.GroupDescription
	AskedAt time.Time
	// Held says whether the coordinator holds the group (listed by its
	// ListGroups); members make it held whatever the listing says.
	Held inspect.Held
	// Logs gives the partitions' bounds on the volume (nil: none).
	Logs *Logs
}

// ShownFile is the offset file of a group that a view shows: the one the
// brokers load (counts, by inspect.PickFile), else its first file, which
// the brokers do not read (nil: no file).
func ShownFile(files []inspect.GroupFileData) (f *inspect.GroupFileData, counts bool) {
	i := inspect.PickFile(len(files), func(i int) string { return files[i].Layout })
	switch {
	case i >= 0:
		return &files[i], true
	case len(files) > 0:
		return &files[0], false
	}
	return nil, false
}

// groupFacts are the group-level facts of in.
func groupFacts(in *GroupInput, f *inspect.GroupFileData, counts bool) inspect.GroupFacts {
	g := inspect.GroupFacts{Gen: in.Gen, Volume: in.Volume, File: inspect.FileAbsent, Asked: in.Live != nil, Held: in.Held}
	switch {
	case f != nil && counts:
		g.File = inspect.ReadingOf(f.File, f.Err != nil, in.Gen)
	case f != nil:
		g.File = inspect.FileNotRead
	}
	if w := in.Live; w != nil && w.Err == "" && len(w.Members) > 0 {
		g.Held = inspect.HeldYes
	}
	return g
}

// BuildState is the group's state in the read model: its partitions are
// every partition of a topic it commits on (the volume's partition dirs
// offline, the topics' metadata live), every partition with a committed
// offset in the file that counts or on the coordinator, and every
// partition assigned to a member.
func BuildState(in GroupInput) inspect.GroupState {
	f, counts := ShownFile(in.Files)
	g := groupFacts(&in, f, counts)
	facts := map[partKey]*inspect.PartitionFacts{}
	get := func(t string, p int32) *inspect.PartitionFacts {
		k := partKey{t, p}
		pf := facts[k]
		if pf == nil {
			pf = &inspect.PartitionFacts{Topic: t, Partition: p}
			facts[k] = pf
		}
		return pf
	}
	var fileTopics []string
	if f != nil && f.File != nil {
		asOf := f.ModTime
		for _, e := range f.File.Entries {
			pf := get(e.Topic, e.Partition)
			pf.File = &volume.Fact{Value: e.Offset, Source: volume.SourceFile, Path: f.Path, AsOf: asOf}
			pf.Metadata = e.Metadata
			fileTopics = append(fileTopics, e.Topic)
		}
	}
	if w := in.Live; w != nil {
		addLive(w, in.AskedAt, get)
	} else if in.Logs != nil {
		for _, t := range compactSorted(fileTopics) {
			for _, p := range in.Logs.TopicPartitions(t) {
				get(t, p)
			}
		}
	}
	parts := make([]inspect.PartitionFacts, 0, len(facts))
	for _, pf := range facts {
		pf.Segments = in.Logs.Get(pf.Topic, pf.Partition)
		parts = append(parts, *pf)
	}
	slices.SortFunc(parts, func(a, b inspect.PartitionFacts) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	gs := inspect.BuildGroup(in.Group, g, parts, nil)
	deepen(in.Logs, &gs, parts)
	return gs
}

// deepen rebuilds the partitions whose committed offset is past their log
// end after reading their segment's whole index, so a stale takeover whose
// appends reached the old end is named as such.
func deepen(lg *Logs, gs *inspect.GroupState, parts []inspect.PartitionFacts) {
	if lg == nil {
		return
	}
	for i := range gs.Partitions {
		p := &gs.Partitions[i]
		if !(p.Has(inspect.IncPastServedEnd) || p.Has(inspect.IncPastLogEnd)) || p.Has(inspect.IncWrittenTwice) || parts[i].Segments == nil {
			continue
		}
		lg.Deepen(parts[i].Segments)
		*p = inspect.BuildPartition(&gs.Facts, &parts[i])
	}
	gs.Totals = inspect.SumLag(gs.Partitions)
}

// addLive adds the coordinator's committed offsets, the served bounds of
// every partition the brokers were asked about, and the members'
// assignments.
func addLive(w *wire.GroupDescription, at time.Time, get func(string, int32) *inspect.PartitionFacts) {
	for t, ps := range w.Committed.Offsets {
		for p, c := range ps {
			if c.Err != "" {
				get(t, p).CoordinatorErr = c.Err
				continue
			}
			if c.Offset >= 0 {
				get(t, p).Coordinator = &volume.Fact{Value: c.Offset, Source: inspect.SourceCoordinator, AsOf: at}
			}
		}
	}
	for _, pl := range w.Partitions {
		pf := get(pl.Topic, pl.Partition)
		if pl.Start >= 0 || pl.End >= 0 || pl.LogErr != "" {
			pf.Served = &inspect.ServedBounds{Start: pl.Start, End: pl.End, Err: pl.LogErr, AsOf: at}
		}
	}
	for _, m := range w.Members {
		for _, a := range m.Assignment {
			for _, p := range a.Partitions {
				pf := get(a.Topic, p)
				pf.Member, pf.ClientID, pf.Host = m.MemberID, m.ClientID, m.Host()
			}
		}
	}
}

type partKey struct {
	topic string
	part  int32
}

func compactSorted(ss []string) []string {
	slices.Sort(ss)
	return slices.Compact(ss)
}

// entryPartitions are the partitions offset entries name.
func entryPartitions(entries []volume.OffsetEntry) wire.TopicPartitions {
	tp := wire.TopicPartitions{}
	for _, e := range entries {
		tp.Add(e.Topic, e.Partition)
	}
	return tp
}

// shownFilePartitions are, per group, the partitions its shown offset file
// names (the brokers are asked about them besides their own answers).
func shownFilePartitions(files map[string][]inspect.GroupFileData, groups []string) map[string]wire.TopicPartitions {
	known := map[string]wire.TopicPartitions{}
	for _, g := range groups {
		if f, _ := ShownFile(files[g]); f != nil && f.File != nil {
			known[g] = entryPartitions(f.File.Entries)
		}
	}
	return known
}
