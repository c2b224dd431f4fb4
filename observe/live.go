package observe

import (
	"context"
	"fmt"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// SelectListed is All/Regex with brokers: the groups the volume knows and
// those some broker lists (one gathering), selected by sel, with a warning
// for each broker whose listing failed. A listed group counts as known to
// the volume side too (described against the volume's assignment, with no
// offset file).
func SelectListed(ctx context.Context, cl *wire.Client, known map[string]bool, sel Selection) (listings []wire.BrokerGroups, selected, warnings []string, err error) {
	gg, err := cl.GatherGroups(ctx, wire.GroupRounds{})
	if err != nil {
		return nil, nil, nil, err
	}
	warnings = inspect.UnlistedWarnings(gg.Listings)
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	selected = inspect.SelectGroups(inspect.UnionGroupNames(compactSorted(names), gg.Listings), nil, sel.All, sel.Regex)
	for _, name := range selected {
		known[name] = true
	}
	return gg.Listings, selected, warnings, nil
}

// DescribeOnWire describes the selected groups on their coordinators, the
// partitions known from their offset files asked for explicitly (kaas
// answers nothing to OffsetFetch-all); groups whose partitions nothing
// named get the OffsetFetch-all fallback. Warnings name what could not be
// asked.
func DescribeOnWire(ctx context.Context, cl *wire.Client, selected []string, known map[string]wire.TopicPartitions, hasVolume bool) ([]wire.GroupDescription, []string, error) {
	var warnings []string
	described, err := cl.DescribeMany(ctx, selected, wire.DescribeOptions{Known: known})
	if described == nil && err != nil {
		return nil, nil, err
	}
	if err != nil {
		warnings = append(warnings, fmt.Sprintf("log offsets: %v (lag unknown where the log end is missing)", err))
	}
	asked, coords := inspect.FetchAllCandidates(described, known)
	ans := cl.FetchAllWithLogs(ctx, asked, coords)
	if ans.LogsErr != nil {
		warnings = append(warnings, fmt.Sprintf("log offsets: %v", ans.LogsErr))
	}
	if w := inspect.NoPartitionsWarning(inspect.MergeFetchAll(described, asked, ans), hasVolume); w != "" {
		warnings = append(warnings, w)
	}
	return described, warnings, nil
}

// HeldOf is whether group's coordinator holds it, from a CoordinatorHolds
// answer (a group missing from it is unknown).
func HeldOf(held map[string]bool, group string) inspect.Held {
	h, ok := held[group]
	switch {
	case !ok:
		return inspect.HeldUnknown
	case h:
		return inspect.HeldYes
	}
	return inspect.HeldNo
}

// LiveDescribed is a describe with brokers: the groups selected, the
// brokers' listings (with All or Regex) and names, the result, and
// warnings of what could not be listed or asked.
type LiveDescribed struct {
	Selected []string
	Listings []wire.BrokerGroups
	Names    *inspect.NodeNamer
	Result   inspect.DescribeResult[inspect.LiveDescription]
	Warnings []string
}

// DescribeLive describes the groups sel selects with the brokers. All or
// Regex select among the volume's groups and those a broker lists
// (SelectListed). The volume's side comes first (vol nil: no volume): its
// segments are read before the brokers are asked, the evidence a served
// end is checked against; then the wire rounds (DescribeOnWire, and
// whether each coordinator holds its group, asked at now()), each answer
// joined with its offline description in the read model. On an error of
// the wire rounds, d holds the listing's warnings.
func DescribeLive(ctx context.Context, cl *wire.Client, vol *VolumeRead, sel Selection, filter inspect.DescribeFilter, lag *inspect.LagFilter, now func() time.Time) (*LiveDescribed, error) {
	known, a := map[string]bool{}, (*volume.Assignment)(nil)
	if vol != nil {
		known, a = vol.Known, vol.Assignment
	}
	d := &LiveDescribed{Names: inspect.NewNodeNamer(a), Selected: inspect.SelectGroups(nil, sel.Names, false, nil)}
	if sel.SelectAll() {
		var err error
		if d.Listings, d.Selected, d.Warnings, err = SelectListed(ctx, cl, known, sel); err != nil {
			return nil, err
		}
	}
	var files map[string]*inspect.GroupDescription
	if vol != nil {
		files = inspect.DescribeKnown(d.Selected, vol.Known, vol.Files, vol.Assignment, vol.State)
	}
	asked := now()
	described, warns, err := DescribeOnWire(ctx, cl, d.Selected, inspect.KnownPartitions(files), vol != nil)
	if err != nil {
		return d, err // the listing's warnings stand
	}
	d.Warnings = append(d.Warnings, warns...)
	held := cl.CoordinatorHolds(ctx, inspect.HoldCandidates(described, files), d.Listings)
	byName := make(map[string]*wire.GroupDescription, len(described))
	for i := range described {
		byName[described[i].Group] = &described[i]
	}
	d.Result = inspect.DescribeLive(inspect.LiveDescribeInput{Described: described, Files: files, Names: d.Names, Filter: filter, Lag: lag, Held: held,
		State: func(grp string) *inspect.GroupState {
			return vol.LiveState(byName[grp], HeldOf(held, grp), asked)
		}})
	return d, nil
}
