package commands

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// groupsDescribeOptions is 'groups describe' after flag parsing.
type groupsDescribeOptions struct {
	names []string
	all   bool
	regex string
	lag   *inspect.LagFilter
	// filter narrows partitions to --topic and --lagging-only.
	filter inspect.DescribeFilter
	// summaryOnly prints only the summary section (table, wide, csv).
	summaryOnly bool
	// drainWindow observes the described groups over a window for the
	// time to drain and the retention forecast (live only; 0: not).
	drainWindow time.Duration
}

// GroupsDescribeView is the machine document of 'groups describe'.
type GroupsDescribeView struct {
	Sources GroupsSourcesView          `json:"sources"`
	Groups  []inspect.GroupDescription `json:"groups"`
	// NotFound lists requested groups with neither an offset file nor an
	// explicit entry.
	NotFound []string `json:"notFound"`
}

func init() {
	registerSub("groups", groupsUsage, func() *cli.Command {
		return &cli.Command{
			Name:      "describe",
			Usage:     "coordinator, members, committed offsets (file and live) and lag of groups",
			ArgsUsage: "GROUP...",
			Description: "Offline: committed offsets come from the group's offset file (the cluster-dir one brokers load,\n" +
				"else the one in the other offsets dir); log start and log end from the partition's segment files in\n" +
				"DATA/<topic>/<partition>/ (the last complete record batch, as kaas recovers it on restart); manifest.json only where\n" +
				"the segments cannot be read, and the row (logEndSource) and the total then say so. Lag is LOG-END − COMMITTED.\n\n" +
				"With brokers (--brokers, KAASCTL_BROKERS or a profile): DescribeGroups on the coordinator (members,\n" +
				"client ids, hosts, assignments), committed offsets by explicit-partition OffsetFetch (partitions from\n" +
				"the offset file and the topics' metadata), log start/end by one ListOffsets round, live lag per\n" +
				"partition, topic and group, and the offset file's committed offsets beside the coordinator's.\n" +
				"--all/--regex batch per coordinator: O(brokers) round trips however many groups.\n\n" +
				"Examples:\n" +
				"  kaasctl groups describe --data-dir /data orders-app                  # offline: file offsets, lag as of the manifests\n" +
				"  kaasctl groups describe -b kaas-0:9092 --data-dir /data orders-app   # live and volume side by side\n" +
				"  kaasctl groups describe -b kaas-0:9092 --all --lag '>1000' -o json   # every group behind by more than 1000\n" +
				"  kaasctl groups describe --data-dir /data --regex '^payments-'\n" +
				"  kaasctl groups describe -b kaas-0:9092 --all --topic orders --lagging-only   # who is behind on orders\n" +
				"  kaasctl groups describe -b kaas-0:9092 --all --summary                      # one line per group\n\n" +
				"The table starts with a summary section, one line per group (state, members, coordinator,\n" +
				"total lag, partitions, topics), then a block per group with its partitions and the per-topic\n" +
				"rollup (partitions, total lag, max lag). -o json/yaml carry the same as groups[].summary and\n" +
				"groups[].topics[]. --topic and --lagging-only narrow the partitions, and every total, rollup\n" +
				"and --lag comparison counts only what they keep; groups left with no partition are left out.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "all", Aliases: []string{"all-groups"}, Usage: "describe every group on the volume"},
				&cli.StringFlag{Name: "regex", Aliases: []string{"r"}, Usage: "describe every group whose id matches `RE`"},
				&cli.StringFlag{Name: "lag", Usage: "only groups whose total lag (live with brokers, else offline) matches `EXPR`: >N, >=N, <N, <=N, =N, !=N, N..M, or N (at least N)"},
				&cli.GenericFlag{Name: "topic", Aliases: []string{"t"}, Value: &repeatedFlag{}, Usage: "only partitions of `TOPIC` (repeatable or comma list); totals and lag count only these"},
				&cli.BoolFlag{Name: "lagging-only", Usage: "only partitions with lag above 0, and groups with any"},
				&cli.BoolFlag{Name: "summary", Usage: "print only the summary section, one line per group (table, wide, csv)"},
				drainWindowFlag(),
			},
			Action: runGroupsDescribe,
		}
	})
}

