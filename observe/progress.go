package observe

import (
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// A consumer that drains its partitions in turns leaves one sitting while
// it works on another; one that cannot get past a record stops everywhere
// it consumes. So a partition's offset counts as sitting only while the
// rest of its consumer's work sat too: the committed offsets of the other
// partitions the same member is assigned (every partition of the group
// when the brokers did not say who has what). When those move, the
// partition's clock starts again.

// progress sums, per member, the committed offsets of the partitions it
// is assigned ("" holds the partitions no member is known to have).
type progress struct {
	owner  map[stuckKey]string
	totals map[string]int64
}

// progressOf is the per-member sums of the group's states, live (nil: not
// asked) giving who has which partition.
func progressOf(group string, states []inspect.PartitionState, live *wire.GroupDescription) progress {
	pr := progress{totals: map[string]int64{}}
	if live != nil && live.Err == "" {
		for _, m := range live.Members {
			for _, at := range m.Assignment {
				for _, p := range at.Partitions {
					if pr.owner == nil {
						pr.owner = map[stuckKey]string{}
					}
					pr.owner[stuckKey{group, at.Topic, p}] = m.MemberID
				}
			}
		}
	}
	for i := range states {
		p := &states[i]
		if p.Resume.Source != "" {
			pr.totals[pr.owner[stuckKey{group, p.Topic, p.Partition}]] += p.Resume.Value
		}
	}
	return pr
}

// others is the sum of the committed offsets of k's consumer's other
// partitions (k's own offset at is left out).
func (pr progress) others(k stuckKey, at int64) int64 {
	return pr.totals[pr.owner[k]] - at
}
