package repair

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// PartitionInfo is what a plan knows about one partition of one group.
type PartitionInfo struct {
	Topic     string
	Partition int32
	// Committed is the group's committed offset (the next offset to read).
	Committed    int64
	HasCommitted bool
	// LogStart and LogEnd bound the valid offsets; HasLog is false when
	// they are unknown. LogSource is where they came from (wire,
	// segments, or manifest: unverified, it trails the log); LogUnknown
	// names the missing evidence when the log end is not verified.
	LogStart, LogEnd int64
	HasLog           bool
	LogSource        string
	LogUnknown       string
	// TimeOffset is the first offset at or after the spec's time
	// (to-datetime, by-duration); HasTimeOffset false when the log has
	// nothing at or after it.
	TimeOffset    int64
	HasTimeOffset bool
	// BeforeEveryRecord: the time is before 1970, so TimeOffset is the log
	// start without asking the brokers.
	BeforeEveryRecord bool
}

// PlanRow is one partition's change. Field names are the JSON contract.
type PlanRow struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Current   *int64 `json:"current,omitempty"`
	New       int64  `json:"new"`
	LogStart  *int64 `json:"logStart,omitempty"`
	LogEnd    *int64 `json:"logEnd,omitempty"`
	// LogSource is where LogStart/LogEnd came from: wire, segments, or
	// manifest (unverified: planned only with --allow-unverified-log-end).
	LogSource string   `json:"logSource,omitempty"`
	Changed   bool     `json:"changed"`
	Clamped   bool     `json:"clamped"`
	Warnings  []string `json:"warnings"`
	Error     string   `json:"error,omitempty"`
}

