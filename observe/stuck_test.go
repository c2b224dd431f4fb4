package observe

import (
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// A consumer that drains in turns leaves one partition sitting while it
// moves another: the sitting one's window restarts at every move
// elsewhere, so no record is named its blocker; once the rest of the group
// sits too, the window runs.
func TestStuckTrackerDrainInTurns(t *testing.T) {
	t.Parallel()
	state := func(o0, o1 int64) *inspect.GroupState {
		part := func(p int32, at int64) inspect.PartitionState {
			return inspect.PartitionState{Topic: "orders", Partition: p, Resume: volume.Fact{Value: at, Source: "file"}}
		}
		return &inspect.GroupState{Group: "g", Partitions: []inspect.PartitionState{part(0, o0), part(1, o1)}}
	}
	t0 := time.Unix(1000, 0)
	tr := NewStuckTracker()
	for i := range 5 {
		tr.Add(state(int64(100*i), 7), 1, time.Time{}, t0.Add(time.Duration(i)*time.Second))
	}
	s := tr.Stuck("g", "orders", 1)
	if s == nil || s.Moved || !s.Elsewhere || s.Samples != 1 || s.Window() != 0 {
		t.Fatalf("orders/1 sat while orders/0 moved: %+v, want its window restarted at the last move elsewhere", s)
	}
	for i := 5; i < 9; i++ {
		tr.Add(state(400, 7), 1, time.Time{}, t0.Add(time.Duration(i)*time.Second))
	}
	s = tr.Stuck("g", "orders", 1)
	if s == nil || s.Moved || s.Samples != 5 || s.Window() != 4*time.Second || !s.Alive {
		t.Fatalf("orders/1 sat with the whole group: %+v, want 5 samples over 4s", s)
	}
	if s0 := tr.Stuck("g", "orders", 0); s0 == nil || !s0.Moved {
		t.Fatalf("orders/0 moved: %+v", s0)
	}
}
