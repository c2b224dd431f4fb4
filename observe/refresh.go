package observe

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
	// servedAt is when the served log ends were last compared with the
	// segments (zero: never); stale keeps what that found open until its
	// cause is gone.
	servedAt time.Time
	// servedVersion is the assignment version that comparison read, and
	// servedLost whether a refresh since could not reach the brokers: a
	// takeover (a new version) or an outage is when a leader comes to
	// serve a stale end, so either brings the next comparison forward.
	servedVersion [2]int64
	servedLost    bool
	stale         staleTracker
	// twice holds, from the last comparison, the partitions whose active
	// segment holds an offset range twice: the evidence stays on the
	// volume, so refreshes between comparisons keep the incident (and
	// the end the earlier copy reached) instead of dropping it.
	twice map[volume.TopicPartition]*volume.LogBounds
	// Shard, when set, keeps only the groups this shard owns by kaas's
	// routing under the assignment version the refresh read
	// (inspect.ShardRule).
	Shard *inspect.Shard

	// Partitions: the exporter writes per-partition series (exporter.New
	// sets it), so GroupObs.Partitions are filled, as they are for lag in
	// seconds with brokers (keepPartitions).
	Partitions bool
	// Blockers names the blocker of each lagging partition whose committed
	// offset stayed since the refresh before (with a volume;
	// refresh_blocker.go), read under BlockerLimits (zero: the defaults).
	Blockers      bool
	BlockerLimits volume.RecordLimits
	// BlockerFlags are the volume and connection flags a blocker's printed
	// fix repeats (BlockerSources.Flags).
	BlockerFlags string
	// BlockersAtOnce also names the blocker of a partition at the first
	// refresh that sees it lagging (GroupObs.Blockers only), for a run
	// that observes once (groups explain --window 0).
	BlockersAtOnce bool

	stuck     map[stuckKey]*stuckSeen
	refreshNo int64
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
	// LagUnknown counts the partitions Lag leaves out (their lag is
	// unknown: no committed offset a consumer would get, or no log end).
	LagUnknown int `json:"lagUnknown"`
	// Incidents are the read model's incidents of the group's partitions
	// (nil when none).
	Incidents []GroupIncident `json:"incidents,omitempty"`
	// GroupIncidents are the group's own (uncommitted partitions).
	GroupIncidents []inspect.PartitionIncident `json:"groupIncidents,omitempty"`
	// Blockers are the blockers of its lagging partitions (Source.Blockers).
	Blockers []inspect.PartitionBlocker `json:"blockers,omitempty"`
	// LagSeconds is the largest partition lag in seconds.
	LagSeconds      float64              `json:"lagSeconds"`
	LagSecondsKnown bool                 `json:"lagSecondsKnown"`
	Sample          inspect.HealthSample `json:"-"`
	// Members is the group's membership as its coordinator's
	// DescribeGroups showed it (nil without brokers); Ownership who of
	// them owns its partitions (nil without members); Spread how its lag
	// spreads over its partitions (nil when no partition's lag is known).
	// Pointers: without brokers a group has neither, and their zero
	// values were 22 MB of a 100,000-group refresh's peak (GroupObs is 552
	// bytes, was 760).
	Members   *inspect.MemberSample `json:"-"`
	Ownership *inspect.Ownership    `json:"-"`
	Spread    *inspect.LagSpread    `json:"-"`
}

// GroupIncident is one incident of one of a group's partitions, with the
// log end consumers see and the one the segments held (-1: unknown).
type GroupIncident struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	inspect.PartitionIncident
	LogEnd      int64 `json:"logEnd"`
	SegmentsEnd int64 `json:"segmentsEnd"`
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
	Matched int `json:"matched"`
	Dropped int `json:"dropped"`
	// OtherShards are the groups passing the filter that another shard
	// owns (Source.Shard; shard.go).
	OtherShards  int         `json:"otherShards,omitempty"`
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
	r := s.newRun()
	listed := s.listAsync(ctx)
	r.scanVolume()
	r.readBlockerSources()
	r.awaitListings(ctx, listed)
	r.selectGroups()
	r.files = nil // the rows have what they said
	r.readFiles()
	r.readBefore()
	r.describe(ctx)
	r.buildGroups()
	if r.bsrc != nil {
		s.forgetStuck()
	}
	r.sel = nil // the observation has the rows
	r.finishServed()
	if s.LagSeconds && s.Client != nil {
		s.lagSeconds(ctx, r.o)
	}
	r.o.Duration = time.Since(r.start)
	return r.o
}

