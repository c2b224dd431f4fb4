package inspect

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// The read model's partition: what every source says of one partition of a
// group, and what follows from it under kaas's rules for the generation —
// the committed offset a consumer resumes from, the log bounds consumers
// see, the lag and the incidents. BuildPartition is the only code that
// derives them; observe gathers the facts, every surface prints the state.
// Each rule is one function here: ResumeOffset (which committed offset
// counts), PartitionLag (the lag), partitionIncidents (what is wrong).

// SourceCoordinator is a committed offset answered by the group's
// coordinator (OffsetFetch: its memory, not its file).
const SourceCoordinator = "coordinator"

// FileReading is how the offset file that counts reads to the brokers.
type FileReading string

const (
	// FileAbsent: no offset file (or no volume).
	FileAbsent FileReading = "absent"
	// FileOffsets: the brokers read the offsets it holds.
	FileOffsets FileReading = "offsets"
	// FileReadsEmpty: a plain-map file on a generation that reads it as
	// empty (0.2.18): a load leaves the group with no offsets.
	FileReadsEmpty FileReading = "readsEmpty"
	// FileUnusable: kaas cannot decode it (corrupt) or kaasctl may not
	// read it: a load is ignored and leaves the coordinator's memory as it
	// was.
	FileUnusable FileReading = "unusable"
	// FilePlainMapUndetermined: a plain map on a volume whose generation
	// cannot tell whether the brokers read it as offsets or as empty.
	FilePlainMapUndetermined FileReading = "plainMapUndetermined"
	// FileNotRead: the group's only file is in an offsets dir the
	// generation's brokers do not read (legacy on 0.2.18, notRead on Go,
	// preMigration on 0.2.16–0.2.17).
	FileNotRead FileReading = "notRead"
)

// Held says whether the group's coordinator holds the group in memory
// (listed by its ListGroups, or with members): a consumer's OffsetFetch is
// then answered from that memory; otherwise the next JoinGroup loads the
// offset file first.
type Held int

const (
	HeldUnknown Held = iota
	HeldYes
	HeldNo
)

// GroupFacts are what decide, for every partition of a group, which
// committed offset a consumer resumes from.
type GroupFacts struct {
	Gen volume.GenerationInfo
	// Volume: a volume was read (the file's reading is known).
	Volume bool
	File   FileReading
	// Asked: the brokers were asked (Coordinator facts are answers).
	Asked bool
	Held  Held
}

// ServedBounds are the log start and end a partition's leader served
// (ListOffsets), as of AsOf.
type ServedBounds struct {
	Start, End int64
	Err        string
	AsOf       time.Time
}

// PartitionFacts are what the sources say of one partition of a group.
type PartitionFacts struct {
	Topic     string
	Partition int32
	// File is the committed offset in the offset file that counts (nil:
	// no entry there); Metadata its commit metadata.
	File     *volume.Fact
	Metadata string
	// Coordinator is the coordinator's committed offset (nil: none, or
	// not asked); CoordinatorErr its per-partition OffsetFetch error.
	Coordinator    *volume.Fact
	CoordinatorErr string
	// Served are the bounds the leader served (nil: not asked or not
	// answered for this partition).
	Served *ServedBounds
	// Segments are the bounds the volume gave (the segment files, the
	// manifest as a named fallback), read before the brokers were asked
	// (nil: not read).
	Segments *volume.LogBounds
	// Member, ClientID and Host: the member assigned the partition.
	Member, ClientID, Host string
}

