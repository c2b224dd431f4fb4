package inspect

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// Offline lag labels: the log end from the segment files (what kaas itself
// recovers on restart), or, where they cannot be read, from manifest.json.
const (
	LagSourceSegments = "log end from the segment files (the last complete RecordBatch, as kaas recovers it on restart)"
	LagSourceManifest = "as of the partition manifest (manifest.json's highWatermark, which kaas rewrites only on takeover, segment roll and close: it trails the log)"
	LagSourceMixed    = "log end from the segment files; where they could not be read, from manifest.json (which trails the log): see each partition's logEndSource"
	LagSourceNone     = "log end unknown: no segment files and no manifest could be read"
)

// CoordinatorView is a group's coordinator resolution through both tiers.
type CoordinatorView struct {
	Coordinator     string `json:"coordinator"`
	Tier            string `json:"tier"`
	HashCoordinator string `json:"hashCoordinator"`
	HashPreferred   string `json:"hashPreferred"`
	HashSlot        int    `json:"hashSlot"`
	HashTier        string `json:"hashTier"`
	Brokers         int    `json:"brokers"`
	AliveBrokers    int    `json:"aliveBrokers"`
	ExplicitBroker  string `json:"explicitBroker"`
	// FNV is the group id's FNV-1a 32 hash in hex.
	FNV string `json:"fnv"`
}

// ResolveCoordinator resolves group against an assignment (nil → none).
func ResolveCoordinator(a *volume.Assignment, group string) CoordinatorView {
	h := grouphash.FNV1a32(group)
	v := CoordinatorView{Tier: string(grouphash.TierNone), HashTier: string(grouphash.TierNone), HashSlot: -1, FNV: fmt.Sprintf("0x%08x", h)}
	if a == nil {
		return v
	}
	rt := a.SharedRouter()
	res := rt.GroupHash(group, h)
	v.Coordinator = res.Coordinator
	v.Tier = string(res.Tier)
	v.HashCoordinator = res.Hash.Coordinator
	v.HashPreferred = res.Hash.Preferred
	v.HashSlot = res.Hash.Slot
	v.HashTier = string(res.Hash.Tier)
	v.Brokers = rt.Ring().Len()
	v.AliveBrokers = rt.Ring().AliveCount()
	if res.HasExplicit {
		v.ExplicitBroker = res.ExplicitBroker
	}
	return v
}

// PartitionOffset is one committed partition of a group with its offline lag.
type PartitionOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Committed int64  `json:"committed"`
	Metadata  string `json:"metadata"`
	// CommittedSource is where Committed came from ("file": the offset
	// file brokers load), CommittedAsOf when that file was last written
	// (RFC 3339, "" when unknown): kaas rewrites it on every commit.
	CommittedSource string `json:"committedSource"`
	CommittedAsOf   string `json:"committedAsOf"`
	// LogStartOffset, HighWatermark (the log end) and Lag are nil when
	// neither the segments nor the manifest could be read.
	LogStartOffset *int64 `json:"logStartOffset"`
	HighWatermark  *int64 `json:"highWatermark"`
	Lag            *int64 `json:"lag"`
	// LogEndSource is where HighWatermark came from ("segments", or
	// "manifest" when the segments could not be read), LogEndAsOf the
	// modification time of the file it was read from (RFC 3339, "" when
	// unknown).
	LogEndSource string `json:"logEndSource"`
	LogEndAsOf   string `json:"logEndAsOf"`
	// BeyondLogEnd: the committed offset is past the real log end; the
	// consumer's next fetch gets OFFSET_OUT_OF_RANGE and it resets per
	// auto.offset.reset.
	BeyondLogEnd bool `json:"beyondLogEnd"`
	// LagNote explains an unknown or odd lag, in words.
	LagNote string `json:"lagNote"`
	// BelowLogStart: the committed offset was deleted by retention; the next
	// fetch is out of range and the consumer resets per auto.offset.reset.
	BelowLogStart bool `json:"belowLogStart"`
	// ResumeRule says why the lag counts from Committed or is unknown (the
	// read model's rule: file, none, fileReadsEmpty, fileNotRead, ...);
	// Incidents are what is wrong with the partition, with evidence.
	ResumeRule string              `json:"resumeRule"`
	LagUnknown string              `json:"lagUnknown,omitempty"`
	Incidents  []PartitionIncident `json:"incidents"`
}

// TopicLag sums lag per topic (the per-topic rollup of a group).
type TopicLag struct {
	Topic      string `json:"topic"`
	Partitions int    `json:"partitions"`
	// Lag sums the partitions whose lag is known; MaxLag is the largest of
	// them; Unknown counts the others.
	Lag     int64 `json:"lag"`
	MaxLag  int64 `json:"maxLag"`
	Unknown int   `json:"unknown"`
}

