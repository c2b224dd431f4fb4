package wire

import (
	"context"
	"maps"
	"strings"
)

// PartitionOffsets is one partition of a group as the brokers answer it:
// the offset its coordinator holds committed and the log bounds its leader
// serves. The wire reports these facts only: the lag between them, and
// what a missing side means, is the read model's rule (inspect's
// PartitionLag, through observe), so that every command counts it alike.
type PartitionOffsets struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Committed is the next offset the group will read; -1 when the
	// coordinator holds no committed offset here.
	Committed int64 `json:"committed"`
	// Start and End are the log start and end (high watermark); -1 when
	// the leader did not answer them.
	Start int64 `json:"logStart"`
	End   int64 `json:"logEnd"`
	// LogErr is ListOffsets' error for the partition ("" when it answered).
	LogErr string `json:"logError,omitempty"`
	// Member is the member assigned the partition, when one is.
	Member string `json:"member,omitempty"`
}

// JoinOffsets joins committed offsets with log offsets over the union of
// their partitions and of those owners assigns (the caller passes only the
// group's topics), sorted by topic and partition. A committed answer with
// an error counts as none; owners maps "topic/partition" to a member id.
func JoinOffsets(committed map[string]map[int32]Committed, logs map[string]map[int32]LogOffsets, owners map[string]string) []PartitionOffsets {
	keys := TopicPartitions{} // filled in place: this map stays on the stack
	joinKeys(keys, committed, logs, owners)
	n := 0
	for _, ps := range keys {
		n += len(ps)
	}
	out := make([]PartitionOffsets, 0, n)
	for _, t := range keys.Topics() {
		ct, lt := committed[t], logs[t]
		for _, p := range keys[t] {
			po := PartitionOffsets{Topic: t, Partition: p, Committed: -1, Start: -1, End: -1}
			if co, ok := ct[p]; ok && co.Err == "" {
				po.Committed = co.Offset
			}
			if lo, ok := lt[p]; ok {
				po.Start, po.End, po.LogErr = lo.Start, lo.End, lo.Err
			}
			if len(owners) > 0 {
				po.Member = owners[t+"/"+itoa(p)]
			}
			out = append(out, po)
		}
	}
	return out
}

// joinKeys adds to keys the union of the partitions JoinOffsets reports:
// those with a committed answer, a log answer, or an owner.
func joinKeys(keys TopicPartitions, committed map[string]map[int32]Committed, logs map[string]map[int32]LogOffsets, owners map[string]string) {
	for t, ps := range committed {
		for p := range ps {
			keys.Add(t, p)
		}
	}
	for t, ps := range logs {
		for p := range ps {
			keys.Add(t, p)
		}
	}
	for k := range owners {
		if i := strings.LastIndexByte(k, '/'); i > 0 {
			t := k[:i]
			var p int32
			if _, err := fmtSscan(k[i+1:], &p); err == nil {
				keys.Add(t, p)
			}
		}
	}
}

// GroupDescription is everything the wire says about one group.
type GroupDescription struct {
	DescribedGroup
	CoordinatorAddr string       `json:"coordinatorAddr,omitempty"`
	Committed       GroupOffsets `json:"committed"`
	// Partitions are the group's partitions with their committed offset
	// and log bounds (JoinOffsets), whose lag the read model computes.
	Partitions []PartitionOffsets `json:"partitions"`
}

// DescribeOptions tunes DescribeMany.
type DescribeOptions struct {
	// Known maps a group to partitions known from elsewhere (its offset
	// file): kaas answers nothing to OffsetFetch-all, so these are asked
	// for explicitly together with every partition of the topics the
	// members subscribe to or are assigned.
	Known map[string]TopicPartitions
	// NoOffsets skips OffsetFetch and ListOffsets.
	NoOffsets bool
	// Gathered, when set, answers FindCoordinator and DescribeGroups from
	// a gathering already made (GatherGroups with Describe): only the
	// offsets and log ends are asked.
	Gathered *GatheredGroups
}