// Resume rules: why a partition's Resume is what it is.
const (
	// ResumeFile: no broker was asked; the file is what a coordinator
	// loads when a consumer joins (a coordinator's memory may differ).
	ResumeFile = "file"
	// ResumeHeld: the coordinator holds the group: OffsetFetch answers
	// from its memory.
	ResumeHeld = "coordinatorHolds"
	// ResumeJoinLoads: the coordinator does not hold the group: the next
	// JoinGroup loads the offset file into its memory first.
	ResumeJoinLoads = "joinLoadsFile"
	// ResumeCacheKept: the coordinator does not hold the group and the
	// file is absent or unusable: a load keeps the coordinator's memory
	// as it was.
	ResumeCacheKept = "cacheKept"
	// ResumeCoordinator: no volume: the coordinator's answer is all there is.
	ResumeCoordinator = "coordinator"
	// ResumeNone: nothing committed that a consumer would get: it starts
	// per auto.offset.reset.
	ResumeNone = "none"
	// ResumeReadsEmpty: the file holds the offset but the brokers read it
	// as empty (a plain map on 0.2.18): the consumer starts per
	// auto.offset.reset.
	ResumeReadsEmpty = "fileReadsEmpty"
	// ResumeUndetermined: the generation cannot tell what the brokers
	// make of the file (a plain map on an undetermined volume).
	ResumeUndetermined = "undetermined"
	// ResumeUnusable: offline, the file is unusable: what the consumer
	// gets is in some coordinator's memory, unknown here.
	ResumeUnusable = "fileUnusable"
	// ResumeNotRead: the offsets are only in a dir the brokers do not
	// read: the consumer starts per auto.offset.reset.
	ResumeNotRead = "fileNotRead"
)

// ResumeOffset is the committed offset a consumer of the group resumes
// from on this partition (nil: none, it starts per auto.offset.reset, or
// unknown: see the rule), and the rule that decided it. kaas loads a
// group's offset file only when a JoinGroup creates the group on its
// coordinator (both generations); the load replaces the coordinator's
// memory with the file, and a missing or undecodable file leaves that
// memory as it was. OffsetFetch reads the memory only.
func ResumeOffset(g GroupFacts, file, coord *volume.Fact) (*volume.Fact, string) {
	file, coord = committedOrNil(file), committedOrNil(coord)
	if !g.Asked {
		return resumeOffline(g, file)
	}
	if !g.Volume {
		if coord == nil {
			return nil, ResumeNone
		}
		return coord, ResumeCoordinator
	}
	if g.Held == HeldYes {
		if coord == nil {
			return nil, ResumeNone
		}
		return coord, ResumeHeld
	}
	switch g.File {
	case FileOffsets:
		if file == nil {
			return nil, ResumeNone
		}
		return file, ResumeJoinLoads
	case FileReadsEmpty:
		return nil, ResumeReadsEmpty
	case FilePlainMapUndetermined:
		return nil, ResumeUndetermined
	}
	if coord == nil {
		if g.File == FileNotRead && file != nil {
			return nil, ResumeNotRead
		}
		return nil, ResumeNone
	}
	return coord, ResumeCacheKept
}

func resumeOffline(g GroupFacts, file *volume.Fact) (*volume.Fact, string) {
	switch g.File {
	case FileOffsets:
		if file == nil {
			return nil, ResumeNone
		}
		return file, ResumeFile
	case FileReadsEmpty:
		return nil, ResumeReadsEmpty
	case FilePlainMapUndetermined:
		return nil, ResumeUndetermined
	case FileUnusable:
		return nil, ResumeUnusable
	case FileNotRead:
		if file != nil {
			return nil, ResumeNotRead
		}
	}
	return nil, ResumeNone
}

// committedOrNil drops a "no offset" value (negative: -1 on the wire).
func committedOrNil(f *volume.Fact) *volume.Fact {
	if f == nil || f.Value < 0 {
		return nil
	}
	return f
}

// Why a partition's lag is unknown (PartitionState.LagUnknown).
const (
	LagUnknownNoCommit      = "noCommit"
	LagUnknownNoLogEnd      = "noLogEnd"
	LagUnknownAheadManifest = "aheadOfManifest"
	LagUnknownUndetermined  = "undetermined"
	LagUnknownUnusableFile  = "unusableFile"
)

