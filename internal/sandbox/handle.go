package sandbox

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var (
	errNotCoordinator          = kerr.NotCoordinator.Code
	errCoordinatorNotAvailable = kerr.CoordinatorNotAvailable.Code
	errInvalidRequest          = kerr.InvalidRequest.Code
)

// kaasMaxVersions caps what ApiVersions advertises to what kaas serves for
// the group APIs; -1 hides an API kaas does not serve (KIP-848, share groups).
var kaasMaxVersions = map[int16]int16{
	int16(kmsg.OffsetCommit):              8,
	int16(kmsg.OffsetFetch):               8,
	int16(kmsg.FindCoordinator):           4,
	int16(kmsg.DescribeGroups):            5,
	int16(kmsg.ListGroups):                4,
	int16(kmsg.DeleteGroups):              2,
	int16(kmsg.OffsetDelete):              0,
	int16(kmsg.TxnOffsetCommit):           5, // by topic name, as the offset files are keyed
	int16(kmsg.ConsumerGroupHeartbeat):    -1,
	int16(kmsg.ConsumerGroupDescribe):     -1,
	int16(kmsg.ShareGroupHeartbeat):       -1,
	int16(kmsg.ShareGroupDescribe):        -1,
	int16(kmsg.ShareFetch):                -1,
	int16(kmsg.ShareAcknowledge):          -1,
	int16(kmsg.DescribeShareGroupOffsets): -1,
	int16(kmsg.AlterShareGroupOffsets):    -1,
	int16(kmsg.DeleteShareGroupOffsets):   -1,
}

func relay(f *frame) *item { return &item{f: f} }

func relayWith(f *frame, post func(*frame, []byte) []byte) *item { return &item{f: f, post: post} }

func local(f *frame, resp kmsg.Response) *item { return &item{f: f, local: f.encodeResponse(resp)} }

// handle decides what broker b does with one request.
func (s *Sandbox) handle(b *broker, f *frame) *item {
	switch kmsg.Key(f.key) {
	case kmsg.ApiVersions:
		it := relayWith(f, capVersions)
		// KIP-1242: a v5+ client names the node it believes it reached;
		// kfake knows only its own node 0, so translate ours to it (and
		// any other to an id kfake rejects with REBOOTSTRAP_REQUIRED).
		if f.version >= 5 {
			if req, err := f.decode(); err == nil {
				r := req.(*kmsg.ApiVersionsRequest)
				if r.NodeID != -1 {
					if r.NodeID == b.node {
						r.NodeID = 0
					} else {
						r.NodeID = 1 << 30
					}
					it.fwd = f.withBody(r)
				}
			}
		}
		return it
	case kmsg.Metadata:
		return relayWith(f, s.rewriteMetadata)
	case kmsg.DescribeCluster:
		return relayWith(f, s.rewriteDescribeCluster)
	case kmsg.FindCoordinator:
		return s.findCoordinator(f)
	case kmsg.ListOffsets:
		if s.zeroTimeOffsets.Load() {
			return relayWith(f, func(f *frame, raw []byte) []byte { return timestampAnswer(f, raw, 0) })
		}
		if s.noTimeOffsets.Load() {
			return relayWith(f, func(f *frame, raw []byte) []byte { return timestampAnswer(f, raw, -1) })
		}
		return s.listOffsets(f)
	case kmsg.ListGroups:
		return s.listGroups(b, f)
	}
	if h, ok := coordinatedRequests[kmsg.Key(f.key)]; ok {
		return s.handleCoordinated(b, f, h)
	}
	return relay(f)
}

// rawResponse re-encodes a decoded, modified upstream response.
func rawResponse(f *frame, resp kmsg.Response) []byte { return f.encodeResponse(resp) }

