package observe

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// Groups resuming from the same offset of a partition share one read of
// the segments in a run (its bytes counted once); another offset is read
// on its own.
func TestBlockersShareReads(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	l := volume.Layout{DataDir: root, ClusterDir: filepath.Join(root, "__cluster"), Gen: volume.GenerationInfo{Gen: volume.Gen018, Label: "Rust 0.2.18", Source: volume.GenSourcePinned}}
	dir := l.PartitionDir("orders", 0)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var log []byte
	for o := int64(0); o < 10; o++ {
		log = append(log, volume.EncodeBatchOf(volume.BatchOf{Base: o, ProducerID: -1, Records: []volume.BatchRecord{{Value: []byte("record")}}})...)
	}
	if err := os.WriteFile(filepath.Join(dir, volume.SegmentLogName(0, 1)), log, 0o644); err != nil {
		t.Fatal(err)
	}
	state := func(group string, at int64) *inspect.GroupState {
		return &inspect.GroupState{Group: group, Partitions: []inspect.PartitionState{{Topic: "orders", Partition: 0, Lag: 10 - at, LagKnown: true,
			Resume: volume.Fact{Value: at, Source: volume.SourceFile}, LogEnd: volume.Fact{Value: 10, Source: volume.SourceSegments}}}}
	}
	sources := func() *BlockerSources {
		return &BlockerSources{Layout: l, Gen: l.Gen, Limits: volume.DefaultRecordLimits(), Now: time.Unix(1e9, 0)}
	}
	alone := sources()
	want := alone.Blockers(state("a", 4), false, 0)
	s := sources()
	a, b, c := s.Blockers(state("a", 4), false, 0), s.Blockers(state("b", 4), false, 0), s.Blockers(state("c", 7), false, 0)
	if len(a) != 1 || len(b) != 1 || len(c) != 1 || a[0].Record == nil || a[0].Record.Offset != 4 || a[0].Record.Batch == nil {
		t.Fatalf("blockers at offset 4: %+v, %+v; at 7: %+v", a, b, c)
	}
	if a[0].Record != b[0].Record || a[0].Kind != want[0].Kind || a[0].Record.BytesRead != want[0].Record.BytesRead {
		t.Errorf("two groups at offset 4: records %p and %p (kinds %s, %s alone)", a[0].Record, b[0].Record, a[0].Kind, want[0].Kind)
	}
	if c[0].Record == a[0].Record || c[0].Record.Offset != 7 {
		t.Errorf("offset 7 read as %+v", c[0].Record)
	}
	seven := sources()
	seven.Blockers(state("c", 7), false, 0)
	if s.BytesRead != alone.BytesRead+seven.BytesRead {
		t.Errorf("read %d bytes for offsets 4 (twice) and 7, want %d (each once)", s.BytesRead, alone.BytesRead+seven.BytesRead)
	}
}
