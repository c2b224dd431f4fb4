package views

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// GroupsDescribeView is the machine document of 'groups describe'.
type GroupsDescribeView struct {
	Sources GroupsSourcesView          `json:"sources"`
	Groups  []inspect.GroupDescription `json:"groups"`
	// NotFound lists requested groups with neither an offset file nor an
	// explicit entry.
	NotFound []string `json:"notFound"`
}

// DescribeOutput is the offline view for format f: the summary section
// and a block per group for people, one row per partition in csv; view
// "offsets" is that one table instead, summaryOnly the summary section
// alone.
func DescribeOutput(f render.Format, v *GroupsDescribeView, view string, summaryOnly bool) render.Output {
	if view != "" {
		return render.Output{Data: *v, Items: v.Groups, Table: offlineOffsetsTable(f, v.Groups)}
	}
	sum := make([]summaryRow, len(v.Groups))
	for i, d := range v.Groups {
		sum[i] = summaryRow{d.Group, *d.Summary}
	}
	return describeBlocks(f, summaryOnly, *v, v.Groups, sum, func() *render.TableData { return describeTable(v) },
		func(p *render.Printer) error { return describeHuman(p, v) })
}

// describeBlocks is a describe view (data; items for jsonl): the summary
// section, alone with summaryOnly, then each group's block for people;
// csv gets the summary or csvTable's row per partition.
func describeBlocks(f render.Format, summaryOnly bool, data, items any, sum []summaryRow, csvTable func() *render.TableData, blocks func(*render.Printer) error) render.Output {
	var t *render.TableData // read only by csv (people get Human)
	switch {
	case summaryOnly:
		t = summaryTable(f, sum)
	case f == render.CSV:
		t = csvTable()
	}
	return render.Output{Data: data, Items: items, Table: t, Human: func(p *render.Printer) error {
		if err := writeSummary(p, sum, summaryOnly); err != nil || summaryOnly {
			return err
		}
		return blocks(p)
	}}
}

// describeTable is the offline view one row per partition (csv).
func describeTable(v *GroupsDescribeView) *render.TableData {
	t := render.NewTable("GROUP", "TOPIC", "PARTITION", "COMMITTED", "LOG-START", "LOG-END", "LAG", "COORDINATOR", "TIER", "METADATA+", "NOTE+")
	for _, d := range v.Groups {
		for _, p := range d.Partitions {
			t.Add(cellName(render.CSV, d.Group), p.Topic, strconv.Itoa(int(p.Partition)), strconv.FormatInt(p.Committed, 10), optInt(p.LogStartOffset), optInt(p.HighWatermark), optInt(p.Lag),
				d.Coordinator.Coordinator, d.Coordinator.Tier, p.Metadata, p.LagNote)
		}
	}
	return t
}

// GroupsDescribeLiveView is the machine document of 'groups describe' with
// brokers.
type GroupsDescribeLiveView struct {
	Sources  GroupsSourcesView         `json:"sources"`
	Groups   []inspect.LiveDescription `json:"groups"`
	NotFound []string                  `json:"notFound"`
	// Requests counts the requests sent to each broker.
	Requests []wire.BrokerCount `json:"requests"`
}

// DescribeLiveOutput is the live view for format f: the summary section
// and a block per group for people, one row per partition in csv; view
// (offsets, members, state) is that one table instead, summaryOnly the
// summary section alone.
func DescribeLiveOutput(f render.Format, v *GroupsDescribeLiveView, view string, summaryOnly, hasVolume bool) render.Output {
	if view != "" {
		return render.Output{Data: *v, Items: v.Groups, Table: liveViewTable(view, f, v.Groups)}
	}
	sum := make([]summaryRow, len(v.Groups))
	for i, d := range v.Groups {
		sum[i] = summaryRow{d.Group, d.Summary}
	}
	return describeBlocks(f, summaryOnly, *v, v.Groups, sum, func() *render.TableData { return describeLiveTable(v) },
		func(p *render.Printer) error { return describeLiveHuman(p, v, hasVolume) })
}

