package inspect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// LagSourceLive labels live lag figures.
const LagSourceLive = "live: log end offsets from ListOffsets on the partition leaders, committed offsets from OffsetFetch on the coordinator"

// LivePartition is one partition of a live description: the committed
// offset the coordinator answers, the one in the offset file, the log
// range, and the lag.
type LivePartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Committed is the coordinator's committed offset (-1: none).
	Committed int64 `json:"committed"`
	// FileCommitted is the offset file's (nil: no file or no entry).
	FileCommitted *int64 `json:"fileCommitted"`
	// Disagree: the file and the coordinator both have an offset and they
	// differ (an unflushed cache, a clobbered file, or a stale cache).
	Disagree bool   `json:"fileLiveDisagree"`
	LogStart int64  `json:"logStart"`
	LogEnd   int64  `json:"logEnd"`
	Lag      *int64 `json:"lag"`
	// LagFrom says which committed offset the lag is counted from: live
	// (the coordinator's memory: it holds the group) or file (the
	// coordinator does not hold the group, so a consumer that joins loads
	// the file); "" when none (nothing a consumer would get).
	LagFrom string `json:"lagFrom"`
	// SegmentsLogEnd is the log end the partition's segment files gave
	// when the volume was read, before the brokers were asked (nil: no
	// offset-file entry, no volume, or the segments could not be read).
	// ServedBehindLog: LogEnd, served after that, is below it, a stale
	// high watermark (consumers cannot fetch past it, and Lag reads low).
	SegmentsLogEnd  *int64 `json:"segmentsLogEnd"`
	ServedBehindLog bool   `json:"servedBehindLog"`
	Note            string `json:"note"`
	// ResumeRule says which committed offset a consumer resumes from and
	// why (the read model's rule); Incidents what is wrong, with evidence.
	ResumeRule string              `json:"resumeRule"`
	LagUnknown string              `json:"lagUnknown,omitempty"`
	Incidents  []PartitionIncident `json:"incidents"`
	Member     string              `json:"member"`
	ClientID   string              `json:"clientId"`
	Host       string              `json:"host"`
}

// LiveDescription is 'groups describe' with brokers.
type LiveDescription struct {
	Group string `json:"group"`
	// Forecast is the time to drain and the retention forecast, with
	// --drain-window (nil without).
	Forecast *GroupForecast `json:"forecast,omitempty"`
	Sources  []string       `json:"sources"`
	// Coordinator is computed from the volume (nil without one).
	Coordinator         *CoordinatorView `json:"coordinator,omitempty"`
	WireCoordinator     string           `json:"wireCoordinator"`
	WireCoordinatorAddr string           `json:"wireCoordinatorAddr"`
	// CoordinatorAgrees compares the two (nil without a volume).
	CoordinatorAgrees *bool           `json:"coordinatorAgrees,omitempty"`
	State             string          `json:"state"`
	ProtocolType      string          `json:"protocolType"`
	Protocol          string          `json:"protocol"`
	Members           []wire.Member   `json:"members"`
	Partitions        []LivePartition `json:"partitions"`
	Topics            []wire.TopicLag `json:"topics"`
	TotalLag          int64           `json:"totalLag"`
	LagUnknown        int             `json:"lagUnknown"`
	LagKnown          bool            `json:"lagKnown"`
	LagSource         string          `json:"lagSource"`
	OffsetsDisagree   int             `json:"offsetsDisagree"`
	Issues            []string        `json:"issues"`
	Errors            []string        `json:"errors"`
	// Notes are what a person should know about this group (the Kafka
	// tools' state line, disagreements): in the output, beside the group,
	// not one stderr line per group.
	Notes []string `json:"notes"`
	// Incidents are the group's own (partitions of a committed topic left
	// without an offset).
	Incidents []PartitionIncident `json:"incidents"`
	// File is the offline description (offset file, lag as of the
	// partition manifest); nil without a volume.
	File *GroupDescription `json:"file,omitempty"`
	// Summary is the group in one line (groups describe's summary section).
	Summary GroupSummary `json:"summary"`
	// Spread is the lag's spread over the partitions (nil without lag on
	// two partitions); Ownership who owns them (nil without members).
	Spread    *LagSpread `json:"lagSpread,omitempty"`
	Ownership *Ownership `json:"ownership,omitempty"`
}

// StateMessage is the Kafka tools' line for a group's state ("" when
// nothing needs saying).
func StateMessage(group, state string) string {
	switch state {
	case "Empty":
		return fmt.Sprintf("Consumer group '%s' has no active members.", group)
	case "Dead":
		return fmt.Sprintf("Consumer group '%s' does not exist.", group)
	case "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling":
		return fmt.Sprintf("Warning: Consumer group '%s' is rebalancing.", group)
	}
	return ""
}

