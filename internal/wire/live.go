package wire

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// NotReported is what kaasctl says when kaas leaves a member field empty
// (kaas never fills client_host and member metadata, and may send empty
// assignment bytes).
const NotReported = "not reported by the broker"

// Broker is one broker from the cluster metadata.
type Broker struct {
	NodeID int32  `json:"nodeId"`
	Host   string `json:"host"`
	Port   int32  `json:"port"`
	Rack   string `json:"rack,omitempty"`
}

// Addr is host:port.
func (b Broker) Addr() string { return net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))) }

// brokerName labels a node for messages: "node 2 (host:port)".
func (c *Client) brokerName(node int32) string {
	c.mu.Lock()
	a := c.addrs[node]
	c.mu.Unlock()
	if a == "" {
		return fmt.Sprintf("node %d", node)
	}
	return fmt.Sprintf("node %d (%s)", node, a)
}

func (c *Client) rememberAddr(node int32, addr string) {
	c.mu.Lock()
	c.addrs[node] = addr
	c.mu.Unlock()
}

// errText renders a kafka error code with its name and message.
func errText(code int16, msg *string) string {
	if code == 0 {
		return ""
	}
	e := kerr.ErrorForCode(code)
	s := e.Error()
	if msg != nil && *msg != "" {
		s += ": " + *msg
	}
	return s
}

// limiter bounds concurrency.
func (c *Client) forEach(n int, fn func(i int)) {
	par := c.Concurrency
	if par <= 0 {
		par = DefaultConcurrency
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// request sends req to one node with the per-call timeout and turns
// failures into a BrokerError naming the broker.
func (c *Client) request(ctx context.Context, node int32, req kmsg.Request) (kmsg.Response, error) {
	cctx, cancel := c.WithTimeout(ctx)
	defer cancel()
	resp, err := c.KGO.Broker(int(node)).Request(cctx, req)
	for wait := 200 * time.Millisecond; err != nil && unknownNode(err) && wait <= 800*time.Millisecond; wait *= 2 {
		// Right after a restart one broker's metadata can name a leader
		// the broker kgo asked does not list yet: the node is not
		// unknown, the answers disagree for a moment. Ask again.
		select {
		case <-cctx.Done():
			return nil, c.classify(c.brokerName(node), err)
		case <-time.After(wait):
		}
		resp, err = c.KGO.Broker(int(node)).Request(cctx, req)
	}
	if err != nil {
		return nil, c.classify(c.brokerName(node), err)
	}
	return resp, nil
}

// unknownNode is kgo's answer for a node no metadata answer it loaded
// lists (its error is not exported; its text is stable).
func unknownNode(err error) bool {
	return err.Error() == "unknown broker"
}

// Brokers lists the brokers from one metadata request.
func (c *Client) Brokers(ctx context.Context) ([]Broker, error) {
	md, err := c.metadata(ctx, []string{})
	if err != nil {
		return nil, err
	}
	return md.Brokers, nil
}

// TopicMeta is one topic's partitions and their leaders.
type TopicMeta struct {
	Topic      string          `json:"topic"`
	Err        string          `json:"error,omitempty"`
	Partitions map[int32]int32 `json:"partitions"` // partition → leader node (-1: none)
}

// Metadata is brokers plus the requested topics.
type Metadata struct {
	Brokers []Broker              `json:"brokers"`
	Topics  map[string]*TopicMeta `json:"topics"`
}

var errNoDiscovery = errors.New("kgo already knows the brokers")

// metadata asks any broker for the brokers and topics (nil topics: all
// topics; empty: none).
func (c *Client) metadata(ctx context.Context, topics []string) (*Metadata, error) {
	req := kmsg.NewPtrMetadataRequest()
	if topics != nil {
		req.Topics = make([]kmsg.MetadataRequestTopic, 0, len(topics))
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	}
	var kresp kmsg.Response
	err := errNoDiscovery
	if len(c.KGO.DiscoveredBrokers()) == 0 {
		// Through kgo while it knows no broker yet: it asks a seed (only
		// the answering ones after Check) and learns the brokers from
		// the answer, so requests to each broker need no second round.
		cctx, cancel := c.WithTimeout(ctx)
		kresp, err = c.KGO.Request(cctx, req)
		cancel()
	}
	if err != nil {
		if kresp, err = c.anyRequest(ctx, req); err != nil {
			return nil, fmt.Errorf("metadata: %w", err)
		}
	}
	resp := kresp.(*kmsg.MetadataResponse)
	md := &Metadata{Topics: map[string]*TopicMeta{}}
	for _, b := range resp.Brokers {
		br := Broker{NodeID: b.NodeID, Host: b.Host, Port: b.Port}
		if b.Rack != nil {
			br.Rack = *b.Rack
		}
		md.Brokers = append(md.Brokers, br)
		c.rememberAddr(b.NodeID, br.Addr())
	}
	slices.SortFunc(md.Brokers, func(a, b Broker) int { return int(a.NodeID) - int(b.NodeID) })
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		tm := &TopicMeta{Topic: *t.Topic, Err: errText(t.ErrorCode, nil), Partitions: map[int32]int32{}}
		for _, p := range t.Partitions {
			tm.Partitions[p.Partition] = p.Leader
		}
		md.Topics[tm.Topic] = tm
	}
	return md, nil
}

// Metadata returns the brokers and the given topics' partitions and leaders
// (nil: every topic).
func (c *Client) Metadata(ctx context.Context, topics []string) (*Metadata, error) {
	if topics == nil {
		return c.metadata(ctx, nil)
	}
	return c.metadata(ctx, dedupe(topics))
}

func dedupe(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// ListedGroup is one group in one broker's ListGroups answer.
type ListedGroup struct {
	Group        string `json:"group"`
	ProtocolType string `json:"protocolType"`
	State        string `json:"state"`
	GroupType    string `json:"groupType,omitempty"`
}

// BrokerGroups is one broker's ListGroups answer.
type BrokerGroups struct {
	Broker Broker        `json:"broker"`
	Groups []ListedGroup `json:"groups"`
	Err    string        `json:"error,omitempty"`
}

// ListGroupsEveryBroker sends ListGroups to every broker separately and
// returns each answer: on kaas a broker lists only what it holds in memory,
// and a group listed by a broker that does not coordinate it is the stale
// group symptom, so the answers are kept apart. A broker that fails has
// Err set; the call fails only when the broker list cannot be had.
func (c *Client) ListGroupsEveryBroker(ctx context.Context, states ...string) ([]BrokerGroups, error) {
	brokers, err := c.Brokers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]BrokerGroups, len(brokers))
	c.forEach(len(brokers), func(i int) {
		out[i] = c.listGroups(ctx, brokers[i], states...)
	})
	return out, nil
}