// describeLiveTable is the live view one row per partition (csv).
func describeLiveTable(v *GroupsDescribeLiveView) *render.TableData {
	t := render.NewTable("GROUP", "TOPIC", "PARTITION", "COMMITTED", "FILE-COMMITTED", "LOG-START", "LOG-END", "LAG", "MEMBER", "CLIENT-ID+", "HOST+", "STATE+", "COORDINATOR+", "NOTE+")
	for _, d := range v.Groups {
		for _, p := range d.Partitions {
			t.Add(cellName(render.CSV, d.Group), p.Topic, strconv.Itoa(int(p.Partition)), render.Offset(p.Committed), optInt(p.FileCommitted), render.Offset(p.LogStart), render.Offset(p.LogEnd),
				optInt(p.Lag), render.Dash(p.Member), render.Dash(p.ClientID), render.Dash(p.AssignedHost()), d.State, d.WireCoordinator, p.Note)
		}
	}
	return t
}

// summaryRow is one group of the summary section.
type summaryRow struct {
	group string
	s     inspect.GroupSummary
}

// summaryTable is one line per group: state, members, coordinator, total
// lag, partitions, topics.
func summaryTable(f render.Format, rows []summaryRow) *render.TableData {
	t := render.NewTable("GROUP", "STATE", "MEMBERS", "COORDINATOR", "TOTAL-LAG", "PARTITIONS", "TOPICS")
	for _, r := range rows {
		members := "-"
		if r.s.Members != nil {
			members = strconv.Itoa(*r.s.Members)
		}
		t.Add(cellName(f, r.group), stateCell(r.s.State), members, render.Dash(r.s.Coordinator),
			totalLagText(r.s.LagKnown, r.s.TotalLag, r.s.LagUnknown), strconv.Itoa(r.s.Partitions), render.Dash(strings.Join(r.s.Topics, ",")))
	}
	return t
}

// writeSummary prints the summary section (and a blank line before the
// group blocks unless it is all that is printed).
func writeSummary(p *render.Printer, rows []summaryRow, only bool) error {
	if len(rows) == 0 {
		if only {
			fmt.Fprintf(p.Out, "no group matches\n")
		}
		return nil
	}
	if err := p.Table(summaryTable(p.Format, rows)); err != nil {
		return err
	}
	if !only {
		fmt.Fprintf(p.Out, "\n")
	}
	return nil
}

// describeHuman is the offline view's group blocks: the key lines, the
// findings, the partitions and the per-topic rollup.
func describeHuman(p *render.Printer, v *GroupsDescribeView) error {
	name := func(d *inspect.GroupDescription) string { return d.Group }
	return writeGroupBlocks(p, v.Groups, v.NotFound, name, func(p *render.Printer, d *inspect.GroupDescription) error {
		if err := WriteKV(p, offlineKV(d)); err != nil {
			return err
		}
		for _, f := range d.Findings {
			fmt.Fprintf(p.Out, "  %s %s: %s\n", strings.ToUpper(string(f.Severity)), f.Code, f.Message)
		}
		if len(d.Partitions) == 0 {
			return nil
		}
		fmt.Fprintf(p.Out, "\n")
		t := render.NewTable("TOPIC", "PARTITION", "COMMITTED", "LOG-START", "LOG-END", "LAG", "METADATA+", "NOTE")
		for _, pp := range d.Partitions {
			t.Add(pp.Topic, strconv.Itoa(int(pp.Partition)), strconv.FormatInt(pp.Committed, 10), optInt(pp.LogStartOffset), optInt(pp.HighWatermark), optInt(pp.Lag), pp.Metadata, shortNote(pp))
		}
		if err := p.Table(t); err != nil {
			return err
		}
		if len(d.Topics) == 0 {
			return nil
		}
		return writeTopicLags(p, d.Topics, func(t inspect.TopicLag) (string, int, int64, int64, int) {
			return t.Topic, t.Partitions, t.Lag, t.MaxLag, t.Unknown
		})
	})
}