// PartitionLag is the lag from committed (the offset a consumer resumes
// from) to the log end: end − committed, 0 when the commit is past a
// verified end; unknown ("" lag, a reason) without a commit or an end, and
// when the commit is past a manifest's end (it trails the log). past says
// the commit is beyond a verified end.
func PartitionLag(committed, end *volume.Fact) (lag int64, unknown string, past bool) {
	switch {
	case committed == nil:
		return 0, LagUnknownNoCommit, false
	case end == nil:
		return 0, LagUnknownNoLogEnd, false
	case committed.Value > end.Value && end.Source == volume.SourceManifest:
		return 0, LagUnknownAheadManifest, false
	case committed.Value > end.Value:
		return 0, "", true
	}
	return end.Value - committed.Value, "", false
}

// Partition incident codes: facts about a partition that stay reported
// while they hold (observe's tracker keeps the served-behind one until its
// cause is gone).
const (
	// IncServedBehind: the leader serves a log end below what the segments
	// held when they were read before it was asked (a stale high watermark).
	IncServedBehind = "servedBehindLog"
	// IncPastServedEnd: the committed offset is beyond the log end the
	// leader serves.
	IncPastServedEnd = "committedPastServedEnd"
	// IncPastLogEnd: the committed offset is beyond the segments' log end
	// (offline).
	IncPastLogEnd = "committedPastLogEnd"
	// IncBelowLogStart: the committed offset is below the log start:
	// retention deleted the records.
	IncBelowLogStart = "committedBelowLogStart"
	// IncWrittenTwice: the active segment holds an offset range twice (a
	// leader appended at a stale end over records already written).
	IncWrittenTwice = "logWrittenTwice"
	// IncDisagree: the offset file and the coordinator both hold an
	// offset and they differ.
	IncDisagree = "fileCoordinatorDisagree"
	// IncNotInFile: the coordinator serves an offset the file lacks (lost
	// when the coordinator restarts).
	IncNotInFile = "servedNotFiled"
	// IncReadsEmpty: the file holds an offset the brokers read as empty.
	IncReadsEmpty = "fileReadsEmpty"
)

// PartitionIncident is one incident of a partition, with its evidence.
type PartitionIncident struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// PartitionState is one partition of a group in the read model. Offsets
// are held by value (a Fact with no Source is absent), so building the
// state of 100,000 groups allocates nothing but its incidents.
type PartitionState struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// File and Coordinator are the committed offsets each source holds;
	// Metadata the file's commit metadata.
	File        volume.Fact `json:"file"`
	Coordinator volume.Fact `json:"coordinator"`
	Metadata    string      `json:"metadata"`
	// Resume is the committed offset a consumer resumes from (absent: none
	// or unknown), ResumeRule why (Resume* codes).
	Resume     volume.Fact `json:"resume"`
	ResumeRule string      `json:"resumeRule"`
	// LogStart and LogEnd are what consumers see: served by the leader
	// when it was asked, else the segments' (the manifest as a named
	// fallback). SegmentsEnd is what the segments held when read (the
	// evidence a served end is checked against).
	LogStart    volume.Fact `json:"logStart"`
	LogEnd      volume.Fact `json:"logEnd"`
	SegmentsEnd volume.Fact `json:"segmentsEnd"`
	// Lag is LogEnd − Resume when LagKnown; LagUnknown says why not.
	Lag        int64               `json:"lag"`
	LagKnown   bool                `json:"lagKnown"`
	LagUnknown string              `json:"lagUnknown,omitempty"`
	Incidents  []PartitionIncident `json:"incidents,omitempty"`
	// Member, ClientID and Host: the member assigned the partition;
	// CoordinatorErr the coordinator's OffsetFetch error for it.
	Member, ClientID, Host string `json:"-"`
	CoordinatorErr         string `json:"coordinatorError,omitempty"`
	// facts are kept for the wording (Note).
	segments *volume.LogBounds
	served   *ServedBounds
	gen      *volume.GenerationInfo
}

