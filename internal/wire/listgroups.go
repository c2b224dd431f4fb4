package wire

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListGroupsOn sends ListGroups to each of nodes (concurrently) and returns
// each answer by node, groups sorted by id; a node that fails has Err set.
// On kaas a broker lists only the groups it holds in memory.
func (c *Client) ListGroupsOn(ctx context.Context, nodes []int32) map[int32]BrokerGroups {
	res := make([]BrokerGroups, len(nodes))
	c.forEach(len(nodes), func(i int) {
		n := nodes[i]
		res[i] = BrokerGroups{Broker: Broker{NodeID: n}, Groups: []ListedGroup{}}
		kresp, err := c.request(ctx, n, kmsg.NewPtrListGroupsRequest())
		if err != nil {
			res[i].Err = err.Error()
			return
		}
		resp := kresp.(*kmsg.ListGroupsResponse)
		if resp.ErrorCode != 0 {
			res[i].Err = fmt.Sprintf("broker %s: ListGroups: %s", c.brokerName(n), errText(resp.ErrorCode, nil))
			return
		}
		for _, g := range resp.Groups {
			res[i].Groups = append(res[i].Groups, ListedGroup{Group: g.Group, ProtocolType: g.ProtocolType, State: g.GroupState, GroupType: g.GroupType})
		}
		slices.SortFunc(res[i].Groups, func(a, b ListedGroup) int { return strings.Compare(a.Group, b.Group) })
	})
	out := make(map[int32]BrokerGroups, len(nodes))
	for i, n := range nodes {
		out[n] = res[i]
	}
	return out
}
