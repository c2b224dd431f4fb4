package observe

import (
	"context"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// What groups describe --why observes: the selected groups' state, once
// or over a window, before BlockerSources names each lagging partition's
// blocker.

// WhyState is one group's state at an observation.
type WhyState struct {
	State      *inspect.GroupState
	Members    int    // -1: not asked (offline)
	GroupState string // the coordinator's answer ("" offline)
	FileMod    time.Time
}

// WhyOffline is the state of the selected groups from the volume alone,
// and the groups asked for that it does not know.
func WhyOffline(vol *VolumeRead, sel Selection) (out []WhyState, notFound []string) {
	for _, n := range inspect.SelectGroups(vol.KnownNames(), sel.Names, sel.All, sel.Regex) {
		if !vol.Known[n] {
			notFound = append(notFound, n)
			continue
		}
		out = append(out, WhyState{State: vol.State(n), Members: -1, FileMod: vol.FileModTime(n)})
	}
	return out, notFound
}

// WhyLive describes the selected groups on their coordinators, with the
// volume's files when there are any (hasVolume).
func WhyLive(ctx context.Context, cl *wire.Client, vol *VolumeRead, sel Selection, hasVolume bool, now time.Time, notes render.Notes) ([]WhyState, []string, error) {
	selected := inspect.SelectGroups(nil, sel.Names, false, nil)
	if sel.SelectAll() {
		_, all, warns, err := SelectListed(ctx, cl, vol.Known, sel)
		if err != nil {
			return nil, nil, err
		}
		warnAll(notes, warns)
		selected = all
	}
	described, warns, err := DescribeOnWire(ctx, cl, selected, shownFilePartitions(vol.Files, selected), hasVolume)
	if err != nil {
		return nil, nil, err
	}
	warnAll(notes, warns)
	var out []WhyState
	var notFound []string
	for i := range described {
		d := &described[i]
		if d.Err != "" {
			notes.Warnf("group %s: %s", d.Group, d.Err)
			continue
		}
		gs := vol.LiveState(d, heldByMembers(d), now)
		if d.State == "Dead" && !vol.Known[d.Group] && len(gs.Partitions) == 0 {
			notFound = append(notFound, d.Group)
			continue
		}
		out = append(out, WhyState{State: gs, Members: len(d.Members), GroupState: d.State, FileMod: vol.FileModTime(d.Group)})
	}
	return out, notFound, nil
}

func warnAll(notes render.Notes, warns []string) {
	for _, w := range warns {
		notes.Warnf("%s", w)
	}
}

// heldByMembers: a group with members is held by its coordinator; else
// unknown here.
func heldByMembers(d *wire.GroupDescription) inspect.Held {
	if len(d.Members) > 0 {
		return inspect.HeldYes
	}
	return inspect.HeldUnknown
}

// FileModTime is when the offset file the brokers load for group was
// written (zero when there is none).
func (v *VolumeRead) FileModTime(group string) time.Time {
	if f, _ := ShownFile(v.Files[group]); f != nil {
		return f.ModTime
	}
	return time.Time{}
}

// WatchStuck observes the groups over window (an observation every
// window/5, at least a second apart) from the first observation on, and
// returns the tracker and the last observation.
func WatchStuck(ctx context.Context, window time.Duration, states []WhyState, snap func() ([]WhyState, error), notes render.Notes) (*StuckTracker, []WhyState, error) {
	tr := NewStuckTracker()
	add := func(sts []WhyState) {
		at := time.Now()
		for _, st := range sts {
			tr.Add(st.State, st.Members, st.FileMod, at)
		}
	}
	add(states)
	interval := max(window/5, time.Second)
	n := max(1, int(window/interval))
	notes.Notef("watching for %s (%d observations, every %s)", window, n+1, interval)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := 0; i < n; i++ {
		select {
		case <-ctx.Done():
			return tr, states, ctx.Err()
		case <-tick.C:
		}
		next, err := snap()
		if err != nil {
			return tr, states, err
		}
		states = next
		add(states)
	}
	return tr, states, nil
}

// Reporter is told a run's notes, warnings and the findings of what it
// read.
type Reporter interface {
	render.Notes
	WarnFindings([]volume.Finding)
}

// WhyReading is what --why reads its blocker sources with: the volume
// (Layout zero: none) and its assignment, the brokers (nil: offline), the
// run's clock, the record limits, the flags a printed fix repeats, and the
// window's tracker (nil: one look).
type WhyReading struct {
	Layout     volume.Layout
	Assignment *volume.Assignment
	Client     *wire.Client
	Now        time.Time
	Limits     volume.RecordLimits
	Flags      string
	Stuck      func(group, topic string, partition int32) *inspect.Stuck
}

// WhyBlockerSources reads the slot files and the marker queue and, with
// brokers, asks the leaders for the last stable offsets of the states'
// partitions; what it could not read is told to rep.
func WhyBlockerSources(ctx context.Context, in WhyReading, states []WhyState, rep Reporter) *BlockerSources {
	src := ReadBlockerSources(in.Layout, in.Assignment, in.Now, in.Limits)
	rep.WarnFindings(src.Findings)
	for _, fe := range src.Errors {
		rep.Warnf("%s: %s", fe.Path, fe.Problem)
	}
	src.Flags = in.Flags
	if in.Stuck != nil {
		src.Stuck = in.Stuck
	}
	if in.Client != nil {
		gss := make([]*inspect.GroupState, len(states))
		for i := range states {
			gss[i] = states[i].State
		}
		if err := src.AskStable(ctx, in.Client, gss); err != nil {
			rep.Warnf("last stable offsets (ListOffsets read_committed): %v; lag to the last stable offset comes from the segments", err)
		}
	}
	if in.Layout.DataDir == "" {
		rep.Warnf("no data dir: the records at the committed offsets cannot be read (pass --data-dir); only the brokers' answers are used")
	}
	return src
}
