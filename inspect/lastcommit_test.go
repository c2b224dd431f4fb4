package inspect

import (
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// An offset file modified "in the future" (a skewed NFS server, a copied
// file) says nothing about when the group committed: the last commit falls
// back to the observations, so a stopped group is not "committed just now"
// for ever; a small skew is still a commit time.
func TestLastCommitPassesOverAFutureModTime(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	sample := func(at time.Duration, committed int64, mod time.Time) HealthSample {
		return HealthSample{Time: t0.Add(at), FileModTime: mod, Partitions: []PartitionSample{{Key: "orders/0", Committed: committed, End: 100}}}
	}
	future := t0.Add(24 * time.Hour)
	samples := []HealthSample{sample(0, 10, future), sample(time.Minute, 20, future), sample(2*time.Minute, 20, future)}
	h := EvaluateHealth("g", samples, HealthOptions{})
	if want := t0.Add(time.Minute); !h.LastCommit.Equal(want) {
		t.Errorf("a modification time a day ahead: last commit %v, want the observation the offset moved at (%v)", h.LastCommit, want)
	}
	skewed := t0.Add(2*time.Minute + volume.FutureSlack/2)
	samples[2].FileModTime = skewed
	if h := EvaluateHealth("g", samples, HealthOptions{}); !h.LastCommit.Equal(skewed) {
		t.Errorf("a modification time within the slack: last commit %v, want %v", h.LastCommit, skewed)
	}
}