// Has reports whether the partition has the incident code.
func (p *PartitionState) Has(code string) bool {
	for _, in := range p.Incidents {
		if in.Code == code {
			return true
		}
	}
	return false
}

// LagPtr is the lag as a pointer (nil: unknown), as views print it.
func (p *PartitionState) LagPtr() *int64 {
	if !p.LagKnown {
		return nil
	}
	v := p.Lag
	return &v
}

// LagUnobservable reports whether the partition's lag is unknown although
// it has a committed offset and a source of log ends was there to ask:
// its leader did not answer for it, or its dir is on the volume and its
// segments (and manifest) could not be read. A partition with no dir on
// this data dir (a deleted topic, another pool dir) has nothing to
// observe and is not.
func (p *PartitionState) LagUnobservable() bool {
	if p.LagKnown || !has(p.Resume) {
		return false
	}
	if p.LagUnknown == LagUnknownAheadManifest {
		return true
	}
	if p.LagUnknown != LagUnknownNoLogEnd {
		return false
	}
	if s := p.served; s != nil && s.Err != "" {
		return true
	}
	b := p.segments
	return b != nil && b.Unknown != "" && b.PartitionDirExists()
}

// Segments are the volume's bounds BuildPartition was given (nil: none).
func (p *PartitionState) Segments() *volume.LogBounds { return p.segments }

// has reports whether f holds a value.
func has(f volume.Fact) bool { return f.Source != "" }

// factOrNil is f as a pointer (nil when absent).
func factOrNil(f volume.Fact) *volume.Fact {
	if !has(f) {
		return nil
	}
	return &f
}

// BuildPartition derives one partition's state from its facts.
func BuildPartition(g *GroupFacts, f *PartitionFacts) PartitionState {
	p := PartitionState{Topic: f.Topic, Partition: f.Partition, Metadata: f.Metadata, CoordinatorErr: f.CoordinatorErr,
		Member: f.Member, ClientID: f.ClientID, Host: f.Host, segments: f.Segments, served: f.Served, gen: &g.Gen}
	if c := committedOrNil(f.File); c != nil {
		p.File = *c
	}
	if c := committedOrNil(f.Coordinator); c != nil {
		p.Coordinator = *c
	}
	if r, rule := ResumeOffset(*g, f.File, f.Coordinator); r != nil {
		p.Resume, p.ResumeRule = *r, rule
	} else {
		p.ResumeRule = rule
	}
	p.LogStart, p.LogEnd = chosenBounds(f)
	if b := f.Segments; b != nil && b.End != nil {
		p.SegmentsEnd = *b.End
		if held, ok := HeldEnd(b); ok {
			p.SegmentsEnd.Value = held
		}
	}
	lag, unknown, past := PartitionLag(factOrNil(p.Resume), factOrNil(p.LogEnd))
	switch {
	case unknown == LagUnknownNoCommit && p.ResumeRule == ResumeUndetermined:
		unknown = LagUnknownUndetermined
	case unknown == LagUnknownNoCommit && p.ResumeRule == ResumeUnusable:
		unknown = LagUnknownUnusableFile
	}
	p.Lag, p.LagKnown, p.LagUnknown = lag, unknown == "", unknown
	partitionIncidents(&p, g, f, past)
	return p
}

// chosenBounds are the bounds consumers see: the served ones when the
// leader answered, else the segments'.
func chosenBounds(f *PartitionFacts) (start, end volume.Fact) {
	if s := f.Served; s != nil && s.Err == "" && s.End >= 0 {
		end = volume.Fact{Value: s.End, Source: volume.SourceWire, AsOf: s.AsOf}
		if s.Start >= 0 {
			start = volume.Fact{Value: s.Start, Source: volume.SourceWire, AsOf: s.AsOf}
		}
		return start, end
	}
	if b := f.Segments; b != nil && b.End != nil {
		if b.Start != nil {
			start = *b.Start
		}
		return start, *b.End
	}
	return start, end
}

