package volume

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseSegmentName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name            string
		base, epoch     int64
		prefixed, valid bool
	}{
		{"00000000-00000000000000000000.log", 0, 0, true, true},
		{"0000001a-00000000000000000785.index", 785, 26, true, true},
		{"ffffffff-00000000000000000001.log", 1, 0xffffffff, true, true},
		{"00000000000000000123.log", 123, 0, false, true},
		{"00000000000000000123.log.sealed", 0, 0, false, false},
		{"1ffffffff-00000000000000000001.log", 0, 0, false, false},
		{"00000000--0000000000000000001.log", 0, 0, false, false},
		{"-0000000000000000001.log", 0, 0, false, false},
		{"seg.log", 0, 0, false, false},
		{"manifest.json", 0, 0, false, false},
	} {
		b, e, p, ok := ParseSegmentName(c.name)
		if ok != c.valid || (ok && (b != c.base || e != c.epoch || p != c.prefixed)) {
			t.Errorf("%s: got (%d,%d,%v,%v), want (%d,%d,%v,%v)", c.name, b, e, p, ok, c.base, c.epoch, c.prefixed, c.valid)
		}
	}
	if got := SegmentLogName(785, 3); got != "00000003-00000000000000000785.log" {
		t.Errorf("SegmentLogName = %s", got)
	}
}

func TestListSegmentsOrderAndMarkers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []string{"00000002-00000000000000000500.log", "00000000000000000000.log", "00000001-00000000000000000200.log",
		"00000001-00000000000000000200.index", "00000001-00000000000000000100.log.sealed", "junk.log", "manifest.json", RecoveryCheckpointFile} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ls, err := ListSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	var bases []int64
	for _, s := range ls.Segments {
		bases = append(bases, s.Base)
	}
	if len(bases) != 3 || bases[0] != 0 || bases[1] != 200 || bases[2] != 500 {
		t.Fatalf("bases %v", bases)
	}
	if ls.Segments[0].EpochPrefixed || !ls.Segments[2].EpochPrefixed || ls.Segments[1].Index != filepath.Join(dir, "00000001-00000000000000000200.index") {
		t.Errorf("segments %+v", ls.Segments)
	}
	if len(ls.Sealed) != 1 || len(ls.Ignored) != 1 || ls.Checkpoint == "" {
		t.Errorf("sealed %v ignored %v checkpoint %q", ls.Sealed, ls.Ignored, ls.Checkpoint)
	}
	if _, err := ListSegments(filepath.Join(dir, "nope")); err == nil {
		t.Error("a missing dir listed without error")
	}
	if got := (Layout{DataDir: "/d"}).PartitionDir("orders", 3); got != "/d/orders/3" {
		t.Errorf("PartitionDir = %q", got)
	}
	if got := (Layout{DataDir: "/d"}).PartitionDir("..", 3); got != "" {
		t.Errorf("PartitionDir(..) = %q", got)
	}
}