// BuildLiveDescription joins the wire's description of a group with its
// offline description (file may be nil) and shows its live state in the
// read model (gs: observe.BuildState with the wire's answers).
func BuildLiveDescription(w wire.GroupDescription, file *GroupDescription, gs *GroupState, names *NodeNamer) LiveDescription {
	if names == nil {
		names = NewNodeNamer(nil)
	}
	d := LiveDescription{Group: w.Group, State: w.State, ProtocolType: w.ProtocolType, Protocol: w.Protocol,
		Members: w.Members, Partitions: []LivePartition{}, Topics: []wire.TopicLag{}, Issues: []string{}, Errors: []string{}, Notes: []string{},
		LagSource: LagSourceLive, WireCoordinatorAddr: w.CoordinatorAddr, Sources: []string{SourceLive}, Incidents: []PartitionIncident{}}
	if d.Members == nil {
		d.Members = []wire.Member{}
	}
	if w.Coordinator >= 0 {
		d.WireCoordinator = names.Name(w.Coordinator)
	}
	if w.Err != "" {
		d.Errors = append(d.Errors, "DescribeGroups: "+w.Err)
	}
	if w.Committed.Err != "" {
		d.Errors = append(d.Errors, "OffsetFetch: "+w.Committed.Err)
	}
	if file != nil {
		fc := *file
		fc.Summary = nil
		noNilSlices(&fc)
		file = &fc
		d.File = file
		cv := file.Coordinator
		d.Coordinator = &cv
		d.Sources = append(slices.Clone(file.Sources), SourceLive)
		d.Issues = append(d.Issues, file.Issues...)
		if w.Coordinator >= 0 {
			agree := SameBroker(cv.Coordinator, w.Coordinator)
			d.CoordinatorAgrees = &agree
			if !agree {
				addOnce(&d.Issues, IssueWireMismatch)
			}
		}
	}
	if gs != nil {
		d.Incidents = append(d.Incidents, gs.Incidents...)
		for i := range gs.Partitions {
			lp := LivePartitionOf(&gs.Partitions[i])
			if lp.ServedBehindLog {
				addOnce(&d.Issues, IssueServedBehindLog)
			}
			d.Partitions = append(d.Partitions, lp)
		}
	}
	sortIssues(d.Issues)
	d.Recompute()
	return d
}

// LivePartitionOf is a partition's state as live describe shows it: the
// coordinator's and the file's committed offsets, the served bounds, and
// the lag from the offset a consumer resumes from.
func LivePartitionOf(p *PartitionState) LivePartition {
	lp := LivePartition{Topic: p.Topic, Partition: p.Partition, Committed: -1, LogStart: -1, LogEnd: -1, Lag: p.LagPtr(),
		Member: p.Member, ClientID: p.ClientID, Host: p.Host, ResumeRule: p.ResumeRule, LagUnknown: p.LagUnknown, Incidents: p.Incidents,
		Disagree: p.Has(IncDisagree), ServedBehindLog: p.Has(IncServedBehind), Note: p.Note()}
	if lp.Incidents == nil {
		lp.Incidents = []PartitionIncident{}
	}
	if has(p.Coordinator) {
		lp.Committed = p.Coordinator.Value
	}
	if has(p.File) {
		v := p.File.Value
		lp.FileCommitted = &v
	}
	if p.LogEnd.Source == volume.SourceWire {
		lp.LogEnd = p.LogEnd.Value
		if has(p.LogStart) {
			lp.LogStart = p.LogStart.Value
		}
	}
	if p.SegmentsEnd.Source == volume.SourceSegments {
		v := p.SegmentsEnd.Value
		lp.SegmentsLogEnd = &v
	}
	switch p.ResumeRule {
	case ResumeHeld, ResumeCoordinator, ResumeCacheKept:
		lp.LagFrom = "live"
	case ResumeJoinLoads, ResumeFile:
		lp.LagFrom = "file"
	}
	return lp
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "" || strings.Contains(a, b):
		return a
	}
	return a + "; " + b
}

// MatchTotal applies a --lag filter to a total lag; an unknown lag never
// matches.
func (f *LagFilter) MatchTotal(known bool, total int64) bool {
	if f == nil {
		return true
	}
	return known && f.Matches(total)
}

// noNilSlices makes every list of an offline description non-nil, so
// machine output needs no rewriting pass (10,000 groups in one document).
func noNilSlices(d *GroupDescription) {
	if d.Sources == nil {
		d.Sources = []string{}
	}
	if d.Issues == nil {
		d.Issues = []string{}
	}
	if d.OtherFiles == nil {
		d.OtherFiles = []string{}
	}
	if d.Partitions == nil {
		d.Partitions = []PartitionOffset{}
	}
	if d.Topics == nil {
		d.Topics = []TopicLag{}
	}
	if d.Findings == nil {
		d.Findings = []volume.Finding{}
	}
}