// listGroups is one broker's ListGroups answer, sorted by group.
func (c *Client) listGroups(ctx context.Context, b Broker, states ...string) BrokerGroups {
	out := BrokerGroups{Broker: b, Groups: []ListedGroup{}}
	req := kmsg.NewPtrListGroupsRequest()
	req.StatesFilter = states
	kresp, err := c.request(ctx, b.NodeID, req)
	if err != nil {
		out.Err = err.Error()
		return out
	}
	resp := kresp.(*kmsg.ListGroupsResponse)
	if resp.ErrorCode != 0 {
		out.Err = fmt.Sprintf("broker %s: ListGroups: %s", c.brokerName(b.NodeID), errText(resp.ErrorCode, nil))
		return out
	}
	out.Groups = make([]ListedGroup, 0, len(resp.Groups))
	for _, g := range resp.Groups {
		out.Groups = append(out.Groups, ListedGroup{Group: g.Group, ProtocolType: g.ProtocolType, State: g.GroupState, GroupType: g.GroupType})
	}
	byGroup := func(a, b ListedGroup) int { return strings.Compare(a.Group, b.Group) }
	if !slices.IsSortedFunc(out.Groups, byGroup) { // kaas answers sorted
		slices.SortFunc(out.Groups, byGroup)
	}
	return out
}

// ListedBy maps each group to the nodes that listed it.
func ListedBy(answers []BrokerGroups) map[string][]int32 {
	m := map[string][]int32{}
	for _, a := range answers {
		for _, g := range a.Groups {
			m[g.Group] = append(m[g.Group], a.Broker.NodeID)
		}
	}
	for k := range m {
		slices.Sort(m[k])
	}
	return m
}

// Coordinator is FindCoordinator's answer for one key.
type Coordinator struct {
	Key    string `json:"key"`
	NodeID int32  `json:"nodeId"`
	Host   string `json:"host,omitempty"`
	Port   int32  `json:"port,omitempty"`
	Err    string `json:"error,omitempty"`
	Code   int16  `json:"errorCode,omitempty"`
}

// FindCoordinators resolves many keys with batched FindCoordinator (v4
// carries every key in one request; franz-go splits per key for brokers
// older than v4). txn selects transactional ids instead of groups.
func (c *Client) FindCoordinators(ctx context.Context, keys []string, txn bool) (map[string]Coordinator, error) {
	list, err := c.findCoordinatorList(ctx, keys, txn)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Coordinator, len(list))
	for _, co := range list {
		out[co.Key] = co
	}
	return out, nil
}