func capVersions(f *frame, raw []byte) []byte {
	resp, err := f.decodeResponse(raw)
	if err != nil {
		return withSize(raw)
	}
	r := resp.(*kmsg.ApiVersionsResponse)
	if r.ErrorCode != 0 {
		return withSize(raw)
	}
	keys := r.ApiKeys[:0]
	for _, k := range r.ApiKeys {
		if mx, ok := kaasMaxVersions[k.ApiKey]; ok {
			if mx < 0 || mx < k.MinVersion {
				continue
			}
			k.MaxVersion = min(k.MaxVersion, mx)
		}
		keys = append(keys, k)
	}
	r.ApiKeys = keys
	return rawResponse(f, r)
}

// runningBrokers returns the running brokers in node order.
func (s *Sandbox) runningBrokers() []*broker {
	var out []*broker
	for _, b := range s.brokers {
		if b.isRunning() {
			out = append(out, b)
		}
	}
	return out
}

func hostPort(addr string) (string, int32) {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			p, _ := strconv.Atoi(addr[i+1:])
			h := addr[:i]
			if len(h) > 1 && h[0] == '[' {
				h = h[1 : len(h)-1]
			}
			return h, int32(p)
		}
	}
	return addr, 0
}

// leaderNode is the node that leads a partition under the current
// assignment, falling back to a running broker when the assignment does not
// name a running one (a topic created since the last recompute).
func (s *Sandbox) leaderNode(rs *routeState, run []*broker, topic string, part int32) int32 {
	if rs != nil {
		if id, ok := rs.leaders[tp{topic, part}]; ok {
			if b, ok := s.byID[id]; ok && b.isRunning() {
				return b.node
			}
		}
	}
	if len(run) == 0 {
		return -1
	}
	return run[int(uint32(part))%len(run)].node
}

func (s *Sandbox) controllerNode(rs *routeState) int32 {
	if rs != nil {
		if b, ok := s.byID[rs.a.Controller]; ok && b.isRunning() {
			return b.node
		}
	}
	for _, b := range s.brokers {
		if b.isRunning() {
			return b.node
		}
	}
	return -1
}

func (s *Sandbox) rewriteMetadata(f *frame, raw []byte) []byte {
	resp, err := f.decodeResponse(raw)
	if err != nil {
		return withSize(raw)
	}
	r := resp.(*kmsg.MetadataResponse)
	rs := s.route.Load()
	run := s.runningBrokers()
	r.Brokers = r.Brokers[:0]
	for _, b := range run {
		h, p := hostPort(b.addr)
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port = b.node, h, p
		r.Brokers = append(r.Brokers, mb)
	}
	r.ControllerID = s.controllerNode(rs)
	for i := range r.Topics {
		t := &r.Topics[i]
		name := ""
		if t.Topic != nil {
			name = *t.Topic
		}
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if p.Leader < 0 {
				continue
			}
			n := s.leaderNode(rs, run, name, p.Partition)
			p.Leader = n
			p.Replicas = []int32{n}
			p.ISR = []int32{n}
			p.OfflineReplicas = nil
		}
	}
	return rawResponse(f, r)
}

func (s *Sandbox) rewriteDescribeCluster(f *frame, raw []byte) []byte {
	resp, err := f.decodeResponse(raw)
	if err != nil {
		return withSize(raw)
	}
	r := resp.(*kmsg.DescribeClusterResponse)
	r.Brokers = r.Brokers[:0]
	for _, b := range s.runningBrokers() {
		h, p := hostPort(b.addr)
		db := kmsg.NewDescribeClusterResponseBroker()
		db.NodeID, db.Host, db.Port = b.node, h, p
		r.Brokers = append(r.Brokers, db)
	}
	r.ControllerID = s.controllerNode(s.route.Load())
	return rawResponse(f, r)
}