// refreshRun is one refresh in progress: what each step leaves the next.
type refreshRun struct {
	s     *Source
	o     *Observation
	start time.Time
	match func(string) bool
	gen   volume.GenerationInfo
	// The volume: one compact record a matched group, and every file's
	// summary (for the rows).
	files []inspect.GroupFile
	recs  fileRecs
	keys  partKeys
	// The brokers' listings.
	listings []wire.BrokerGroups
	names    *inspect.NodeNamer
	// The selection: rows and their group names; fileObs the offset file
	// each read (nil without a volume), counts whether it is the one the
	// brokers load, and known the partitions to ask about.
	sel        []inspect.GroupRow
	groupNames []string
	fileObs    []*inspect.OffsetReading
	counts     []bool
	modTimes   []time.Time
	known      map[string]wire.TopicPartitions
	// The evidence read before the brokers were asked (checkServed).
	checkServed bool
	before      map[volume.TopicPartition]*volume.LogBounds
	beforeList  []volume.LogBounds
	described   map[string]*wire.GroupDescription
	askedAt     time.Time
	// logs are the segments read afresh each refresh without brokers.
	logs *Logs
	// bsrc are the blockers' sources (nil: not named this refresh).
	bsrc *BlockerSources
	// shardRule is the refresh's shard rule (made at its first use, once
	// assignment.json is read).
	shardRule *inspect.ShardRule
}

func (s *Source) newRun() *refreshRun {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	r := &refreshRun{s: s, start: time.Now()}
	r.o = &Observation{Time: now(), HasVolume: s.Layout != nil, HasBrokers: s.Client != nil, Findings: []volume.Finding{}, Brokers: []BrokerObs{}}
	r.match = func(g string) bool {
		return (s.Filter == nil || s.Filter.MatchString(g)) && (s.Only == nil || s.Only[g]) && r.owns(g)
	}
	return r
}

// listAsync asks every broker for its listing while the volume is read.
func (s *Source) listAsync(ctx context.Context) func() ([]wire.BrokerGroups, error) {
	if s.Client == nil {
		return func() ([]wire.BrokerGroups, error) { return nil, nil }
	}
	var ls []wire.BrokerGroups
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		ls, err = s.Client.ListGroupsEveryBroker(ctx)
	}()
	return func() ([]wire.BrokerGroups, error) {
		<-done
		return ls, err
	}
}

// scanVolume reads assignment.json and each offset file once (the scan's
// bounded pool of workers), keeping one compact record a matched group.
func (r *refreshRun) scanVolume() {
	s, o := r.s, r.o
	if s.Layout == nil {
		return
	}
	l := s.Layout.WithGeneration()
	r.gen = l.Gen
	o.Generation = &r.gen
	a, fs, err := volume.ReadAssignment(l.AssignmentPath())
	o.Findings = append(o.Findings, fs...)
	if err != nil {
		o.AssignmentErr = err.Error()
	} else {
		o.Assignment = a
	}
	sized := func(n int) {
		r.files = make([]inspect.GroupFile, 0, n)
		r.recs = make(fileRecs, 0, n)
	}
	sized(0)
	sr, err := volume.ScanOffsets(l, volume.ScanOptions{Now: o.Time, OnListed: sized, ReadGroup: r.shardReads()}, func(it *volume.OffsetScanItem) error {
		o.Findings = append(o.Findings, it.Findings...)
		if it.Err != nil {
			o.Findings = append(o.Findings, volume.Finding{Severity: volume.SevError, Code: volume.CodeOffsetsCorrupt, Path: it.Path, Message: it.Err.Problem})
		}
		r.files = append(r.files, inspect.SummarizeOffsetItem(it))
		if r.match(it.Group) {
			r.recs = append(r.recs, r.record(it))
		}
		return nil
	})
	if err != nil {
		o.Findings = append(o.Findings, volume.Finding{Severity: volume.SevError, Code: volume.CodeUnreadableDir, Path: l.FollowedOffsetsDir(), Message: err.Error()})
	}
	o.Findings = append(o.Findings, sr.Findings...)
	r.recs = r.recs.byGroup()
}

// record is what a refresh keeps of one scanned file.
func (r *refreshRun) record(it *volume.OffsetScanItem) fileRec {
	rec := fileRec{group: it.Group, path: it.Path, layout: it.Layout, modTime: it.ModTime}
	if it.Err != nil {
		rec.corrupt, rec.problem = true, it.Err.Problem
	} else if it.File != nil {
		rec.parsed, rec.format, rec.entries = true, it.File.Format, it.File.Entries
		for i := range rec.entries {
			rec.entries[i].Topic = r.keys.topic(rec.entries[i].Topic)
		}
	}
	return rec
}

