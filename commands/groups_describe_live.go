package commands

import (
	"context"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render/views"
)

// groups describe with brokers: DescribeGroups on each coordinator,
// committed offsets by explicit-partition OffsetFetch (partitions from the
// offset file and the topics' metadata), log start/end from one ListOffsets
// round over the union, side by side with the offset file when a volume is
// given. Many groups cost O(brokers) round trips (wire.DescribeMany).

// runGroupsDescribeLive is describe with brokers: the volume side first
// (its offset files name the partitions to ask for), then the wire rounds,
// then inspect's decisions (described, not found, failed, notes), then the
// view; stderr gets one line per kind of problem.
func runGroupsDescribeLive(ctx context.Context, g *Globals, cl *wire.Client, o groupsDescribeOptions) error {
	hasVolume := g.HasVolume()
	vol := &observe.VolumeRead{Files: map[string][]inspect.GroupFileData{}, Known: map[string]bool{}}
	if hasVolume {
		var err error
		if vol, err = readDescribeVolume(g, o); err != nil {
			return err
		}
	}
	names := inspect.NewNodeNamer(vol.Assignment)
	v := views.GroupsDescribeLiveView{Sources: views.GroupsSourcesView{Live: true, Mode: "live", Brokers: []views.BrokerSourceView{}}}
	var listings []wire.BrokerGroups
	selected := inspect.SelectGroups(nil, o.sel.Names, false, nil)
	if o.sel.SelectAll() {
		var warns []string
		var err error
		if listings, selected, warns, err = observe.SelectListed(ctx, cl, vol.Known, o.sel); err != nil {
			return err
		}
		g.WarnAll(warns)
		v.Sources.Brokers = brokerSources(cl, listings, names)
	}
	var files map[string]*inspect.GroupDescription
	if hasVolume {
		// The offline side first: its segments are read before the
		// brokers are asked (the evidence a served end is checked against).
		files = inspect.DescribeKnown(selected, vol.Known, vol.Files, vol.Assignment, vol.State)
		defer flushLogs(g, vol.Logs)
	}
	res, err := describeLiveGroups(ctx, g, cl, o, vol, hasVolume, selected, files, listings, names)
	if err != nil {
		return err
	}
	if hasVolume {
		v.Sources.Mode = "merged"
		views.VolumeSources(&v.Sources, vol.Layout, vol.Assignment, vol.Scan)
		views.WarnGeneration(g, vol.Scan)
		g.Notef("volume: %s", g.GenerationNote(vol.Layout))
	}
	v.Groups, v.NotFound = res.Groups, res.NotFound
	noteLeftOut(g, o.filter, res.LeftOut)
	if o.drainWindow > 0 {
		addForecasts(ctx, g, cl, vol, hasVolume, o.drainWindow, v.Groups)
	}
	v.Requests = cl.Counter.Snapshot()
	for _, w := range inspect.AnnotateLive(v.Groups, vol.Layout.Gen) {
		g.Warnf("%s", w)
	}
	views.NoteLiveRequests(g, names, v.Requests, cl.Counter.Total(), len(v.Groups))
	if err := g.Printer.Print(views.DescribeLiveOutput(g.Printer.Format, &v, o.view, o.summaryOnly, hasVolume)); err != nil {
		return err
	}
	if err := inspect.LiveDescribeError(res); err != nil {
		return err
	}
	if len(selected) == 0 {
		g.Notef("no group matches")
	}
	return nil
}

// describeLiveGroups asks the brokers about the selected groups and joins
// each answer with its offline description in the read model.
func describeLiveGroups(ctx context.Context, g *Globals, cl *wire.Client, o groupsDescribeOptions, vol *observe.VolumeRead, hasVolume bool,
	selected []string, files map[string]*inspect.GroupDescription, listings []wire.BrokerGroups, names *inspect.NodeNamer) (inspect.DescribeResult[inspect.LiveDescription], error) {
	asked := g.Now()
	described, warns, err := observe.DescribeOnWire(ctx, cl, selected, inspect.KnownPartitions(files), hasVolume)
	if err != nil {
		return inspect.DescribeResult[inspect.LiveDescription]{}, err
	}
	g.WarnAll(warns)
	held := cl.CoordinatorHolds(ctx, inspect.HoldCandidates(described, files), listings)
	byName := make(map[string]*wire.GroupDescription, len(described))
	for i := range described {
		byName[described[i].Group] = &described[i]
	}
	if !hasVolume {
		vol = nil
	}
	return inspect.DescribeLive(inspect.LiveDescribeInput{Described: described, Files: files, Names: names, Filter: o.filter, Lag: o.lag, Held: held,
		State: func(grp string) *inspect.GroupState {
			return vol.LiveState(byName[grp], observe.HeldOf(held, grp), asked)
		}}), nil
}

// addForecasts observes the described groups over window (the volume too
// when there is one) and gives each its forecast.
func addForecasts(ctx context.Context, g *Globals, cl *wire.Client, vol *observe.VolumeRead, hasVolume bool, window time.Duration, groups []inspect.LiveDescription) {
	if len(groups) == 0 {
		return
	}
	names := make([]string, len(groups))
	for i := range groups {
		names[i] = groups[i].Group
	}
	var lp *volume.Layout
	if hasVolume {
		lp = &vol.Layout
	}
	fc := observeForecasts(ctx, g, lp, cl, names, window)
	for i := range groups {
		groups[i].Forecast = fc[groups[i].Group]
		groups[i].AddRates(groups[i].Forecast)
	}
}
