package commands

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// groups list with brokers: ListGroups from every broker, unioned with the
// volume (when one is given), FindCoordinator for every group (batched),
// DescribeGroups on the coordinators of the listed groups (batched per
// coordinator).

// liveGroupsResult is what the live half of groups list gathered.
type liveGroupsResult struct {
	answers *inspect.LiveAnswers
	brokers []BrokerSourceView
}

// gatherLiveGroups asks the brokers. extra are groups known from the
// volume (their coordinators are looked up too).
func gatherLiveGroups(ctx context.Context, cl *wire.Client, extra []string, a *volume.Assignment) (*liveGroupsResult, error) {
	names := inspect.NewNodeNamer(a)
	ls, err := cl.ListGroupsEveryBroker(ctx)
	if err != nil {
		return nil, err
	}
	la := &inspect.LiveAnswers{Listings: ls, HasAssignment: a != nil, Names: names}
	live := la.LiveGroupNames()
	la.Described = make(map[string]wire.DescribedGroup, len(live))
	all := append(append([]string{}, extra...), live...)
	if la.Coords, err = findCoordinators(ctx, cl, all, false); err != nil {
		return nil, err
	}
	for _, d := range cl.DescribeGroups(ctx, live, la.Coords) {
		la.Described[d.Group] = d
	}
	return &liveGroupsResult{answers: la, brokers: brokerSources(ls, names)}, nil
}