// partitionIncidents adds what is wrong with the partition.
func partitionIncidents(p *PartitionState, g *GroupFacts, f *PartitionFacts, past bool) {
	add := func(code, detail string) {
		p.Incidents = append(p.Incidents, PartitionIncident{Code: code, Detail: detail})
	}
	served := p.LogEnd.Source == volume.SourceWire
	if served && f.Segments != nil && servedBehind(p.LogEnd.Value, f.Segments) {
		add(IncServedBehind, ServedBehindLog(p.LogEnd.Value, f.Segments, g.Gen))
	}
	if ov := writtenTwice(f.Segments); ov != nil {
		add(IncWrittenTwice, ov.Describe())
	}
	if past {
		code := IncPastLogEnd
		if served {
			code = IncPastServedEnd
		}
		add(code, pastEndDetail(p, g, served))
	}
	if has(p.Resume) && has(p.LogStart) && p.Resume.Value < p.LogStart.Value {
		add(IncBelowLogStart, fmt.Sprintf("committed %d is below log start %d: those records were deleted; the next fetch is out of range and the consumer resets per auto.offset.reset", p.Resume.Value, p.LogStart.Value))
	}
	switch {
	case has(p.File) && has(p.Coordinator) && p.File.Value != p.Coordinator.Value:
		add(IncDisagree, fmt.Sprintf("file says %d, coordinator says %d", p.File.Value, p.Coordinator.Value))
	case !has(p.File) && has(p.Coordinator) && g.Volume && g.File == FileOffsets:
		add(IncNotInFile, fmt.Sprintf("the coordinator serves %d from its memory but the offset file has no offset for this partition: it is lost when the coordinator restarts or the group moves", p.Coordinator.Value))
	}
	if has(p.File) && g.File == FileReadsEmpty {
		add(IncReadsEmpty, fmt.Sprintf("the offset file holds %d but is a plain map, which the brokers read as empty (%s): a consumer that joins starts per auto.offset.reset", p.File.Value, g.Gen.Assumes()))
	}
}

// pastEndDetail words a committed offset beyond the log end: after a
// takeover at a stale end (the segments say so) it is that incident, not a
// recreated topic.
func pastEndDetail(p *PartitionState, g *GroupFacts, served bool) string {
	what := "the segments' log end"
	if served {
		what = "the log end its leader serves"
	}
	base := fmt.Sprintf("committed %d is beyond %s %d: the consumer's next fetch gets nothing (OFFSET_OUT_OF_RANGE, then auto.offset.reset) and the lag reads 0", p.Resume.Value, what, p.LogEnd.Value)
	seg := p.segments
	switch pastEndCause(p, served) {
	case PastEndServedBehind:
		held, _ := HeldEnd(seg)
		return base + fmt.Sprintf("; the segments %s: the leader serves a stale high watermark (%s)", heldWords(seg, held), g.Gen.Assumes())
	case PastEndWrittenTwice:
		ov := writtenTwice(seg)
		return base + fmt.Sprintf("; the segments hold an offset range twice (%s): a leader took the partition over at a stale end and appended there, so records from %d on were written again (%s)",
			ov.Describe(), ov.From, g.Gen.Assumes())
	}
	return base + "; nothing on the volume shows a stale takeover: the topic may have been deleted and recreated (kaas keys offsets by topic name) or truncated"
}

// Why a committed offset is past the log end (PastEndCause).
const (
	// PastEndServedBehind: the leader serves an end below the segments':
	// a stale high watermark, the records are there.
	PastEndServedBehind = "servedBehind"
	// PastEndWrittenTwice: the segments hold an offset range twice: a
	// leader took the partition over at a stale end and appended there.
	PastEndWrittenTwice = "writtenTwice"
	// PastEndUnexplained: nothing on the volume shows a stale takeover
	// (the topic may have been deleted and recreated, or truncated).
	PastEndUnexplained = "unexplained"
)

