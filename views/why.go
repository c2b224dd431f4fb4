package views

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
)

// GroupsWhyView is the machine document of 'groups describe --why'.
type GroupsWhyView struct {
	Sources  GroupsSourcesView `json:"sources"`
	Now      string            `json:"now"`
	WindowMs int64             `json:"windowMs"`
	Groups   []GroupWhy        `json:"groups"`
	NotFound []string          `json:"notFound"`
	// ReadBoundBytes is the most read from the segments for one
	// partition (at its committed offset and, live, at a last stable
	// offset below it); BytesRead what this run read for all of them.
	ReadBoundBytes int64 `json:"readBoundBytes"`
	BytesRead      int64 `json:"bytesRead"`
}

// GroupWhy is one group's lagging partitions and their blockers.
type GroupWhy struct {
	Group string `json:"group"`
	// State and Members are the brokers' answer (absent offline).
	State    string                     `json:"state,omitempty"`
	Members  *int                       `json:"members,omitempty"`
	Lagging  int                        `json:"lagging"`
	Blocked  int                        `json:"blocked"`
	Blockers []inspect.PartitionBlocker `json:"partitions"`
	// PendingTxnOffsets are offsets open transactions staged for the
	// group: not visible yet, and lost if its coordinator restarts.
	PendingTxnOffsets []inspect.PendingTxnOffset `json:"pendingTransactionalOffsets"`
}

// CountWhy links the blockers' transactions to the groups they hold and
// counts each group's lagging and blocked partitions.
func CountWhy(groups []GroupWhy) {
	var all []inspect.PartitionBlocker
	for i := range groups {
		all = append(all, groups[i].Blockers...)
	}
	inspect.LinkTxnGroups(all) // fills the transactions the blockers point at
	for i := range groups {
		groups[i].Lagging = len(groups[i].Blockers)
		for _, b := range groups[i].Blockers {
			if inspect.Blocking(b.Kind) {
				groups[i].Blocked++
			}
		}
	}
}

// WhyOutput is the view: a block per group for people, a row per
// partition in csv.
func WhyOutput(v *GroupsWhyView) render.Output {
	return render.Output{Data: v, Items: v.Groups, Table: whyTable(v), Human: func(p *render.Printer) error { return whyHuman(p, v) }}
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
		fmt.Fprintf(p.Out, "no group selected\n")
	}
	for i, gw := range v.Groups {
		if i > 0 {
			fmt.Fprintf(p.Out, "\n")
		}
		head := "GROUP " + render.Clean(gw.Group)
		if gw.Members != nil {
			head += fmt.Sprintf("  (%s, %s)", OrNone(gw.State), render.Plural(*gw.Members, "member", "members"))
		}
		fmt.Fprintf(p.Out, "%s  %s lagging, %d blocked\n", p.Paint(render.Bold, head), render.Plural(gw.Lagging, "partition", "partitions"), gw.Blocked)
		if gw.Lagging == 0 {
			fmt.Fprintf(p.Out, "  no partition lags\n")
		}
		for _, b := range gw.Blockers {
			whyPartition(p, &b)
		}
		for _, pt := range gw.PendingTxnOffsets {
			fmt.Fprintf(p.Out, "  pending offsets: %s\n", render.Clean(pt.Detail))
		}
	}
	fmt.Fprintf(p.Out, "\nread %s of segments (at most %s a partition)\n", render.Plural(int(v.BytesRead), "byte", "bytes"), render.Plural(int(v.ReadBoundBytes), "byte", "bytes"))
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
	fmt.Fprintf(p.Out, "  %s/%d  committed %d  log end %d (lag %d)  %s\n", render.Clean(b.Topic), b.Partition, b.Committed, b.LogEnd, b.Lag, render.Clean(stable))
	kind := strings.ToUpper(b.Kind)
	if inspect.Blocking(b.Kind) {
		kind = p.Paint(render.Red, "BLOCKED "+b.Kind)
	}
	fmt.Fprintf(p.Out, "    %s: %s\n", kind, render.Clean(b.Detail))
	if r := b.Record; r != nil && r.Batch != nil {
		bt := r.Batch
		fmt.Fprintf(p.Out, "    batch:  offsets %d–%d, %s, codec %s, producer %d epoch %d, %s, byte %d of %s\n", bt.BaseOffset, bt.LastOffset,
			batchKind(bt.Transactional, bt.Control), bt.Codec, bt.ProducerID, bt.ProducerEpoch, crcWord(bt.CRCChecked, bt.CRCValid), bt.Position, render.Clean(bt.Segment))
		for _, rec := range r.Records {
			fmt.Fprintf(p.Out, "    record: %s\n", render.Clean(inspect.RecordSummary(rec)))
		}
	}
	if t := b.Txn; t != nil && len(t.Groups) > 0 {
		fmt.Fprintf(p.Out, "    blocks: %s\n", render.Clean(strings.Join(t.Groups, ", ")))
	}
	if b.Fix != "" {
		fmt.Fprintf(p.Out, "    fix:    %s\n", render.Clean(b.Fix))
	}
	if b.FixCommand != "" {
		fmt.Fprintf(p.Out, "            %s\n", render.Clean(b.FixCommand))
	}
	fmt.Fprintf(p.Out, "    (%s)\n", render.Clean(b.Assumes))
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

// WhyGroups classifies every lagging partition of states.
func WhyGroups(src *observe.BlockerSources, states []observe.WhyState, filter inspect.DescribeFilter, live bool) []GroupWhy {
	out := []GroupWhy{}
	for _, st := range states {
		gw := GroupWhy{Group: st.State.Group, State: st.GroupState, Blockers: []inspect.PartitionBlocker{}, PendingTxnOffsets: src.PendingTxnOffsets(st.State.Group)}
		if st.Members >= 0 {
			m := st.Members
			gw.Members = &m
		}
		for _, b := range src.Blockers(st.State, live, max(st.Members, 0)) {
			if len(filter.Topics) == 0 || slices.Contains(filter.Topics, b.Topic) {
				gw.Blockers = append(gw.Blockers, b)
			}
		}
		out = append(out, gw)
	}
	CountWhy(out)
	return out
}

// WhyExit is exit 3 when a partition is blocked, an error for groups not
// found.
func WhyExit(v *GroupsWhyView, notFound []string) error {
	if len(notFound) > 0 {
		return fmt.Errorf("group %s not found", inspect.QuoteList(notFound))
	}
	n := 0
	for _, gw := range v.Groups {
		n += gw.Blocked
	}
	if n > 0 {
		return exit.ProblemsFound("%d blocked partitions", n)
	}
	return nil
}
