package wire

import (
	"context"
	"slices"
	"strings"
)

// The extra rounds of a live 'groups describe': the OffsetFetch-all
// fallback with its log offsets, and whether a coordinator lists the
// groups it is asked about. Data in, raw answers out; inspect decides.

// FetchAllAnswers is the OffsetFetch-all fallback's answers: every
// committed offset each group's coordinator answered, and the log offsets
// of the partitions found.
type FetchAllAnswers struct {
	Committed map[string]GroupOffsets
	Logs      map[string]map[int32]LogOffsets
	// LogsErr is the ListOffsets round's failure (Logs is then nil).
	LogsErr error
}

// FetchAllWithLogs asks each group's coordinator for all of its committed
// offsets (FetchAllCommitted), then the log offsets of the union of the
// partitions found in one ListOffsets round (none when nothing was found).
func (c *Client) FetchAllWithLogs(ctx context.Context, groups []string, coords map[string]Coordinator) FetchAllAnswers {
	if len(groups) == 0 {
		return FetchAllAnswers{}
	}
	ans := FetchAllAnswers{Committed: c.FetchAllCommitted(ctx, groups, coords)}
	union := TopicPartitions{}
	for _, grp := range groups {
		for t, ps := range ans.Committed[grp].Offsets {
			for p := range ps {
				union.Add(t, p)
			}
		}
	}
	if len(union) > 0 {
		ans.Logs, ans.LogsErr = c.ListLogOffsets(ctx, union)
	}
	return ans
}

// CoordinatorHolds says, for each group of want (per coordinator node),
// whether its coordinator lists it. listings are every broker's ListGroups
// answers when already asked, read without another request; with nil
// listings each coordinator of want is asked (GroupsHeld). A group whose
// coordinator's listing is missing or failed is left out (unknown).
func (c *Client) CoordinatorHolds(ctx context.Context, want map[int32][]string, listings []BrokerGroups) map[string]bool {
	if len(want) == 0 {
		return nil
	}
	if listings != nil {
		return ListedHolds(want, listings)
	}
	out := map[string]bool{}
	for _, h := range c.GroupsHeld(ctx, want) {
		for g, held := range h.Held {
			out[g] = held
		}
	}
	return out
}

// ListedHolds answers CoordinatorHolds from listings already asked (each
// broker's groups sorted by id, as ListGroupsEveryBroker returns them).
func ListedHolds(want map[int32][]string, listings []BrokerGroups) map[string]bool {
	byNode := make(map[int32]*BrokerGroups, len(listings))
	for i := range listings {
		byNode[listings[i].Broker.NodeID] = &listings[i]
	}
	out := map[string]bool{}
	for node, groups := range want {
		b, ok := byNode[node]
		if !ok || b.Err != "" {
			continue
		}
		for _, g := range groups {
			_, held := slices.BinarySearchFunc(b.Groups, g, func(lg ListedGroup, g string) int { return strings.Compare(lg.Group, g) })
			out[g] = held
		}
	}
	return out
}
