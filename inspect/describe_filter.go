package inspect

import (
	"slices"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// GroupSummary is a described group in one line: what 'groups describe'
// prints in its summary section and carries as groups[].summary.
type GroupSummary struct {
	// State is the live state from the group's coordinator; "" offline (no
	// broker asked) and for a group its coordinator does not hold (issue
	// fileOnly: committed offsets only on the volume).
	State string `json:"state"`
	// Members is the live member count; left out offline and for a group
	// its coordinator does not hold.
	Members *int `json:"members,omitempty"`
	// Coordinator is FindCoordinator's answer with brokers, else the one
	// computed from assignment.json.
	Coordinator string `json:"coordinator"`
	// TotalLag sums the known partition lags (LagKnown: at least one is
	// known; LagUnknown counts the others).
	TotalLag   int64    `json:"totalLag"`
	LagKnown   bool     `json:"lagKnown"`
	LagUnknown int      `json:"lagUnknown"`
	Partitions int      `json:"partitions"`
	Topics     []string `json:"topics"`
}

// Recompute derives the per-topic rollup, the totals and the summary from
// the partitions (after DescribeGroup, and again after a filter).
func (d *GroupDescription) Recompute() {
	d.TotalLag, d.LagUnknown, d.LagKnown, d.ManifestFallbacks = 0, 0, false, 0
	var topics []TopicLag
	for _, p := range d.Partitions {
		if p.LogEndSource == volume.SourceManifest {
			d.ManifestFallbacks++
		}
		i := topicIndex(len(topics), func(i int) string { return topics[i].Topic }, p.Topic)
		if i < 0 {
			i = len(topics)
			topics = append(topics, TopicLag{Topic: p.Topic})
		}
		t := &topics[i]
		t.Partitions++
		if p.Lag == nil {
			t.Unknown++
			d.LagUnknown++
			continue
		}
		t.Lag += *p.Lag
		t.MaxLag = max(t.MaxLag, *p.Lag)
		d.TotalLag += *p.Lag
		d.LagKnown = true
	}
	if topics != nil || d.Topics != nil {
		d.Topics = topics
		if d.Topics == nil {
			d.Topics = []TopicLag{}
		}
	}
	d.LagSource = OfflineLagSource(d.Partitions)
	d.Summary = &GroupSummary{Coordinator: d.Coordinator.Coordinator, TotalLag: d.TotalLag, LagKnown: d.LagKnown, LagUnknown: d.LagUnknown,
		Partitions: len(d.Partitions), Topics: topicNames(len(topics), func(i int) string { return topics[i].Topic })}
}

// Recompute derives the per-topic rollup, the totals, the count of
// partitions where the file and the coordinator disagree, and the summary
// from the partitions.
func (d *LiveDescription) Recompute() {
	d.TotalLag, d.LagUnknown, d.LagKnown, d.OffsetsDisagree = 0, 0, false, 0
	topics := []LiveTopicLag{}
	for _, p := range d.Partitions {
		i := topicIndex(len(topics), func(i int) string { return topics[i].Topic }, p.Topic)
		if i < 0 {
			i = len(topics)
			topics = append(topics, LiveTopicLag{Topic: p.Topic})
		}
		t := &topics[i]
		t.Partitions++
		if p.Disagree {
			d.OffsetsDisagree++
		}
		if p.Lag == nil {
			t.Unknown++
			d.LagUnknown++
			continue
		}
		t.Lag += *p.Lag
		t.MaxLag = max(t.MaxLag, *p.Lag)
		d.TotalLag += *p.Lag
		d.LagKnown = true
	}
	d.Topics = topics
	var members *int
	if !slices.Contains(d.Issues, IssueFileOnly) { // not held by its coordinator: no live state, no member count
		n := len(d.Members)
		members = &n
	}
	coord := d.WireCoordinator
	if coord == "" && d.Coordinator != nil {
		coord = d.Coordinator.Coordinator
	}
	d.Summary = GroupSummary{State: d.State, Members: members, Coordinator: coord, TotalLag: d.TotalLag, LagKnown: d.LagKnown,
		LagUnknown: d.LagUnknown, Partitions: len(d.Partitions), Topics: topicNames(len(topics), func(i int) string { return topics[i].Topic })}
}

// topicIndex finds topic among n rollups, the last first (partitions come
// grouped by topic); -1 when absent. A group has few topics: no map.
func topicIndex(n int, name func(int) string, topic string) int {
	for i := n - 1; i >= 0; i-- {
		if name(i) == topic {
			return i
		}
	}
	return -1
}

func topicNames(n int, name func(int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = name(i)
	}
	return out
}

// DescribeFilter narrows a description: Topics keeps only the partitions of
// those topics (nil: all), LaggingOnly only partitions whose known lag is
// above 0. Totals, rollups and the summary count only what is kept.
type DescribeFilter struct {
	Topics      []string
	LaggingOnly bool
}

// Active reports whether the filter narrows anything.
func (f DescribeFilter) Active() bool { return len(f.Topics) > 0 || f.LaggingOnly }

func (f DescribeFilter) keepTopic(t string) bool {
	return len(f.Topics) == 0 || slices.Contains(f.Topics, t)
}

// Offline narrows an offline description and reports whether the group
// stays: with Topics it needs a partition on one of them, with LaggingOnly a
// total lag above 0.
func (f DescribeFilter) Offline(d *GroupDescription) bool {
	if !f.Active() {
		return true
	}
	kept := d.Partitions[:0:0]
	for _, p := range d.Partitions {
		if f.keepTopic(p.Topic) && (!f.LaggingOnly || (p.Lag != nil && *p.Lag > 0)) {
			kept = append(kept, p)
		}
	}
	d.Partitions = kept
	d.Recompute()
	return len(d.Partitions) > 0
}

// Live narrows a live description the same way (its offset file's
// description by topic only: its lag is the manifest's, shown beside).
func (f DescribeFilter) Live(d *LiveDescription) bool {
	if !f.Active() {
		return true
	}
	if d.File != nil && len(f.Topics) > 0 {
		fc := *d.File
		DescribeFilter{Topics: f.Topics}.Offline(&fc)
		fc.Summary = nil
		if fc.Partitions == nil {
			fc.Partitions = []PartitionOffset{}
		}
		d.File = &fc
	}
	kept := make([]LivePartition, 0, len(d.Partitions))
	for _, p := range d.Partitions {
		if f.keepTopic(p.Topic) && (!f.LaggingOnly || (p.Lag != nil && *p.Lag > 0)) {
			kept = append(kept, p)
		}
	}
	d.Partitions = kept
	d.Recompute()
	return len(d.Partitions) > 0
}

// MarkNotLoaded makes a live description say what groups list says of a
// group whose coordinator does not list it while the volume has its offset
// file: no live state (kaas answers DescribeGroups with Empty for any group
// id it owns, loaded or not), source file only, issue fileOnly.
func (d *LiveDescription) MarkNotLoaded() {
	if d.File == nil || !(slices.Contains(d.File.Sources, SourceFile) || slices.Contains(d.File.Sources, SourceLegacyFile)) {
		return
	}
	d.State, d.ProtocolType, d.Protocol = "", "", ""
	d.Sources = slices.DeleteFunc(slices.Clone(d.Sources), func(s string) bool { return s == SourceLive })
	addOnce(&d.Issues, IssueFileOnly)
	sortIssues(d.Issues)
	d.Recompute()
}