// offlineKV is an offline group's key lines: coordinator and how it was
// found, sources, offset files, issues and total lag.
func offlineKV(d *inspect.GroupDescription) *render.TableData {
	cv := d.Coordinator
	kv := render.NewTable("FIELD", "VALUE")
	coord := OrNone(cv.Coordinator)
	switch cv.Tier {
	case "explicit":
		coord += fmt.Sprintf("  (explicit entry; the hash tier alone says %s)", OrNone(cv.HashCoordinator))
	case "hash":
		coord += fmt.Sprintf("  (hash: slot %d of %d brokers, fnv %s)", cv.HashSlot, cv.Brokers, cv.FNV)
	case "hash-fallback":
		coord += fmt.Sprintf("  (hash fallback: slot %d names %s, which is not alive; %d alive brokers)", cv.HashSlot, cv.HashPreferred, cv.AliveBrokers)
	default:
		coord += "  (COORDINATOR_NOT_AVAILABLE: no alive broker, or assignment.json unreadable)"
	}
	kv.Add("coordinator", coord)
	kv.Add("tier", cv.Tier)
	kv.Add("sources", strings.Join(d.Sources, ", "))
	if d.OffsetFile != "" {
		f := d.OffsetFile
		if d.Format != "" {
			f += "  (" + d.Format + ")"
		}
		kv.Add("offset file", volume.DisplayName(f))
	} else {
		kv.Add("offset file", "none: no committed offsets on the volume")
	}
	for _, o := range d.OtherFiles {
		kv.Add("also", volume.DisplayName(o)+"  (not what brokers load)")
	}
	kv.Add("issues", strings.Join(d.Issues, ", "))
	lag := totalLagText(d.LagKnown, d.TotalLag, d.LagUnknown)
	kv.Add("total lag", lag+"  "+offlineLagLabel(d.LagSource, d.ManifestFallbacks))
	return kv
}

// describeLiveHuman is the live view's group blocks: the key lines, the
// members, the partitions and the per-topic rollup.
func describeLiveHuman(p *render.Printer, v *GroupsDescribeLiveView, hasVolume bool) error {
	name := func(d *inspect.LiveDescription) string { return d.Group }
	return writeGroupBlocks(p, v.Groups, v.NotFound, name, func(p *render.Printer, d *inspect.LiveDescription) error {
		if err := WriteKV(p, liveKV(d)); err != nil {
			return err
		}
		if len(d.Members) > 0 {
			fmt.Fprintf(p.Out, "\n")
			mt := render.NewTable("MEMBER", "CLIENT-ID", "HOST", "ASSIGNMENT", "INSTANCE+", "SUBSCRIPTION+")
			for _, m := range d.Members {
				mt.Add(m.MemberID, m.ClientID, m.Host(), m.AssignmentText(), m.InstanceID, m.SubscriptionText())
			}
			if err := p.Table(mt); err != nil {
				return err
			}
		}
		if len(d.Partitions) == 0 {
			return nil
		}
		fmt.Fprintf(p.Out, "\n")
		if err := p.Table(livePartitionsTable(d, hasVolume)); err != nil {
			return err
		}
		return writeTopicLags(p, d.Topics, func(t inspect.LiveTopicLag) (string, int, int64, int64, int) {
			return t.Topic, t.Partitions, t.Lag, t.MaxLag, t.Unknown
		})
	})
}

// liveKV is a live group's key lines.
func liveKV(d *inspect.LiveDescription) *render.TableData {
	kv := render.NewTable("FIELD", "VALUE")
	kv.Add("coordinator", liveCoordinatorLine(d))
	state := stateCell(d.State)
	if d.ProtocolType != "" || d.Protocol != "" {
		state += fmt.Sprintf("  (protocol %s/%s)", OrNone(d.ProtocolType), OrNone(d.Protocol))
	}
	if slices.Contains(d.Issues, inspect.IssueFileOnly) {
		state += fmt.Sprintf("  (fileOnly: %s does not hold the group; its offsets are only on the volume)", OrNone(d.Summary.Coordinator))
	}
	kv.Add("state", state)
	members := "-"
	if d.Summary.Members != nil {
		members = strconv.Itoa(*d.Summary.Members)
	}
	kv.Add("members", members)
	kv.Add("sources", strings.Join(d.Sources, ", "))
	if d.File != nil {
		if d.File.OffsetFile != "" {
			kv.Add("offset file", volume.DisplayName(d.File.OffsetFile))
		} else {
			kv.Add("offset file", "none: no committed offsets on the volume")
		}
	}
	kv.Add("issues", strings.Join(d.Issues, ", "))
	kv.Add("total lag", totalLagText(d.LagKnown, d.TotalLag, d.LagUnknown)+"  live (ListOffsets now)")
	if d.File != nil && len(d.File.Partitions) > 0 {
		fl := "unknown"
		if d.File.LagKnown {
			fl = strconv.FormatInt(d.File.TotalLag, 10)
		}
		kv.Add("file lag", fl+"  offset file vs "+offlineLagLabel(d.File.LagSource, d.File.ManifestFallbacks))
	}
	if d.OffsetsDisagree > 0 {
		kv.Add("disagreement", render.Plural(d.OffsetsDisagree, "partition", "partitions")+": the offset file and the coordinator differ")
	}
	if f := d.Forecast; f != nil {
		kv.Add("time to drain", drainSummary(f))
		kv.Add("retention", retentionSummary(f))
		if !f.LastCommit.IsZero() {
			kv.Add("last commit", f.LastCommit.UTC().Format(time.RFC3339))
		}
	}
	addSkewKV(kv, d)
	for _, n := range d.Notes {
		kv.Add("note", n)
	}
	return kv
}

