// Package exporter is kaasctl's long-running side: one refresh per interval
// reads the volume (assignment.json, the offset files) and asks the brokers
// (the same batched live layer as 'groups describe --all'), keeps a window
// of observations per group for health (inspect.HealthWindow), and serves
// the last refresh as Prometheus metrics. A scrape never does I/O: it
// encodes the snapshot the last refresh built.
package exporter

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/anomaly"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// Source is where one refresh looks: the volume, the brokers, or both.
type Source struct {
	// Layout is the volume (nil: brokers only).
	Layout *volume.Layout
	// Client talks to the brokers (nil: volume only).
	Client *wire.Client
	// Filter keeps groups whose id matches (nil: every group).
	Filter *regexp.Regexp
	// Only, when set, keeps only these groups (besides Filter).
	Only map[string]bool
	// MaxGroups caps the groups observed (the first by id); 0: no cap.
	MaxGroups int
	// LagSeconds fetches the timestamp of the record at each lagging
	// committed offset (brokers only), cached by (partition, offset).
	LagSeconds bool
	// Generation of the volume's kaas (which offsets dir is live).
	Generation volume.Generation
	// Now is the clock (tests).
	Now func() time.Time
	// ServedCheckInterval turns on, and spaces, the comparison of each
	// partition's served log end with its segment files (with a volume
	// and brokers): a refresh within it of the last one keeps that one's
	// answer, since reading every partition's segments costs file-system
	// round trips (many on NFS) and a stale high watermark lasts until its
	// leader restarts. 0: no comparison (groups health has no use for it).
	ServedCheckInterval time.Duration

	stamps map[stampKey]time.Time
	// servedAt is when the served log ends were last compared (zero:
	// never), served what that found.
	servedAt time.Time
	served   []inspect.ServedBehind
	// partitions: the exporter writes per-partition series (New sets it),
	// so GroupObs.Partitions are filled, as they are for lag in seconds
	// with brokers (keepPartitions).
	partitions bool
}

type stampKey struct {
	topic string
	part  int32
	off   int64
}

// BrokerObs is one broker as a refresh saw it.
type BrokerObs struct {
	Node     int32  `json:"node"`
	Name     string `json:"name"`
	Addr     string `json:"addr"`
	Answered bool   `json:"answered"`
	// Groups is how many groups the broker listed.
	Groups int    `json:"groups"`
	Err    string `json:"error,omitempty"`
	// Seed: a --brokers address that neither brokers[] nor the metadata
	// lists and that did not answer (kaas drops a dead broker from both):
	// Name is the broker id its host names, else the address.
	Seed bool `json:"seed,omitempty"`
}

// PartObs is one partition of a group. Its fields are ordered for size
// (80 bytes, 4 partitions of 100,000 groups are 32 MB).
type PartObs struct {
	Topic string `json:"topic"`
	// EndSource says where End came from (wire, segments, manifest).
	EndSource string `json:"endSource"`
	Partition int32  `json:"partition"`
	LagKnown  bool   `json:"lagKnown"`
	// LagSecondsKnown: LagSeconds is known.
	LagSecondsKnown bool `json:"lagSecondsKnown"`
	// Committed is the coordinator's committed offset, else the offset
	// file's (-1: none).
	Committed int64 `json:"committed"`
	// End is the log end offset (live), else the segment files' log end
	// (what kaas recovers on restart), else manifest.json's highWatermark
	// (it trails the log).
	End int64 `json:"end"`
	// Start is the log start offset (live; -1: unknown).
	Start int64 `json:"logStart"`
	Lag   int64 `json:"lag"`
	// LagSeconds is the age of the record at the committed offset at the
	// time of the refresh (0 when the group is caught up).
	LagSeconds float64 `json:"lagSeconds"`
}

