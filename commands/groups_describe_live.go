package commands

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// groups describe with brokers: DescribeGroups on each coordinator,
// committed offsets by explicit-partition OffsetFetch (partitions from the
// offset file and the topics' metadata), log start/end from one ListOffsets
// round over the union, side by side with the offset file when a volume is
// given. Many groups cost O(brokers) round trips (wire.DescribeMany).

// GroupsDescribeLiveView is the machine document of 'groups describe' with
// brokers.
type GroupsDescribeLiveView struct {
	Sources  GroupsSourcesView         `json:"sources"`
	Groups   []inspect.LiveDescription `json:"groups"`
	NotFound []string                  `json:"notFound"`
	// Requests counts the requests sent to each broker.
	Requests []wire.BrokerCount `json:"requests"`
}

func runGroupsDescribeLive(c *cli.Context, g *Globals, cl *wire.Client, o groupsDescribeOptions, re *regexp.Regexp) error {
	ctx := c.Context
	hasVolume := g.HasVolume()
	var (
		l       volume.Layout
		a       *volume.Assignment
		sr      volume.ScanResult
		err     error
		byGroup = map[string][]inspect.GroupFileData{}
		known   = map[string]bool{}
	)
	if hasVolume {
		if l, err = g.Layout(); err != nil {
			return err
		}
		a = offlineAssignmentFor(g, l, o.scope())
		if byGroup, known, sr, err = describeFiles(l, a, o, re); err != nil {
			return err
		}
	}
	names := inspect.NewNodeNamer(a)
	var brokers []BrokerSourceView
	var listings []wire.BrokerGroups
	if o.all || re != nil {
		// Every group some broker holds, too.
		ls, err := cl.ListGroupsEveryBroker(ctx)
		if err != nil {
			return err
		}
		listings = ls
		brokers = brokerSources(ls, names)
		for _, b := range ls {
			if b.Err != "" {
				g.Warnf("%s: groups only it holds are not described", b.Err)
			}
			for _, lg := range b.Groups {
				known[lg.Group] = true
			}
		}
	}
	var selected []string
	if o.all || re != nil {
		selected = inspect.SelectGroups(sortedKeys(known), nil, o.all, re)
	} else {
		selected = inspect.SelectGroups(nil, o.names, false, nil)
	}
	// Offline descriptions first: their partitions are asked for explicitly.
	files := map[string]*inspect.GroupDescription{}
	knownTP := map[string]wire.TopicPartitions{}
	if hasVolume {
		lookup, flush := logLookup(g, l)
		defer flush()
		for _, name := range selected {
			if !known[name] {
				continue
			}
			d := inspect.DescribeGroup(name, a, byGroup[name], lookup)
			files[name] = &d
			if len(d.Partitions) > 0 {
				tp := wire.TopicPartitions{}
				for _, p := range d.Partitions {
					tp.Add(p.Topic, p.Partition)
				}
				knownTP[name] = tp
			}
		}
	}
	described, derr := cl.DescribeMany(ctx, selected, wire.DescribeOptions{Known: knownTP})
	if described == nil && derr != nil {
		return derr
	}
	if derr != nil {
		g.Warnf("log offsets: %v (lag unknown where the log end is missing)", derr)
	}
	fetchAllFallback(c, g, cl, described, knownTP, hasVolume)
	v := GroupsDescribeLiveView{NotFound: []string{}, Groups: []inspect.LiveDescription{},
		Sources: GroupsSourcesView{Live: true, Mode: "live", Brokers: brokers}}
	if hasVolume {
		v.Sources.Mode = "merged"
		volumeSources(&v.Sources, l, a, sr)
		warnGeneration(g, sr)
		g.Notef("volume: %s", g.generationNote(l))
	}
	loaded := coordinatorHolds(ctx, cl, described, files, listings)
	var failed []string
	leftOut := 0
	for _, w := range described {
		logs := logsFromLag(w.Lag)
		ld := inspect.BuildLiveDescription(w, files[w.Group], logs, names)
		if held, known := loaded[w.Group]; known && !held {
			ld.MarkNotLoaded() // as groups list shows it: fileOnly, no live state
		}
		// A group neither the brokers nor the volume know: kaas answers
		// Empty (Kafka: Dead) with no members for any group id it owns.
		deadOnWire := w.Err == "" && (w.State == "Dead" || w.State == "Empty" || w.State == "") && len(w.Members) == 0
		if deadOnWire && files[w.Group] == nil && !hasCommitted(ld) {
			v.NotFound = append(v.NotFound, w.Group)
			continue
		}
		if w.Err != "" {
			failed = append(failed, w.Group)
		}
		if !o.filter.Live(&ld) {
			leftOut++
			continue
		}
		if !o.lag.MatchTotal(ld.LagKnown, ld.TotalLag) {
			continue
		}
		v.Groups = append(v.Groups, ld)
	}
	noteLeftOut(g, o.filter, leftOut)
	if o.drainWindow > 0 && len(v.Groups) > 0 {
		names := make([]string, len(v.Groups))
		for i := range v.Groups {
			names[i] = v.Groups[i].Group
		}
		var lp *volume.Layout
		if hasVolume {
			lp = &l
		}
		fc := observeForecasts(ctx, g, lp, cl, names, o.drainWindow)
		for i := range v.Groups {
			v.Groups[i].Forecast = fc[v.Groups[i].Group]
		}
	}
	v.Requests = cl.Counter.Snapshot()
	if v.Sources.Brokers == nil {
		v.Sources.Brokers = []BrokerSourceView{}
	}
	// Per-group notes go into the output beside their group; stderr gets
	// one line per kind of problem (the group's own line when only one
	// group has it).
	var disagree, coordDisagree, errored []string
	for i := range v.Groups {
		d := &v.Groups[i]
		if m := inspect.StateMessage(d.Group, d.State); m != "" {
			d.Notes = append(d.Notes, m)
		}
		// The output already shows these two (offsetsDisagree, the
		// "disagreement" line; coordinatorAgrees, "DISAGREES with").
		if d.OffsetsDisagree > 0 {
			disagree = append(disagree, fmt.Sprintf("group %s: the offset file and the coordinator disagree on %s",
				volume.DisplayName(d.Group), render.Plural(d.OffsetsDisagree, "partition", "partitions")))
		}
		if d.CoordinatorAgrees != nil && !*d.CoordinatorAgrees {
			coordDisagree = append(coordDisagree, fmt.Sprintf("group %s: FindCoordinator says %s, the volume's assignment says %s",
				volume.DisplayName(d.Group), d.WireCoordinator, orNone(d.Coordinator.Coordinator)))
		}
		for _, e := range d.Errors {
			errored = append(errored, "group "+volume.DisplayName(d.Group)+": "+e)
		}
	}
	warnKind(g, disagree, "groups whose offset file and coordinator disagree (see their \"disagreement\" lines, offsetsDisagree in json)")
	warnKind(g, coordDisagree, "groups whose FindCoordinator answer differs from the volume's assignment (see their coordinator lines, coordinatorAgrees in json)")
	warnKind(g, errored, "errors describing groups (see each group's errors)")
	var rounds []string
	for _, bc := range v.Requests {
		if !bc.Seed {
			rounds = append(rounds, fmt.Sprintf("%s %d", names.Name(bc.Node), bc.Requests))
		}
	}
	g.Notef("live: %s described with %s (requests per broker: %s)", render.Plural(len(v.Groups), "group", "groups"),
		render.Plural(int(cl.Counter.Total()), "request", "requests"), strings.Join(rounds, ", "))
	t := render.NewTable("GROUP", "TOPIC", "PARTITION", "COMMITTED", "FILE-COMMITTED", "LOG-START", "LOG-END", "LAG", "MEMBER", "CLIENT-ID+", "HOST+", "STATE+", "COORDINATOR+", "NOTE+")
	for _, d := range v.Groups {
		for _, p := range d.Partitions {
			t.Add(cellName(g.Printer.Format, d.Group), p.Topic, strconv.Itoa(int(p.Partition)), offCell(p.Committed), optInt(p.FileCommitted), offCell(p.LogStart), offCell(p.LogEnd),
				optInt(p.Lag), render.Dash(p.Member), render.Dash(p.ClientID), render.Dash(hostCell(p)), d.State, d.WireCoordinator, p.Note)
		}
	}
	sum := make([]summaryRow, len(v.Groups))
	for i, d := range v.Groups {
		sum[i] = summaryRow{d.Group, d.Summary}
	}
	if o.summaryOnly {
		t = summaryTable(g.Printer.Format, sum)
	}
	perr := g.Printer.Print(render.Output{Data: v, Items: v.Groups, Table: t, Human: func(p *render.Printer) error {
		if err := writeSummary(p, sum, o.summaryOnly); err != nil || o.summaryOnly {
			return err
		}
		return describeLiveHuman(p, &v, hasVolume)
	}})
	if perr != nil {
		return perr
	}
	if len(v.NotFound) > 0 {
		return fmt.Errorf("no such group on the brokers or the volume: %s", quoteList(v.NotFound))
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s could not be described: %s", render.Plural(len(failed), "group", "groups"), quoteList(failed))
	}
	if len(selected) == 0 {
		g.Notef("no group matches")
	}
	return nil
}

