package inspect

import (
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

func TestServedBehindLog(t *testing.T) {
	t.Parallel()
	seg := &volume.LogBounds{End: &volume.Fact{Value: 30, Source: volume.SourceSegments}, Manifest: &volume.Manifest{Epoch: 1, HighWatermark: 0}}
	man := &volume.LogBounds{End: &volume.Fact{Value: 30, Source: volume.SourceManifest}}
	var gen volume.GenerationInfo
	for _, c := range []struct {
		name   string
		served int64
		b      *volume.LogBounds
		want   []string
	}{
		{"served at the segments' end", 30, seg, nil},
		{"served past it (records since the read)", 31, seg, nil},
		{"no bounds", 0, nil, nil},
		{"unknown end", 0, &volume.LogBounds{Unknown: "no segment files"}, nil},
		{"a manifest is no evidence", 0, man, nil},
		{"stale", 0, seg, []string{"serves log end 0", "segments end at 30", "manifest.json says 0 at epoch 1", "30 records short", "kaas generation undetermined", "re-scans the segments", "remove recovery-checkpoint.json"}},
	} {
		got := ServedBehindLog(c.served, c.b, gen)
		if (got == "") != (c.want == nil) {
			t.Errorf("%s: got %q", c.name, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
	}
}

func TestFindServedBehindAndFinding(t *testing.T) {
	t.Parallel()
	seg := func(end, manHWM, manEpoch int64) *volume.LogBounds {
		return &volume.LogBounds{End: &volume.Fact{Value: end, Source: volume.SourceSegments}, Manifest: &volume.Manifest{HighWatermark: manHWM, Epoch: manEpoch}}
	}
	a := &volume.Assignment{Partitions: []volume.PartitionEntry{{Topic: "orders", Partition: 10, Broker: "kaas-1", Epoch: 4}, {Topic: "orders", Partition: 2, Broker: "kaas-0", Epoch: 2}}}
	got := FindServedBehind([]ServedEnd{
		{Topic: "orders", Partition: 10, Served: 0, Log: seg(30, 0, 4)},
		{Topic: "orders", Partition: 1, Served: 30, Log: seg(30, 0, 1)}, // at its end
		{Topic: "orders", Partition: 2, Served: 5, Log: seg(30, 5, 2)},
		{Topic: "audit", Partition: 0, Served: 0, Log: &volume.LogBounds{End: &volume.Fact{Value: 9, Source: volume.SourceManifest}}}, // no evidence
	}, a)
	if len(got) != 2 || got[0].Partition != "orders/2" || got[1].Partition != "orders/10" || got[0].Leader != "kaas-0" || got[1].Epoch != 4 || got[1].ManifestHWM != 0 {
		t.Fatalf("FindServedBehind: %+v", got)
	}
	// The fix is the generation's: on the Go flavour a restart at a new
	// epoch re-scans; on Rust the stale end survives it.
	var r DoctorReport
	goVol := volume.Layout{DataDir: t.TempDir()}
	goVol.ClusterDir = goVol.DataDir + "/__cluster"
	r.AddServedBehindLog(got, goVol.PinnedTo(volume.GenGo, "test").Gen, " --data-dir /d", " -b x:9092")
	if len(r.Findings) != 1 {
		t.Fatalf("findings %+v", r.Findings)
	}
	f := r.Findings[0]
	for _, w := range []string{"2 partitions are served below the log end of their segments", "orders/2 served at 5, its segments end at 30, led by kaas-0 at epoch 2", "manifest.json says 5 at epoch 2", "assuming kaas Go"} {
		if !strings.Contains(f.Message, w) {
			t.Errorf("message %q lacks %q", f.Message, w)
		}
	}
	if f.Severity != volume.SevError || f.Code != DocServedBehindLog || !strings.HasPrefix(f.Fix, "restart kaas-0, kaas-1 (the leaders in assignment.json)") || f.BlastRadius != 2 {
		t.Errorf("finding %+v", f)
	}
	r = DoctorReport{}
	r.AddServedBehindLog(got, goVol.PinnedTo(volume.Gen018, "test").Gen, "", "")
	if f := r.Findings[0]; strings.HasPrefix(f.Fix, "restart") || strings.Contains(f.Fix, "re-scans") || !strings.Contains(f.Fix, "remove recovery-checkpoint.json") || !strings.Contains(f.Message, "recovery-checkpoint.json") {
		t.Errorf("Rust finding says what works on Go: %+v", f)
	}
	r = DoctorReport{}
	r.AddServedBehindLog(nil, volume.GenerationInfo{}, "", "")
	if len(r.Findings) != 0 {
		t.Errorf("nothing behind, findings %+v", r.Findings)
	}
}

// TestPairServedEnds: every partition read before asking is asked for,
// and paired with what its leader served; one the leaders did not answer
// for, or answered with an error, is left out (no evidence either way).
func TestPairServedEnds(t *testing.T) {
	t.Parallel()
	end := func(v int64) *volume.Fact { return &volume.Fact{Value: v, Source: volume.SourceSegments} }
	logs := []volume.LogBounds{{Topic: "orders", Partition: 0, End: end(30)}, {Topic: "orders", Partition: 1, End: end(10)}, {Topic: "audit", Partition: 0, End: end(4)}}
	want := LogPartitions(logs)
	if len(want["orders"]) != 2 || len(want["audit"]) != 1 {
		t.Fatalf("asked %v", want)
	}
	served := map[string]map[int32]wire.LogOffsets{
		"orders": {0: {End: 10}, 1: {End: 10, Err: "NOT_LEADER_FOR_PARTITION"}},
	}
	ends := PairServedEnds(logs, served)
	if len(ends) != 1 || ends[0].Topic != "orders" || ends[0].Partition != 0 || ends[0].Served != 10 || ends[0].Log != &logs[0] {
		t.Fatalf("paired %+v", ends)
	}
	if b := FindServedBehind(ends, nil); len(b) != 1 || b[0].Partition != "orders/0" || b[0].LogEnd != 30 {
		t.Fatalf("behind %+v", b)
	}
}

// After a stale takeover the producer appends at the stale end, so the last
// batch no longer shows what the segments held: the earlier copy of the
// range written twice does (as a real Go-flavour full restart left it:
// offsets 0–199, then 50–54 again).
func TestServedBehindTheEarlierCopy(t *testing.T) {
	t.Parallel()
	b := &volume.LogBounds{Topic: "orders", Partition: 1, End: &volume.Fact{Value: 55, Source: volume.SourceSegments},
		Log: &volume.PartitionLog{Active: "/d/orders/1/00000000-00000000000000000000.log",
			Overlap: &volume.Overlap{Segment: "/d/orders/1/00000000-00000000000000000000.log", From: 50, To: 199, At: 1868}}}
	if held, ok := HeldEnd(b); !ok || held != 200 {
		t.Fatalf("HeldEnd = %d, %v; want 200 (the earlier copy's end)", held, ok)
	}
	msg := ServedBehindLog(55, b, volume.GenerationInfo{})
	for _, w := range []string{"serves log end 55", "held records up to offset 200", "the last batch now ends at 55", "145 records short"} {
		if !strings.Contains(msg, w) {
			t.Errorf("ServedBehindLog: %q lacks %q", msg, w)
		}
	}
	if got := ServedBehindLog(200, b, volume.GenerationInfo{}); got != "" {
		t.Errorf("served at the earlier copy's end: %q", got)
	}
	got := FindServedBehind([]ServedEnd{{Topic: "orders", Partition: 1, Served: 55, Log: b}}, nil)
	if len(got) != 1 || got[0].LogEnd != 200 {
		t.Errorf("FindServedBehind: %+v", got)
	}
	noOverlap := &volume.LogBounds{End: &volume.Fact{Value: 55, Source: volume.SourceSegments}, Log: &volume.PartitionLog{}}
	if held, _ := HeldEnd(noOverlap); held != 55 {
		t.Errorf("HeldEnd without an overlap = %d", held)
	}
}
