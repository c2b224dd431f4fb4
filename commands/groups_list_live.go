package commands

import (
	"context"
	"fmt"
	"slices"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/views"
)

// groups list with brokers: one group gathering (wire.GatherGroups:
// ListGroups from every broker, FindCoordinator for every group, listed or
// on the volume, DescribeGroups on the coordinators of the listed groups),
// merged with the volume when one is given: the rows are prepared from the
// listings while the lookups are in flight (inspect.PrepareListedRows),
// and given their live view once the answers are in (MergeListedRows).

// listVolume is what a live list read from the volume (zero without one).
type listVolume struct {
	has   bool
	l     volume.Layout
	a     *volume.Assignment
	files []inspect.GroupFile
	// fileTopics: group → topic → committed partitions (--topic)
	fileTopics map[string]map[string]int
	sr         volume.ScanResult
}

// readListVolume reads the volume for a live list, when one is given.
func readListVolume(g *Globals, topics []string) (listVolume, error) {
	var v listVolume
	if !g.HasVolume() {
		return v, nil
	}
	var err error
	if v.l, err = g.Layout(); err != nil {
		return v, err
	}
	v.has = true
	v.a = offlineAssignment(g, v.l)
	if v.files, v.fileTopics, v.sr, err = observe.ListGroupFiles(v.l, topics, g.Progress); err != nil {
		return v, err
	}
	views.WarnUnreadFiles(g, v.sr)
	return v, nil
}

func runGroupsListLive(ctx context.Context, g *Globals, cl *wire.Client, o groupsListOptions) error {
	vol, err := readListVolume(g, o.topics)
	if err != nil {
		return err
	}
	lr, err := observe.ListLive(ctx, cl, inspect.GroupsInput{Assignment: vol.a, Files: vol.files}, vol.has)
	if err != nil {
		return err
	}
	all := lr.Rows
	brokers := brokerSources(cl, lr.Listings, lr.Answers.Names)
	rows, err := liveListRows(ctx, g, cl, o, vol, lr, all)
	if err != nil {
		return err
	}
	v := views.GroupsListView{Total: len(all), Shown: len(rows), Groups: rows,
		Sources: views.GroupsSourcesView{Live: true, Mode: "live", Brokers: brokers}}
	header := liveListHeader(g, vol, &v.Sources)
	assignment := ""
	if vol.has {
		assignment = volume.DisplayName(vol.l.AssignmentPath())
	}
	notes := inspect.ListNotes(brokers, inspect.CountLiveIssues(all), assignment)
	for _, w := range notes.Warnings {
		g.Warnf("%s", w)
	}
	for _, n := range notes.Notes {
		g.Notef("%s", n)
	}
	if err := g.Printer.Print(views.LiveListOutput(g.Printer.Format, v, vol.has, header)); err != nil {
		return err
	}
	if notes.Failed > 0 {
		return fmt.Errorf("%d of %d brokers did not answer: the list may be incomplete", notes.Failed, len(brokers))
	}
	return nil
}

// liveListRows filters the merged rows (filter, --state), then keeps those
// with offsets on --topic and observes --drain-window.
func liveListRows(ctx context.Context, g *Globals, cl *wire.Client, o groupsListOptions, vol listVolume, lr *observe.LiveListing, all []inspect.GroupRow) ([]inspect.GroupRow, error) {
	rows := inspect.FilterGroups(all, o.filter)
	if len(o.states) > 0 {
		rows = slices.DeleteFunc(slices.Clone(rows), func(r inspect.GroupRow) bool { return !inspect.StateMatch(&r, o.states) })
	}
	if len(o.topics) > 0 {
		liveTopics, err := observe.LiveTopicCommits(ctx, cl, rowGroups(rows), o.topics, lr.Answers.Coords())
		if err != nil {
			return nil, err
		}
		rows = inspect.MatchTopics(rows, o.topics, vol.fileTopics, liveTopics)
	}
	if o.drainWindow > 0 && len(rows) > 0 {
		var lp *volume.Layout
		if vol.has {
			lp = &vol.l
		}
		fc := observeForecasts(ctx, g, lp, cl, rowGroups(rows), o.drainWindow)
		for i := range rows {
			rows[i].Forecast = fc[rows[i].Group]
		}
	}
	return rows, nil
}

func rowGroups(rows []inspect.GroupRow) []string {
	names := make([]string, len(rows))
	for i := range rows {
		names[i] = rows[i].Group
	}
	return names
}

// liveListHeader fills the volume's sources and returns the header's
// parts (volume or "no volume", then the brokers).
func liveListHeader(g *Globals, vol listVolume, src *views.GroupsSourcesView) []string {
	var header []string
	if vol.has {
		src.Mode = "merged"
		views.VolumeSources(src, vol.l, vol.a, vol.sr)
		header = append(header, views.VolumeLine(vol.l, vol.a, vol.sr.Files))
		views.WarnGeneration(g, vol.sr)
	} else {
		header = append(header, "no volume: live state only (no offset files, explicit entries or computed coordinators; pass --data-dir for the merged view)")
	}
	return append(header, views.BrokersLine(src.Brokers))
}