// findCoordinator answers from the current assignment, as every kaas broker
// does: key type 0 through both tiers, 1 (transactions) through the hash tier.
func (s *Sandbox) findCoordinator(f *frame) *item {
	req, err := f.decode()
	if err != nil {
		return relay(f)
	}
	r := req.(*kmsg.FindCoordinatorRequest)
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	rs := s.route.Load()
	keys := r.CoordinatorKeys
	if r.Version <= 3 {
		keys = []string{r.CoordinatorKey}
	}
	for _, k := range keys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key = k
		c.NodeID = -1
		var id string
		switch r.CoordinatorType {
		case 0:
			id = rs.group(k)
		case 1:
			id = rs.txn(k)
		default:
			c.ErrorCode = errInvalidRequest
		}
		if c.ErrorCode == 0 {
			if b, ok := s.byID[id]; ok {
				// Like kaas's registry lookup: a stopped broker still
				// resolves to its address; clients find it refusing.
				c.NodeID = b.node
				c.Host, c.Port = hostPort(b.addr)
			} else {
				c.ErrorCode = errCoordinatorNotAvailable
			}
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	if r.Version <= 3 {
		c := resp.Coordinators[0]
		resp.Coordinators = nil
		resp.ErrorCode, resp.NodeID, resp.Host, resp.Port = c.ErrorCode, c.NodeID, c.Host, c.Port
	}
	return local(f, resp)
}

// handleCoordinated gates group- and transaction-scoped requests on
// ownership: requests for keys this broker does not coordinate get
// NOT_COORDINATOR; the rest go to kfake (and commits/deletes reach the
// volume). h is the request's row of coordinatedRequests.
func (s *Sandbox) handleCoordinated(b *broker, f *frame, h coordinatedHandler) *item {
	req, err := f.decode()
	if err != nil {
		return relay(f) // kfake answers or drops it, as it would
	}
	if r, ok := req.(*kmsg.OffsetCommitRequest); ok && s.coordinationBroken(b) {
		return brokenCommitAnswer(f, r)
	}
	return h(coordReq{s: s, b: b, f: f, rs: s.route.Load()}, req)
}

// coordReq is one group- or transaction-scoped request on its way through
// broker b, with the assignment it is routed by.
type coordReq struct {
	s  *Sandbox
	b  *broker
	f  *frame
	rs *routeState
}

// owns reports whether b coordinates group g.
func (c coordReq) owns(g string) bool { return c.rs.group(g) == c.b.id }

// ownsTxn reports whether b coordinates transactional id id.
func (c coordReq) ownsTxn(id string) bool { return c.rs.txn(id) == c.b.id }

// gate relays a request b coordinates (owned) to kfake, and answers the
// others locally with notCoord's NOT_COORDINATOR response.
func (c coordReq) gate(owned bool, notCoord func() kmsg.Response) *item {
	if owned {
		return relay(c.f)
	}
	return local(c.f, notCoord())
}

// coordinatedHandler decides what a broker does with one decoded request
// of its kind.
type coordinatedHandler func(c coordReq, req kmsg.Request) *item

// groupGate is the row of a request for one group (group names it) that a
// broker not coordinating the group answers with the request's response
// holding NOT_COORDINATOR in its error code (code) and nothing else.
func groupGate[Q kmsg.Request, P kmsg.Response](group func(Q) string, code func(P) *int16) coordinatedHandler {
	return func(c coordReq, req kmsg.Request) *item {
		r := req.(Q)
		return c.gate(c.owns(group(r)), func() kmsg.Response {
			resp := r.ResponseKind().(P)
			*code(resp) = errNotCoordinator
			return resp
		})
	}
}

// coordinatedRequests are the requests gated on their coordinator, one row
// per API: a request kaas routes by group or transactional id is one row
// here (handle sends every key listed to handleCoordinated).
var coordinatedRequests = map[kmsg.Key]coordinatedHandler{
	kmsg.OffsetCommit:    offsetCommitGate,
	kmsg.OffsetFetch:     offsetFetchGate,
	kmsg.OffsetDelete:    offsetDeleteGate,
	kmsg.TxnOffsetCommit: txnOffsetCommitGate,
	kmsg.JoinGroup: func(c coordReq, req kmsg.Request) *item {
		r := req.(*kmsg.JoinGroupRequest)
		return c.gate(c.owns(r.Group), func() kmsg.Response {
			resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
			resp.ErrorCode, resp.Generation = errNotCoordinator, -1
			return resp
		})
	},
	kmsg.SyncGroup:              groupGate(func(r *kmsg.SyncGroupRequest) string { return r.Group }, func(p *kmsg.SyncGroupResponse) *int16 { return &p.ErrorCode }),
	kmsg.Heartbeat:              groupGate(func(r *kmsg.HeartbeatRequest) string { return r.Group }, func(p *kmsg.HeartbeatResponse) *int16 { return &p.ErrorCode }),
	kmsg.LeaveGroup:             groupGate(func(r *kmsg.LeaveGroupRequest) string { return r.Group }, func(p *kmsg.LeaveGroupResponse) *int16 { return &p.ErrorCode }),
	kmsg.ConsumerGroupHeartbeat: groupGate(func(r *kmsg.ConsumerGroupHeartbeatRequest) string { return r.Group }, func(p *kmsg.ConsumerGroupHeartbeatResponse) *int16 { return &p.ErrorCode }),
	kmsg.DescribeGroups: func(c coordReq, req kmsg.Request) *item {
		r := req.(*kmsg.DescribeGroupsRequest)
		return c.s.splitGroups(c.b, c.f, r.Groups, c.owns,
			func(sub []string) kmsg.Request { cp := *r; cp.Groups = sub; return &cp },
			func(g string) any {
				d := kmsg.NewDescribeGroupsResponseGroup()
				d.Group, d.ErrorCode = g, errNotCoordinator
				return d
			}, deadAsEmpty)
	},
	kmsg.DeleteGroups: func(c coordReq, req kmsg.Request) *item {
		r := req.(*kmsg.DeleteGroupsRequest)
		return c.s.splitGroups(c.b, c.f, r.Groups, c.owns,
			func(sub []string) kmsg.Request { cp := *r; cp.Groups = sub; return &cp },
			func(g string) any {
				d := kmsg.NewDeleteGroupsResponseGroup()
				d.Group, d.ErrorCode = g, errNotCoordinator
				return d
			}, c.s.afterDeleteGroups(c.b))
	},
	kmsg.ConsumerGroupDescribe: func(c coordReq, req kmsg.Request) *item {
		r := req.(*kmsg.ConsumerGroupDescribeRequest)
		return c.s.splitGroups(c.b, c.f, r.Groups, c.owns,
			func(sub []string) kmsg.Request { cp := *r; cp.Groups = sub; return &cp },
			func(g string) any {
				d := kmsg.NewConsumerGroupDescribeResponseGroup()
				d.Group, d.ErrorCode = g, errNotCoordinator
				return d
			}, nil)
	},
	kmsg.InitProducerID: func(c coordReq, req kmsg.Request) *item {
		r := req.(*kmsg.InitProducerIDRequest)
		return c.gate(r.TransactionalID == nil || c.ownsTxn(*r.TransactionalID), func() kmsg.Response {
			resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
			resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = errNotCoordinator, -1, -1
			return resp
		})
	},
	kmsg.AddPartitionsToTxn: addPartitionsToTxnGate,
	kmsg.AddOffsetsToTxn: func(c coordReq, req kmsg.Request) *item {
		r := req.(*kmsg.AddOffsetsToTxnRequest)
		return c.gate(c.ownsTxn(r.TransactionalID), func() kmsg.Response {
			resp := r.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
			resp.ErrorCode = errNotCoordinator
			return resp
		})
	},
	kmsg.EndTxn: func(c coordReq, req kmsg.Request) *item {
		r := req.(*kmsg.EndTxnRequest)
		if c.ownsTxn(r.TransactionalID) {
			return relayWith(c.f, func(f *frame, raw []byte) []byte { return c.s.afterEndTxn(c.b, f, r, raw) })
		}
		resp := r.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = errNotCoordinator
		return local(c.f, resp)
	},
}

// offsetCommitGate relays a commit of a group b coordinates, then writes
// it to the volume (unless the group's commits are unfenced); any other
// commit gets NOT_COORDINATOR for every partition.
func offsetCommitGate(c coordReq, req kmsg.Request) *item {
	r := req.(*kmsg.OffsetCommitRequest)
	if !c.owns(r.Group) {
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, errNotCoordinator
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return local(c.f, resp)
	}
	s, b := c.s, c.b
	it := relayWith(c.f, func(f *frame, raw []byte) []byte { return s.afterCommit(b, f, r, raw) })
	it.fwd = s.unfencedCommit(c.f, r)
	return it
}

// offsetFetchGate answers OffsetFetch: from v8 group by group, before it
// for the one group, relayed when b coordinates it (with kaas's answer for
// a group it does not hold) and NOT_COORDINATOR for every partition when
// not.
func offsetFetchGate(c coordReq, req kmsg.Request) *item {
	r := req.(*kmsg.OffsetFetchRequest)
	if r.Version >= 8 {
		return c.s.offsetFetchGroups(c.b, c.f, r, c.owns)
	}
	if c.owns(r.Group) {
		emptyAll := c.s.emptyFetchAll.Load()
		return relayWith(c.f, func(f *frame, raw []byte) []byte { return unknownGroupAsEmpty(f, r, raw, emptyAll) })
	}
	resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
	resp.ErrorCode = errNotCoordinator
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.ErrorCode = p, -1, errNotCoordinator
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return local(c.f, resp)
}

// offsetDeleteGate relays an OffsetDelete of a group b coordinates, then
// writes the file as kaas does; any other gets NOT_COORDINATOR.
func offsetDeleteGate(c coordReq, req kmsg.Request) *item {
	r := req.(*kmsg.OffsetDeleteRequest)
	if !c.owns(r.Group) {
		resp := r.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = errNotCoordinator
		return local(c.f, resp)
	}
	s, b := c.s, c.b
	return relayWith(c.f, func(f *frame, raw []byte) []byte { return s.afterOffsetDelete(b, f, r, raw) })
}

// txnOffsetCommitGate relays a transactional commit for a group b
// coordinates, then records it; any other gets NOT_COORDINATOR for every
// partition.
func txnOffsetCommitGate(c coordReq, req kmsg.Request) *item {
	r := req.(*kmsg.TxnOffsetCommitRequest)
	if c.owns(r.Group) {
		s, b := c.s, c.b
		return relayWith(c.f, func(f *frame, raw []byte) []byte { return s.afterTxnOffsetCommit(b, f, r, raw) })
	}
	resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, t := range r.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, errNotCoordinator
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return local(c.f, resp)
}

// addPartitionsToTxnGate relays AddPartitionsToTxn from v4 (sent by
// brokers, not routed by id) or for an id b coordinates; any other gets
// NOT_COORDINATOR for every partition.
func addPartitionsToTxnGate(c coordReq, req kmsg.Request) *item {
	r := req.(*kmsg.AddPartitionsToTxnRequest)
	if r.Version >= 4 || c.ownsTxn(r.TransactionalID) {
		return relay(c.f)
	}
	resp := r.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	for _, t := range r.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, errNotCoordinator
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return local(c.f, resp)
}

// splitGroups handles a request naming several groups: groups this broker
// coordinates go to kfake, the others get NOT_COORDINATOR, and the answer
// keeps the request's order. mkSub builds the request for a subset;
// notOwned builds one group's error entry; after sees the merged response.
func (s *Sandbox) splitGroups(b *broker, f *frame, groups []string, owns func(string) bool,
	mkSub func([]string) kmsg.Request, notOwned func(string) any, after func(kmsg.Response)) *item {
	var mine []string
	for _, g := range groups {
		if owns(g) {
			mine = append(mine, g)
		}
	}
	if len(mine) == 0 {
		resp := kmsg.ResponseForKey(f.key)
		resp.SetVersion(f.version)
		for _, g := range groups {
			appendGroup(resp, notOwned(g))
		}
		return local(f, resp)
	}
	it := &item{f: f}
	if len(mine) < len(groups) {
		it.fwd = f.withBody(mkSub(mine))
	}
	it.post = func(f *frame, raw []byte) []byte {
		resp, err := f.decodeResponse(raw)
		if err != nil {
			return withSize(raw)
		}
		if len(mine) < len(groups) {
			resp = mergeGroups(resp, groups, owns, notOwned)
		}
		if after != nil {
			after(resp)
		}
		return rawResponse(f, resp)
	}
	return it
}

// deadAsEmpty: kaas describes a group it coordinates but does not hold in
// memory as Empty with no members; kfake says Dead.
func deadAsEmpty(resp kmsg.Response) {
	r := resp.(*kmsg.DescribeGroupsResponse)
	for i := range r.Groups {
		if g := &r.Groups[i]; g.ErrorCode == 0 && g.State == "Dead" {
			g.State = "Empty"
		}
	}
}

func appendGroup(resp kmsg.Response, g any) {
	switch r := resp.(type) {
	case *kmsg.DescribeGroupsResponse:
		r.Groups = append(r.Groups, g.(kmsg.DescribeGroupsResponseGroup))
	case *kmsg.DeleteGroupsResponse:
		r.Groups = append(r.Groups, g.(kmsg.DeleteGroupsResponseGroup))
	case *kmsg.ConsumerGroupDescribeResponse:
		r.Groups = append(r.Groups, g.(kmsg.ConsumerGroupDescribeResponseGroup))
	case *kmsg.OffsetFetchResponse:
		r.Groups = append(r.Groups, g.(kmsg.OffsetFetchResponseGroup))
	}
}

// mergeGroups rebuilds a multi-group response in request order, with the
// groups kfake answered and error entries for the rest.
func mergeGroups(resp kmsg.Response, order []string, owns func(string) bool, notOwned func(string) any) kmsg.Response {
	out := kmsg.ResponseForKey(resp.Key())
	out.SetVersion(resp.GetVersion())
	switch r := resp.(type) {
	case *kmsg.DescribeGroupsResponse:
		o := out.(*kmsg.DescribeGroupsResponse)
		o.ThrottleMillis = r.ThrottleMillis
		o.Groups = inRequestOrder(r.Groups, func(g kmsg.DescribeGroupsResponseGroup) string { return g.Group }, order, owns, notOwned)
	case *kmsg.DeleteGroupsResponse:
		o := out.(*kmsg.DeleteGroupsResponse)
		o.ThrottleMillis = r.ThrottleMillis
		o.Groups = inRequestOrder(r.Groups, func(g kmsg.DeleteGroupsResponseGroup) string { return g.Group }, order, owns, notOwned)
	case *kmsg.ConsumerGroupDescribeResponse:
		o := out.(*kmsg.ConsumerGroupDescribeResponse)
		o.ThrottleMillis = r.ThrottleMillis
		o.Groups = inRequestOrder(r.Groups, func(g kmsg.ConsumerGroupDescribeResponseGroup) string { return g.Group }, order, owns, notOwned)
	case *kmsg.OffsetFetchResponse:
		o := out.(*kmsg.OffsetFetchResponse)
		o.ThrottleMillis = r.ThrottleMillis
		o.Groups = inRequestOrder(r.Groups, func(g kmsg.OffsetFetchResponseGroup) string { return g.Group }, order, owns, notOwned)
	default:
		return resp
	}
	return out
}

// inRequestOrder lists, for each group in order, the entry kfake answered
// when this broker owns the group, else the notOwned error entry.
func inRequestOrder[G any](answered []G, name func(G) string, order []string, owns func(string) bool, notOwned func(string) any) []G {
	got := map[string]G{}
	for _, g := range answered {
		got[name(g)] = g
	}
	var out []G
	for _, g := range order {
		if v, ok := got[g]; ok && owns(g) {
			out = append(out, v)
		} else {
			out = append(out, notOwned(g).(G))
		}
	}
	return out
}

// unknownGroupAsEmpty answers OffsetFetch of a group the coordinator does
// not hold the way kaas does: no error, offset -1 for each requested
// partition (kfake says GROUP_ID_NOT_FOUND).
//
// With emptyAll (the EmulateEmptyOffsetFetchAll quirk), OffsetFetch with null
// topics gets no topics, as from kaas.
func unknownGroupAsEmpty(f *frame, req *kmsg.OffsetFetchRequest, raw []byte, emptyAll bool) []byte {
	resp, err := f.decodeResponse(raw)
	if err != nil {
		return withSize(raw)
	}
	r := resp.(*kmsg.OffsetFetchResponse)
	var changed bool
	if req.Version < 8 {
		changed = unknownGroupAsEmptyOne(r, req, emptyAll)
	} else {
		changed = unknownGroupAsEmptyEach(r, req, emptyAll)
	}
	if !changed {
		return withSize(raw)
	}
	return rawResponse(f, r)
}

// unknownGroupAsEmptyOne is unknownGroupAsEmpty for the one group of an
// OffsetFetch before v8; it reports whether it changed the response.
func unknownGroupAsEmptyOne(r *kmsg.OffsetFetchResponse, req *kmsg.OffsetFetchRequest, emptyAll bool) bool {
	changed := false
	if emptyAll && req.Topics == nil && r.ErrorCode != errNotCoordinator {
		r.ErrorCode, r.Topics, changed = 0, nil, true
	}
	if r.ErrorCode == kerr.GroupIDNotFound.Code {
		r.ErrorCode, r.Topics, changed = 0, nil, true
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition, rp.Offset = p, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			r.Topics = append(r.Topics, rt)
		}
	}
	return changed
}