// GroupDescription is 'groups describe' for one group.
type GroupDescription struct {
	Group       string          `json:"group"`
	Coordinator CoordinatorView `json:"coordinator"`
	Sources     []string        `json:"sources"`
	Issues      []string        `json:"issues"`
	// OffsetFile is the file whose offsets are shown (what brokers load);
	// Format its format.
	OffsetFile string   `json:"offsetFile"`
	Format     string   `json:"format"`
	OtherFiles []string `json:"otherFiles"`
	LagSource  string   `json:"lagSource"`
	// ManifestFallbacks counts partitions whose log end came from
	// manifest.json because the segments could not be read.
	ManifestFallbacks int               `json:"manifestFallbacks"`
	Partitions        []PartitionOffset `json:"partitions"`
	Topics            []TopicLag        `json:"topics"`
	// TotalLag sums every known partition lag; LagUnknown counts partitions
	// without one. LagKnown is false when no partition lag is known.
	TotalLag   int64            `json:"totalLag"`
	LagUnknown int              `json:"lagUnknown"`
	LagKnown   bool             `json:"lagKnown"`
	Findings   []volume.Finding `json:"findings"`
	// Incidents are the group's own (partitions of a committed topic left
	// without an offset).
	Incidents []PartitionIncident `json:"incidents"`
	Live      *GroupLive          `json:"live,omitempty"`
	// Summary is the group in one line (groups describe's summary section);
	// left out of a live description's file (the live summary says it).
	Summary *GroupSummary `json:"summary,omitempty"`
}

// GroupFileData is one parsed offset file of a group (or its failure).
type GroupFileData struct {
	Path     string
	Layout   string
	File     *volume.OffsetFile // nil when unreadable
	Err      *volume.FileError
	Findings []volume.Finding
	// Denied: kaasctl may not read the file (Err says so); not corrupt.
	Denied bool
	// ModTime is the file's modification time as read (zero: unknown):
	// kaas rewrites the file on every commit, so it dates the offsets.
	ModTime time.Time
}

// DescribeGroup is the offline description of a group: its offset files
// (current and legacy, either may be absent), the assignment (may be nil)
// and its state in the read model (observe.BuildState), whose partitions
// and lag it shows.
func DescribeGroup(group string, a *volume.Assignment, files []GroupFileData, gs *GroupState) GroupDescription {
	d := GroupDescription{Group: group, Coordinator: ResolveCoordinator(a, group), LagSource: LagSourceSegments}
	// Issues and sources come from the same analysis as groups list.
	var gfs []GroupFile
	for _, f := range files {
		it := volume.OffsetScanItem{Group: group, Path: f.Path, Layout: f.Layout, File: f.File, Err: f.Err, Findings: f.Findings, NameProblems: volume.NameProblems(group), Denied: f.Denied}
		gfs = append(gfs, SummarizeOffsetItem(&it))
		d.Findings = append(d.Findings, f.Findings...)
		if f.Denied {
			d.Findings = append(d.Findings, volume.Finding{Severity: volume.SevError, Code: volume.CodePermissionDenied, Path: f.Path, Message: f.Err.Problem, Fix: volume.FixPermissionDenied})
		} else if f.Err != nil {
			d.Findings = append(d.Findings, volume.Finding{Severity: volume.SevError, Code: volume.CodeOffsetsCorrupt, Path: f.Path, Message: f.Err.Problem,
				Fix: "kaas ignores this file without a log line and the next commit overwrites it with only the newly committed partitions; run 'kaasctl volume repair' to quarantine it"})
		}
	}
	var in GroupsInput
	if a != nil {
		in.Assignment = a.ForGroup(group) // rows for this group only
	}
	in.Files = gfs
	for _, r := range BuildGroupRows(in) {
		if r.Group == group {
			d.Sources, d.Issues = r.Sources, r.Issues
		}
	}
	shown := -1
	if i := PickFile(len(files), func(i int) string { return files[i].Layout }); i >= 0 {
		shown = i
	} else if len(files) > 0 {
		shown = 0
	}
	for i := range files {
		if i != shown {
			d.OtherFiles = append(d.OtherFiles, files[i].Path)
		}
	}
	if shown >= 0 {
		d.OffsetFile = files[shown].Path
		if files[shown].File != nil {
			d.Format = files[shown].File.Format
		}
	}
	if gs != nil {
		d.Incidents = gs.Incidents
		for i := range gs.Partitions {
			d.Partitions = append(d.Partitions, OfflinePartition(&gs.Partitions[i]))
		}
	}
	d.Recompute()
	return d
}

// CommittedFromFile is PartitionOffset.CommittedSource for an offset read
// from the group's offset file.
const CommittedFromFile = "file"

