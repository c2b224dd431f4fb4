package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/views"
)

// groups describe --why: for every lagging partition, the blocker the
// read model names (observe.BlockerSources → inspect.ClassifyBlocker),
// with its evidence and a fix that runs as printed.

// whyOptions are --why and the flags that go with it.
type whyOptions struct {
	on     bool
	limits volume.RecordLimits
	// window watches the groups for a consumer sitting on its offset.
	window time.Duration
}

// whyFlags are describe's --why flags, bound to w.
func whyFlags(w *whyOptions) []cli.Flag {
	const cat = "Why it is stuck (--why)"
	w.limits = volume.DefaultRecordLimits()
	return []cli.Flag{
		&cli.BoolFlag{Name: "why", Usage: "for every lagging partition, the blocker: the record at the committed offset, the transactions holding the last stable offset, pending markers; with the fix", Category: cat, Destination: &w.on},
		&cli.IntFlag{Name: "peek", Value: 1, Usage: fmt.Sprintf("with --why: show `N` records from the committed offset (at most %d)", volume.MaxPeek), Category: cat, Destination: &w.limits.Peek},
		&cli.IntFlag{Name: "preview-bytes", Value: volume.DefaultPreviewBytes, Usage: fmt.Sprintf("with --why: show at most `N` bytes of each key and value (at most %d)", volume.MaxPreviewBytes), Category: cat, Destination: &w.limits.PreviewBytes},
		completion.DurationFlag(&w.window, "window", 0, "with --why: watch the groups over `D` (an observation every D/5, at least 1s apart) for a consumer that sits on its committed offset while its group is alive (0: one look)", cat),
		nowFlag(),
	}
}

// checkWhy refuses --peek, --preview-bytes and --window without --why,
// and values out of range.
func checkWhy(c *cli.Context, w *whyOptions) error {
	for _, name := range []string{"peek", "preview-bytes", "window"} {
		if c.IsSet(name) && !w.on {
			return exit.UsageErrorf("--%s needs --why", name)
		}
	}
	if !w.on {
		return nil
	}
	switch peek, pb := w.limits.Peek, w.limits.PreviewBytes; {
	case peek < 1 || peek > volume.MaxPeek:
		return exit.UsageErrorf("--peek %d: give 1 to %d records", peek, volume.MaxPeek)
	case pb < 1 || pb > volume.MaxPreviewBytes:
		return exit.UsageErrorf("--preview-bytes %d: give 1 to %d", pb, volume.MaxPreviewBytes)
	case w.window < 0:
		return exit.UsageErrorf("--window must not be negative")
	}
	return nil
}

// runGroupsWhy is describe --why: one observation (or a window of them),
// the last stable offsets when brokers are there, each lagging
// partition's blocker, the view; exit 3 when a partition is blocked.
func runGroupsWhy(ctx context.Context, g *Globals, cl *wire.Client, o groupsDescribeOptions) error {
	if o.drainWindow > 0 || o.view != "" || o.summaryOnly {
		return exit.UsageErrorf("--why prints its own view: leave out --drain-window, --view and --summary")
	}
	states, sources, notFound, err := whySnapshot(ctx, g, cl, o)
	if err != nil {
		return err
	}
	var tr *observe.StuckTracker
	if o.why.window > 0 {
		snap := func() ([]observe.WhyState, error) {
			sts, _, _, err := whySnapshot(ctx, g, cl, o)
			return sts, err
		}
		if tr, states, err = observe.WatchStuck(ctx, o.why.window, states, snap, g); err != nil {
			return err
		}
	}
	src, err := whySources(ctx, g, cl, states, o, tr)
	if err != nil {
		return err
	}
	v := views.GroupsWhyView{Sources: sources, Now: g.Now().Format(time.RFC3339Nano), WindowMs: o.why.window.Milliseconds(), NotFound: notFound,
		ReadBoundBytes: 2 * o.why.limits.MaxBytes(), Groups: views.WhyGroups(src, states, o.filter, cl != nil)}
	v.BytesRead = src.BytesRead
	if err := g.Printer.Print(views.WhyOutput(&v)); err != nil {
		return err
	}
	return views.WhyExit(&v, notFound)
}

// whySources reads the slot files and the marker queue and asks the
// leaders for the last stable offsets.
func whySources(ctx context.Context, g *Globals, cl *wire.Client, states []observe.WhyState, o groupsDescribeOptions, tr *observe.StuckTracker) (*observe.BlockerSources, error) {
	var l volume.Layout
	var a *volume.Assignment
	if g.HasVolume() {
		var err error
		if l, err = g.Layout(); err != nil {
			return nil, err
		}
		a = offlineAssignmentFor(g, l, o.sel.Scope())
	}
	var stuck func(group, topic string, partition int32) *inspect.Stuck
	if tr != nil {
		stuck = tr.Stuck
	}
	return observe.WhyBlockerSources(ctx, observe.WhyReading{Layout: l, Assignment: a, Client: cl, Now: g.Now(), Limits: o.why.limits, Flags: g.GivenFlags(), Stuck: stuck}, states, g), nil
}