// awaitListings takes the brokers' listings.
func (r *refreshRun) awaitListings(ctx context.Context, listed func() ([]wire.BrokerGroups, error)) {
	o := r.o
	r.names = inspect.NewNodeNamer(o.Assignment)
	ls, err := listed()
	if err != nil {
		o.WireErr = err.Error()
	}
	r.listings = ls
	for _, b := range ls {
		o.Brokers = append(o.Brokers, BrokerObs{Node: b.Broker.NodeID, Name: r.names.Name(b.Broker.NodeID), Addr: b.Broker.Addr(), Answered: b.Err == "", Groups: len(b.Groups), Err: b.Err})
	}
	if r.s.Client != nil && err == nil {
		o.Brokers = append(o.Brokers, r.s.downSeeds(ctx, ls, o.Assignment)...)
	}
}

// selectGroups is every group any source knows, filtered and capped.
func (r *refreshRun) selectGroups() {
	var extra []string
	for _, b := range r.listings {
		for _, g := range b.Groups {
			extra = append(extra, g.Group)
		}
	}
	sel := inspect.BuildGroupRowsWhere(inspect.GroupsInput{Assignment: r.o.Assignment, Files: r.files, Extra: extra}, func(row *inspect.GroupRow) bool {
		if r.match(row.Group) {
			return true
		}
		r.countOtherShard(row.Group)
		return false
	})
	r.o.Matched = len(sel)
	if m := r.s.MaxGroups; m > 0 && len(sel) > m {
		r.o.Dropped = len(sel) - m
		sel = sel[:m]
		r.o.LastSelected = sel[len(sel)-1].Group
	}
	r.sel = sel
	r.groupNames = make([]string, len(sel))
	for i, row := range sel {
		r.groupNames[i] = row.Group
	}
}

// readFiles makes the file observations (one per selected group, in
// selection order) and the partitions the brokers are asked about besides
// their own answers.
func (r *refreshRun) readFiles() {
	if r.s.Client != nil {
		r.known = map[string]wire.TopicPartitions{}
	}
	if r.s.Layout == nil {
		return
	}
	n := len(r.sel)
	r.fileObs, r.modTimes, r.counts = make([]*inspect.OffsetReading, n), make([]time.Time, n), make([]bool, n)
	obs := make([]inspect.OffsetReading, n)
	find := r.recs.finder(r.groupNames)
	for i, g := range r.groupNames {
		ob := &obs[i]
		*ob = inspect.OffsetReading{Group: g}
		r.fileObs[i] = ob
		rec := find(g)
		if rec == nil {
			ob.Missing = true
			continue
		}
		ob.File, r.modTimes[i], r.counts[i] = rec.path, rec.modTime, rec.counts()
		if rec.corrupt {
			ob.Corrupt, ob.Problem = true, rec.problem
			continue
		}
		if !rec.parsed {
			continue
		}
		ob.Format = rec.format
		ob.Offsets = r.keys.offsets(rec.entries)
		if r.known != nil && len(rec.entries) > 0 {
			r.known[g] = entryPartitions(rec.entries)
		}
	}
	r.recs = nil
}

// readBefore reads, with brokers and a data dir, the segments of the
// partitions the offset files name before the brokers are asked: a leader
// serving less than they held then serves a stale high watermark.
func (r *refreshRun) readBefore() {
	s, o := r.s, r.o
	if o.WireErr != "" {
		s.servedLost = true
	}
	r.checkServed = s.ServedCheckInterval > 0 && s.Layout != nil && s.Layout.DataDir != "" && s.Client != nil && o.WireErr == "" &&
		(s.servedAt.IsZero() || o.Time.Sub(s.servedAt) >= s.ServedCheckInterval || s.servedLost || assignmentVersion(o.Assignment) != s.servedVersion)
	if !r.checkServed {
		r.before = s.twice
		return
	}
	lr, tps := volume.NewLogReader(*s.Layout), filePartitions(r.fileObs)
	lr.Prefetch(tps, 16)
	r.before = make(map[volume.TopicPartition]*volume.LogBounds, len(tps))
	r.beforeList = make([]volume.LogBounds, len(tps))
	s.twice = nil
	for i, tp := range tps {
		r.beforeList[i] = *lr.Get(tp.Topic, tp.Partition)
		b := &r.beforeList[i]
		r.before[tp] = b
		if b.Log != nil && b.Log.Overlap != nil {
			if s.twice == nil {
				s.twice = map[volume.TopicPartition]*volume.LogBounds{}
			}
			kept := *b // not a pointer into this refresh's list
			s.twice[tp] = &kept
		}
	}
}

