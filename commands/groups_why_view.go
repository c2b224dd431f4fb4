package commands

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
)

// whySnapshot is one observation of the selected groups: offline from the
// volume, live from the brokers (with the volume's files when given).
func whySnapshot(ctx context.Context, g *Globals, cl *wire.Client, o groupsDescribeOptions) ([]whyState, GroupsSourcesView, []string, error) {
	vol := &observe.VolumeRead{Files: map[string][]inspect.GroupFileData{}, Known: map[string]bool{}}
	src := GroupsSourcesView{Live: cl != nil, Mode: "offline", Brokers: []BrokerSourceView{}}
	if g.HasVolume() {
		var err error
		if vol, err = readDescribeVolume(g, o); err != nil {
			return nil, src, nil, err
		}
		volumeSources(&src, vol.Layout, vol.Assignment, vol.Scan)
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
func watchStuck(ctx context.Context, g *Globals, window time.Duration, states []whyState, snap func() ([]whyState, GroupsSourcesView, []string, error)) (*observe.StuckTracker, []whyState, error) {
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

// printWhy prints the view: a block per group for people, a row per
// partition in csv.
func printWhy(g *Globals, v *GroupsWhyView) error {
	return g.Printer.Print(render.Output{Data: v, Items: v.Groups, Table: whyTable(v), Human: func(p *render.Printer) error { return whyHuman(p, v) }})
}

// whyTable is one row per lagging partition.
func whyTable(v *GroupsWhyView) *render.TableData {
	t := render.NewTable("GROUP", "TOPIC", "PARTITION", "COMMITTED", "LOG-END", "LAG", "LAST-STABLE", "LAG-STABLE", "BLOCKER", "DETAIL+", "FIX+")
	for _, gw := range v.Groups {
		for _, b := range gw.Blockers {
			t.Add(gw.Group, b.Topic, strconv.Itoa(int(b.Partition)), strconv.FormatInt(b.Committed, 10), strconv.FormatInt(b.LogEnd, 10), strconv.FormatInt(b.Lag, 10),
				optInt(b.StableEnd), optInt(b.StableLag), b.Kind, b.Detail, strings.TrimSpace(b.Fix+" "+b.FixCommand))
		}
	}
	return t
}

// whyHuman is a block per group: each lagging partition, its blocker,
// the record(s) at the committed offset, the transaction, the fix.
func whyHuman(p *render.Printer, v *GroupsWhyView) error {
	if len(v.Groups) == 0 {
		fmtf(p.Out, "no group selected\n")
	}
	for i, gw := range v.Groups {
		if i > 0 {
			fmtf(p.Out, "\n")
		}
		head := "GROUP " + render.Clean(gw.Group)
		if gw.Members != nil {
			head += fmt.Sprintf("  (%s, %s)", orNone(gw.State), render.Plural(*gw.Members, "member", "members"))
		}
		fmtf(p.Out, "%s  %s lagging, %d blocked\n", p.Paint(render.Bold, head), render.Plural(gw.Lagging, "partition", "partitions"), gw.Blocked)
		if gw.Lagging == 0 {
			fmtf(p.Out, "  no partition lags\n")
		}
		for _, b := range gw.Blockers {
			whyPartition(p, &b)
		}
		for _, pt := range gw.PendingTxnOffsets {
			fmtf(p.Out, "  pending offsets: %s\n", render.Clean(pt.Detail))
		}
	}
	fmtf(p.Out, "\nread %s of segments (at most %s a partition)\n", render.Plural(int(v.BytesRead), "byte", "bytes"), render.Plural(int(v.ReadBoundBytes), "byte", "bytes"))
	return nil
}

// whyPartition prints one partition's blocker block.
func whyPartition(p *render.Printer, b *inspect.PartitionBlocker) {
	stable := "last stable " + optInt(b.StableEnd)
	if b.StableLag != nil {
		stable += fmt.Sprintf(" (lag %d, %s)", *b.StableLag, b.StableSource)
	} else if b.StableNote != "" {
		stable += " (" + b.StableNote + ")"
	}
	fmtf(p.Out, "  %s/%d  committed %d  log end %d (lag %d)  %s\n", render.Clean(b.Topic), b.Partition, b.Committed, b.LogEnd, b.Lag, render.Clean(stable))
	kind := strings.ToUpper(b.Kind)
	if inspect.Blocking(b.Kind) {
		kind = p.Paint(render.Red, "BLOCKED "+b.Kind)
	}
	fmtf(p.Out, "    %s: %s\n", kind, render.Clean(b.Detail))
	if r := b.Record; r != nil && r.Batch != nil {
		bt := r.Batch
		fmtf(p.Out, "    batch:  offsets %d–%d, %s, codec %s, producer %d epoch %d, %s, byte %d of %s\n", bt.BaseOffset, bt.LastOffset,
			batchKind(bt.Transactional, bt.Control), bt.Codec, bt.ProducerID, bt.ProducerEpoch, crcWord(bt.CRCChecked, bt.CRCValid), bt.Position, render.Clean(bt.Segment))
		for _, rec := range r.Records {
			fmtf(p.Out, "    record: %s\n", render.Clean(inspect.RecordSummary(rec)))
		}
	}
	if t := b.Txn; t != nil && len(t.Groups) > 0 {
		fmtf(p.Out, "    blocks: %s\n", render.Clean(strings.Join(t.Groups, ", ")))
	}
	if b.Fix != "" {
		fmtf(p.Out, "    fix:    %s\n", render.Clean(b.Fix))
	}
	if b.FixCommand != "" {
		fmtf(p.Out, "            %s\n", render.Clean(b.FixCommand))
	}
	fmtf(p.Out, "    (%s)\n", render.Clean(b.Assumes))
}

func batchKind(txn, control bool) string {
	switch {
	case control:
		return "a control batch"
	case txn:
		return "transactional"
	}
	return "not transactional"
}

func crcWord(checked, valid bool) string {
	switch {
	case !checked:
		return "CRC not checked"
	case valid:
		return "CRC ok"
	}
	return "CRC MISMATCH"
}
