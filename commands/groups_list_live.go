package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/views"
)

// groups list with brokers: one group gathering (observe.ListLive:
// ListGroups from every broker, FindCoordinator for every group, listed
// or on the volume, DescribeGroups on the coordinators of the listed
// groups), merged with the volume when one is given.

// readListVolume reads the volume for a list, when one is given: its
// assignment (leniently), its offset files (with the topics they commit
// on, for --topic).
func readListVolume(g *Globals, topics []string) (views.ListVolume, error) {
	var v views.ListVolume
	if !g.HasVolume() {
		return v, nil
	}
	var err error
	if v.Layout, err = g.Layout(); err != nil {
		return v, err
	}
	v.Has = true
	v.Assignment = offlineAssignment(g, v.Layout)
	if v.Files, v.FileTopics, v.Scan, err = observe.ListGroupFiles(v.Layout, topics, g.Progress); err != nil {
		return v, err
	}
	views.WarnUnreadFiles(g, v.Scan)
	return v, nil
}

func runGroupsListLive(ctx context.Context, g *Globals, cl *wire.Client, o groupsListOptions) error {
	vol, err := readListVolume(g, o.topics)
	if err != nil {
		return err
	}
	lr, err := observe.ListLive(ctx, cl, inspect.GroupsInput{Assignment: vol.Assignment, Files: vol.Files}, vol.Has)
	if err != nil {
		return err
	}
	brokers := brokerSources(cl, lr.Listings, lr.Answers.Names)
	rows, err := lr.Filtered(ctx, cl, o.filter, o.states, o.topics, vol.FileTopics)
	if err != nil {
		return err
	}
	if o.drainWindow > 0 && len(rows) > 0 {
		addRowForecasts(ctx, g, cl, vol, o.drainWindow, rows)
	}
	v := views.GroupsListView{Total: len(lr.Rows), Shown: len(rows), Groups: rows,
		Sources: views.GroupsSourcesView{Live: true, Mode: "live", Brokers: brokers}}
	header := views.LiveListHeader(g, vol, &v.Sources)
	assignment := ""
	if vol.Has {
		assignment = volume.DisplayName(vol.Layout.AssignmentPath())
	}
	notes := inspect.ListNotes(brokers, inspect.CountLiveIssues(lr.Rows), assignment)
	for _, w := range notes.Warnings {
		g.Warnf("%s", w)
	}
	for _, n := range notes.Notes {
		g.Notef("%s", n)
	}
	if err := g.Printer.Print(views.LiveListOutput(g.Printer.Format, v, vol.Has, header)); err != nil {
		return err
	}
	if notes.Failed > 0 {
		return fmt.Errorf("%d of %d brokers did not answer: the list may be incomplete", notes.Failed, len(brokers))
	}
	return nil
}

// addRowForecasts observes the listed rows' groups over window (--drain-
// window; the volume too when there is one) and gives each its forecast.
func addRowForecasts(ctx context.Context, g *Globals, cl *wire.Client, vol views.ListVolume, window time.Duration, rows []inspect.GroupRow) {
	names := make([]string, len(rows))
	for i := range rows {
		names[i] = rows[i].Group
	}
	var lp *volume.Layout
	if vol.Has {
		lp = &vol.Layout
	}
	fc := exporter.ObserveForecasts(ctx, lp, cl, names, window, g)
	for i := range rows {
		rows[i].Forecast = fc[rows[i].Group]
	}
}