// PastEndCause says why the partition's committed offset is past its log
// end ("" when it is not): the one rule that tells the stale-takeover
// incidents from an end the volume does not explain.
func PastEndCause(p *PartitionState) string {
	if !p.Has(IncPastLogEnd) && !p.Has(IncPastServedEnd) {
		return ""
	}
	return pastEndCause(p, p.LogEnd.Source == volume.SourceWire)
}

func pastEndCause(p *PartitionState, served bool) string {
	seg := p.segments
	switch {
	case served && seg != nil && servedBehind(p.LogEnd.Value, seg):
		return PastEndServedBehind
	case writtenTwice(seg) != nil:
		return PastEndWrittenTwice
	}
	return PastEndUnexplained
}

// writtenTwice is the overlap the segment reader found (nil: none).
func writtenTwice(b *volume.LogBounds) *volume.Overlap {
	if b == nil || b.Log == nil {
		return nil
	}
	return b.Log.Overlap
}

// Note words the partition's state for people: why its lag is unknown or
// odd, where the offset it counts from comes from, and its incidents.
func (p *PartitionState) Note() string {
	var note string
	if p.CoordinatorErr != "" {
		note = "OffsetFetch: " + p.CoordinatorErr
	}
	seg := p.segments
	fallback := ""
	if seg != nil {
		fallback = seg.Fallback
	}
	switch p.LagUnknown {
	case LagUnknownNoCommit:
		why := "no committed offset: the consumer starts per auto.offset.reset"
		switch p.ResumeRule {
		case ResumeReadsEmpty:
			why = "" // the fileReadsEmpty incident says it, with the offset
		case ResumeNotRead:
			why = fmt.Sprintf("the offset is only in a file the brokers do not read (%s): the consumer starts per auto.offset.reset", p.gen.Assumes())
		}
		note = joinNote(note, why)
	case LagUnknownUndetermined:
		note = joinNote(note, "lag unknown: the offset file is a plain map and the volume's kaas generation is undetermined (0.2.18 reads it as empty, older ones as offsets); pin --kaas-version")
	case LagUnknownUnusableFile:
		note = joinNote(note, "lag unknown: kaas cannot use the offset file; what a consumer gets is in its coordinator's memory")
	case LagUnknownNoLogEnd:
		note = joinNote(note, "lag unknown: "+logEndUnknown(p.served, seg))
	case LagUnknownAheadManifest:
		note = joinNote(note, fmt.Sprintf("committed %d is ahead of the manifest's highWatermark %d (the segment files could not be read: %s), which trails the log: lag unknown", p.Resume.Value, p.LogEnd.Value, fallback))
	}
	if p.LogEnd.Source == volume.SourceManifest && p.LagKnown {
		note = joinNote(note, "log end from the manifest's highWatermark (the segment files could not be read: "+fallback+"): the manifest trails the log, so the real lag is likely larger")
	}
	switch p.ResumeRule {
	case ResumeJoinLoads:
		if !has(p.Coordinator) || p.Coordinator.Value != p.Resume.Value {
			note = joinNote(note, "the coordinator does not hold the group: a consumer that joins resumes from the offset file")
		}
	case ResumeCacheKept:
		note = joinNote(note, "the coordinator does not hold the group and the offset file cannot be used: a consumer resumes from the coordinator's memory")
	}
	for _, in := range p.Incidents {
		if in.Code == IncServedBehind {
			short := p.SegmentsEnd.Value - p.LogEnd.Value
			note = joinNote(note, fmt.Sprintf("served log end %d is %s behind the segments' %d (read before asking): a stale high watermark, consumers cannot fetch past it and the lag reads %d low",
				p.LogEnd.Value, render.Plural(int(short), "record", "records"), p.SegmentsEnd.Value, short))
			continue
		}
		note = joinNote(note, in.Detail)
	}
	return note
}

