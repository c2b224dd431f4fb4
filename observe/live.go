package observe

import (
	"context"
	"fmt"

	"github.com/kaasctl/kaasctl/inspect"
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
