package inspect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
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
	// LagFrom says which committed offset the lag is counted from: live,
	// file (the coordinator has none loaded), or logStart (nothing committed).
	LagFrom string `json:"lagFrom"`
	// SegmentsLogEnd is the log end the partition's segment files gave
	// when the volume was read, before the brokers were asked (nil: no
	// offset-file entry, no volume, or the segments could not be read).
	// ServedBehindLog: LogEnd, served after that, is below it, a stale
	// high watermark (consumers cannot fetch past it, and Lag reads low).
	SegmentsLogEnd  *int64 `json:"segmentsLogEnd"`
	ServedBehindLog bool   `json:"servedBehindLog"`
	Note            string `json:"note"`
	Member          string `json:"member"`
	ClientID        string `json:"clientId"`
	Host            string `json:"host"`
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
	// File is the offline description (offset file, lag as of the
	// partition manifest); nil without a volume.
	File *GroupDescription `json:"file,omitempty"`
	// Summary is the group in one line (groups describe's summary section).
	Summary GroupSummary `json:"summary"`
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
// offline description (file may be nil). logs holds log offsets for the
// union of partitions.
func BuildLiveDescription(w wire.GroupDescription, file *GroupDescription, logs map[string]map[int32]wire.LogOffsets, names *NodeNamer) LiveDescription {
	if names == nil {
		names = NewNodeNamer(nil)
	}
	d := LiveDescription{Group: w.Group, State: w.State, ProtocolType: w.ProtocolType, Protocol: w.Protocol,
		Members: w.Members, Partitions: []LivePartition{}, Topics: []wire.TopicLag{}, Issues: []string{}, Errors: []string{}, Notes: []string{},
		LagSource: LagSourceLive, WireCoordinatorAddr: w.CoordinatorAddr, Sources: []string{SourceLive}}
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
	// Owners of assigned partitions.
	type owner struct{ member, client, host string }
	owners := map[string]owner{}
	for _, m := range w.Members {
		for _, a := range m.Assignment {
			for _, p := range a.Partitions {
				owners[a.Topic+"/"+fmt.Sprint(p)] = owner{m.MemberID, m.ClientID, m.Host()}
			}
		}
	}
	fileOff := map[string]map[int32]*PartitionOffset{}
	keys := wire.TopicPartitions{}
	if file != nil {
		for i := range file.Partitions {
			p := &file.Partitions[i]
			if fileOff[p.Topic] == nil {
				fileOff[p.Topic] = map[int32]*PartitionOffset{}
			}
			fileOff[p.Topic][p.Partition] = p
			keys.Add(p.Topic, p.Partition)
		}
	}
	for t, ps := range w.Committed.Offsets {
		for p, c := range ps {
			if c.Offset >= 0 || c.Err != "" {
				keys.Add(t, p)
			}
		}
	}
	for _, m := range w.Members {
		for _, a := range m.Assignment {
			keys.Add(a.Topic, a.Partitions...)
		}
	}
	for _, t := range keys.Topics() {
		for _, p := range keys[t] {
			lp := LivePartition{Topic: t, Partition: p, Committed: -1, LogStart: -1, LogEnd: -1}
			if o, ok := owners[t+"/"+fmt.Sprint(p)]; ok {
				lp.Member, lp.ClientID, lp.Host = o.member, o.client, o.host
			}
			c, hasLive := w.Committed.Offsets[t][p]
			if hasLive && c.Err != "" {
				lp.Note = "OffsetFetch: " + c.Err
				hasLive = false
			}
			if hasLive && c.Offset >= 0 {
				lp.Committed = c.Offset
			} else {
				hasLive = false
			}
			fp := fileOff[t][p]
			if fp != nil {
				v := fp.Committed
				lp.FileCommitted = &v
				if hasLive && v != c.Offset {
					lp.Disagree = true
				}
				if fp.HighWatermark != nil && fp.LogEndSource == volume.SourceSegments {
					v := *fp.HighWatermark
					lp.SegmentsLogEnd = &v
				}
			}
			lo, hasLog := logs[t][p]
			if hasLog {
				lp.LogStart, lp.LogEnd = lo.Start, lo.End
				lp.ServedBehindLog = lp.SegmentsLogEnd != nil && lo.End >= 0 && lo.End < *lp.SegmentsLogEnd
			}
			from := lp.Committed
			switch {
			case hasLive:
				lp.LagFrom = "live"
			case lp.FileCommitted != nil && *lp.FileCommitted >= 0:
				from = *lp.FileCommitted
				lp.LagFrom = "file"
			case hasLog && lo.Start >= 0:
				from = lo.Start
				lp.LagFrom = "logStart"
			}
			pl := wire.PartitionLagOf(t, p, from, lp.LagFrom != "", lo, hasLog)
			if pl.Known {
				lag := pl.Lag
				lp.Lag = &lag
			}
			note := pl.Note
			switch lp.LagFrom {
			case "file":
				note = joinNote(note, "coordinator has no committed offset loaded: lag counted from the offset file")
			case "logStart":
				note = joinNote(note, "nothing committed: lag counted from the log start")
			}
			if lp.Disagree {
				note = joinNote(note, fmt.Sprintf("file says %d, coordinator says %d", *lp.FileCommitted, lp.Committed))
			}
			if lp.ServedBehindLog {
				short := *lp.SegmentsLogEnd - lp.LogEnd
				note = joinNote(note, fmt.Sprintf("served log end %d is %s behind the segments' %d (read before asking): a stale high watermark, consumers cannot fetch past it and the lag reads %d low",
					lp.LogEnd, render.Plural(int(short), "record", "records"), *lp.SegmentsLogEnd, short))
				addOnce(&d.Issues, IssueServedBehindLog)
			}
			lp.Note = joinNote(lp.Note, note)
			d.Partitions = append(d.Partitions, lp)
		}
	}
	sortIssues(d.Issues)
	d.Recompute()
	return d
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