// liveCoordinatorLine is FindCoordinator's answer, compared with the
// volume's assignment when there is one.
func liveCoordinatorLine(d *inspect.LiveDescription) string {
	wc := OrNone(d.WireCoordinator)
	if d.WireCoordinatorAddr != "" {
		wc += " (" + d.WireCoordinatorAddr + ")"
	}
	if d.Coordinator == nil {
		return wc + "  FindCoordinator (no volume: not compared with assignment.json)"
	}
	agree := "agrees with"
	if d.CoordinatorAgrees != nil && !*d.CoordinatorAgrees {
		agree = "DISAGREES with"
	}
	return wc + fmt.Sprintf("  FindCoordinator; %s the volume: %s (%s)", agree, OrNone(d.Coordinator.Coordinator), d.Coordinator.Tier)
}

// livePartitionsTable is a live group's partitions, with the offset file's
// committed offset beside the coordinator's when there is a volume.
func livePartitionsTable(d *inspect.LiveDescription, hasVolume bool) *render.TableData {
	cols := []string{"TOPIC", "PARTITION", "COMMITTED"}
	if hasVolume {
		cols = append(cols, "FILE-COMMITTED")
	}
	cols = append(cols, "LOG-START", "LOG-END", "LAG", "MEMBER", "CLIENT-ID+", "HOST+", "NOTE+")
	t := render.NewTable(cols...)
	for _, pp := range d.Partitions {
		row := []string{pp.Topic, strconv.Itoa(int(pp.Partition)), render.Offset(pp.Committed)}
		if hasVolume {
			fc := render.OptInt(pp.FileCommitted)
			if pp.Disagree {
				fc += " (!)"
			}
			row = append(row, fc)
		}
		row = append(row, render.Offset(pp.LogStart), render.Offset(pp.LogEnd), lagCell(pp), render.Dash(pp.Member), render.Dash(pp.ClientID), render.Dash(pp.AssignedHost()), pp.Note)
		t.Add(row...)
	}
	return t
}

// lagCell is a live partition's lag, saying what it is counted from when
// that is not the coordinator's committed offset.
func lagCell(p inspect.LivePartition) string {
	s := render.OptInt(p.Lag)
	if q := p.LagQualifier(); q != "" && p.Lag != nil {
		s += " (" + q + ")"
	}
	return s
}

// writeGroupBlocks prints the human view of groups describe, offline and
// live: a block for each group headed GROUP <name>, a blank line between
// two, and "no group matches" when no group was selected and none named
// was missing.
func writeGroupBlocks[D any](p *render.Printer, groups []D, notFound []string, name func(*D) string, block func(*render.Printer, *D) error) error {
	err := p.Blocks(len(groups), func(i int, bp *render.Printer) error {
		d := &groups[i]
		if i > 0 {
			fmt.Fprintf(bp.Out, "\n")
		}
		fmt.Fprintf(bp.Out, "GROUP %s\n", volume.DisplayName(name(d)))
		return block(bp, d)
	})
	if err != nil {
		return err
	}
	if len(groups) == 0 && len(notFound) == 0 {
		fmt.Fprintf(p.Out, "no group matches\n")
	}
	return nil
}

