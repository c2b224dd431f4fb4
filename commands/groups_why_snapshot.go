package commands

import (
	"context"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render/views"
)

// whySnapshot is one observation of the selected groups: offline from the
// volume, live from the brokers (with the volume's files when given).
func whySnapshot(ctx context.Context, g *Globals, cl *wire.Client, o groupsDescribeOptions) ([]whyState, views.GroupsSourcesView, []string, error) {
	vol := &observe.VolumeRead{Files: map[string][]inspect.GroupFileData{}, Known: map[string]bool{}}
	src := views.GroupsSourcesView{Live: cl != nil, Mode: "offline", Brokers: []views.BrokerSourceView{}}
	if g.HasVolume() {
		var err error
		if vol, err = readDescribeVolume(g, o); err != nil {
			return nil, src, nil, err
		}
		views.VolumeSources(&src, vol.Layout, vol.Assignment, vol.Scan)
		defer flushLogs(g, vol.Logs)
	}
	if cl == nil {
		selected := inspect.SelectGroups(vol.KnownNames(), o.sel.Names, o.sel.All, o.sel.Regex)
		var out []whyState
		var notFound []string
		for _, n := range selected {
			if !vol.Known[n] {
				notFound = append(notFound, n)
				continue
			}
			out = append(out, whyState{gs: vol.State(n), members: -1, fileMod: fileModOf(vol, n)})
		}
		return out, src, notFound, nil
	}
	src.Mode = "live"
	out, notFound, err := whyLive(ctx, g, cl, o, vol)
	return out, src, notFound, err
}

// whyLive describes the selected groups on their coordinators.
func whyLive(ctx context.Context, g *Globals, cl *wire.Client, o groupsDescribeOptions, vol *observe.VolumeRead) ([]whyState, []string, error) {
	selected := inspect.SelectGroups(nil, o.sel.Names, false, nil)
	if o.sel.SelectAll() {
		_, sel, warns, err := observe.SelectListed(ctx, cl, vol.Known, o.sel)
		if err != nil {
			return nil, nil, err
		}
		g.WarnAll(warns)
		selected = sel
	}
	known := map[string]wire.TopicPartitions{}
	for _, n := range selected {
		if f, _ := observe.ShownFile(vol.Files[n]); f != nil && f.File != nil {
			tp := wire.TopicPartitions{}
			for _, e := range f.File.Entries {
				tp.Add(e.Topic, e.Partition)
			}
			known[n] = tp
		}
	}
	described, warns, err := observe.DescribeOnWire(ctx, cl, selected, known, g.HasVolume())
	if err != nil {
		return nil, nil, err
	}
	g.WarnAll(warns)
	var out []whyState
	var notFound []string
	now := g.Now()
	for i := range described {
		d := &described[i]
		if d.Err != "" {
			g.Warnf("group %s: %s", d.Group, d.Err)
			continue
		}
		gs := vol.LiveState(d, heldByMembers(d), now)
		if d.State == "Dead" && !vol.Known[d.Group] && len(gs.Partitions) == 0 {
			notFound = append(notFound, d.Group)
			continue
		}
		out = append(out, whyState{gs: gs, members: len(d.Members), state: d.State, fileMod: fileModOf(vol, d.Group)})
	}
	return out, notFound, nil
}

// heldByMembers: a group with members is held by its coordinator; else
// unknown here.
func heldByMembers(d *wire.GroupDescription) inspect.Held {
	if len(d.Members) > 0 {
		return inspect.HeldYes
	}
	return inspect.HeldUnknown
}

func fileModOf(vol *observe.VolumeRead, group string) time.Time {
	if f, _ := observe.ShownFile(vol.Files[group]); f != nil {
		return f.ModTime
	}
	return time.Time{}
}

// watchStuck observes the groups over window, from the first observation
// on, and returns the tracker and the last observation.
func watchStuck(ctx context.Context, g *Globals, window time.Duration, states []whyState, snap func() ([]whyState, views.GroupsSourcesView, []string, error)) (*observe.StuckTracker, []whyState, error) {
	tr := observe.NewStuckTracker()
	add := func(sts []whyState) {
		at := time.Now()
		for _, st := range sts {
			tr.Add(st.gs, st.members, st.fileMod, at)
		}
	}
	add(states)
	interval := max(window/5, time.Second)
	n := max(1, int(window/interval))
	g.Notef("watching for %s (%d observations, every %s)", window, n+1, interval)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := 0; i < n; i++ {
		select {
		case <-ctx.Done():
			return tr, states, ctx.Err()
		case <-tick.C:
		}
		next, _, _, err := snap()
		if err != nil {
			return tr, states, err
		}
		states = next
		add(states)
	}
	return tr, states, nil
}
