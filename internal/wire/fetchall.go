package wire

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FetchAllCommitted asks each group's coordinator for all of its committed
// offsets (OffsetFetch with null topics), batched per coordinator when the
// broker serves OffsetFetch v8. It is the fallback for groups whose
// partitions nothing else names (no members, no offset file): Kafka answers
// it, kaas answers nothing (its OffsetFetch-all is empty), so an empty
// answer proves nothing there.
func (c *Client) FetchAllCommitted(ctx context.Context, groups []string, coords map[string]Coordinator) map[string]GroupOffsets {
	per, failed := byNode(groups, coords)
	res := make(map[string]GroupOffsets, len(groups))
	var mu sync.Mutex
	put := func(g GroupOffsets) {
		mu.Lock()
		res[g.Group] = g
		mu.Unlock()
	}
	for g, co := range failed {
		res[g] = GroupOffsets{Group: g, Coordinator: co.NodeID, Offsets: map[string]map[int32]Committed{}, Err: "coordinator lookup: " + co.Err}
	}
	ns := nodes(per)
	c.forEach(len(ns), func(i int) {
		node := ns[i]
		gs := per[node]
		v, err := c.effectiveVersion(ctx, node, kmsg.OffsetFetch)
		switch {
		case err != nil:
			for _, g := range gs {
				put(GroupOffsets{Group: g, Coordinator: node, Offsets: map[string]map[int32]Committed{}, Err: err.Error()})
			}
		case v >= 8:
			c.fetchAllBatched(ctx, node, gs, put)
		default:
			c.fetchAllEach(ctx, node, gs, put)
		}
	})
	return res
}

// fetchAllBatched asks node for every committed offset of groups gs in one
// OffsetFetch v8 and puts each group's answer (a group the answer left
// out, or all of them when the request failed, with the error).
func (c *Client) fetchAllBatched(ctx context.Context, node int32, gs []string, put func(GroupOffsets)) {
	req := kmsg.NewPtrOffsetFetchRequest()
	for _, g := range gs {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g
		rg.Topics = nil // every committed offset
		req.Groups = append(req.Groups, rg)
	}
	kresp, err := c.request(ctx, node, req)
	seen := map[string]bool{}
	if err == nil {
		for _, rg := range kresp.(*kmsg.OffsetFetchResponse).Groups {
			seen[rg.Group] = true
			g := GroupOffsets{Group: rg.Group, Coordinator: node, Offsets: map[string]map[int32]Committed{}}
			g.setErr(rg.ErrorCode)
			for _, t := range rg.Topics {
				for _, p := range t.Partitions {
					g.put(t.Topic, p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode)
				}
			}
			put(g)
		}
	}
	for _, g := range gs {
		if seen[g] {
			continue
		}
		why := fmt.Sprintf("broker %s left the group out of its OffsetFetch answer", c.brokerName(node))
		if err != nil {
			why = err.Error()
		}
		put(GroupOffsets{Group: g, Coordinator: node, Offsets: map[string]map[int32]Committed{}, Err: why})
	}
}

// fetchAllEach asks node for every committed offset of each group of gs,
// one OffsetFetch per group (brokers below v8 take one group a request).
func (c *Client) fetchAllEach(ctx context.Context, node int32, gs []string, put func(GroupOffsets)) {
	for _, g := range gs {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group = g
		req.Topics = nil
		out := GroupOffsets{Group: g, Coordinator: node, Offsets: map[string]map[int32]Committed{}}
		kresp, err := c.request(ctx, node, req)
		if err != nil {
			out.Err = err.Error()
			put(out)
			continue
		}
		resp := kresp.(*kmsg.OffsetFetchResponse)
		out.setErr(resp.ErrorCode)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				out.put(t.Topic, p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode)
			}
		}
		put(out)
	}
}