// writeTopicLags prints a group's per-topic rollup after a blank line;
// cells gives a topic's name, partition count, summed lag, largest lag and
// the count of partitions whose lag is unknown.
func writeTopicLags[T any](p *render.Printer, topics []T, cells func(T) (topic string, partitions int, lag, maxLag int64, unknown int)) error {
	fmt.Fprintf(p.Out, "\n")
	tt := render.NewTable("TOPIC", "PARTITIONS", "LAG", "MAX-LAG", "UNKNOWN")
	for _, tl := range topics {
		topic, partitions, lagSum, maxLag, unknown := cells(tl)
		lag, ml := strconv.FormatInt(lagSum, 10), strconv.FormatInt(maxLag, 10)
		if unknown == partitions {
			lag, ml = "unknown", "unknown"
		}
		tt.Add(topic, strconv.Itoa(partitions), lag, ml, strconv.Itoa(unknown))
	}
	return p.Table(tt)
}

// shortNote keeps the table's note column readable; -o json has the full
// text. It reads the read model's codes, not the note's words.
func shortNote(p inspect.PartitionOffset) string {
	if n := inspect.ShortNote(p.ResumeRule, p.LagUnknown, p.Incidents, p.LogEndSource); n != "" {
		return n
	}
	if p.Lag == nil {
		return p.LagNote
	}
	return ""
}

// offlineLagLabel says where an offline total's log ends came from.
func offlineLagLabel(source string, fallbacks int) string {
	switch source {
	case inspect.LagSourceSegments:
		return "log ends from the segment files"
	case inspect.LagSourceNone:
		return "log ends unknown"
	case inspect.LagSourceManifest:
		return "log ends from manifest.json (the segment files could not be read; it trails the log)"
	}
	return fmt.Sprintf("log ends from the segment files, %s from manifest.json (segments unreadable; it trails the log)", render.Plural(fallbacks, "partition", "partitions"))
}

// liveViewTable is the view of a live describe.
func liveViewTable(view string, f render.Format, groups []inspect.LiveDescription) *render.TableData {
	switch view {
	case "members":
		t := render.NewTable("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT+", "INSTANCE-ID+")
		for _, d := range groups {
			for _, m := range d.Members {
				n, parts := 0, make([]string, 0, len(m.Assignment))
				for _, a := range m.Assignment {
					n += len(a.Partitions)
					parts = append(parts, a.Topic+"("+joinInts(a.Partitions)+")")
				}
				t.Add(cellName(f, d.Group), m.MemberID, m.Host(), render.Dash(m.ClientID), strconv.Itoa(n), render.Dash(strings.Join(parts, ",")), render.Dash(m.InstanceID))
			}
		}
		return t
	case "state":
		t := render.NewTable("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
		for _, d := range groups {
			t.Add(cellName(f, d.Group), fmt.Sprintf("%s (%s)", render.Dash(d.WireCoordinatorAddr), render.Dash(d.WireCoordinator)), render.Dash(d.Protocol), render.Dash(d.State), strconv.Itoa(len(d.Members)))
		}
		return t
	}
	t := render.NewTable("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
	for _, d := range groups {
		for _, p := range d.Partitions {
			t.Add(cellName(f, d.Group), p.Topic, strconv.Itoa(int(p.Partition)), offsetCell(p.Committed), offsetCell(p.LogEnd), optDash(p.Lag),
				render.Dash(p.Member), render.Dash(p.AssignedHost()), render.Dash(p.ClientID))
		}
	}
	return t
}

// offlineOffsetsTable is --offsets of an offline describe (no member is
// known without the brokers).
func offlineOffsetsTable(f render.Format, groups []inspect.GroupDescription) *render.TableData {
	t := render.NewTable("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
	for _, d := range groups {
		for _, p := range d.Partitions {
			t.Add(cellName(f, d.Group), p.Topic, strconv.Itoa(int(p.Partition)), offsetCell(p.Committed), optDash(p.HighWatermark), optDash(p.Lag), "-", "-", "-")
		}
	}
	return t
}

func offsetCell(n int64) string {
	if n < 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

func optDash(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func joinInts(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ",")
}

// addSkewKV adds a live group's lag spread, hot partitions and ownership.
func addSkewKV(kv *render.TableData, d *inspect.LiveDescription) {
	if s := d.Spread; s != nil {
		kv.Add("lag spread", s.SpreadText())
		if hot := s.HotText(); hot != "" {
			kv.Add("hot partitions", hot)
		}
	}
	if o := d.Ownership; o != nil {
		kv.Add("ownership", o.OwnershipText())
	}
}