func logEndUnknown(served *ServedBounds, seg *volume.LogBounds) string {
	switch {
	case served != nil && served.Err != "":
		return "ListOffsets: " + served.Err
	case seg != nil && seg.Unknown != "":
		return seg.Unknown
	case seg == nil && served == nil:
		return "no log end: the data dir is unknown (pass --data-dir) and no broker was asked"
	}
	return "no log end"
}

// PickFile is which of a group's offset files the brokers load, among its
// files in scan order (the volume's offsets dirs with the live one first;
// when the generation is undetermined, the newest generation's live dir
// first): the live dir's file, else, when the dirs' roles are
// undetermined, the first one. A file in a dir the generation does not
// read (legacy, notRead, preMigration) never counts. -1 when none counts.
// It is the one rule every surface uses for "which offset file".
func PickFile(n int, role func(i int) string) int {
	first := -1
	for i := range n {
		switch role(i) {
		case volume.OffsetsCurrent:
			return i
		case volume.OffsetsUndetermined:
			if first < 0 {
				first = i
			}
		}
	}
	return first
}

// ReadingOf is how a parsed offset file reads to the brokers of the
// volume's generation (file nil: unusable when err, else absent).
func ReadingOf(file *volume.OffsetFile, unusable bool, gi volume.GenerationInfo) FileReading {
	switch {
	case unusable:
		return FileUnusable
	case file == nil:
		return FileAbsent
	}
	return ReadingOfFormat(file.Format, gi)
}

// ReadingOfFormat is ReadingOf for a file known by its format alone.
func ReadingOfFormat(format string, gi volume.GenerationInfo) FileReading {
	if format != volume.FormatPlainMap {
		return FileOffsets
	}
	isOffsets, known := gi.PlainMapVerdict()
	switch {
	case !known:
		return FilePlainMapUndetermined
	case !isOffsets:
		return FileReadsEmpty
	}
	return FileOffsets
}

// Group incident codes.
const (
	// IncUncommittedPartitions: partitions of a topic the group commits
	// on have no committed offset a consumer would get (a coordinator that
	// had not loaded the group wrote a partial commit over its file, or an
	// OffsetDelete): a consumer re-reads them per auto.offset.reset.
	IncUncommittedPartitions = "uncommittedPartitions"
)

// GroupState is one group in the read model: its partitions and what
// their totals leave out.
type GroupState struct {
	Group string     `json:"group"`
	Facts GroupFacts `json:"-"`
	// Partitions, sorted by topic then partition.
	Partitions []PartitionState    `json:"partitions"`
	Totals     LagTotals           `json:"totals"`
	Incidents  []PartitionIncident `json:"incidents,omitempty"`
}

// LagTotals are a set of partitions' lags summed: Lag over the Known ones,
// Unknown the others (every total says what it leaves out).
type LagTotals struct {
	Lag     int64 `json:"lag"`
	MaxLag  int64 `json:"maxLag"`
	Known   int   `json:"known"`
	Unknown int   `json:"unknown"`
}

// LagKnown reports whether any partition's lag is known.
func (t LagTotals) LagKnown() bool { return t.Known > 0 }

// Add counts one partition's lag (known false: unknown).
func (t *LagTotals) Add(lag int64, known bool) {
	if !known {
		t.Unknown++
		return
	}
	t.Known++
	t.Lag += lag
	t.MaxLag = max(t.MaxLag, lag)
}

// SumLag is the totals of ps (the one rollup rule: groups, topics and
// the exporter's series all sum this way).
func SumLag(ps []PartitionState) LagTotals {
	var t LagTotals
	for i := range ps {
		t.Add(ps[i].Lag, ps[i].LagKnown)
	}
	return t
}