// findCoordinatorList is FindCoordinators as a list: every key once (the
// last answer for a key wins), a key the broker left out answered with an
// error.
func (c *Client) findCoordinatorList(ctx context.Context, keys []string, txn bool) ([]Coordinator, error) {
	return c.findCoordinatorListOn(ctx, keys, txn, -1)
}

// findCoordinatorListOn is findCoordinatorList asking node first (the
// seeds when it does not answer; the seeds only when node is negative).
func (c *Client) findCoordinatorListOn(ctx context.Context, keys []string, txn bool, node int32) ([]Coordinator, error) {
	keys = dedupe(keys)
	if len(keys) == 0 {
		return nil, nil
	}
	ask := func(keys []string) (*kmsg.FindCoordinatorResponse, error) {
		req := kmsg.NewPtrFindCoordinatorRequest()
		if txn {
			req.CoordinatorType = 1
		}
		req.CoordinatorKeys = keys
		if len(keys) == 1 {
			req.CoordinatorKey = keys[0]
		}
		if node >= 0 {
			if kresp, err := c.request(ctx, node, req); err == nil {
				return kresp.(*kmsg.FindCoordinatorResponse), nil
			}
		}
		kresp, err := c.anyRequest(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("FindCoordinator: %w", err)
		}
		return kresp.(*kmsg.FindCoordinatorResponse), nil
	}
	// answers[i] is keys[i]'s answer; got[i] whether it came.
	answers := make([]Coordinator, len(keys))
	got := make([]bool, len(keys))
	put := func(keys []string, at int, resp *kmsg.FindCoordinatorResponse) {
		if len(resp.Coordinators) == 0 && len(keys) == 1 {
			answers[at] = Coordinator{Key: keys[0], NodeID: resp.NodeID, Host: resp.Host, Port: resp.Port, Code: resp.ErrorCode, Err: errText(resp.ErrorCode, resp.ErrorMessage)}
			got[at] = true
		}
		for k, co := range resp.Coordinators {
			// Brokers answer in the order asked; any other order is
			// found by search (keys are sorted).
			i := k
			if i >= len(keys) || keys[i] != co.Key {
				var ok bool
				if i, ok = slices.BinarySearch(keys, co.Key); !ok {
					continue // a key not asked
				}
			}
			answers[at+i] = Coordinator{Key: co.Key, NodeID: co.NodeID, Host: co.Host, Port: co.Port, Code: co.ErrorCode, Err: errText(co.ErrorCode, co.ErrorMessage)}
			got[at+i] = true
		}
	}
	perKey := len(keys) > 1 && !c.batchedFindCoordinator()
	if !perKey {
		resp, err := ask(keys)
		if err != nil {
			return nil, err
		}
		// A broker below v4 reads one key only and answers without
		// Coordinators[]: ask again key by key.
		perKey = len(keys) > 1 && len(resp.Coordinators) == 0
		if !perKey {
			put(keys, 0, resp)
		}
	}
	if perKey {
		var mu sync.Mutex
		var firstErr error
		c.forEach(len(keys), func(i int) {
			resp, err := ask(keys[i : i+1])
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			put(keys[i:i+1], i, resp)
		})
		if firstErr != nil {
			return nil, firstErr
		}
	}
	seen := map[int32]bool{}
	for i, k := range keys {
		if !got[i] {
			answers[i] = Coordinator{Key: k, NodeID: -1, Err: "the broker did not answer for this key"}
			continue
		}
		if co := answers[i]; co.Err == "" && co.Host != "" && !seen[co.NodeID] {
			seen[co.NodeID] = true
			c.rememberAddr(co.NodeID, net.JoinHostPort(co.Host, strconv.Itoa(int(co.Port))))
		}
	}
	return answers, nil
}

// batchedFindCoordinator reports whether the version cap lets
// FindCoordinator carry many keys (v4 and later).
func (c *Client) batchedFindCoordinator() bool {
	v, ok := c.Versions.LookupMaxKeyVersion(int16(kmsg.FindCoordinator))
	return !ok || v >= 4
}

// TopicPartitions is a set of partitions by topic.
type TopicPartitions map[string][]int32