// GroupObs is one group as a refresh saw it.
type GroupObs struct {
	Row  inspect.GroupRow       `json:"row"`
	Live *wire.GroupDescription `json:"-"`
	// Partitions are filled only for an exporter that writes
	// per-partition series or lag in seconds (at 100,000 groups they are
	// 32 MB of a refresh); Sample.Partitions always has the offsets.
	Partitions []PartObs `json:"partitions"`
	Lag        int64     `json:"lag"`
	LagKnown   bool      `json:"lagKnown"`
	// LagSeconds is the largest partition lag in seconds.
	LagSeconds      float64              `json:"lagSeconds"`
	LagSecondsKnown bool                 `json:"lagSecondsKnown"`
	Sample          inspect.HealthSample `json:"-"`
}

// Observation is one refresh.
type Observation struct {
	Time       time.Time     `json:"time"`
	Duration   time.Duration `json:"duration"`
	HasVolume  bool          `json:"hasVolume"`
	HasBrokers bool          `json:"hasBrokers"`
	// Assignment is nil when there is no volume or it is unreadable
	// (AssignmentErr says why).
	Assignment    *volume.Assignment `json:"-"`
	AssignmentErr string             `json:"assignmentError,omitempty"`
	// Findings are the volume's findings: assignment.json, the offsets
	// dirs and every offset file (all groups, not only the selected).
	Findings []volume.Finding `json:"findings"`
	// Generation is the kaas generation the exporter assumes for the
	// volume (nil without a volume).
	Generation *volume.GenerationInfo `json:"generation,omitempty"`
	Groups     []GroupObs             `json:"groups"`
	// Matched groups passed the filter; Dropped were over the cap, every
	// group after LastSelected by id.
	Matched      int         `json:"matched"`
	Dropped      int         `json:"dropped"`
	LastSelected string      `json:"lastSelected,omitempty"`
	Brokers      []BrokerObs `json:"brokers"`
	// WireErr is set when the brokers could not be asked at all.
	WireErr string `json:"wireError,omitempty"`
	// Probes is the number of record timestamps fetched (cache misses).
	Probes int `json:"probes"`
	// ServedBehind are the partitions a leader serves below the log end
	// their segment files gave before the brokers were asked (with a
	// volume and brokers; the partitions the offset files name): a stale
	// high watermark.
	ServedBehind []inspect.ServedBehind `json:"servedBehindLog,omitempty"`
}