func runGroupsDescribe(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	o := groupsDescribeOptions{names: c.Args().Slice(), all: c.Bool("all"), regex: c.String("regex"), summaryOnly: c.Bool("summary"),
		filter: inspect.DescribeFilter{Topics: topicFlag(c), LaggingOnly: c.Bool("lagging-only")}}
	re, err := compileRegex("regex", o.regex)
	if err != nil {
		return err
	}
	if o.lag, err = inspect.ParseLagFilter(c.String("lag")); err != nil {
		return exit.UsageErrorf("%v", err)
	}
	if o.drainWindow, err = drainWindow(c); err != nil {
		return err
	}
	if len(o.names) == 0 && !o.all && re == nil {
		return exit.UsageErrorf("name at least one GROUP, or use --all or --regex RE")
	}
	if len(o.names) > 0 && (o.all || re != nil) {
		return exit.UsageErrorf("give GROUP names or --all/--regex, not both")
	}
	cl, err := liveClient(c.Context, g)
	if err != nil {
		return err
	}
	if cl != nil {
		defer cl.Close()
		return runGroupsDescribeLive(c, g, cl, o, re) // groups_describe_live.go
	}
	if o.drainWindow > 0 {
		return exit.UsageErrorf("--drain-window needs the brokers (the log end and log start are asked live)")
	}
	l, err := g.Layout()
	if err != nil {
		return err
	}
	a := offlineAssignmentFor(g, l, o.scope())
	byGroup, known, sr, err := describeFiles(l, a, o, re)
	if err != nil {
		return err
	}
	var knownList []string
	for k := range known {
		knownList = append(knownList, k)
	}
	slices.Sort(knownList)
	selected := inspect.SelectGroups(knownList, o.names, o.all, re)
	lookup, flush := logLookup(g, l) // groups_describe_live.go
	v := GroupsDescribeView{}
	volumeSources(&v.Sources, l, a, sr)
	warnGeneration(g, sr)
	leftOut := 0
	for _, name := range selected {
		if !known[name] {
			v.NotFound = append(v.NotFound, name)
			continue
		}
		d := inspect.DescribeGroup(name, a, byGroup[name], lookup)
		if !o.filter.Offline(&d) {
			leftOut++
			continue
		}
		if !o.lag.Match(&d) {
			continue
		}
		v.Groups = append(v.Groups, d)
	}
	noteLeftOut(g, o.filter, leftOut)
	flush()
	if lookup == nil {
		g.Warnf("the data dir is unknown (only --cluster-dir given): no segment files, so lag is unknown; pass --data-dir")
	}
	g.Notef("offline: offsets from the volume, log ends from the segment files; no broker was asked; %s", g.generationNote(l))
	t := render.NewTable("GROUP", "TOPIC", "PARTITION", "COMMITTED", "LOG-START", "LOG-END", "LAG", "COORDINATOR", "TIER", "METADATA+", "NOTE+")
	for _, d := range v.Groups {
		for _, p := range d.Partitions {
			t.Add(cellName(g.Printer.Format, d.Group), p.Topic, strconv.Itoa(int(p.Partition)), strconv.FormatInt(p.Committed, 10), optInt(p.LogStartOffset), optInt(p.HighWatermark), optInt(p.Lag),
				d.Coordinator.Coordinator, d.Coordinator.Tier, p.Metadata, p.LagNote)
		}
	}
	sum := make([]summaryRow, len(v.Groups))
	for i, d := range v.Groups {
		sum[i] = summaryRow{d.Group, *d.Summary}
	}
	if o.summaryOnly {
		t = summaryTable(g.Printer.Format, sum)
	}
	perr := g.Printer.Print(render.Output{Data: v, Items: v.Groups, Table: t, Human: func(p *render.Printer) error {
		if err := writeSummary(p, sum, o.summaryOnly); err != nil || o.summaryOnly {
			return err
		}
		return describeHuman(p, &v)
	}})
	if perr != nil {
		return perr
	}
	if len(v.NotFound) > 0 {
		if extra := unreadGroupFiles(sr, v.NotFound); extra != "" {
			return fmt.Errorf("no readable offset file and no explicit entry for %s on this volume%s", quoteList(v.NotFound), extra)
		}
		return fmt.Errorf("no offset file and no explicit entry for %s on this volume", quoteList(v.NotFound))
	}
	if len(selected) == 0 {
		g.Notef("no group matches")
	}
	return nil
}