// Add inserts partitions (deduplicated, sorted). One partition at a time
// is a binary search and, in the usual ascending order, an append: adding
// a topic's partitions one by one stays linear (sorting the whole list on
// every add made a 1,000,000-row plan quadratic).
func (tp TopicPartitions) Add(topic string, parts ...int32) {
	cur := tp[topic]
	if len(parts) > 8 {
		cur = append(cur, parts...)
		slices.Sort(cur)
		tp[topic] = slices.Compact(cur)
		return
	}
	for _, p := range parts {
		if n := len(cur); n == 0 || cur[n-1] < p {
			cur = append(cur, p)
			continue
		}
		if i, found := slices.BinarySearch(cur, p); !found {
			cur = slices.Insert(cur, i, p)
		}
	}
	tp[topic] = cur
}

// Topics lists the topic names, sorted.
func (tp TopicPartitions) Topics() []string {
	out := make([]string, 0, len(tp))
	for t := range tp {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Member is one member of a described group.
type Member struct {
	MemberID   string `json:"memberId"`
	InstanceID string `json:"instanceId,omitempty"`
	ClientID   string `json:"clientId"`
	ClientHost string `json:"clientHost"`
	// HostReported is false when the broker left client_host empty.
	HostReported bool `json:"hostReported"`
	// Subscription is decoded from the member metadata (consumer protocol).
	Subscription     []string `json:"subscription"`
	MetadataReported bool     `json:"metadataReported"`
	MetadataErr      string   `json:"metadataError,omitempty"`
	// Assignment is decoded from the member assignment (consumer protocol).
	Assignment         []AssignedTopic `json:"assignment"`
	AssignmentReported bool            `json:"assignmentReported"`
	AssignmentErr      string          `json:"assignmentError,omitempty"`
}

// AssignedTopic is one topic of a member's assignment.
type AssignedTopic struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// Host is the client host or NotReported.
func (m Member) Host() string {
	if !m.HostReported {
		return NotReported
	}
	return m.ClientHost
}

// SubscriptionText renders the subscribed topics or NotReported.
func (m Member) SubscriptionText() string {
	if !m.MetadataReported {
		return NotReported
	}
	if m.MetadataErr != "" {
		return "undecodable: " + m.MetadataErr
	}
	if len(m.Subscription) == 0 {
		return "(no topics)"
	}
	return strings.Join(m.Subscription, ",")
}

// AssignmentText renders the assignment as "t: 0,1; u: 2" or NotReported.
func (m Member) AssignmentText() string {
	if !m.AssignmentReported {
		return NotReported
	}
	if m.AssignmentErr != "" {
		return "undecodable: " + m.AssignmentErr
	}
	var parts []string
	for _, a := range m.Assignment {
		ps := make([]string, len(a.Partitions))
		for i, p := range a.Partitions {
			ps[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, a.Topic+": "+strings.Join(ps, ","))
	}
	if len(parts) == 0 {
		return "(nothing assigned)"
	}
	return strings.Join(parts, "; ")
}

// DescribedGroup is DescribeGroups' answer for one group, from its
// coordinator.
type DescribedGroup struct {
	Group        string   `json:"group"`
	Coordinator  int32    `json:"coordinator"`
	State        string   `json:"state"`
	ProtocolType string   `json:"protocolType"`
	Protocol     string   `json:"protocol"`
	Members      []Member `json:"members"`
	Err          string   `json:"error,omitempty"`
	Code         int16    `json:"errorCode,omitempty"`
}

// Topics lists the topics named by members' assignments and subscriptions.
func (g DescribedGroup) Topics() []string {
	var out []string
	for _, m := range g.Members {
		out = append(out, m.Subscription...)
		for _, a := range m.Assignment {
			out = append(out, a.Topic)
		}
	}
	return dedupe(out)
}

func decodeMember(protoType string, m kmsg.DescribeGroupsResponseGroupMember) Member {
	out := Member{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost, HostReported: m.ClientHost != "",
		Subscription: []string{}, Assignment: []AssignedTopic{}}
	if m.InstanceID != nil {
		out.InstanceID = *m.InstanceID
	}
	consumer := protoType == "consumer" || protoType == ""
	if len(m.ProtocolMetadata) > 0 {
		out.MetadataReported = true
		if consumer {
			var md kmsg.ConsumerMemberMetadata
			if err := md.ReadFrom(m.ProtocolMetadata); err != nil {
				out.MetadataErr = err.Error()
			} else {
				out.Subscription = dedupe(md.Topics)
			}
		} else {
			out.MetadataErr = fmt.Sprintf("protocol type %q is not the consumer protocol", protoType)
		}
	}
	if len(m.MemberAssignment) > 0 {
		out.AssignmentReported = true
		if consumer {
			var a kmsg.ConsumerMemberAssignment
			if err := a.ReadFrom(m.MemberAssignment); err != nil {
				out.AssignmentErr = err.Error()
			} else {
				for _, t := range a.Topics {
					ps := slices.Clone(t.Partitions)
					slices.Sort(ps)
					out.Assignment = append(out.Assignment, AssignedTopic{Topic: t.Topic, Partitions: ps})
				}
				slices.SortFunc(out.Assignment, func(x, y AssignedTopic) int { return strings.Compare(x.Topic, y.Topic) })
			}
		} else {
			out.AssignmentErr = fmt.Sprintf("protocol type %q is not the consumer protocol", protoType)
		}
	}
	return out
}

// byNode groups keys by their coordinator; keys whose lookup failed go to
// failed.
func byNode(keys []string, coords map[string]Coordinator) (map[int32][]string, map[string]Coordinator) {
	groups := map[int32][]string{}
	failed := map[string]Coordinator{}
	for _, k := range dedupe(keys) {
		co, ok := coords[k]
		if !ok {
			failed[k] = Coordinator{Key: k, NodeID: -1, Err: "no coordinator was looked up"}
			continue
		}
		if co.Err != "" || co.NodeID < 0 {
			failed[k] = co
			continue
		}
		groups[co.NodeID] = append(groups[co.NodeID], k)
	}
	return groups, failed
}

// batch is one request's worth of groups for one coordinator.
type batch struct {
	node   int32
	groups []string
}

// batches splits each coordinator's groups into requests of at most
// MaxBatch groups (all in one when MaxBatch is 0).
func (c *Client) batches(per map[int32][]string) []batch {
	var out []batch
	for _, n := range nodes(per) {
		gs := per[n]
		size := c.MaxBatch
		if size <= 0 {
			size = len(gs)
		}
		for len(gs) > 0 {
			k := min(size, len(gs))
			out = append(out, batch{n, gs[:k]})
			gs = gs[k:]
		}
	}
	return out
}

func nodes(m map[int32][]string) []int32 {
	out := make([]int32, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// DescribeGroups sends one DescribeGroups request per coordinator carrying
// all of its groups (coords from FindCoordinators) and decodes member
// subscriptions and assignments. Results come back in group order.
func (c *Client) DescribeGroups(ctx context.Context, groups []string, coords map[string]Coordinator) []DescribedGroup {
	per, failed := byNode(groups, coords)
	var mu sync.Mutex
	res := make(map[string]DescribedGroup, len(groups))
	for g, co := range failed {
		res[g] = DescribedGroup{Group: g, Coordinator: co.NodeID, Members: []Member{}, Code: co.Code, Err: "coordinator lookup: " + co.Err}
	}
	bs := c.batches(per)
	c.forEach(len(bs), func(i int) {
		ds := c.describeBatch(ctx, bs[i].node, bs[i].groups)
		mu.Lock()
		defer mu.Unlock()
		for _, d := range ds {
			res[d.Group] = d
		}
	})
	out := make([]DescribedGroup, 0, len(res))
	for _, g := range dedupe(groups) {
		out = append(out, res[g])
	}
	return out
}

// describeOn describes groups on one node (in MaxBatch requests), whether
// or not it coordinates them.
func (c *Client) describeOn(ctx context.Context, node int32, groups []string) map[string]DescribedGroup {
	bs := c.batches(map[int32][]string{node: groups})
	out := make(map[string]DescribedGroup, len(groups))
	for _, b := range bs {
		for _, d := range c.describeBatch(ctx, b.node, b.groups) {
			out[d.Group] = d
		}
	}
	return out
}

// describeBatch is one DescribeGroups request: every asked group comes
// back once, with the request's failure when it failed.
func (c *Client) describeBatch(ctx context.Context, node int32, gs []string) []DescribedGroup {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = gs
	kresp, err := c.request(ctx, node, req)
	out := make([]DescribedGroup, 0, len(gs))
	if err != nil {
		for _, g := range gs {
			out = append(out, DescribedGroup{Group: g, Coordinator: node, Members: []Member{}, Err: err.Error()})
		}
		return out
	}
	resp := kresp.(*kmsg.DescribeGroupsResponse)
	seen := make(map[string]bool, len(gs))
	for _, rg := range resp.Groups {
		dg := DescribedGroup{Group: rg.Group, Coordinator: node, State: rg.State, ProtocolType: rg.ProtocolType, Protocol: rg.Protocol,
			Members: make([]Member, 0, len(rg.Members)), Code: rg.ErrorCode, Err: errText(rg.ErrorCode, rg.ErrorMessage)}
		for _, m := range rg.Members {
			dg.Members = append(dg.Members, decodeMember(rg.ProtocolType, m))
		}
		slices.SortFunc(dg.Members, func(a, b Member) int { return strings.Compare(a.MemberID, b.MemberID) })
		if seen[rg.Group] {
			// A repeated group: the later answer wins, as before.
			for i := range out {
				if out[i].Group == rg.Group {
					out[i] = dg
				}
			}
			continue
		}
		seen[rg.Group] = true
		out = append(out, dg)
	}
	for _, g := range gs {
		if !seen[g] {
			out = append(out, DescribedGroup{Group: g, Coordinator: node, Members: []Member{}, Err: fmt.Sprintf("broker %s left the group out of its DescribeGroups answer", c.brokerName(node))})
		}
	}
	return out
}

// Committed is one committed offset. Offset -1 means none.
type Committed struct {
	Offset      int64  `json:"offset"`
	LeaderEpoch int32  `json:"leaderEpoch"`
	Metadata    string `json:"metadata,omitempty"`
	Err         string `json:"error,omitempty"`
}

// GroupOffsets is OffsetFetch's answer for one group.
type GroupOffsets struct {
	Group       string                         `json:"group"`
	Coordinator int32                          `json:"coordinator"`
	Offsets     map[string]map[int32]Committed `json:"offsets"`
	// NotFound is GROUP_ID_NOT_FOUND: the coordinator knows no such group
	// (no offsets in its memory).
	NotFound bool   `json:"notFound,omitempty"`
	Err      string `json:"error,omitempty"`
}

// brokerVersions asks one broker for its ApiVersions once per client.
func (c *Client) brokerVersions(ctx context.Context, node int32) (*kversion.Versions, error) {
	c.mu.Lock()
	v := c.brokerV[node]
	c.mu.Unlock()
	if v != nil {
		return v, nil
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kaasctl", softwareVersion(c.Settings.SoftwareVersion)
	kresp, err := c.request(ctx, node, req)
	if err != nil {
		return nil, err
	}
	resp := kresp.(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 {
		return nil, fmt.Errorf("broker %s: ApiVersions: %s", c.brokerName(node), errText(resp.ErrorCode, nil))
	}
	v = kversion.FromApiVersionsResponse(resp)
	c.mu.Lock()
	c.brokerV[node] = v
	c.mu.Unlock()
	return v, nil
}

// effectiveVersion is the version kgo will send key at to node.
func (c *Client) effectiveVersion(ctx context.Context, node int32, key kmsg.Key) (int16, error) {
	bv, err := c.brokerVersions(ctx, node)
	if err != nil {
		return -1, err
	}
	b, ok := bv.LookupMaxKeyVersion(int16(key))
	if !ok {
		return -1, nil
	}
	if cv, ok := c.Versions.LookupMaxKeyVersion(int16(key)); ok && cv < b {
		b = cv
	}
	return b, nil
}

// FetchCommitted fetches committed offsets by explicit partitions (kaas
// answers nothing to fetch-all). want maps each group to the partitions to
// ask for. Per coordinator it sends one OffsetFetch v8+ request carrying
// every group when the broker and the cap allow it, else one request per
// group, concurrently.
func (c *Client) FetchCommitted(ctx context.Context, want map[string]TopicPartitions, coords map[string]Coordinator) map[string]GroupOffsets {
	groups := make([]string, 0, len(want))
	for g := range want {
		groups = append(groups, g)
	}
	per, failed := byNode(groups, coords)
	var mu sync.Mutex
	res := make(map[string]GroupOffsets, len(want))
	put := func(g GroupOffsets) {
		mu.Lock()
		res[g.Group] = g
		mu.Unlock()
	}
	for g, co := range failed {
		res[g] = GroupOffsets{Group: g, Coordinator: co.NodeID, Offsets: map[string]map[int32]Committed{}, Err: "coordinator lookup: " + co.Err}
	}
	ns := nodes(per)
	type job struct {
		node   int32
		groups []string
		multi  bool
	}
	var jobs []job
	var jmu sync.Mutex
	c.forEach(len(ns), func(i int) {
		node := ns[i]
		v, err := c.effectiveVersion(ctx, node, kmsg.OffsetFetch)
		if err != nil {
			for _, g := range per[node] {
				put(GroupOffsets{Group: g, Coordinator: node, Offsets: map[string]map[int32]Committed{}, Err: err.Error()})
			}
			return
		}
		jmu.Lock()
		defer jmu.Unlock()
		if v >= 8 {
			for _, b := range c.batches(map[int32][]string{node: per[node]}) {
				jobs = append(jobs, job{node, b.groups, true})
			}
			return
		}
		for _, g := range per[node] {
			jobs = append(jobs, job{node, []string{g}, false})
		}
	})
	c.forEach(len(jobs), func(i int) {
		j := jobs[i]
		if j.multi {
			for _, g := range c.offsetFetchMulti(ctx, j.node, j.groups, want) {
				put(g)
			}
			return
		}
		put(c.offsetFetchOne(ctx, j.node, j.groups[0], want[j.groups[0]]))
	})
	return res
}

func (c *Client) offsetFetchMulti(ctx context.Context, node int32, groups []string, want map[string]TopicPartitions) []GroupOffsets {
	req := kmsg.NewPtrOffsetFetchRequest()
	for _, g := range groups {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g
		rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{}
		for _, t := range want[g].Topics() {
			rt := kmsg.NewOffsetFetchRequestGroupTopic()
			rt.Topic = t
			rt.Partitions = want[g][t]
			rg.Topics = append(rg.Topics, rt)
		}
		req.Groups = append(req.Groups, rg)
	}
	out := make([]GroupOffsets, 0, len(groups))
	kresp, err := c.request(ctx, node, req)
	if err != nil {
		for _, g := range groups {
			out = append(out, GroupOffsets{Group: g, Coordinator: node, Offsets: map[string]map[int32]Committed{}, Err: err.Error()})
		}
		return out
	}
	resp := kresp.(*kmsg.OffsetFetchResponse)
	seen := map[string]bool{}
	for _, rg := range resp.Groups {
		seen[rg.Group] = true
		g := GroupOffsets{Group: rg.Group, Coordinator: node, Offsets: map[string]map[int32]Committed{}}
		g.setErr(rg.ErrorCode)
		for _, t := range rg.Topics {
			for _, p := range t.Partitions {
				g.put(t.Topic, p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode)
			}
		}
		out = append(out, g)
	}
	for _, g := range groups {
		if !seen[g] {
			out = append(out, GroupOffsets{Group: g, Coordinator: node, Offsets: map[string]map[int32]Committed{}, Err: fmt.Sprintf("broker %s left the group out of its OffsetFetch answer", c.brokerName(node))})
		}
	}
	return out
}

func (c *Client) offsetFetchOne(ctx context.Context, node int32, group string, tps TopicPartitions) GroupOffsets {
	g := GroupOffsets{Group: group, Coordinator: node, Offsets: map[string]map[int32]Committed{}}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = group
	req.Topics = []kmsg.OffsetFetchRequestTopic{}
	for _, t := range tps.Topics() {
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic = t
		rt.Partitions = tps[t]
		req.Topics = append(req.Topics, rt)
	}
	kresp, err := c.request(ctx, node, req)
	if err != nil {
		g.Err = err.Error()
		return g
	}
	resp := kresp.(*kmsg.OffsetFetchResponse)
	if len(resp.Groups) > 0 { // a broker answering in the v8 shape
		rg := resp.Groups[0]
		g.setErr(rg.ErrorCode)
		for _, t := range rg.Topics {
			for _, p := range t.Partitions {
				g.put(t.Topic, p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode)
			}
		}
		return g
	}
	g.setErr(resp.ErrorCode)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			g.put(t.Topic, p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode)
		}
	}
	return g
}

func (g *GroupOffsets) setErr(code int16) {
	if code == kerr.GroupIDNotFound.Code {
		g.NotFound = true
		return
	}
	g.Err = errText(code, nil)
}

func (g *GroupOffsets) put(topic string, part int32, off int64, epoch int32, meta *string, code int16) {
	m := g.Offsets[topic]
	if m == nil {
		m = map[int32]Committed{}
		g.Offsets[topic] = m
	}
	c := Committed{Offset: off, LeaderEpoch: epoch, Err: errText(code, nil)}
	if meta != nil {
		c.Metadata = *meta
	}
	m[part] = c
}

// LogOffsets is one partition's log start and end (high watermark).
type LogOffsets struct {
	Start  int64  `json:"start"`
	End    int64  `json:"end"`
	Leader int32  `json:"leader"`
	Err    string `json:"error,omitempty"`
}

// ListLogOffsets finds log start and end offsets for the union of the given
// partitions in one round: one metadata request, then per leader one
// earliest and one latest ListOffsets request, all concurrently. A topic
// with nil partitions means every partition of it.
func (c *Client) ListLogOffsets(ctx context.Context, want TopicPartitions) (map[string]map[int32]LogOffsets, error) {
	return c.listLogOffsets(ctx, want, false)
}

// ListStableOffsets is ListLogOffsets' round for the last stable offset:
// ListOffsets latest with read_committed isolation, in End (Start stays
// -1). A read_committed consumer reads no further.
func (c *Client) ListStableOffsets(ctx context.Context, want TopicPartitions) (map[string]map[int32]LogOffsets, error) {
	return c.listLogOffsets(ctx, want, true)
}

func (c *Client) listLogOffsets(ctx context.Context, want TopicPartitions, stable bool) (map[string]map[int32]LogOffsets, error) {
	out := map[string]map[int32]LogOffsets{}
	if len(want) == 0 {
		return out, nil
	}
	md, err := c.metadata(ctx, want.Topics())
	if err != nil {
		return nil, err
	}
	set := func(t string, p int32, lo LogOffsets) {
		if out[t] == nil {
			out[t] = map[int32]LogOffsets{}
		}
		out[t][p] = lo
	}
	perLeader := map[int32]TopicPartitions{}
	for _, t := range want.Topics() {
		tm := md.Topics[t]
		parts := want[t]
		if tm == nil || tm.Err != "" {
			why := "topic not in the cluster metadata"
			if tm != nil {
				why = tm.Err
			}
			for _, p := range parts {
				set(t, p, LogOffsets{Start: -1, End: -1, Leader: -1, Err: why})
			}
			continue
		}
		if parts == nil {
			for p := range tm.Partitions {
				parts = append(parts, p)
			}
		}
		for _, p := range parts {
			leader, ok := tm.Partitions[p]
			switch {
			case !ok:
				set(t, p, LogOffsets{Start: -1, End: -1, Leader: -1, Err: "partition not in the cluster metadata"})
			case leader < 0:
				set(t, p, LogOffsets{Start: -1, End: -1, Leader: -1, Err: "partition has no leader"})
			default:
				if perLeader[leader] == nil {
					perLeader[leader] = TopicPartitions{}
				}
				perLeader[leader].Add(t, p)
				set(t, p, LogOffsets{Start: -1, End: -1, Leader: leader})
			}
		}
	}
	type job struct {
		leader int32
		ts     int64
	}
	var jobs []job
	for _, l := range slices.Sorted(maps.Keys(perLeader)) {
		if stable {
			jobs = append(jobs, job{l, -1})
			continue
		}
		jobs = append(jobs, job{l, -2}, job{l, -1})
	}
	var mu sync.Mutex
	c.forEach(len(jobs), func(i int) {
		j := jobs[i]
		tps := perLeader[j.leader]
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		if stable {
			req.IsolationLevel = 1 // read_committed: the last stable offset
		}
		for _, t := range tps.Topics() {
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = t
			for _, p := range tps[t] {
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Partition = p
				rp.CurrentLeaderEpoch = -1
				rp.Timestamp = j.ts
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		kresp, err := c.request(ctx, j.leader, req)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			for _, t := range tps.Topics() {
				for _, p := range tps[t] {
					lo := out[t][p]
					lo.Err = err.Error()
					out[t][p] = lo
				}
			}
			return
		}
		resp := kresp.(*kmsg.ListOffsetsResponse)
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				lo, ok := out[rt.Topic][rp.Partition]
				if !ok {
					continue
				}
				if rp.ErrorCode != 0 {
					lo.Err = errText(rp.ErrorCode, nil)
				} else if j.ts == -2 {
					lo.Start = rp.Offset
				} else {
					lo.End = rp.Offset
				}
				out[rt.Topic][rp.Partition] = lo
			}
		}
	})
	return out, nil
}

// StaleListing is a group listed by a broker that does not coordinate it
// (per FindCoordinator): on kaas, a stale in-memory group, the "deleted
// group reappears in --list" symptom.
type StaleListing struct {
	Group       string `json:"group"`
	ListedBy    int32  `json:"listedBy"`
	Coordinator int32  `json:"coordinator"`
	State       string `json:"state"`
}

// StaleListings compares every broker's ListGroups answer with the
// coordinators FindCoordinator gave. Groups whose lookup failed are
// skipped (no claim can be made about them).
func StaleListings(answers []BrokerGroups, coords map[string]Coordinator) []StaleListing {
	out := []StaleListing{}
	for _, a := range answers {
		for _, g := range a.Groups {
			co, ok := coords[g.Group]
			if !ok || co.Err != "" || co.NodeID < 0 || co.NodeID == a.Broker.NodeID {
				continue
			}
			out = append(out, StaleListing{Group: g.Group, ListedBy: a.Broker.NodeID, Coordinator: co.NodeID, State: g.State})
		}
	}
	slices.SortFunc(out, func(x, y StaleListing) int {
		if c := strings.Compare(x.Group, y.Group); c != 0 {
			return c
		}
		return int(x.ListedBy) - int(y.ListedBy)
	})
	return out
}