// Plan computes the new offset of every partition for one group. Targets
// outside [log start, log end] are clamped with a warning, as Kafka's tool
// does; a partition that cannot be planned carries an Error (the caller
// must then refuse to execute).
func Plan(group string, spec Spec, parts []PartitionInfo) []PlanRow {
	var fileOffsets map[string]map[int32]int64
	if spec.Kind == FromFile || spec.Kind == ToGroup {
		fileOffsets = map[string]map[int32]int64{}
		for _, r := range spec.File.ForGroup(group) {
			if fileOffsets[r.Topic] == nil {
				fileOffsets[r.Topic] = map[int32]int64{}
			}
			fileOffsets[r.Topic][r.Partition] = r.Offset
		}
	}
	rows := make([]PlanRow, 0, len(parts))
	for _, p := range parts {
		rows = append(rows, planRow(group, spec, p, fileOffsets))
	}
	slices.SortFunc(rows, func(a, b PlanRow) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return rows
}

// planRow plans one partition: --to-current keeps a committed offset as it
// is; every other spec needs verified log bounds (unless allowed without,
// or the spec is a time) and its target is clamped to them.
func planRow(group string, spec Spec, p PartitionInfo, fileOffsets map[string]map[int32]int64) PlanRow {
	row := PlanRow{Group: group, Topic: p.Topic, Partition: p.Partition, Warnings: []string{}}
	if p.HasCommitted {
		c := p.Committed
		row.Current = &c
	}
	if p.HasLog {
		s, e := p.LogStart, p.LogEnd
		row.LogStart, row.LogEnd, row.LogSource = &s, &e, p.LogSource
	}
	if spec.Kind == ToCurrent && p.HasCommitted {
		// --to-current keeps a committed offset as it is, never
		// clamped against a log end; a partition without one gets the
		// log end below, as Kafka's tool gives it.
		row.New = p.Committed
		return row
	}
	if !verified(p) && !spec.AllowUnverifiedLogEnd && !spec.NeedsTime() {
		// Every other spec is clamped to (or is) the log bounds: a row
		// whose log end is not verified is refused, nothing written.
		row.Error = unverifiedError(p)
		return row
	}
	if target, ok := specTarget(spec, p, &row, fileOffsets); ok {
		row.New = clamp(&row, target, p)
		row.Changed = !p.HasCommitted || row.New != p.Committed
	}
	return row
}

// specTarget is the offset spec asks for on partition p, before clamping;
// ok is false (row's error set) when the spec cannot be planned there.
func specTarget(spec Spec, p PartitionInfo, row *PlanRow, fileOffsets map[string]map[int32]int64) (target int64, ok bool) {
	switch spec.Kind {
	case ToEarliest:
		return p.LogStart, requireLog(row, p)
	case ToLatest:
		return p.LogEnd, requireLog(row, p)
	case ToCurrent:
		ok = requireLog(row, p)
		if ok {
			row.Warnings = append(row.Warnings, "no committed offset: --to-current gives it the log end, as Kafka's tool does")
		}
		return p.LogEnd, ok
	case ToOffset:
		return spec.Offset, true
	case ShiftBy:
		if !p.HasCommitted {
			row.Error = fmt.Sprintf("cannot shift offset for partition %s-%d since there is no current committed offset", p.Topic, p.Partition)
			return 0, false
		}
		return saturatingAdd(p.Committed, spec.Shift), true
	case ToDatetime, ByDuration:
		return timeTarget(p, row)
	case FromFile, ToGroup:
		o, found := fileOffsets[p.Topic][p.Partition]
		if !found {
			row.Error = "not in the plan file"
			if spec.Kind == ToGroup {
				row.Error = fmt.Sprintf("group '%s' has no committed offset for this partition", spec.Source)
			}
			return 0, false
		}
		return o, true
	default:
		row.Error = fmt.Sprintf("unknown reset spec %q", spec.Kind)
		return 0, false
	}
}

// timeTarget is the first offset at or after the spec's time: the log
// start for a time before 1970, the log end when the log has nothing that
// late; unknown without a time lookup.
func timeTarget(p PartitionInfo, row *PlanRow) (int64, bool) {
	switch {
	case p.HasTimeOffset:
		if p.BeforeEveryRecord {
			row.Warnings = append(row.Warnings, "that time is before 1970, before every record: using the log start, as Kafka does")
		}
		return p.TimeOffset, true
	case p.HasLog:
		row.Warnings = append(row.Warnings, "nothing in the log at or after that time: using the log end")
		return p.LogEnd, true
	default:
		row.Error = "the offset for that time is unknown (time lookups need live brokers)"
		return 0, false
	}
}

// saturatingAdd is a+b, held at the int64 limits instead of wrapping: a
// shift past the log end (or before its start) then clamps like every
// other target beyond the log.
func saturatingAdd(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

// verified reports whether the log bounds come from evidence kaasctl
// checked: a broker's ListOffsets or the partition's segment files.
func verified(p PartitionInfo) bool {
	return p.HasLog && (p.LogSource == "wire" || p.LogSource == "segments" || p.LogSource == "")
}

// unverifiedError names the missing evidence of a refused row.
func unverifiedError(p PartitionInfo) string {
	why := p.LogUnknown
	if why == "" {
		why = "no broker answered and no segment file was read"
	}
	if p.HasLog && p.LogSource == "manifest" {
		return fmt.Sprintf("log end unverified: %s; manifest.json says %d but kaas rewrites it only on takeover, roll and close, so it trails the log: nothing is written for this partition (%s plans it anyway, unchecked)", why, p.LogEnd, UnverifiedFlag)
	}
	return fmt.Sprintf("log end unknown: %s: nothing is written for this partition (%s plans it anyway, unchecked)", why, UnverifiedFlag)
}

func requireLog(row *PlanRow, p PartitionInfo) bool {
	if !p.HasLog {
		row.Error = unverifiedError(p)
		return false
	}
	if !verified(p) {
		row.Warnings = append(row.Warnings, fmt.Sprintf("UNVERIFIED (%s): the log bound is manifest.json's, which trails the log", UnverifiedFlag))
	}
	return true
}

func clamp(row *PlanRow, target int64, p PartitionInfo) int64 {
	if target < 0 {
		row.Warnings = append(row.Warnings, fmt.Sprintf("new offset (%d) is negative: value will be set to 0", target))
		row.Clamped = true
		target = 0
	}
	if !verified(p) {
		// Never clamp to a manifest: it trails the log and would move the
		// offset backwards (only reached with the override).
		row.Warnings = append(row.Warnings, fmt.Sprintf("UNVERIFIED (%s): the offset was not checked against the log end", UnverifiedFlag))
		return target
	}
	switch {
	case target < p.LogStart:
		row.Warnings = append(row.Warnings, fmt.Sprintf("new offset (%d) is lower than the earliest offset (%d) for partition %s-%d: value will be set to %d", target, p.LogStart, p.Topic, p.Partition, p.LogStart))
		row.Clamped = true
		return p.LogStart
	case target > p.LogEnd:
		row.Warnings = append(row.Warnings, fmt.Sprintf("new offset (%d) is higher than the latest offset (%d) for partition %s-%d: value will be set to %d", target, p.LogEnd, p.Topic, p.Partition, p.LogEnd))
		row.Clamped = true
		return p.LogEnd
	}
	return target
}

// PlanErrors counts rows that cannot be executed.
func PlanErrors(rows []PlanRow) int {
	n := 0
	for _, r := range rows {
		if r.Error != "" {
			n++
		}
	}
	return n
}
