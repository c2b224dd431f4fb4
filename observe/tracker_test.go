package observe

import (
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// A partition served below its segments stays reported until its cause
// is gone, by the generation's rule: on Go a takeover at a new epoch
// (assignment.json's epoch passes the one it was seen at), on Rust 0.2.18
// only a served end that reaches what the segments held. A served end
// that catches up with the segments' last batch (producers appended at
// the stale end) is not the cause gone.
func TestStaleTrackerUntilCauseGone(t *testing.T) {
	t.Parallel()
	tp := volume.TopicPartition{Topic: "orders", Partition: 0}
	at := func(epoch uint32) *volume.Assignment {
		return &volume.Assignment{Partitions: []volume.PartitionEntry{{Topic: "orders", Partition: 0, Broker: "kaas-1", Epoch: epoch}}}
	}
	seen := []inspect.ServedBehind{{Partition: "orders/0", Served: 961, LogEnd: 1883, Epoch: 4}}
	t0 := time.Unix(1000, 0)
	for _, c := range []struct {
		name string
		gen  volume.Generation
	}{{"go", volume.GenGo}, {"rust", volume.Gen018}} {
		spec, _ := c.gen.Spec()
		var tr staleTracker
		if got := tr.update(t0, seen, true, nil, at(4), spec.Broker.StaleEnd); len(got) != 1 || !got[0].Since.Equal(t0) {
			t.Fatalf("%s: first seen: %+v", c.name, got)
		}
		// Appends at the stale end: served 1883 by then, the segments'
		// last batch there too, nothing detected this time.
		got := tr.update(t0.Add(time.Minute), nil, true, map[volume.TopicPartition]int64{tp: 1000}, at(4), spec.Broker.StaleEnd)
		if len(got) != 1 || got[0].Served != 1000 || got[0].LogEnd != 1883 || !got[0].Since.Equal(t0) {
			t.Fatalf("%s: the served end moved, same epoch: %+v, want kept since %v", c.name, got, t0)
		}
		// A takeover at a new epoch, still served short.
		got = tr.update(t0.Add(2*time.Minute), nil, true, map[volume.TopicPartition]int64{tp: 1100}, at(5), spec.Broker.StaleEnd)
		if want := c.gen != volume.GenGo; (len(got) == 1) != want {
			t.Errorf("%s: after a takeover at a new epoch: %+v, want kept %v", c.name, got, want)
		}
		got = tr.update(t0.Add(3*time.Minute), nil, true, map[volume.TopicPartition]int64{tp: 1883}, at(5), spec.Broker.StaleEnd)
		if len(got) != 0 {
			t.Errorf("%s: served at what the segments held, at a new epoch: %+v, want gone", c.name, got)
		}
	}
}