func describeHuman(p *render.Printer, v *GroupsDescribeView) error {
	name := func(d *inspect.GroupDescription) string { return d.Group }
	return writeGroupBlocks(p, v.Groups, v.NotFound, name, func(d *inspect.GroupDescription) error {
		cv := d.Coordinator
		kv := render.NewTable("FIELD", "VALUE")
		coord := orNone(cv.Coordinator)
		switch cv.Tier {
		case "explicit":
			coord += fmt.Sprintf("  (explicit entry; the hash tier alone says %s)", orNone(cv.HashCoordinator))
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
		if err := writeKV(p, kv); err != nil {
			return err
		}
		for _, f := range d.Findings {
			fmtf(p.Out, "  %s %s: %s\n", strings.ToUpper(string(f.Severity)), f.Code, f.Message)
		}
		if len(d.Partitions) == 0 {
			return nil
		}
		fmtf(p.Out, "\n")
		t := render.NewTable("TOPIC", "PARTITION", "COMMITTED", "LOG-START", "LOG-END", "LAG", "METADATA+", "NOTE")
		for _, pp := range d.Partitions {
			t.Add(pp.Topic, strconv.Itoa(int(pp.Partition)), strconv.FormatInt(pp.Committed, 10), optInt(pp.LogStartOffset), optInt(pp.HighWatermark), optInt(pp.Lag), pp.Metadata, shortNote(pp))
		}
		if err := p.Table(t); err != nil {
			return err
		}
		if len(d.Topics) > 0 {
			err := writeTopicLags(p, d.Topics, func(t inspect.TopicLag) (string, int, int64, int64, int) {
				return t.Topic, t.Partitions, t.Lag, t.MaxLag, t.Unknown
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// writeGroupBlocks prints the human view of groups describe, offline and
// live: a block for each group headed GROUP <name>, a blank line between
// two, and "no group matches" when no group was selected and none named
// was missing.
func writeGroupBlocks[D any](p *render.Printer, groups []D, notFound []string, name func(*D) string, block func(*D) error) error {
	for i := range groups {
		d := &groups[i]
		if i > 0 {
			fmtf(p.Out, "\n")
		}
		fmtf(p.Out, "GROUP %s\n", volume.DisplayName(name(d)))
		if err := block(d); err != nil {
			return err
		}
	}
	if len(groups) == 0 && len(notFound) == 0 {
		fmtf(p.Out, "no group matches\n")
	}
	return nil
}

// totalLagText is a group's total lag for the human view, without the
// words saying what it is measured against.
func totalLagText(known bool, total int64, unknown int) string {
	if !known {
		return "unknown"
	}
	lag := strconv.FormatInt(total, 10)
	if unknown > 0 {
		lag += fmt.Sprintf(" (+%s unknown)", render.Plural(unknown, "partition", "partitions"))
	}
	return lag
}

// writeTopicLags prints a group's per-topic rollup after a blank line;
// cells gives a topic's name, partition count, summed lag, largest lag and
// the count of partitions whose lag is unknown.
func writeTopicLags[T any](p *render.Printer, topics []T, cells func(T) (topic string, partitions int, lag, maxLag int64, unknown int)) error {
	fmtf(p.Out, "\n")
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

// writeKV prints a two-column key/value block without a header.
func writeKV(p *render.Printer, t *render.TableData) error {
	w := 0
	for _, r := range t.Rows {
		w = max(w, len(r[0]))
	}
	for _, r := range t.Rows {
		v := r[1]
		if v == "" {
			v = "-"
		}
		fmtf(p.Out, "  %-*s  %s\n", w, r[0], v)
	}
	return nil
}

// shortNote keeps the table's note column readable; -o json has the full text.
func shortNote(p inspect.PartitionOffset) string {
	switch {
	case p.BelowLogStart:
		return "below log start: consumer will reset"
	case p.Lag == nil && p.Committed < 0:
		return "no committed offset"
	case p.Lag == nil && p.LogEndSource == volume.SourceManifest:
		return "ahead of manifest.json (segments unreadable): lag unknown"
	case p.Lag == nil:
		return p.LagNote
	case p.BeyondLogEnd:
		return "beyond the log end: OFFSET_OUT_OF_RANGE"
	case p.LogEndSource == volume.SourceManifest:
		return "log end from manifest.json (segments unreadable)"
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

func optInt(p *int64) string {
	if p == nil {
		return "?"
	}
	return strconv.FormatInt(*p, 10)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// describeFiles streams the offset files, keeping the parsed files of the
// groups the options select (and only those), and returns every group id
// the volume knows (offset files and explicit entries). Named groups read
// their own files only (and "known" is then about them alone).
func describeFiles(l volume.Layout, a *volume.Assignment, o groupsDescribeOptions, re *regexp.Regexp) (map[string][]inspect.GroupFileData, map[string]bool, volume.ScanResult, error) {
	byGroup := map[string][]inspect.GroupFileData{}
	known := map[string]bool{}
	pick := o.picks(re)
	each := func(it *volume.OffsetScanItem) error {
		known[it.Group] = true
		if pick(it.Group) {
			byGroup[it.Group] = append(byGroup[it.Group], inspect.GroupFileData{Path: it.Path, Layout: it.Layout, File: it.File, Err: it.Err, Findings: it.Findings, Denied: it.Denied, ModTime: it.ModTime})
		}
		return nil
	}
	var (
		sr  volume.ScanResult
		ok  bool
		err error
	)
	if scope := o.scope(); scope != nil {
		sr, ok, err = volume.ScanGroups(l, scope, volume.ScanOptions{}, each)
	}
	if !ok {
		sr, err = volume.ScanOffsets(l, volume.ScanOptions{}, each)
	}
	if a != nil {
		for _, e := range a.ConsumerGroups {
			known[e.GroupID] = true
		}
	}
	return byGroup, known, sr, err
}

// scope is the groups a describe is about when they are named (nil for
// --all and --regex, which need every group).
func (o groupsDescribeOptions) scope() []string {
	if o.all || o.regex != "" || len(o.names) == 0 {
		return nil
	}
	return o.names
}

// picks says which groups the options select: named ones, all, or those
// matching re.
func (o groupsDescribeOptions) picks(re *regexp.Regexp) func(string) bool {
	want := map[string]bool{}
	for _, n := range o.names {
		want[n] = true
	}
	return func(group string) bool { return want[group] || o.all || (re != nil && re.MatchString(group)) }
}

// unreadGroupFiles names the files of the groups in names that exist but
// were not read (a FIFO, device or link as <group>.json), so "no offset
// file" does not hide them.
func unreadGroupFiles(sr volume.ScanResult, names []string) string {
	var b strings.Builder
	for _, f := range sr.Findings {
		if f.Code != volume.CodeNotRegular && f.Code != volume.CodeSymlink {
			continue
		}
		for _, n := range names {
			if strings.HasSuffix(f.Path, string(filepath.Separator)+n+".json") {
				fmt.Fprintf(&b, "; %s: %s (%s)", f.Path, f.Message, f.Fix)
				break
			}
		}
	}
	return b.String()
}
