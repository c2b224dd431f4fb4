package volume

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The first batch of a log gives where it begins, the first segment's
// epoch and when its first records were written.
func TestFirstBatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	w, err := CreateSegment(dir, 40, 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(3, ts, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// A later segment does not count: the log begins with the first.
	if err := WriteRecords(filepath.Join(dir), 43, 50, ts+1000); err != nil {
		t.Fatal(err)
	}
	h, err := FirstBatch(dir)
	if err != nil {
		t.Fatal(err)
	}
	if h.BaseOffset != 40 || h.LastOffset != 42 || h.Epoch != 7 || !h.FirstTime.Equal(time.UnixMilli(ts)) || !strings.HasSuffix(h.Segment, SegmentLogName(40, 7)) {
		t.Errorf("head %+v", h)
	}
	for name, prep := range map[string]func(string){
		"no dir":      func(d string) { os.Remove(d) },
		"no segment":  func(string) {},
		"empty first": func(d string) { os.WriteFile(filepath.Join(d, SegmentLogName(0, 1)), nil, 0o644) },
		"cut short": func(d string) {
			os.WriteFile(filepath.Join(d, SegmentLogName(0, 1)), EncodeBatch(0, 1, ts, nil)[:30], 0o644)
		},
	} {
		d := t.TempDir()
		prep(d)
		var fe *FileError
		if _, err := FirstBatch(d); err == nil || !errors.As(err, &fe) || fe.Problem == "" {
			t.Errorf("%s: err %v, want a *FileError", name, err)
		}
	}
}

func FuzzParseBatchHead(f *testing.F) {
	f.Add(EncodeBatch(0, 5, 1_700_000_000_000, nil))
	f.Add(EncodeBatch(1<<62, 1, -1, nil))
	bad := EncodeBatch(3, 2, 5, nil)
	binary.BigEndian.PutUint64(bad[27:35], uint64(1<<63))
	f.Add(bad)
	f.Add([]byte{})
	f.Add(make([]byte, 61))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseBatchHead(b)
		if err != nil {
			return
		}
		if h.BaseOffset < 0 || h.LastOffset < h.BaseOffset || len(b) < batchHeaderLen {
			t.Fatalf("accepted %+v from %d bytes", h, len(b))
		}
		if !h.FirstTime.IsZero() && h.FirstTime.UnixMilli() < 0 {
			t.Fatalf("negative time %v", h.FirstTime)
		}
	})
}
