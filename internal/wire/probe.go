package wire

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Probe steps, in the order a consumer takes them.
const (
	StepFindCoordinator = "FindCoordinator"
	StepOffsetCommit    = "OffsetCommit"
	StepOffsetFetch     = "OffsetFetch"
)

// ProbeStep is one timed round trip of a coordinator probe.
type ProbeStep struct {
	Step    string  `json:"step"`
	Seconds float64 `json:"seconds"`
	OK      bool    `json:"ok"`
	Err     string  `json:"error,omitempty"`
}

// CoordinatorProbe is what one broker did with a canary group.
type CoordinatorProbe struct {
	Node  int32  `json:"node"`
	Group string `json:"group"`
	// Coordinator is the node the broker's FindCoordinator answer named
	// (-1: none).
	Coordinator int32       `json:"coordinator"`
	Steps       []ProbeStep `json:"steps"`
	// FailedStep is the first step that failed ("" when all passed).
	FailedStep string `json:"failedStep,omitempty"`
	Err        string `json:"error,omitempty"`
}

// ProbeCommit is what a probe commits: Offset on Topic/Partition with
// Metadata, which tells this probe's commit from an earlier one's.
type ProbeCommit struct {
	Topic     string
	Partition int32
	Offset    int64
	Metadata  string
}

// ProbeCoordinator takes a canary group through the round trips a consumer
// makes, all to broker node: FindCoordinator (it must name node itself),
// OffsetCommit of the commit as an admin commit (generation -1, no member:
// the group stays Empty), and OffsetFetch, which must give the offset and
// its metadata back (a broker that keeps no metadata answers none: then the
// offset alone). Each step is timed; the first that fails ends the probe.
// The commit is the only write: the canary group's own offset file.
func (c *Client) ProbeCoordinator(ctx context.Context, node int32, group string, pc ProbeCommit) CoordinatorProbe {
	pr := &coordProbe{c: c, ctx: ctx, node: node, group: group, pc: pc,
		p: CoordinatorProbe{Node: node, Group: group, Coordinator: -1, Steps: []ProbeStep{}}}
	_ = pr.step(StepFindCoordinator, pr.findCoordinator) &&
		pr.step(StepOffsetCommit, pr.commit) &&
		pr.step(StepOffsetFetch, pr.fetch)
	return pr.p
}

// coordProbe is one ProbeCoordinator run: what it asks of which broker,
// and the probe's result so far.
type coordProbe struct {
	c     *Client
	ctx   context.Context
	node  int32
	group string
	pc    ProbeCommit
	p     CoordinatorProbe
}

// step times fn as the probe step name and records it; a failure is the
// probe's failed step and error. It reports whether fn succeeded.
func (pr *coordProbe) step(name string, fn func() error) bool {
	start := time.Now()
	err := fn()
	s := ProbeStep{Step: name, Seconds: time.Since(start).Seconds(), OK: err == nil}
	if err != nil {
		s.Err = err.Error()
		pr.p.FailedStep, pr.p.Err = name, s.Err
	}
	pr.p.Steps = append(pr.p.Steps, s)
	return err == nil
}

// findCoordinator asks the broker who coordinates the canary group: it
// must answer itself.
func (pr *coordProbe) findCoordinator() error {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey = pr.group
	req.CoordinatorKeys = []string{pr.group}
	kresp, err := pr.c.request(pr.ctx, pr.node, req)
	if err != nil {
		return err
	}
	resp := kresp.(*kmsg.FindCoordinatorResponse)
	code, id, msg := resp.ErrorCode, resp.NodeID, resp.ErrorMessage
	if len(resp.Coordinators) > 0 {
		co := resp.Coordinators[0]
		code, id, msg = co.ErrorCode, co.NodeID, co.ErrorMessage
	}
	if code != 0 {
		return fmt.Errorf("%s", errText(code, msg))
	}
	pr.p.Coordinator = id
	if id != pr.node {
		return fmt.Errorf("names node %d as the canary's coordinator, not itself", id)
	}
	return nil
}

// commit commits the probe's offset and metadata as an admin commit.
func (pr *coordProbe) commit() error {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = pr.group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = pr.pc.Topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = pr.pc.Partition, pr.pc.Offset, -1
	meta := pr.pc.Metadata
	rp.Metadata = &meta
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := pr.c.request(pr.ctx, pr.node, req)
	if err != nil {
		return err
	}
	for _, t := range kresp.(*kmsg.OffsetCommitResponse).Topics {
		for _, pp := range t.Partitions {
			if pp.ErrorCode != 0 {
				return fmt.Errorf("%s/%d: %s", t.Topic, pp.Partition, kerr.ErrorForCode(pp.ErrorCode))
			}
			return nil
		}
	}
	return fmt.Errorf("the answer has no partition")
}

// fetch reads the commit back: the offset committed, and its metadata
// unless the broker keeps none.
func (pr *coordProbe) fetch() error {
	topic, partition, offset, group := pr.pc.Topic, pr.pc.Partition, pr.pc.Offset, pr.group
	tps := TopicPartitions{}
	tps.Add(topic, partition)
	g := pr.c.FetchCommitted(pr.ctx, map[string]TopicPartitions{group: tps}, map[string]Coordinator{group: {Key: group, NodeID: pr.node}})[group]
	if g.Err != "" {
		return fmt.Errorf("%s", g.Err)
	}
	got, found := g.Offsets[topic][partition]
	switch {
	case !found:
		return fmt.Errorf("%s/%d: no committed offset in the answer", topic, partition)
	case got.Err != "":
		return fmt.Errorf("%s/%d: %s", topic, partition, got.Err)
	case got.Offset != offset:
		return fmt.Errorf("%s/%d: committed %d, fetched %d", topic, partition, offset, got.Offset)
	case got.Metadata != "" && got.Metadata != pr.pc.Metadata:
		return fmt.Errorf("%s/%d: committed metadata %q, fetched %q (an earlier commit's)", topic, partition, pr.pc.Metadata, got.Metadata)
	}
	return nil
}