// Observe runs one refresh. It fails only when neither source gave
// anything; partial failures are in the observation.
func (s *Source) Observe(ctx context.Context) *Observation {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	start := time.Now()
	o := &Observation{Time: now(), HasVolume: s.Layout != nil, HasBrokers: s.Client != nil, Findings: []volume.Finding{}, Brokers: []BrokerObs{}}
	match := func(g string) bool {
		return (s.Filter == nil || s.Filter.MatchString(g)) && (s.Only == nil || s.Only[g])
	}

	// The brokers' listings, asked while the volume is read.
	var lsAnswer []wire.BrokerGroups
	var lsErr error
	listed := make(chan struct{})
	if s.Client != nil {
		go func() {
			defer close(listed)
			lsAnswer, lsErr = s.Client.ListGroupsEveryBroker(ctx)
		}()
	} else {
		close(listed)
	}

	// The volume: one read of each offset file (the scan's bounded pool of
	// workers), one compact record per matched group; the scan's items are
	// not retained.
	var files []inspect.GroupFile
	var recs fileRecs
	keys := partKeys{}
	if s.Layout != nil {
		l := *s.Layout
		gi := l.Gen
		if !gi.Resolved() {
			gi = volume.GenerationInfo{Gen: s.Generation, Name: s.Generation.String(), Source: volume.GenSourceUndetermined}
			if s.Generation.Known() {
				gi.Source = volume.GenSourceDetected
			}
		}
		o.Generation = &gi
		a, fs, err := volume.ReadAssignment(l.AssignmentPath())
		o.Findings = append(o.Findings, fs...)
		if err != nil {
			o.AssignmentErr = err.Error()
		} else {
			o.Assignment = a
		}
		// ScanOffsets gives the live dir of the volume's generation the
		// role "current" (DATA/__consumer_offsets on Go / Rust ≤ 0.2.15).
		live := volume.OffsetsCurrent
		sized := func(n int) {
			files = make([]inspect.GroupFile, 0, n)
			recs = make(fileRecs, 0, n)
		}
		sized(0)
		sr, err := volume.ScanOffsets(l, volume.ScanOptions{Now: o.Time, OnListed: sized}, func(it *volume.OffsetScanItem) error {
			o.Findings = append(o.Findings, it.Findings...)
			if it.Err != nil {
				o.Findings = append(o.Findings, volume.Finding{Severity: volume.SevError, Code: volume.CodeOffsetsCorrupt, Path: it.Path, Message: it.Err.Problem})
			}
			files = append(files, inspect.SummarizeOffsetItem(it))
			if !match(it.Group) {
				return nil
			}
			rec := fileRec{group: it.Group, path: it.Path, layout: it.Layout, modTime: it.ModTime}
			if it.Err != nil {
				rec.corrupt, rec.problem = true, it.Err.Problem
			} else if it.File != nil {
				rec.parsed, rec.format, rec.entries = true, it.File.Format, it.File.Entries
				for i := range rec.entries {
					rec.entries[i].Topic = keys.topic(rec.entries[i].Topic)
				}
			}
			recs = append(recs, rec)
			return nil
		})
		if err != nil {
			o.Findings = append(o.Findings, volume.Finding{Severity: volume.SevError, Code: volume.CodeUnreadableDir, Path: offsetsDirName(l), Message: err.Error()})
		}
		o.Findings = append(o.Findings, sr.Findings...)
		recs = recs.byGroup(live)
	}

	// The brokers' listings.
	<-listed
	var listings []wire.BrokerGroups
	var extra []string
	names := inspect.NewNodeNamer(o.Assignment)
	if s.Client != nil {
		ls, err := lsAnswer, lsErr
		if err != nil {
			o.WireErr = err.Error()
		}
		listings = ls
		for _, b := range ls {
			o.Brokers = append(o.Brokers, BrokerObs{Node: b.Broker.NodeID, Name: names.Name(b.Broker.NodeID), Addr: b.Broker.Addr(), Answered: b.Err == "", Groups: len(b.Groups), Err: b.Err})
			for _, g := range b.Groups {
				extra = append(extra, g.Group)
			}
		}
		if err == nil {
			o.Brokers = append(o.Brokers, s.downSeeds(ctx, ls, o.Assignment)...)
		}
	}

	// Selection: every group any source knows, filtered and capped.
	rows := inspect.BuildGroupRows(inspect.GroupsInput{Assignment: o.Assignment, Files: files, Extra: extra})
	sel := rows[:0]
	for _, r := range rows {
		if match(r.Group) {
			sel = append(sel, r)
		}
	}
	o.Matched = len(sel)
	if s.MaxGroups > 0 && len(sel) > s.MaxGroups {
		o.Dropped = len(sel) - s.MaxGroups
		sel = sel[:s.MaxGroups]
		o.LastSelected = sel[len(sel)-1].Group
	}
	groupNames := make([]string, len(sel))
	for i, r := range sel {
		groupNames[i] = r.Group
	}

	// File observations (one per selected group, in selection order) and
	// what the brokers are asked about besides their own answers.
	var fileObs []*inspect.OffsetReading
	var modTimes []time.Time
	var known map[string]wire.TopicPartitions
	if s.Client != nil {
		known = map[string]wire.TopicPartitions{}
	}
	if s.Layout != nil {
		fileObs = make([]*inspect.OffsetReading, len(sel))
		modTimes = make([]time.Time, len(sel))
		obs := make([]inspect.OffsetReading, len(sel))
		find := recs.finder(groupNames)
		for i, g := range groupNames {
			ob := &obs[i]
			*ob = inspect.OffsetReading{Group: g}
			fileObs[i] = ob
			rec := find(g)
			if rec == nil {
				ob.Missing = true
				continue
			}
			ob.File = rec.path
			modTimes[i] = rec.modTime
			if rec.corrupt {
				ob.Corrupt, ob.Problem = true, rec.problem
				continue
			}
			if !rec.parsed {
				continue
			}
			ob.Format = rec.format
			ob.Offsets = keys.offsets(rec.entries)
			if known != nil && len(rec.entries) > 0 {
				tp := wire.TopicPartitions{}
				for _, e := range rec.entries {
					tp.Add(e.Topic, e.Partition)
				}
				known[g] = tp
			}
		}
		recs = nil
	}
	obsAt := func(i int) *inspect.OffsetReading {
		if fileObs == nil {
			return nil
		}
		return fileObs[i]
	}

	// With brokers and a data dir, the segments of the partitions the
	// offset files name are read before the brokers are asked: a leader
	// serving less than they held then serves a stale high watermark.
	var before []volume.LogBounds // the evidence: read here, before asking
	checkServed := s.ServedCheckInterval > 0 && s.Layout != nil && s.Layout.DataDir != "" && s.Client != nil && o.WireErr == "" &&
		(s.servedAt.IsZero() || o.Time.Sub(s.servedAt) >= s.ServedCheckInterval)
	if checkServed {
		r, tps := volume.NewLogReader(*s.Layout), filePartitions(fileObs)
		r.Prefetch(tps, 16)
		before = make([]volume.LogBounds, len(tps))
		for i, tp := range tps {
			before[i] = *r.Get(tp.Topic, tp.Partition)
		}
	}

	// The brokers' descriptions: O(brokers) requests.
	described := map[string]*wire.GroupDescription{}
	if s.Client != nil && o.WireErr == "" && len(groupNames) > 0 {
		ds, err := s.Client.DescribeMany(ctx, groupNames, wire.DescribeOptions{Known: known})
		if err != nil && ds == nil {
			o.WireErr = err.Error()
		}
		coords := map[string]wire.Coordinator{}
		desc := map[string]wire.DescribedGroup{}
		for i := range ds {
			d := &ds[i]
			described[d.Group] = d
			co := wire.Coordinator{Key: d.Group, NodeID: d.Coordinator, Code: d.Code}
			if len(d.Err) > len("coordinator lookup: ") && d.Err[:len("coordinator lookup: ")] == "coordinator lookup: " {
				co.Err = d.Err
			}
			coords[d.Group] = co
			desc[d.Group] = d.DescribedGroup
		}
		inspect.MergeLive(sel, &inspect.LiveAnswers{GatheredGroups: wire.NewGatheredGroups(listings, coords, desc), HasAssignment: o.Assignment != nil, Names: names})
	}

	// Offline (no brokers configured), log ends come from the segment
	// files, read afresh every refresh.
	var logs *volume.LogReader
	if s.Layout != nil && s.Layout.DataDir != "" && s.Client == nil {
		logs = volume.NewLogReader(*s.Layout)
		logs.Prefetch(filePartitions(fileObs), 16)
	}
	// The log end each partition's leader served (checkServed only).
	var served map[string]map[int32]wire.LogOffsets
	if checkServed {
		served = map[string]map[int32]wire.LogOffsets{}
	}
	o.Groups = make([]GroupObs, len(sel))
	keepParts := s.keepPartitions()
	for i := range sel {
		g := &o.Groups[i]
		g.Row = sel[i]
		name := g.Row.Group
		fo := obsAt(i)
		sample := inspect.HealthSample{Time: o.Time, File: fo}
		add := func(po PartObs) {
			sample.Partitions = append(sample.Partitions, inspect.PartitionSample{Key: keys.key(po.Topic, po.Partition), Committed: po.Committed, End: po.End, Start: po.Start})
			if keepParts {
				g.Partitions = append(g.Partitions, po)
			}
			if po.LagKnown {
				g.Lag += po.Lag
				g.LagKnown = true
			}
		}
		if modTimes != nil {
			sample.FileModTime = modTimes[i]
		}
		if d := described[name]; d != nil {
			g.Live = d
			if d.Err != "" {
				sample.Err = "DescribeGroups: " + d.Err
			} else if d.Committed.Err != "" {
				sample.Err = "OffsetFetch: " + d.Committed.Err
			}
			sized(g, &sample, len(d.Lag.Partitions), keepParts)
			for _, p := range d.Lag.Partitions {
				po := PartObs{Topic: p.Topic, Partition: p.Partition, Committed: p.Committed, End: p.End, Start: p.Start, Lag: p.Lag, LagKnown: p.Known, EndSource: volume.SourceWire}
				if checkServed && p.End >= 0 {
					noteServed(served, p.Topic, p.Partition, p.End)
				}
				if po.Committed < 0 {
					// kaas's coordinator has not loaded the group: the file is what it will load.
					if fc, ok := fileOffset(fo, keys.key(p.Topic, p.Partition)); ok {
						po.Committed = fc
						if po.End >= 0 {
							po.Lag, po.LagKnown = max(0, po.End-fc), true
						}
					}
				}
				add(po)
			}
		} else if s.Client != nil && o.WireErr != "" {
			sample.Err = "brokers: " + o.WireErr
		} else if fo != nil {
			sized(g, &sample, len(fo.Offsets), keepParts)
			for _, fe := range fo.Offsets {
				t, p, err := volume.SplitOffsetKey(fe.Key)
				if err != nil {
					continue
				}
				po := PartObs{Topic: t, Partition: p, Committed: fe.Offset, End: -1, Start: -1}
				if logs != nil {
					if b := logs.Get(t, p); b.End != nil {
						po.End, po.EndSource = b.End.Value, b.End.Source
						if b.Start != nil {
							po.Start = b.Start.Value
						}
						if po.Committed >= 0 {
							po.Lag, po.LagKnown = max(0, po.End-po.Committed), true
						}
					}
				}
				add(po)
			}
		}
		if g.Partitions == nil {
			g.Partitions = []PartObs{}
		}
		if sample.Partitions == nil {
			sample.Partitions = []inspect.PartitionSample{}
		}
		if fo != nil && fo.Corrupt && sample.Err == "" && len(sample.Partitions) == 0 {
			sample.Err = "offset file unreadable: " + fo.Problem
		}
		inspect.SortPartitions(sample.Partitions)
		g.Sample = sample
	}
	switch {
	case checkServed:
		// Only the bounds read before the brokers were asked are evidence.
		o.ServedBehind = inspect.FindServedBehind(inspect.PairServedEnds(before, served), o.Assignment)
		s.servedAt, s.served = o.Time, o.ServedBehind
	case o.WireErr == "":
		o.ServedBehind = s.served // compared at s.servedAt
	}
	if s.LagSeconds && s.Client != nil {
		s.lagSeconds(ctx, o)
	}
	o.Duration = time.Since(start)
	return o
}