// warnKind prints one stderr warning for a kind of per-group problem: the
// line itself when there is one, else the count, the first, and where the
// rest are.
func warnKind(g *Globals, lines []string, what string) {
	switch len(lines) {
	case 0:
	case 1:
		g.Warnf("%s", lines[0])
	default:
		g.Warnf("%d %s; the first: %s", len(lines), what, lines[0])
	}
}

func hasCommitted(d inspect.LiveDescription) bool {
	for _, p := range d.Partitions {
		if p.Committed >= 0 {
			return true
		}
	}
	return false
}

func hostCell(p inspect.LivePartition) string {
	if p.Member == "" {
		return ""
	}
	return p.Host
}

func offCell(n int64) string {
	if n < 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

// logsFromLag recovers the log offsets wire.DescribeMany found.
func logsFromLag(gl wire.GroupLag) map[string]map[int32]wire.LogOffsets {
	out := map[string]map[int32]wire.LogOffsets{}
	for _, p := range gl.Partitions {
		if p.Start < 0 && p.End < 0 {
			continue
		}
		if out[p.Topic] == nil {
			out[p.Topic] = map[int32]wire.LogOffsets{}
		}
		out[p.Topic][p.Partition] = wire.LogOffsets{Start: p.Start, End: p.End, Leader: -1}
	}
	return out
}

// logLookup reads each partition's log bounds for offline lag: from the
// segment files, with manifest.json only where they cannot be read (nil
// without a data dir). Findings are kept until flush prints them, one
// line per kind, with a warning naming every manifest fallback.
func logLookup(g *Globals, l volume.Layout) (lookup inspect.LogLookup, flush func()) {
	if l.DataDir == "" {
		return nil, func() {}
	}
	lr := volume.NewLogReader(l)
	seen := map[*volume.LogBounds]bool{}
	var all []volume.Finding
	var fallbacks []string
	return func(topic string, p int32) *volume.LogBounds {
			b := lr.Get(topic, p)
			if !seen[b] {
				seen[b] = true
				all = append(all, b.Findings...)
				if b.EndSource() == volume.SourceManifest {
					fallbacks = append(fallbacks, fmt.Sprintf("%s/%d", topic, p))
				}
			}
			return b
		}, func() {
			g.WarnFindings(all)
			if len(fallbacks) > 0 {
				g.Warnf("%s: the log end came from manifest.json because the segment files could not be read; kaas rewrites the manifest only on takeover, roll and close, so the lag there is likely larger (logEndSource \"manifest\" in -o json)", render.Plural(len(fallbacks), "partition", "partitions")+" ("+strings.Join(fallbacks, ", ")+")")
			}
			all, fallbacks = nil, nil
		}
}

func describeLiveHuman(p *render.Printer, v *GroupsDescribeLiveView, hasVolume bool) error {
	name := func(d *inspect.LiveDescription) string { return d.Group }
	return writeGroupBlocks(p, v.Groups, v.NotFound, name, func(d *inspect.LiveDescription) error {
		kv := render.NewTable("FIELD", "VALUE")
		wc := orNone(d.WireCoordinator)
		if d.WireCoordinatorAddr != "" {
			wc += " (" + d.WireCoordinatorAddr + ")"
		}
		if d.Coordinator != nil {
			agree := "agrees with"
			if d.CoordinatorAgrees != nil && !*d.CoordinatorAgrees {
				agree = "DISAGREES with"
			}
			wc += fmt.Sprintf("  FindCoordinator; %s the volume: %s (%s)", agree, orNone(d.Coordinator.Coordinator), d.Coordinator.Tier)
		} else {
			wc += "  FindCoordinator (no volume: not compared with assignment.json)"
		}
		kv.Add("coordinator", wc)
		state := stateCell(d.State)
		if d.ProtocolType != "" || d.Protocol != "" {
			state += fmt.Sprintf("  (protocol %s/%s)", orNone(d.ProtocolType), orNone(d.Protocol))
		}
		if slices.Contains(d.Issues, inspect.IssueFileOnly) {
			state += fmt.Sprintf("  (fileOnly: %s does not hold the group; its offsets are only on the volume)", orNone(d.Summary.Coordinator))
		}
		kv.Add("state", state)
		if d.Summary.Members != nil {
			kv.Add("members", strconv.Itoa(*d.Summary.Members))
		} else {
			kv.Add("members", "-")
		}
		kv.Add("sources", strings.Join(d.Sources, ", "))
		if d.File != nil {
			if d.File.OffsetFile != "" {
				kv.Add("offset file", volume.DisplayName(d.File.OffsetFile))
			} else {
				kv.Add("offset file", "none: no committed offsets on the volume")
			}
		}
		kv.Add("issues", strings.Join(d.Issues, ", "))
		lag := totalLagText(d.LagKnown, d.TotalLag, d.LagUnknown)
		kv.Add("total lag", lag+"  live (ListOffsets now)")
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
		for _, n := range d.Notes {
			kv.Add("note", n)
		}
		if err := writeKV(p, kv); err != nil {
			return err
		}
		if len(d.Members) > 0 {
			fmtf(p.Out, "\n")
			mt := render.NewTable("MEMBER", "CLIENT-ID", "HOST", "ASSIGNMENT", "INSTANCE+", "SUBSCRIPTION+")
			for _, m := range d.Members {
				mt.Add(m.MemberID, m.ClientID, m.Host(), m.AssignmentText(), m.InstanceID, m.SubscriptionText())
			}
			if err := p.Table(mt); err != nil {
				return err
			}
		}
		if len(d.Partitions) > 0 {
			fmtf(p.Out, "\n")
			cols := []string{"TOPIC", "PARTITION", "COMMITTED"}
			if hasVolume {
				cols = append(cols, "FILE-COMMITTED")
			}
			cols = append(cols, "LOG-START", "LOG-END", "LAG", "MEMBER", "CLIENT-ID+", "HOST+", "NOTE+")
			t := render.NewTable(cols...)
			for _, pp := range d.Partitions {
				row := []string{pp.Topic, strconv.Itoa(int(pp.Partition)), offCell(pp.Committed)}
				if hasVolume {
					fc := optInt(pp.FileCommitted)
					if pp.FileCommitted == nil {
						fc = "-"
					}
					if pp.Disagree {
						fc += " (!)"
					}
					row = append(row, fc)
				}
				row = append(row, offCell(pp.LogStart), offCell(pp.LogEnd), lagCell(pp), render.Dash(pp.Member), render.Dash(pp.ClientID), render.Dash(hostCell(pp)), pp.Note)
				t.Add(row...)
			}
			if err := p.Table(t); err != nil {
				return err
			}
			err := writeTopicLags(p, d.Topics, func(t wire.TopicLag) (string, int, int64, int64, int) {
				return t.Topic, t.Partitions, t.Lag, t.MaxLag, t.Unknown
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

func lagCell(p inspect.LivePartition) string {
	if p.Lag == nil {
		return "-"
	}
	s := strconv.FormatInt(*p.Lag, 10)
	switch p.LagFrom {
	case "file":
		s += " (file)"
	case "logStart":
		s += " (from start)"
	}
	return s
}

// fetchAllFallback asks OffsetFetch-all for groups whose partitions nothing
// named (no members, no offset file): Kafka answers it, kaas answers
// nothing. Found partitions get their log offsets in one more round.
func fetchAllFallback(c *cli.Context, g *Globals, cl *wire.Client, described []wire.GroupDescription, knownTP map[string]wire.TopicPartitions, hasVolume bool) {
	coords := map[string]wire.Coordinator{}
	idx := map[string]int{}
	var groups []string
	for i, w := range described {
		if w.Err != "" || w.Coordinator < 0 || len(w.Members) > 0 || knownTP[w.Group] != nil || len(w.Committed.Offsets) > 0 {
			continue
		}
		coords[w.Group] = wire.Coordinator{Key: w.Group, NodeID: w.Coordinator}
		idx[w.Group] = i
		groups = append(groups, w.Group)
	}
	if len(groups) == 0 {
		return
	}
	fetched := cl.FetchAllCommitted(c.Context, groups, coords)
	union := wire.TopicPartitions{}
	var empty []string
	for _, grp := range groups {
		fo := fetched[grp]
		n := 0
		for t, ps := range fo.Offsets {
			for p := range ps {
				union.Add(t, p)
				n++
			}
		}
		if n == 0 {
			empty = append(empty, grp)
		}
	}
	var logs map[string]map[int32]wire.LogOffsets
	if len(union) > 0 {
		var err error
		if logs, err = cl.ListLogOffsets(c.Context, union); err != nil {
			g.Warnf("log offsets: %v", err)
		}
	}
	for _, grp := range groups {
		fo := fetched[grp]
		if len(fo.Offsets) == 0 {
			continue
		}
		w := &described[idx[grp]]
		w.Committed = fo
		gl := map[string]map[int32]wire.LogOffsets{}
		for t := range fo.Offsets {
			gl[t] = logs[t]
		}
		w.Lag = wire.ComputeLag(fo.Offsets, gl, nil)
	}
	if len(empty) > 0 {
		hint := "pass --data-dir to read their offset files"
		if hasVolume {
			hint = "and no offset file on the volume"
		}
		g.Warnf("no partitions known for %s (no members, and kaas answers nothing to OffsetFetch-all): %s", quoteList(empty), hint)
	}
}

// coordinatorHolds says, for groups with an offset file on the volume that
// DescribeGroups shows without members, whether their coordinator lists
// them (ListGroups): kaas answers DescribeGroups with Empty for any group id
// it owns, so only ListGroups tells a group it holds from one that is only
// on the volume, which is how groups list tells them apart (fileOnly).
// listings are the every-broker answers when already asked (--all,
// --regex); otherwise only the coordinators concerned are asked. A group
// whose coordinator's listing failed is left out (unknown).
func coordinatorHolds(ctx context.Context, cl *wire.Client, described []wire.GroupDescription, files map[string]*inspect.GroupDescription, listings []wire.BrokerGroups) map[string]bool {
	var cands []wire.GroupDescription
	want := map[int32][]string{}
	for _, w := range described {
		if files[w.Group] != nil && w.Err == "" && w.Coordinator >= 0 && len(w.Members) == 0 {
			cands = append(cands, w)
			want[w.Coordinator] = append(want[w.Coordinator], w.Group)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	out := map[string]bool{}
	if listings == nil {
		for _, h := range cl.GroupsHeld(ctx, want) {
			for g, held := range h.Held {
				out[g] = held
			}
		}
		return out
	}
	byNode := map[int32]wire.BrokerGroups{}
	for _, b := range listings {
		byNode[b.Broker.NodeID] = b
	}
	for _, w := range cands {
		b, ok := byNode[w.Coordinator]
		if !ok || b.Err != "" {
			continue
		}
		_, held := slices.BinarySearchFunc(b.Groups, w.Group, func(lg wire.ListedGroup, g string) int { return strings.Compare(lg.Group, g) })
		out[w.Group] = held
	}
	return out
}