// describe asks the brokers about the selection: O(brokers) requests.
func (r *refreshRun) describe(ctx context.Context) {
	s, o := r.s, r.o
	r.described = map[string]*wire.GroupDescription{}
	if s.Client != nil && o.WireErr == "" && len(r.groupNames) > 0 {
		r.askedAt = o.Time
		ds, err := s.Client.DescribeMany(ctx, r.groupNames, wire.DescribeOptions{Known: r.known})
		if err != nil && ds == nil {
			o.WireErr = err.Error()
		}
		coords := map[string]wire.Coordinator{}
		desc := map[string]wire.DescribedGroup{}
		for i := range ds {
			d := &ds[i]
			r.described[d.Group] = d
			co := wire.Coordinator{Key: d.Group, NodeID: d.Coordinator, Code: d.Code}
			if strings.HasPrefix(d.Err, "coordinator lookup: ") {
				co.Err = d.Err
			}
			coords[d.Group] = co
			desc[d.Group] = d.DescribedGroup
		}
		inspect.MergeLive(r.sel, &inspect.LiveAnswers{GatheredGroups: wire.NewGatheredGroups(r.listings, coords, desc), HasAssignment: o.Assignment != nil, Names: r.names})
	}
	if s.Layout != nil && s.Layout.DataDir != "" && s.Client == nil {
		// Offline, log ends come from the segment files, read afresh.
		r.logs = NewLogs(*s.Layout)
		r.logs.Prefetch(filePartitions(r.fileObs))
	}
}

// buildGroups turns each selected group into its observation through the
// read model's rules (inspect.BuildPartition), one group at a time in
// scratch buffers.
func (r *refreshRun) buildGroups() {
	o := r.o
	o.Groups = make([]GroupObs, len(r.sel))
	keep := r.s.keepPartitions()
	var b groupBuilder
	for i := range r.sel {
		g := &o.Groups[i]
		g.Row = r.sel[i]
		r.buildGroup(&b, i, g, keep)
	}
}

// finishServed records the partitions served behind their segments: this
// refresh's comparison (when it made one) merged with the ones still open,
// each kept until its cause is gone (the generation's StaleEndRule), not
// until a later served end happens to reach the segments' last batch.
func (r *refreshRun) finishServed() {
	s, o := r.s, r.o
	if o.WireErr != "" && !r.checkServed {
		o.ServedBehind = s.stale.current()
		return
	}
	var detected []inspect.ServedBehind
	if r.checkServed {
		detected = servedBehindOf(o.Groups, r.beforeList, o.Assignment)
		s.servedAt, s.servedVersion, s.servedLost = o.Time, assignmentVersion(o.Assignment), false
	}
	var rule volume.StaleEndRule
	if spec, ok := r.gen.Gen.Spec(); ok {
		rule = spec.Broker.StaleEnd
	}
	o.ServedBehind = s.stale.update(o.Time, detected, r.checkServed, s.stale.servedEnds(r.described), o.Assignment, rule)
}

// assignmentVersion is a's (controller epoch, version); zero without one.
func assignmentVersion(a *volume.Assignment) [2]int64 {
	if a == nil {
		return [2]int64{}
	}
	return [2]int64{a.ControllerEpoch, a.AssignmentVersion}
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
func (s *Source) keepPartitions() bool { return s.Partitions || s.LagSeconds && s.Client != nil }

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

// Gen is the kaas generation the refresh assumes: the layout's (detected
// or pinned; unknown without a volume).
func (s *Source) Gen() volume.Generation {
	if s.Layout == nil {
		return volume.GenUnknown
	}
	return s.Layout.WithGeneration().Gen.Gen
}

// Successful reports whether the refresh read what it was given: the
// volume's assignment.json (with a volume) and an answer from the brokers
// (with brokers).
func (o *Observation) Successful() bool {
	return (!o.HasVolume || o.Assignment != nil) && (!o.HasBrokers || o.WireErr == "")
}

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

// counts reports whether the record's file is one the brokers load (its
// dir is live, or the volume's dirs are undetermined: inspect.PickFile).
func (f *fileRec) counts() bool {
	return f.layout == volume.OffsetsCurrent || f.layout == volume.OffsetsUndetermined
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
// scan gives in that order) and keeps one a group: the one
// inspect.PickFile says the brokers load (the live dir's, else the first
// of an undetermined volume), else the first.
func (rs fileRecs) byGroup() fileRecs {
	cmp := func(a, b fileRec) int { return strings.Compare(a.group, b.group) }
	if !slices.IsSortedFunc(rs, cmp) {
		slices.SortStableFunc(rs, cmp)
	}
	w := 0
	for i := range rs {
		if w > 0 && rs[w-1].group == rs[i].group {
			if !rs[w-1].counts() && rs[i].layout == volume.OffsetsCurrent {
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