// DescribeMany describes many groups in O(brokers) round trips: one batched
// FindCoordinator, one DescribeGroups per coordinator, one metadata
// request for the topics involved, OffsetFetch per coordinator by explicit
// partitions, and one ListOffsets round over the union of partitions.
func (c *Client) DescribeMany(ctx context.Context, groups []string, opt DescribeOptions) ([]GroupDescription, error) {
	groups = dedupe(groups)
	coords, described, err := c.coordinatorsAndDescriptions(ctx, groups, opt.Gathered)
	if err != nil {
		return nil, err
	}
	out := make([]GroupDescription, len(described))
	for i, d := range described {
		out[i] = GroupDescription{DescribedGroup: d, Committed: GroupOffsets{Group: d.Group, Coordinator: d.Coordinator, Offsets: map[string]map[int32]Committed{}},
			Partitions: []PartitionOffsets{}}
		if co := coords[d.Group]; co.Host != "" {
			out[i].CoordinatorAddr = Broker{Host: co.Host, Port: co.Port}.Addr()
		}
	}
	if opt.NoOffsets {
		return out, nil
	}
	want, union, err := c.partitionsToAsk(ctx, described, opt.Known)
	if err != nil {
		return out, err
	}
	var logs map[string]map[int32]LogOffsets
	var lerr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		logs, lerr = c.ListLogOffsets(ctx, union)
	}()
	committed := c.FetchCommitted(ctx, want, coords)
	<-done
	for i := range out {
		g := out[i].Group
		if co, ok := committed[g]; ok {
			out[i].Committed = co
		}
		groupLogs := map[string]map[int32]LogOffsets{}
		for t := range want[g] {
			groupLogs[t] = logs[t]
		}
		owners := map[string]string{} // filled in place: this map stays on the stack
		addAssigned(owners, out[i].Members)
		out[i].Partitions = JoinOffsets(onlyValid(out[i].Committed.Offsets), groupLogs, owners)
	}
	return out, lerr
}

// partitionsToAsk is, per group, every partition of the topics its
// members subscribe to or are assigned (from one metadata request for all
// of them) plus the partitions known from elsewhere, and the union of
// them all, whose log ends are asked in one round.
func (c *Client) partitionsToAsk(ctx context.Context, described []DescribedGroup, known map[string]TopicPartitions) (want map[string]TopicPartitions, union TopicPartitions, err error) {
	allTopics := map[string]bool{}
	for _, d := range described {
		for _, t := range d.Topics() {
			allTopics[t] = true
		}
		for t := range known[d.Group] {
			allTopics[t] = true
		}
	}
	var md *Metadata
	if len(allTopics) > 0 {
		ts := make([]string, 0, len(allTopics))
		for t := range allTopics {
			ts = append(ts, t)
		}
		if md, err = c.Metadata(ctx, ts); err != nil {
			return nil, nil, err
		}
	}
	want = map[string]TopicPartitions{}
	union = TopicPartitions{}
	for _, d := range described {
		tp := TopicPartitions{}
		topics := d.Topics()
		for t := range known[d.Group] {
			topics = append(topics, t)
		}
		for _, t := range dedupe(topics) {
			if md != nil && md.Topics[t] != nil {
				for p := range md.Topics[t].Partitions {
					tp.Add(t, p)
				}
			}
			if ps := known[d.Group][t]; len(ps) > 0 {
				tp.Add(t, ps...)
			}
		}
		if len(tp) > 0 {
			want[d.Group] = tp
			for t, ps := range tp {
				union.Add(t, ps...)
			}
		}
	}
	return want, union, nil
}

// addAssigned maps "topic/partition" to the member assigned it in owners.
func addAssigned(owners map[string]string, members []Member) {
	for _, m := range members {
		for _, a := range m.Assignment {
			for _, p := range a.Partitions {
				owners[a.Topic+"/"+itoa(p)] = m.MemberID
			}
		}
	}
}

// coordinatorsAndDescriptions asks FindCoordinator and DescribeGroups for
// groups, or takes them from a gathering (a group it did not describe is
// described now).
func (c *Client) coordinatorsAndDescriptions(ctx context.Context, groups []string, gg *GatheredGroups) (map[string]Coordinator, []DescribedGroup, error) {
	if gg == nil {
		coords, err := c.FindCoordinators(ctx, groups, false)
		if err != nil {
			return nil, nil, err
		}
		return coords, c.DescribeGroups(ctx, groups, coords), nil
	}
	coords, desc := gg.Coords(), gg.Described()
	out := make([]DescribedGroup, 0, len(groups))
	var missing, lookup []string
	for _, g := range groups {
		if d, ok := desc[g]; ok {
			out = append(out, d)
		} else if _, ok := coords[g]; ok {
			missing = append(missing, g)
		} else {
			lookup = append(lookup, g)
		}
	}
	if len(lookup) > 0 {
		more, err := c.FindCoordinators(ctx, lookup, false)
		if err != nil {
			return nil, nil, err
		}
		coords = maps.Clone(coords)
		maps.Copy(coords, more)
		missing = append(missing, lookup...)
	}
	if len(missing) > 0 {
		out = append(out, c.DescribeGroups(ctx, missing, coords)...)
	}
	return coords, out, nil
}

// onlyValid drops "no offset" answers (-1) so they count as no commit.
func onlyValid(m map[string]map[int32]Committed) map[string]map[int32]Committed {
	out := map[string]map[int32]Committed{}
	for t, ps := range m {
		for p, c := range ps {
			if c.Offset < 0 && c.Err == "" {
				continue
			}
			if out[t] == nil {
				out[t] = map[int32]Committed{}
			}
			out[t][p] = c
		}
	}
	return out
}
