package commands

import (
	"context"
	"time"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/views"
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
	var vol *observe.VolumeRead
	if hasVolume {
		var err error
		if vol, err = readDescribeVolume(g, o); err != nil {
			return err
		}
	}
	d, err := observe.DescribeLive(ctx, cl, vol, o.sel, o.filter, o.lag, g.Now)
	if d != nil {
		g.WarnAll(d.Warnings)
		if hasVolume {
			defer flushLogs(g, vol.Logs) // the segments' findings, once read
		}
	}
	if err != nil {
		return err
	}
	v := views.GroupsDescribeLiveView{Sources: views.GroupsSourcesView{Live: true, Mode: "live", Brokers: []views.BrokerSourceView{}}}
	if o.sel.SelectAll() {
		v.Sources.Brokers = brokerSources(cl, d.Listings, d.Names)
	}
	var gen volume.GenerationInfo
	if hasVolume {
		v.Sources.Mode, gen = "merged", vol.Layout.Gen
		views.VolumeSources(&v.Sources, vol.Layout, vol.Assignment, vol.Scan)
		views.WarnGeneration(g, vol.Scan)
		g.Notef("volume: %s", g.GenerationNote(vol.Layout))
	}
	v.Groups, v.NotFound = d.Result.Groups, d.Result.NotFound
	noteLeftOut(g, o.filter, d.Result.LeftOut)
	if o.drainWindow > 0 {
		addForecasts(ctx, g, cl, vol, o.drainWindow, v.Groups)
	}
	v.Requests = cl.Counter.Snapshot()
	for _, w := range inspect.AnnotateLive(v.Groups, gen) {
		g.Warnf("%s", w)
	}
	views.NoteLiveRequests(g, d.Names, v.Requests, cl.Counter.Total(), len(v.Groups))
	if err := g.Printer.Print(views.DescribeLiveOutput(g.Printer.Format, &v, o.view, o.summaryOnly, hasVolume)); err != nil {
		return err
	}
	if err := inspect.LiveDescribeError(d.Result); err != nil {
		return err
	}
	if len(d.Selected) == 0 {
		g.Notef("no group matches")
	}
	return nil
}

// addForecasts observes the described groups over window (the volume too
// when there is one: vol not nil) and gives each its forecast.
func addForecasts(ctx context.Context, g *Globals, cl *wire.Client, vol *observe.VolumeRead, window time.Duration, groups []inspect.LiveDescription) {
	if len(groups) == 0 {
		return
	}
	names := make([]string, len(groups))
	for i := range groups {
		names[i] = groups[i].Group
	}
	var lp *volume.Layout
	if vol != nil {
		lp = &vol.Layout
	}
	fc := exporter.ObserveForecasts(ctx, lp, cl, names, window, g)
	for i := range groups {
		groups[i].Forecast = fc[groups[i].Group]
		groups[i].AddRates(groups[i].Forecast)
	}
}