// Coverage is which groups o observed (health --exporter says why a
// group is missing from it).
func (s *Source) Coverage(o *Observation) inspect.HealthCoverage {
	c := inspect.HealthCoverage{MaxGroups: s.MaxGroups, Dropped: o.Dropped, LastObserved: o.LastSelected}
	if s.Filter != nil {
		c.GroupRegex = s.Filter.String()
	}
	return c
}

// downSeeds are the --brokers addresses that neither assignment.json's
// brokers[] nor the brokers' metadata (the listings' brokers) names and
// that do not answer now: a broker that was down when the exporter
// started is known from them alone, and kaas_broker_up says it is down.
// One that answers is another address of a listed broker, or a bootstrap
// address, and is left out.
func (s *Source) downSeeds(ctx context.Context, ls []wire.BrokerGroups, a *volume.Assignment) []BrokerObs {
	md := make([]wire.Broker, len(ls))
	for i, b := range ls {
		md[i] = b.Broker
	}
	var out []BrokerObs
	for _, kb := range inspect.KnownBrokers(a, md, s.Client.Settings.Brokers) {
		if !kb.OnlySeed() {
			continue
		}
		if err := s.Client.ReachAddr(ctx, kb.Addr); err != nil {
			out = append(out, BrokerObs{Node: kb.Node, Name: kb.Name, Addr: kb.Addr, Err: err.Error(), Seed: true})
		}
	}
	return out
}