// OfflinePartition is a partition's state as offline describe shows it:
// the file's committed offset and the log bounds the segments gave.
func OfflinePartition(p *PartitionState) PartitionOffset {
	po := PartitionOffset{Topic: p.Topic, Partition: p.Partition, Committed: -1, Metadata: p.Metadata, Lag: p.LagPtr(), LagNote: p.Note(),
		ResumeRule: p.ResumeRule, LagUnknown: p.LagUnknown, Incidents: p.Incidents,
		BeyondLogEnd: p.Has(IncPastLogEnd), BelowLogStart: p.Has(IncBelowLogStart)}
	if has(p.File) {
		po.Committed, po.CommittedSource = p.File.Value, CommittedFromFile
		if !p.File.AsOf.IsZero() {
			po.CommittedAsOf = p.File.AsOf.UTC().Format(time.RFC3339Nano)
		}
	}
	if has(p.LogEnd) {
		end := p.LogEnd.Value
		ls := end
		if has(p.LogStart) {
			ls = p.LogStart.Value
		}
		po.LogStartOffset, po.HighWatermark, po.LogEndSource = &ls, &end, p.LogEnd.Source
		if !p.LogEnd.AsOf.IsZero() {
			po.LogEndAsOf = p.LogEnd.AsOf.UTC().Format(time.RFC3339Nano)
		}
	}
	if po.Incidents == nil {
		po.Incidents = []PartitionIncident{}
	}
	return po
}

// OfflineLagSource labels a set of offline lags by where their log ends
// came from (the partitions with a committed offset: the others have no
// lag to label).
func OfflineLagSource(ps []PartitionOffset) string {
	seg, man := 0, 0
	for _, p := range ps {
		if p.CommittedSource == "" {
			continue
		}
		switch p.LogEndSource {
		case volume.SourceSegments:
			seg++
		case volume.SourceManifest:
			man++
		}
	}
	switch {
	case man > 0 && seg > 0:
		return LagSourceMixed
	case man > 0:
		return LagSourceManifest
	case seg == 0:
		return LagSourceNone
	}
	return LagSourceSegments
}

// LagFilter selects by lag: ">N", ">=N", "<N", "<=N", "=N" (or "==N"),
// "!=N", a range "N..M" (inclusive), or a plain "N", which means ">=N"
// (lagging by at least N).
type LagFilter struct {
	Op string
	N  int64
	M  int64 // upper bound of a range
}

// ParseLagFilter parses a --lag expression; "" means no filter (nil).
func ParseLagFilter(s string) (*LagFilter, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if t == "" {
		return nil, nil
	}
	bad := fmt.Errorf("--lag %.40q: use >N, >=N, <N, <=N, =N, !=N, N..M or N (at least N), with N a whole number of messages", s)
	if len(t) > 64 {
		return nil, bad
	}
	if lo, hi, ok := strings.Cut(t, ".."); ok {
		n, err1 := strconv.ParseInt(lo, 10, 64)
		m, err2 := strconv.ParseInt(hi, 10, 64)
		if err1 != nil || err2 != nil || n < 0 || m < n {
			return nil, bad
		}
		return &LagFilter{Op: "..", N: n, M: m}, nil
	}
	op := ">="
	for _, o := range []string{">=", "<=", "!=", "==", ">", "<", "="} {
		if strings.HasPrefix(t, o) {
			op, t = o, t[len(o):]
			break
		}
	}
	if op == "==" {
		op = "="
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return nil, bad
	}
	return &LagFilter{Op: op, N: n}, nil
}

// Matches reports whether a known lag passes the filter.
func (f *LagFilter) Matches(lag int64) bool {
	if f == nil {
		return true
	}
	switch f.Op {
	case ">":
		return lag > f.N
	case ">=":
		return lag >= f.N
	case "<":
		return lag < f.N
	case "<=":
		return lag <= f.N
	case "!=":
		return lag != f.N
	case "..":
		return lag >= f.N && lag <= f.M
	}
	return lag == f.N
}

// Match reports whether a group's total lag passes; an unknown lag never does.
func (f *LagFilter) Match(d *GroupDescription) bool {
	if f == nil {
		return true
	}
	return d.LagKnown && f.Matches(d.TotalLag)
}

// SelectGroups picks group ids for describe: explicit names (kept in the
// order given, duplicates dropped), or every known group matching re when
// all is set or re is non-nil (the probe's canaries left out: IsCanary).
func SelectGroups(known []string, names []string, all bool, re *regexp.Regexp) []string {
	if !all && re == nil {
		var out []string
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out
	}
	var out []string
	for _, g := range known {
		if !IsCanary(g) && (re == nil || re.MatchString(g)) {
			out = append(out, g)
		}
	}
	return out
}
