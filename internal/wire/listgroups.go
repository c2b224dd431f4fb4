package wire

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Holding is one broker's answer to "which of these groups do you list?".
type Holding struct {
	Held map[string]bool // every asked group: listed or not (nil when Err is set)
	Err  string
}

// GroupsHeld sends ListGroups to each node of want (concurrently) and
// reports, for the groups asked of that node, whether its listing names
// them; a node that fails has Err set. On kaas a broker lists only the
// groups it holds in memory. A coordinator's listing can run to thousands
// of groups while a describe asks about a few, so the answer is read
// without decoding it into a slice of groups (heldResponse).
func (c *Client) GroupsHeld(ctx context.Context, want map[int32][]string) map[int32]Holding {
	nodes := make([]int32, 0, len(want))
	for n := range want {
		nodes = append(nodes, n)
	}
	res := make([]Holding, len(nodes))
	c.forEach(len(nodes), func(i int) {
		n := nodes[i]
		req := newHeldRequest(want[n])
		kresp, err := c.request(ctx, n, req)
		if err != nil {
			res[i].Err = err.Error()
			return
		}
		resp := kresp.(*heldResponse)
		if resp.ErrorCode != 0 {
			res[i].Err = fmt.Sprintf("broker %s: ListGroups: %s", c.brokerName(n), errText(resp.ErrorCode, nil))
			return
		}
		res[i].Held = resp.heldMap()
	})
	out := make(map[int32]Holding, len(nodes))
	for i, n := range nodes {
		out[n] = res[i]
	}
	return out
}

// heldRequest is a ListGroups request whose response (heldResponse) keeps
// only whether each asked group is listed. It is sent as kmsg's request is
// (same key, versions and encoding); only the reading of the answer
// differs.
type heldRequest struct {
	kmsg.ListGroupsRequest
	asked []string
	index map[string]int // asked group → its position in asked
}

// heldMaxVersion is the newest ListGroups response layout heldResponse
// reads (v5: group, protocol type, state, type); a newer franz-go that
// knows later versions does not change what is asked for.
const heldMaxVersion = 5

func newHeldRequest(groups []string) *heldRequest {
	r := &heldRequest{ListGroupsRequest: kmsg.NewListGroupsRequest(), asked: groups, index: make(map[string]int, len(groups))}
	for i, g := range groups {
		r.index[g] = i
	}
	return r
}

func (r *heldRequest) MaxVersion() int16 {
	return min(r.ListGroupsRequest.MaxVersion(), heldMaxVersion)
}

func (r *heldRequest) ResponseKind() kmsg.Response {
	return &heldResponse{ListGroupsResponse: kmsg.ListGroupsResponse{Version: r.Version}, req: r}
}

// heldResponse is ListGroupsResponse read for membership: ThrottleMillis
// and ErrorCode are filled, Groups stays empty, and found says which of
// the request's groups the listing names.
type heldResponse struct {
	kmsg.ListGroupsResponse
	req   *heldRequest
	found []bool
}

func (r *heldResponse) RequestKind() kmsg.Request {
	req := newHeldRequest(nil)
	req.Version = r.Version
	if r.req != nil {
		req.asked, req.index = r.req.asked, r.req.index
	}
	return req
}

// ReadFrom reads a ListGroups response body of r.Version (v0–v5, the
// layout kmsg decodes) without keeping its groups; a body that ends early
// is kbin.ErrNotEnoughData, as kmsg reports it (a null or negative group
// count reads as no groups, as in kmsg).
func (r *heldResponse) ReadFrom(src []byte) error {
	var index map[string]int
	if r.req != nil {
		index = r.req.index
	}
	r.found = make([]bool, len(index))
	b := kbin.Reader{Src: src}
	v := r.Version
	flex := v >= 3
	if v >= 1 {
		r.ThrottleMillis = b.Int32()
	}
	r.ErrorCode = b.Int16()
	var n int32
	if flex {
		n = b.CompactArrayLen()
	} else {
		n = b.ArrayLen()
	}
	for i := int32(0); i < n && b.Ok(); i++ {
		g := readStringSpan(&b, flex)
		if j, ok := index[string(g)]; ok { // no allocation: a map lookup by []byte→string conversion
			r.found[j] = true
		}
		readStringSpan(&b, flex) // protocol type
		if v >= 4 {
			readStringSpan(&b, flex) // state
		}
		if v >= 5 {
			readStringSpan(&b, flex) // group type
		}
		if flex {
			skipTags(&b)
		}
	}
	if flex {
		skipTags(&b)
	}
	return b.Complete()
}

// heldMap is found keyed by group id.
func (r *heldResponse) heldMap() map[string]bool {
	out := make(map[string]bool, len(r.found))
	if r.req == nil {
		return out
	}
	for i, g := range r.req.asked {
		out[g] = r.found[i]
	}
	return out
}

// readStringSpan reads a (compact when flex) Kafka string's bytes, aliasing
// src; a negative length marks the reader bad, as kmsg does for a string
// that may not be null.
func readStringSpan(b *kbin.Reader, flex bool) []byte {
	var l int
	if flex {
		l = int(b.Uvarint()) - 1
	} else {
		l = int(b.Int16())
	}
	return b.Span(l)
}

// skipTags skips a tagged-field section.
func skipTags(b *kbin.Reader) {
	for num := b.Uvarint(); num > 0 && b.Ok(); num-- {
		_ = b.Uvarint() // tag
		b.Span(int(b.Uvarint()))
	}
}