func runGroupsListLive(c *cli.Context, g *Globals, cl *wire.Client, o groupsListOptions, states []string) error {
	ctx := c.Context
	hasVolume := g.HasVolume()
	var (
		l     volume.Layout
		a     *volume.Assignment
		files []inspect.GroupFile
		sr    volume.ScanResult
		// fileTopics: group → topic → committed partitions (--topic)
		fileTopics map[string]map[string]int
		err        error
	)
	if hasVolume {
		if l, err = g.Layout(); err != nil {
			return err
		}
		a = offlineAssignment(g, l)
		if files, fileTopics, sr, err = listGroupFiles(g, l, o.topics); err != nil {
			return err
		}
		warnUnreadFiles(g, sr)
	}
	var volumeGroups []string
	for _, f := range files {
		volumeGroups = append(volumeGroups, f.Group)
	}
	if a != nil {
		for _, e := range a.ConsumerGroups {
			volumeGroups = append(volumeGroups, e.GroupID)
		}
	}
	lr, err := gatherLiveGroups(ctx, cl, volumeGroups, a)
	if err != nil {
		return err
	}
	var all []inspect.GroupRow
	if hasVolume {
		all = inspect.BuildGroupRows(inspect.GroupsInput{Assignment: a, Files: files, Extra: lr.answers.LiveGroupNames()})
	} else {
		all = inspect.BrokersOnlyRows(lr.answers.LiveGroupNames())
	}
	inspect.MergeLive(all, lr.answers)
	rows := make([]inspect.GroupRow, 0, len(all))
	for i := range all {
		if o.filter.Match(&all[i]) && inspect.StateMatch(&all[i], states) {
			rows = append(rows, all[i])
		}
	}
	if len(o.topics) > 0 {
		names := make([]string, len(rows))
		for i, r := range rows {
			names[i] = r.Group
		}
		liveTopics, err := liveTopicCommits(ctx, cl, names, o.topics, lr.answers.Coords)
		if err != nil {
			return err
		}
		rows = inspect.MatchTopics(rows, o.topics, fileTopics, liveTopics)
	}
	if o.drainWindow > 0 && len(rows) > 0 {
		names := make([]string, len(rows))
		for i := range rows {
			names[i] = rows[i].Group
		}
		var lp *volume.Layout
		if hasVolume {
			lp = &l
		}
		fc := observeForecasts(ctx, g, lp, cl, names, o.drainWindow)
		for i := range rows {
			rows[i].Forecast = fc[rows[i].Group]
		}
	}
	mode := "merged"
	if !hasVolume {
		mode = "live"
	}
	v := GroupsListView{Total: len(all), Shown: len(rows), Groups: rows,
		Sources: GroupsSourcesView{Live: true, Mode: mode, Brokers: lr.brokers}}
	var header []string
	if hasVolume {
		volumeSources(&v.Sources, l, a, sr)
		header = append(header, volumeLine(l, a, sr.Files))
		warnGeneration(g, sr)
	} else {
		header = append(header, "no volume: live state only (no offset files, explicit entries or computed coordinators; pass --data-dir for the merged view)")
	}
	header = append(header, brokersLine(lr.brokers))
	failed := 0
	for _, b := range lr.brokers {
		if !b.Answered {
			failed++
			g.Warnf("%s", b.Error)
		}
	}
	if failed > 0 {
		g.Warnf("%d of %d brokers did not answer ListGroups: groups only they hold are missing, and stale listings on them cannot be seen", failed, len(lr.brokers))
	}
	stale, fileOnly, mismatch := 0, 0, 0
	for i := range all {
		r := &all[i]
		if r.HasIssue(inspect.IssueStaleOnNonCoord) {
			stale++
		}
		if r.HasIssue(inspect.IssueFileOnly) {
			fileOnly++
		}
		if r.HasIssue(inspect.IssueWireMismatch) {
			mismatch++
		}
	}
	if stale > 0 {
		g.Warnf("%s listed by a broker that does not coordinate %s (stale in-memory groups: a deleted group \"reappears\" in --list; restart the listing broker to drop them)",
			render.Plural(stale, "group", "groups"), map[bool]string{true: "it", false: "them"}[stale == 1])
	}
	if mismatch > 0 {
		g.Warnf("%s: FindCoordinator disagrees with the coordinator computed from %s (brokers route by another assignment version?)",
			render.Plural(mismatch, "group", "groups"), volume.DisplayName(l.AssignmentPath()))
	}
	if fileOnly > 0 {
		g.Notef("%s only on the volume (committed offsets, no live group on the coordinator): invisible to ListGroups and OffsetFetch-all", render.Plural(fileOnly, "group is", "groups are"))
	}
	var t *render.TableData
	switch {
	case !needsTable(g):
	case hasVolume:
		t = render.NewTable("GROUP", "STATE", "MEMBERS", "COORDINATOR", "WIRE", "TIER", "PARTITIONS", "SOURCES", "ISSUES",
			"PROTOCOL+", "LISTED-BY+", "HASH-COORDINATOR+", "EXPLICIT-BROKER+", "DRAIN+", "RETENTION+", "FILES+")
		for _, r := range rows {
			t.Add(cellName(g.Printer.Format, r.Group), listStateCell(r.Live), listMembersCell(r.Live), render.Dash(r.Coordinator), listWireCell(r.Live), r.Tier,
				strconv.Itoa(r.CommittedPartitions), strings.Join(r.Sources, ","), strings.Join(r.Issues, ","),
				r.Live.Protocol, strings.Join(r.Live.ListedBy, ","), r.HashCoordinator, r.ExplicitBroker, forecastDrainCell(r.Forecast), forecastRetentionCell(r.Forecast), filesCell(r.Files))
		}
	default:
		t = render.NewTable("GROUP", "STATE", "PROTOCOL", "MEMBERS", "COORDINATOR", "LISTED-BY", "ISSUES", "PROTOCOL-TYPE+", "DRAIN+", "RETENTION+")
		for _, r := range rows {
			t.Add(cellName(g.Printer.Format, r.Group), listStateCell(r.Live), r.Live.Protocol, listMembersCell(r.Live), listWireCell(r.Live),
				strings.Join(r.Live.ListedBy, ","), strings.Join(r.Issues, ","), r.Live.ProtocolType, forecastDrainCell(r.Forecast), forecastRetentionCell(r.Forecast))
		}
	}
	perr := g.Printer.Print(render.Output{Data: v, Items: rows, Table: t, Human: func(p *render.Printer) error {
		fmtf(p.Out, "sources: %s\n", strings.Join(header, "; "))
		empty := "no groups"
		if len(all) > 0 {
			empty = fmt.Sprintf("no groups match (%s known)", render.Plural(len(all), "group", "groups"))
		}
		return filteredTable(p, t, len(rows), len(all), "groups", empty)
	}})
	if perr != nil {
		return perr
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d brokers did not answer: the list may be incomplete", failed, len(lr.brokers))
	}
	return nil
}

func listStateCell(l *inspect.GroupLive) string {
	if l == nil || l.State == "" {
		return "-"
	}
	return l.State
}

func listMembersCell(l *inspect.GroupLive) string {
	if l == nil || l.State == "" {
		return "-"
	}
	return strconv.Itoa(l.Members)
}

func listWireCell(l *inspect.GroupLive) string {
	if l == nil {
		return "-"
	}
	if l.WireCoordinator == "" {
		if l.WireError != "" {
			return "error"
		}
		return "-"
	}
	return l.WireCoordinator
}