// unknownGroupAsEmptyEach is unknownGroupAsEmpty for each group of an
// OffsetFetch from v8; it reports whether it changed the response.
func unknownGroupAsEmptyEach(r *kmsg.OffsetFetchResponse, req *kmsg.OffsetFetchRequest, emptyAll bool) bool {
	changed := false
	if emptyAll {
		for i := range r.Groups {
			g := &r.Groups[i]
			for _, a := range req.Groups {
				if a.Group == g.Group && a.Topics == nil && g.ErrorCode != errNotCoordinator {
					g.ErrorCode, g.Topics, changed = 0, nil, true
				}
			}
		}
	}
	asked := map[string]kmsg.OffsetFetchRequestGroup{}
	for _, g := range req.Groups {
		asked[g.Group] = g
	}
	for i := range r.Groups {
		g := &r.Groups[i]
		if g.ErrorCode != kerr.GroupIDNotFound.Code {
			continue
		}
		g.ErrorCode, g.Topics, changed = 0, nil, true
		for _, t := range asked[g.Group].Topics {
			rt := kmsg.NewOffsetFetchResponseGroupTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
				rp.Partition, rp.Offset = p, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			g.Topics = append(g.Topics, rt)
		}
	}
	return changed
}

func (s *Sandbox) offsetFetchGroups(b *broker, f *frame, r *kmsg.OffsetFetchRequest, owns func(string) bool) *item {
	names := make([]string, len(r.Groups))
	for i, g := range r.Groups {
		names[i] = g.Group
	}
	it := s.splitGroups(b, f, names, owns,
		func(sub []string) kmsg.Request {
			c := *r
			c.Groups = nil
			for _, g := range r.Groups {
				if owns(g.Group) {
					c.Groups = append(c.Groups, g)
				}
			}
			return &c
		},
		func(g string) any {
			d := kmsg.NewOffsetFetchResponseGroup()
			d.Group, d.ErrorCode = g, errNotCoordinator
			return d
		}, nil)
	if post := it.post; post != nil {
		it.post = func(f *frame, raw []byte) []byte {
			out := post(f, raw)
			return unknownGroupAsEmpty(f, r, out[4:], s.emptyFetchAll.Load())
		}
	}
	return it
}
