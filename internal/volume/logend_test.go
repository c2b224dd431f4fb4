package volume

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refScan is kaas's scan_high_watermark over a whole segment: the
// reference every faster path must agree with.
func refScan(data []byte, base int64) (end, stop int64) {
	end = base
	pos := 0
	for len(data)-pos >= 12 {
		length := int(int32(binary.BigEndian.Uint32(data[pos+8 : pos+12])))
		if length < 16 || pos+12+16 > len(data) || pos+12+length > len(data) {
			break
		}
		end = int64(binary.BigEndian.Uint64(data[pos:pos+8])) + int64(int32(binary.BigEndian.Uint32(data[pos+23:pos+27]))) + 1
		pos += 12 + length
	}
	return end, int64(pos)
}

// writeSegment writes batches of the given sizes into a new segment of
// dir and returns the next offset.
func writeSegment(t testing.TB, dir string, base, epoch int64, batches int, valueLen int) int64 {
	t.Helper()
	w, err := CreateSegment(dir, base, epoch)
	if err != nil {
		t.Fatal(err)
	}
	v := [][]byte{make([]byte, valueLen)}
	for i := 0; i < batches; i++ {
		if err := w.Append(1+i%3, 1_700_000_000_000, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Next
}

func appendBytes(t testing.TB, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestReadPartitionLogPaths(t *testing.T) {
	t.Parallel()
	type tc struct {
		name   string
		setup  func(t *testing.T, dir string) (start, end, torn int64)
		method string
		codes  []string
	}
	cases := []tc{
		{"index, two segments", func(t *testing.T, dir string) (int64, int64, int64) {
			n := writeSegment(t, dir, 100, 1, 50, 200)
			n = writeSegment(t, dir, n, 2, 2000, 150)
			return 100, n, 0
		}, LogEndIndex, nil},
		{"older names, torn tail", func(t *testing.T, dir string) (int64, int64, int64) {
			n := writeSegment(t, dir, 0, 0, 1500, 100)
			for _, ext := range []string{SegmentLogExt, SegmentIndexExt} {
				if err := os.Rename(filepath.Join(dir, fmt.Sprintf("00000000-%020d%s", 0, ext)), filepath.Join(dir, fmt.Sprintf("%020d%s", 0, ext))); err != nil {
					t.Fatal(err)
				}
			}
			half := EncodeBatch(n, 5, 1, nil)
			appendBytes(t, filepath.Join(dir, fmt.Sprintf("%020d.log", 0)), half[:len(half)-7])
			return 0, n, int64(len(half) - 7)
		}, LogEndIndex, []string{CodeSegmentTorn}},
		{"no index: tail search", func(t *testing.T, dir string) (int64, int64, int64) {
			n := writeSegment(t, dir, 7, 3, 3000, 300)
			if err := os.Remove(filepath.Join(dir, SegmentIndexName(7, 3))); err != nil {
				t.Fatal(err)
			}
			return 7, n, 0
		}, LogEndTail, nil},
		{"index past a truncated log", func(t *testing.T, dir string) (int64, int64, int64) {
			n := writeSegment(t, dir, 0, 1, 2000, 120)
			idx := filepath.Join(dir, SegmentIndexName(0, 1))
			var e [8]byte
			binary.BigEndian.PutUint32(e[0:4], uint32(n+10))
			binary.BigEndian.PutUint32(e[4:8], 1<<30)
			appendBytes(t, idx, e[:])
			return 0, n, 0
		}, LogEndIndex, []string{CodeSegmentIndexStale}},
		{"empty active segment", func(t *testing.T, dir string) (int64, int64, int64) {
			n := writeSegment(t, dir, 0, 1, 10, 10)
			writeSegment(t, dir, n, 2, 0, 0)
			return 0, n, 0
		}, LogEndEmpty, nil},
		{"sealed marker and junk ignored", func(t *testing.T, dir string) (int64, int64, int64) {
			n := writeSegment(t, dir, 40, 1, 20, 10)
			os.WriteFile(filepath.Join(dir, "00000000-00000000000000000000.log.sealed"), nil, 0o644)
			os.WriteFile(filepath.Join(dir, "notes.log"), []byte("x"), 0o644)
			return 40, n, 0
		}, LogEndScan, []string{CodeSegmentUnparsable}},
		{"checkpoint", func(t *testing.T, dir string) (int64, int64, int64) {
			n := writeSegment(t, dir, 0, 1, 1000, 200)
			st, _ := os.Stat(filepath.Join(dir, SegmentLogName(0, 1)))
			os.WriteFile(filepath.Join(dir, RecoveryCheckpointFile), []byte(fmt.Sprintf(`{"segmentBase":0,"bytePos":%d,"highWatermark":%d}`, st.Size(), n)), 0o644)
			return 0, n, 0
		}, LogEndCheckpoint, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			start, end, torn := c.setup(t, dir)
			pl, fs, err := ReadPartitionLog(dir)
			if err != nil {
				t.Fatal(err)
			}
			if pl.LogStart != start || pl.LogEnd != end || pl.TornBytes != torn || pl.Method != c.method {
				t.Fatalf("got [%d,%d) torn %d via %s, want [%d,%d) torn %d via %s", pl.LogStart, pl.LogEnd, pl.TornBytes, pl.Method, start, end, torn, c.method)
			}
			var codes []string
			for _, f := range fs {
				codes = append(codes, f.Code)
			}
			if strings.Join(codes, ",") != strings.Join(c.codes, ",") {
				t.Errorf("findings %v, want %v", codes, c.codes)
			}
			// Every path agrees with kaas's full scan of the active segment.
			ls, _ := ListSegments(dir)
			act := ls.Segments[len(ls.Segments)-1]
			data, _ := os.ReadFile(act.Log)
			if want, stop := refScan(data, act.Base); want != pl.LogEnd || int64(len(data))-stop != pl.TornBytes {
				t.Errorf("full scan says %d (torn %d)", want, int64(len(data))-stop)
			}
			if pl.Method != LogEndScan && pl.Method != LogEndEmpty && pl.BytesRead > 200<<10 && c.method != LogEndTail {
				t.Errorf("read %d bytes for one log end", pl.BytesRead)
			}
		})
	}
}

func TestReadPartitionLogErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, _, err := ReadPartitionLog(dir); err == nil || !strings.Contains(err.Error(), "no segment files (") {
		t.Errorf("empty dir: %v", err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, SegmentLogName(0, 0))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadPartitionLog(dir); err == nil || !strings.Contains(err.Error(), "cannot read the active segment") {
		t.Errorf("a link as the active segment: %v", err)
	}
}

// TestReadPartitionLogRealVolumeIndex forces the index path on the real
// segments (they are small enough to be scanned otherwise).
func TestReadPartitionLogRealVolumeIndex(t *testing.T) {
	t.Parallel()
	root := staleVolume(t)
	for _, e := range readLogEndTruth(t, root) {
		i := strings.LastIndexByte(e.Partition, '/')
		ls, err := ListSegments(filepath.Join(root, "data", e.Partition[:i], e.Partition[i+1:]))
		if err != nil {
			t.Fatal(err)
		}
		pl, _, err := readListedLog(ls, 0)
		if err != nil {
			t.Fatal(err)
		}
		if pl.LogEnd != e.LogEnd || pl.Method != LogEndIndex {
			t.Errorf("%s: %d via %s, want %d via the index", e.Partition, pl.LogEnd, pl.Method, e.LogEnd)
		}
	}
}

// FuzzPartitionLog: any segment and index bytes give an answer within the
// file and the scan equals kaas's; and with the index kaas would have
// written for the log, a log kaas wrote whole (or cut inside its last
// batch) gives kaas's answer on every path.
func FuzzPartitionLog(f *testing.F) {
	var good []byte
	for i := int64(0); i < 40; i++ {
		good = append(good, EncodeBatch(10+i*2, 2, 1, [][]byte{[]byte("v")})...)
	}
	idx := make([]byte, 8)
	binary.BigEndian.PutUint32(idx[0:4], 20)
	binary.BigEndian.PutUint32(idx[4:8], uint32(len(EncodeBatch(0, 2, 1, [][]byte{[]byte("v")}))*10))
	f.Add(good, idx)
	f.Add(good[:len(good)-5], idx)
	f.Add(good, []byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{}, []byte{})
	f.Add(append(append([]byte{}, good...), make([]byte, 100)...), idx)
	// Bounds kaas could not have written: a flipped sign bit, an end past
	// int64, a batch below the segment's base (log start past log end),
	// offsets going back, a negative lastOffsetDelta.
	f.Add(append(append([]byte{}, good[:len(good)/2]...), EncodeBatch(math.MinInt64+200, 2, 1, nil)...), idx)
	f.Add(EncodeBatch(math.MaxInt64-3, 9, 1, nil), []byte{})
	f.Add(EncodeBatch(5, 5, 1, nil), []byte{})
	f.Add(append(EncodeBatch(10, 5, 1, nil), EncodeBatch(12, 5, 1, nil)...), []byte{})
	neg := EncodeBatch(10, 1, 1, nil)
	binary.BigEndian.PutUint32(neg[23:27], 0xfffffff0)
	f.Add(neg, []byte{})
	f.Fuzz(func(t *testing.T, log, index []byte) {
		want, stop := refScan(log, 10)
		for _, kaasIndex := range []bool{false, true} {
			if kaasIndex {
				index = indexFor(log)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, SegmentLogName(10, 1)), log, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, SegmentIndexName(10, 1)), index, 0o644); err != nil {
				t.Fatal(err)
			}
			ls, err := ListSegments(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, below := range []int64{0, scanFirstBelow} {
				pl, _, err := readListedLog(ls, below)
				var fe *FileError
				if err != nil && (!errors.As(err, &fe) || !strings.HasPrefix(fe.Problem, "impossible log bound")) {
					t.Fatal(err)
				}
				scanned := below == scanFirstBelow && int64(len(log)) <= scanFirstBelow
				bad := refBad(log, 10)
				switch {
				case err != nil && kaasIndex && wellFormed(log, stop):
					t.Fatalf("a well-formed segment read as impossible: %v", err)
				case err != nil && scanned && !bad:
					t.Fatalf("the scan calls a sound log impossible: %v", err)
				case err == nil && scanned && bad:
					t.Fatalf("the scan took a log end from an impossible batch: %d", pl.LogEnd)
				case err != nil:
					continue
				}
				if pl.LogStart < 0 || pl.LogEnd < pl.LogStart {
					t.Fatalf("bounds [%d, %d)", pl.LogStart, pl.LogEnd)
				}
				if pl.TornBytes < 0 || pl.TornBytes > int64(len(log)) {
					t.Fatalf("torn %d of %d bytes", pl.TornBytes, len(log))
				}
				if pl.Method == LogEndScan && (pl.LogEnd != want || pl.TornBytes != int64(len(log))-stop) {
					t.Fatalf("scan %d torn %d, reference %d torn %d", pl.LogEnd, pl.TornBytes, want, int64(len(log))-stop)
				}
				if kaasIndex && wellFormed(log, stop) && (pl.LogEnd != want || pl.TornBytes != int64(len(log))-stop) {
					t.Fatalf("%s says %d torn %d on a well-formed segment, reference %d torn %d", pl.Method, pl.LogEnd, pl.TornBytes, want, int64(len(log))-stop)
				}
			}
		}
	})
}

// refBad reports whether kaas's full scan of data meets a complete batch
// kaas could not have written (a negative base offset or lastOffsetDelta,
// an end past int64, a first batch below the segment's base), or ends
// before the segment's base.
func refBad(data []byte, base int64) bool {
	pos, end := 0, base
	for len(data)-pos >= 12 {
		length := int(int32(binary.BigEndian.Uint32(data[pos+8 : pos+12])))
		if length < 16 || pos+12+16 > len(data) || pos+12+length > len(data) {
			break
		}
		b := int64(binary.BigEndian.Uint64(data[pos : pos+8]))
		d := int64(int32(binary.BigEndian.Uint32(data[pos+23 : pos+27])))
		if b < 0 || d < 0 || b > math.MaxInt64-d-1 || (pos == 0 && b < base) {
			return true
		}
		end = b + d + 1
		pos += 12 + length
	}
	return end < base
}

// indexFor is the index kaas writes for log: an entry before a batch once
// KaasIndexIntervalBytes were appended since the last one.
func indexFor(log []byte) []byte {
	var out []byte
	var last int64
	pos := int64(0)
	for int64(len(log))-pos >= 28 {
		length := int64(int32(binary.BigEndian.Uint32(log[pos+8 : pos+12])))
		if length < 16 || pos+12+length > int64(len(log)) {
			break
		}
		if pos-last >= KaasIndexIntervalBytes {
			var e [8]byte
			binary.BigEndian.PutUint32(e[0:4], uint32(int64(binary.BigEndian.Uint64(log[pos:pos+8]))-10))
			binary.BigEndian.PutUint32(e[4:8], uint32(pos))
			out = append(out, e[:]...)
			last = pos
		}
		pos += 12 + length
	}
	return out
}

// wellFormed: every complete batch is one kaas would write (magic 2,
// increasing offsets within the segment), and what follows the last one
// is a cut-off write (too short for a head, or a head whose length runs
// past the end).
func wellFormed(data []byte, stop int64) bool {
	pos, next := int64(0), int64(10)
	for pos < stop {
		length := int64(int32(binary.BigEndian.Uint32(data[pos+8 : pos+12])))
		base := int64(binary.BigEndian.Uint64(data[pos : pos+8]))
		delta := int32(binary.BigEndian.Uint32(data[pos+23 : pos+27]))
		if data[pos+16] != 2 || length < 49 || base < next || base-10 >= 1<<31 || delta < 0 {
			return false
		}
		next = base + int64(delta) + 1
		pos += 12 + length
	}
	rest := int64(len(data)) - stop
	if rest < 28 {
		return true
	}
	length := int64(int32(binary.BigEndian.Uint32(data[stop+8 : stop+12])))
	return length >= 16 && stop+12+length > int64(len(data))
}