// keepPartitions reports whether a refresh fills GroupObs.Partitions: for
// per-partition series, or for lag in seconds, which only the brokers
// answer (a volume-only exporter at 100,000 groups would hold 26 MB of
// partitions nothing reads).
func (s *Source) keepPartitions() bool { return s.partitions || s.LagSeconds && s.Client != nil }

// sized makes room for n partitions in its sample, and in g when keep.
func sized(g *GroupObs, sample *inspect.HealthSample, n int, keep bool) {
	sample.Partitions = make([]inspect.PartitionSample, 0, n)
	if keep {
		g.Partitions = make([]PartObs, 0, n)
	}
}

// lagSeconds fills the partitions' lag in seconds: the age, at the
// refresh, of the record at the committed offset. Timestamps are cached by
// (partition, offset): a committed offset that does not move costs nothing
// after its first refresh. Entries not used by a refresh are dropped, so the
// cache holds at most one entry per lagging (group, partition). Offsets the
// probe's rounds did not reach (many groups at far-apart offsets of one
// partition) get their lag in seconds at a later refresh.
func (s *Source) lagSeconds(ctx context.Context, o *Observation) {
	next := map[stampKey]time.Time{}
	want := map[string]map[int32][]int64{}
	for gi := range o.Groups {
		for _, p := range o.Groups[gi].Partitions {
			if !p.LagKnown || p.Lag == 0 || p.Committed < 0 {
				continue
			}
			k := stampKey{p.Topic, p.Partition, p.Committed}
			if ts, ok := s.stamps[k]; ok {
				next[k] = ts
				continue
			}
			if want[p.Topic] == nil {
				want[p.Topic] = map[int32][]int64{}
			}
			want[p.Topic][p.Partition] = append(want[p.Topic][p.Partition], p.Committed)
		}
	}
	if len(want) > 0 {
		got, err := s.Client.RecordTimestamps(ctx, want)
		if err == nil {
			for t, ps := range got {
				for p, offs := range ps {
					for off, rt := range offs {
						o.Probes++
						if rt.Err == "" {
							next[stampKey{t, p, off}] = rt.Time
						}
					}
				}
			}
		}
	}
	s.stamps = next
	for gi := range o.Groups {
		g := &o.Groups[gi]
		for pi := range g.Partitions {
			p := &g.Partitions[pi]
			switch {
			case !p.LagKnown:
				continue
			case p.Lag == 0:
				p.LagSeconds, p.LagSecondsKnown = 0, true
			default:
				ts, ok := next[stampKey{p.Topic, p.Partition, p.Committed}]
				if !ok {
					continue
				}
				p.LagSeconds, p.LagSecondsKnown = max(0, o.Time.Sub(ts).Seconds()), true
			}
			if p.LagSecondsKnown && (!g.LagSecondsKnown || p.LagSeconds > g.LagSeconds) {
				g.LagSeconds, g.LagSecondsKnown = p.LagSeconds, true
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// offsetsDirName is the live offsets dir of the volume's generation, or
// the newest generation's when the generation cannot tell.
func offsetsDirName(l volume.Layout) string { return l.FollowedOffsetsDir() }

// fileRec is what a refresh keeps of one group's offset file between the
// scan and the selection.
type fileRec struct {
	group, path     string
	layout          string
	modTime         time.Time
	corrupt, parsed bool
	problem, format string
	entries         []volume.OffsetEntry
}

// filePartitions are the partitions the offset files name, each once
// however many groups commit to it.
func filePartitions(fileObs []*inspect.OffsetReading) []volume.TopicPartition {
	seen := map[string]bool{}
	var tps []volume.TopicPartition
	for _, fo := range fileObs {
		for _, fe := range fo.Offsets {
			k := fe.Key
			if seen[k] {
				continue
			}
			seen[k] = true
			if t, p, err := volume.SplitOffsetKey(k); err == nil {
				tps = append(tps, volume.TopicPartition{Topic: t, Partition: p})
			}
		}
	}
	return tps
}

// noteServed keeps the first log end served for a partition (one
// ListOffsets round answers every group alike).
func noteServed(m map[string]map[int32]wire.LogOffsets, topic string, part int32, end int64) {
	ps := m[topic]
	if ps == nil {
		ps = map[int32]wire.LogOffsets{}
		m[topic] = ps
	}
	if _, ok := ps[part]; !ok {
		ps[part] = wire.LogOffsets{End: end, Leader: -1}
	}
}

// fileRecs are the scan's records, in scan order (by group id within each
// offsets dir) until byGroup.
type fileRecs []fileRec

// byGroup sorts the records by group id (a no-op for one dir, which the
// scan gives in that order) and keeps one a group: the first dir's, or
// the live dir's when the first is not live, as the brokers would load.
func (rs fileRecs) byGroup(live string) fileRecs {
	cmp := func(a, b fileRec) int { return strings.Compare(a.group, b.group) }
	if !slices.IsSortedFunc(rs, cmp) {
		slices.SortStableFunc(rs, cmp)
	}
	w := 0
	for i := range rs {
		if w > 0 && rs[w-1].group == rs[i].group {
			if rs[w-1].layout != live && rs[i].layout == live {
				rs[w-1] = rs[i]
			}
			continue
		}
		rs[w] = rs[i]
		w++
	}
	clear(rs[w:])
	return rs[:w]
}

// finder returns a lookup of a group's record (nil when none) for the
// groups of names, asked in that order: a walk along both when names are
// sorted (a selection is), else a binary search each.
func (rs fileRecs) finder(names []string) func(string) *fileRec {
	at := func(i int, g string) *fileRec {
		if i < len(rs) && rs[i].group == g {
			return &rs[i]
		}
		return nil
	}
	if !slices.IsSorted(names) {
		return func(g string) *fileRec {
			i, _ := slices.BinarySearchFunc(rs, g, func(r fileRec, g string) int { return strings.Compare(r.group, g) })
			return at(i, g)
		}
	}
	j := 0
	return func(g string) *fileRec {
		for j < len(rs) && rs[j].group < g {
			j++
		}
		return at(j, g)
	}
}

// partKeys interns the "topic/partition" keys and the topic names of one
// refresh: 100,000 groups committing to the same few partitions share one
// string per partition instead of one per (group, partition).
type partKeys struct {
	keys   map[volume.TopicPartition]string
	topics map[string]string
}

func (k *partKeys) key(topic string, part int32) string {
	tp := volume.TopicPartition{Topic: topic, Partition: part}
	if s, ok := k.keys[tp]; ok {
		return s
	}
	if k.keys == nil {
		k.keys = map[volume.TopicPartition]string{}
	}
	s := topic + "/" + strconv.Itoa(int(part))
	k.keys[tp] = s
	return s
}

// offsets are entries as a reading's offsets: interned keys, sorted by key
// (of two entries for one partition, the later wins, as in a JSON object).
func (k *partKeys) offsets(entries []volume.OffsetEntry) []anomaly.Offset {
	out := make([]anomaly.Offset, len(entries))
	for i, e := range entries {
		out[i] = anomaly.Offset{Key: k.key(e.Topic, e.Partition), Offset: e.Offset}
	}
	slices.SortStableFunc(out, func(a, b anomaly.Offset) int { return strings.Compare(a.Key, b.Key) })
	w := 0
	for i := range out {
		if i+1 < len(out) && out[i+1].Key == out[i].Key {
			continue
		}
		out[w] = out[i]
		w++
	}
	return out[:w]
}

// fileOffset is the offset of partition key in the file r read.
func fileOffset(r *inspect.OffsetReading, key string) (int64, bool) {
	if r == nil {
		return 0, false
	}
	i, ok := slices.BinarySearchFunc(r.Offsets, key, func(o anomaly.Offset, k string) int { return strings.Compare(o.Key, k) })
	if !ok {
		return 0, false
	}
	return r.Offsets[i].Offset, true
}

func (k *partKeys) topic(t string) string {
	if s, ok := k.topics[t]; ok {
		return s
	}
	if k.topics == nil {
		k.topics = map[string]string{}
	}
	k.topics[t] = t
	return t
}