// BuildGroup derives a group's state from its facts; parts must be sorted
// by topic then partition and hold each partition once (observe lists
// every partition of a topic the group commits on, so one left without an
// offset shows). into is reused for the partitions.
func BuildGroup(group string, g GroupFacts, parts []PartitionFacts, into []PartitionState) GroupState {
	gs := GroupState{Group: group, Facts: g, Partitions: into[:0]}
	for i := range parts {
		gs.Partitions = append(gs.Partitions, BuildPartition(&gs.Facts, &parts[i]))
	}
	if in := uncommittedIncident(gs.Partitions); in != nil {
		gs.Incidents = append(gs.Incidents, *in)
	}
	gs.Totals = SumLag(gs.Partitions)
	return gs
}

// uncommittedIncident names the partitions without an offset a consumer
// would get on topics where other partitions have one (nil: none).
func uncommittedIncident(ps []PartitionState) *PartitionIncident {
	var missing []string
	for i := 0; i < len(ps); {
		j, committed := i, false
		for ; j < len(ps) && ps[j].Topic == ps[i].Topic; j++ {
			committed = committed || has(ps[j].Resume)
		}
		if committed {
			for k := i; k < j; k++ {
				// An empty log (or one whose bounds are unknown) loses
				// nothing without a commit: a consumer starts where it is.
				p := &ps[k]
				empty := !has(p.LogEnd) || !has(p.LogStart) || p.LogEnd.Value <= p.LogStart.Value
				if !has(p.Resume) && p.ResumeRule == ResumeNone && !empty {
					missing = append(missing, ps[k].Topic+"/"+strconv.Itoa(int(ps[k].Partition)))
				}
			}
		}
		i = j
	}
	if len(missing) == 0 {
		return nil
	}
	return &PartitionIncident{Code: IncUncommittedPartitions, Detail: fmt.Sprintf("%s with records, of topics the group commits on, %s no committed offset a consumer would get (%s): a consumer starts %s per auto.offset.reset; if the group consumed them before, their offsets were lost (a coordinator that had not loaded the group wrote a partial commit over its file, or an offset was deleted)",
		render.Plural(len(missing), "partition", "partitions"), pluralWord(len(missing), "has", "have"), shortList(missing, 6), pluralWord(len(missing), "it", "them"))}
}

// shortList is the first n items joined, with how many more.
func shortList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// ShortNote is a partition's note for a table cell, from the read model's
// codes (resume rule, why the lag is unknown, incidents, where the log end
// came from); "" when nothing needs saying.
func ShortNote(rule, unknown string, incidents []PartitionIncident, endSource string) string {
	for _, code := range []string{IncServedBehind, IncWrittenTwice, IncPastServedEnd, IncPastLogEnd, IncBelowLogStart, IncReadsEmpty, IncNotInFile, IncDisagree} {
		for _, in := range incidents {
			if in.Code == code {
				return shortIncident[code]
			}
		}
	}
	switch {
	case rule == ResumeNotRead:
		return "offset in a file the brokers do not read: consumer will reset"
	case unknown == LagUnknownNoCommit:
		return "no committed offset"
	case unknown == LagUnknownAheadManifest:
		return "ahead of manifest.json (segments unreadable): lag unknown"
	case unknown == LagUnknownUndetermined:
		return "plain map, generation undetermined: lag unknown"
	case unknown == LagUnknownUnusableFile:
		return "offset file unusable: lag unknown"
	case unknown == "" && endSource == volume.SourceManifest:
		return "log end from manifest.json (segments unreadable)"
	}
	return ""
}

var shortIncident = map[string]string{
	IncServedBehind:  "served behind its segments: stale high watermark",
	IncWrittenTwice:  "log written twice after a stale takeover",
	IncPastServedEnd: "beyond the served log end",
	IncPastLogEnd:    "beyond the log end: OFFSET_OUT_OF_RANGE",
	IncBelowLogStart: "below log start: consumer will reset",
	IncReadsEmpty:    "plain map read as EMPTY: consumer will reset",
	IncNotInFile:     "served from memory, not in the file",
	IncDisagree:      "file and coordinator disagree",
}
