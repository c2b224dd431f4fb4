package observe

import (
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// groupBuilder holds one group's facts while the refresh builds its
// state: scratch reused from group to group, so a refresh of 100,000
// groups allocates per group only what it keeps.
type groupBuilder struct {
	items  []factItem
	facts  []inspect.PartitionFacts
	states []inspect.PartitionState
	files  []volume.Fact
	coords []volume.Fact
	served []inspect.ServedBounds
}

// factItem is one partition's facts with its interned key, for sorting.
type factItem struct {
	key string
	pf  inspect.PartitionFacts
}

func (b *groupBuilder) reset(n int) {
	b.items = b.items[:0]
	if cap(b.files) < n {
		b.files = make([]volume.Fact, 0, n)
		b.coords = make([]volume.Fact, 0, n)
		b.served = make([]inspect.ServedBounds, 0, n)
	}
	b.files, b.coords, b.served = b.files[:0], b.coords[:0], b.served[:0]
}

// fileFact is the file's committed offset as a fact held by the builder.
func (b *groupBuilder) fileFact(v int64, fo *inspect.OffsetReading, r *refreshRun, i int) *volume.Fact {
	f := volume.Fact{Value: v, Source: volume.SourceFile, Path: fo.File}
	if r.modTimes != nil {
		f.AsOf = r.modTimes[i]
	}
	b.files = append(b.files, f)
	return &b.files[len(b.files)-1]
}

// groupFacts are the refresh's group-level facts for selected group i.
func (r *refreshRun) groupFacts(i int, fo *inspect.OffsetReading, d *wire.GroupDescription, row *inspect.GroupRow) inspect.GroupFacts {
	g := inspect.GroupFacts{Gen: r.gen, Volume: r.s.Layout != nil, File: inspect.FileAbsent, Asked: d != nil}
	switch {
	case fo == nil || fo.Missing:
	case fo.Corrupt:
		g.File = inspect.FileUnusable
	case !r.counts[i]:
		g.File = inspect.FileNotRead
	default:
		g.File = inspect.ReadingOfFormat(fo.Format, r.gen)
	}
	if row.Live != nil {
		g.Held = row.Live.Held
	}
	if d != nil && d.Err == "" && len(d.Members) > 0 {
		g.Held = inspect.HeldYes
	}
	return g
}

// buildGroup fills g, selected group i, from its facts.
func (r *refreshRun) buildGroup(b *groupBuilder, i int, g *GroupObs, keep bool) {
	o := r.o
	var fo *inspect.OffsetReading
	if r.fileObs != nil {
		fo = r.fileObs[i]
	}
	sample := inspect.HealthSample{Time: o.Time, File: fo}
	if r.modTimes != nil {
		sample.FileModTime = r.modTimes[i]
	}
	d := r.described[g.Row.Group]
	gf := r.groupFacts(i, fo, d, &g.Row)
	switch {
	case d != nil:
		g.Live = d
		if d.Err != "" {
			sample.Err = "DescribeGroups: " + d.Err
		} else if d.Committed.Err != "" {
			sample.Err = "OffsetFetch: " + d.Committed.Err
		}
		b.fromLive(d, fo, r, i)
	case r.s.Client != nil && o.WireErr != "":
		sample.Err = "brokers: " + o.WireErr
		b.reset(0)
	case fo != nil:
		b.fromFile(fo, r, i)
	default:
		b.reset(0)
	}
	g.GroupIncidents = b.build(g.Row.Group, gf).Incidents
	r.fill(b, g, &sample, keep)
	r.members(b, g, d)
	r.blockers(b, g, &sample)
	if fo != nil && fo.Corrupt && sample.Err == "" && len(sample.Partitions) == 0 {
		sample.Err = "offset file unreadable: " + fo.Problem
	}
	g.Sample = sample
}

// fromLive lists the partitions the brokers were asked about, with the
// coordinator's offsets, the served bounds, the file's offsets (and the
// file's partitions the brokers were not asked about).
func (b *groupBuilder) fromLive(d *wire.GroupDescription, fo *inspect.OffsetReading, r *refreshRun, i int) {
	n := len(d.Partitions)
	if fo != nil {
		n += len(fo.Offsets)
	}
	b.reset(n)
	at := r.askedAt
	for _, pl := range d.Partitions {
		key := r.keys.key(pl.Topic, pl.Partition)
		pf := inspect.PartitionFacts{Topic: pl.Topic, Partition: pl.Partition, Member: pl.Member}
		if pl.Committed >= 0 {
			b.coords = append(b.coords, volume.Fact{Value: pl.Committed, Source: inspect.SourceCoordinator, AsOf: at})
			pf.Coordinator = &b.coords[len(b.coords)-1]
		}
		if pl.Start >= 0 || pl.End >= 0 || pl.LogErr != "" {
			b.served = append(b.served, inspect.ServedBounds{Start: pl.Start, End: pl.End, Err: pl.LogErr, AsOf: at})
			pf.Served = &b.served[len(b.served)-1]
		}
		if v, ok := fileOffset(fo, key); ok {
			pf.File = b.fileFact(v, fo, r, i)
		}
		pf.Segments = r.before[volume.TopicPartition{Topic: pl.Topic, Partition: pl.Partition}]
		b.items = append(b.items, factItem{key, pf})
	}
	if fo == nil {
		return
	}
	for _, fe := range fo.Offsets {
		if slices.ContainsFunc(b.items, func(it factItem) bool { return it.key == fe.Key }) {
			continue
		}
		t, p, err := volume.SplitOffsetKey(fe.Key)
		if err != nil {
			continue
		}
		pf := inspect.PartitionFacts{Topic: t, Partition: p, File: b.fileFact(fe.Offset, fo, r, i)}
		pf.Segments = r.before[volume.TopicPartition{Topic: t, Partition: p}]
		b.items = append(b.items, factItem{fe.Key, pf})
	}
}

// fromFile lists the file's partitions with the segments' bounds, and the
// other partitions of its topics on the volume (without an offset).
func (b *groupBuilder) fromFile(fo *inspect.OffsetReading, r *refreshRun, i int) {
	b.reset(len(fo.Offsets))
	topic := ""
	for _, fe := range fo.Offsets {
		t, p, err := volume.SplitOffsetKey(fe.Key)
		if err != nil {
			continue
		}
		pf := inspect.PartitionFacts{Topic: t, Partition: p, File: b.fileFact(fe.Offset, fo, r, i), Segments: r.logs.Get(t, p)}
		b.items = append(b.items, factItem{fe.Key, pf})
		if t != topic {
			topic = t
			b.addUncommitted(fo, r, t)
		}
	}
}

// addUncommitted adds the partitions of topic on the volume that the
// file has no offset for.
func (b *groupBuilder) addUncommitted(fo *inspect.OffsetReading, r *refreshRun, topic string) {
	for _, p := range r.logs.TopicPartitions(topic) {
		key := r.keys.key(topic, p)
		if _, ok := fileOffset(fo, key); ok {
			continue
		}
		b.items = append(b.items, factItem{key, inspect.PartitionFacts{Topic: topic, Partition: p, Segments: r.logs.Get(topic, p)}})
	}
}

// build sorts the facts by key (the order health samples keep; a topic's
// partitions stay together) and derives the states.
func (b *groupBuilder) build(group string, gf inspect.GroupFacts) inspect.GroupState {
	slices.SortFunc(b.items, func(a, c factItem) int { return strings.Compare(a.key, c.key) })
	b.facts = b.facts[:0]
	for i := range b.items {
		b.facts = append(b.facts, b.items[i].pf)
	}
	gs := inspect.BuildGroup(group, gf, b.facts, b.states)
	b.states = gs.Partitions
	return gs
}

// fill copies the built states into the observation and its health
// sample.
func (r *refreshRun) fill(b *groupBuilder, g *GroupObs, sample *inspect.HealthSample, keep bool) {
	n := len(b.states)
	sample.Partitions = make([]inspect.PartitionSample, 0, n)
	if keep {
		g.Partitions = make([]PartObs, 0, n)
	} else {
		g.Partitions = []PartObs{}
	}
	var totals inspect.LagTotals
	for k := range b.states {
		p := &b.states[k]
		po := PartObs{Topic: p.Topic, Partition: p.Partition, Committed: -1, End: -1, Start: -1, Lag: p.Lag, LagKnown: p.LagKnown, EndSource: p.LogEnd.Source}
		if p.Resume.Source != "" {
			po.Committed = p.Resume.Value
		}
		if p.LogEnd.Source != "" && p.LagUnknown != inspect.LagUnknownAheadManifest {
			// A manifest's end below the commit trails the log: no end.
			po.End = p.LogEnd.Value
		}
		if p.LogStart.Source != "" {
			po.Start = p.LogStart.Value
		}
		totals.Add(p.Lag, p.LagKnown)
		if p.LagUnobservable() {
			if sample.Unobserved == 0 {
				sample.UnobservedFirst = b.items[k].key
			}
			sample.Unobserved++
		}
		sample.Partitions = append(sample.Partitions, inspect.PartitionSample{Key: b.items[k].key, Committed: po.Committed, End: po.End, Start: po.Start})
		if keep {
			g.Partitions = append(g.Partitions, po)
		}
		for _, in := range p.Incidents {
			gi := GroupIncident{Topic: p.Topic, Partition: p.Partition, PartitionIncident: in, LogEnd: -1, SegmentsEnd: -1}
			if p.LogEnd.Source != "" {
				gi.LogEnd = p.LogEnd.Value
			}
			if p.SegmentsEnd.Source != "" {
				gi.SegmentsEnd = p.SegmentsEnd.Value
			}
			g.Incidents = append(g.Incidents, gi)
		}
	}
	g.Lag, g.LagKnown, g.LagUnknown = totals.Lag, totals.LagKnown(), totals.Unknown
}

// members records the group's membership (with brokers), who of its
// members owns its partitions, and the spread of its lag.
func (r *refreshRun) members(b *groupBuilder, g *GroupObs, d *wire.GroupDescription) {
	if s := inspect.LagSpreadOf(b.states); s.Partitions > 0 {
		g.Spread = &s
	}
	switch {
	case d != nil:
		m := inspect.MemberSampleOf(d.DescribedGroup, r.names.Name(d.Coordinator), r.o.Time)
		g.Members = &m
		g.Ownership = inspect.OwnershipOf(m.Members, b.states)
	case r.s.Client != nil:
		why := "the brokers were not asked"
		if r.o.WireErr != "" {
			why = "brokers: " + r.o.WireErr
		}
		g.Members = &inspect.MemberSample{Time: r.o.Time, Err: why}
	}
}

// servedBehindOf pairs the bounds read before the brokers were asked with
// the log ends the leaders then served (each partition once) and keeps the
// partitions served below them.
func servedBehindOf(groups []GroupObs, before []volume.LogBounds, a *volume.Assignment) []inspect.ServedBehind {
	served := map[string]map[int32]wire.LogOffsets{}
	for gi := range groups {
		for _, in := range groups[gi].Incidents {
			if in.Code != inspect.IncServedBehind {
				continue
			}
			noteServed(served, in.Topic, in.Partition, in.LogEnd)
		}
	}
	return inspect.FindServedBehind(inspect.PairServedEnds(before, served), a)
}
