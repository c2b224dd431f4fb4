package volume

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withDelta returns batch with its lastOffsetDelta replaced (the CRC is
// left as it was: kaas's scan does not check it).
func withDelta(batch []byte, delta int32) []byte {
	b := append([]byte{}, batch...)
	binary.BigEndian.PutUint32(b[batchLastDeltaAt:batchLastDeltaAt+4], uint32(delta))
	return b
}

// TestReadPartitionLogImpossibleBounds: a segment holding a bound kaas
// could never have written (a flipped sign bit, an end that overflows
// int64, a first batch below the segment's own base) gives no log end:
// the reader says why, as a finding and an error, on every path, and
// never a negative or overflowed end. Offsets going back inside a segment
// are no such bound (kaas writes them twice after a takeover at a stale
// end): the log end is the last batch's, as kaas's recovery takes it.
func TestReadPartitionLogImpossibleBounds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		base int64 // in the segment's name
		log  []byte
		want string
	}{
		{"bit 63 of a base offset", 0, append(EncodeBatch(0, 5, 1, nil), EncodeBatch(math.MinInt64+5, 5, 1, nil)...), "negative base offset"},
		{"end past int64", math.MaxInt64 - 5, EncodeBatch(math.MaxInt64-5, 10, 1, nil), "overflows"},
		{"negative lastOffsetDelta", 0, withDelta(EncodeBatch(0, 1, 1, nil), -7), "negative lastOffsetDelta"},
		{"log start past the log end", 1000, EncodeBatch(5, 5, 1, nil), "below the segment's base offset 1000"},
		{"a later batch ends before the log starts", 10, append(EncodeBatch(10, 2, 1, nil), EncodeBatch(2, 2, 1, nil)...), "impossible log bound: the log would end at 4, before it starts at 10"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, SegmentLogName(c.base, 1)), c.log, 0o644); err != nil {
				t.Fatal(err)
			}
			ls, err := ListSegments(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, below := range []int64{0, scanFirstBelow} {
				pl, fs, err := readListedLog(ls, below)
				var fe *FileError
				if err == nil || !errors.As(err, &fe) || !strings.Contains(fe.Problem, "impossible log bound") || !strings.Contains(fe.Problem, c.want) {
					end := int64(0)
					if pl != nil {
						end = pl.LogEnd
					}
					t.Fatalf("scan below %d: err %v (log end %d), want an impossible bound naming %q", below, err, end, c.want)
				}
				if pl != nil {
					t.Errorf("a log end was returned with the error: %+v", pl)
				}
				found := false
				for _, f := range fs {
					found = found || (f.Code == CodeSegmentImpossible && f.Severity == SevError && strings.Contains(f.Message, c.want))
				}
				if !found {
					t.Errorf("no %s finding: %+v", CodeSegmentImpossible, fs)
				}
			}
		})
	}
}

func TestReadPartitionLogOffsetsWrittenTwice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, SegmentLogName(0, 1)), append(EncodeBatch(0, 5, 1, nil), EncodeBatch(2, 5, 1, nil)...), 0o644)
	ls, _ := ListSegments(dir)
	for _, below := range []int64{0, scanFirstBelow} {
		pl, fs, err := readListedLog(ls, below)
		if err != nil || pl.LogEnd != 7 {
			t.Fatalf("scan below %d: %+v %v, want the last batch's end 7", below, pl, err)
		}
		// The range written twice is named, as a finding too.
		if pl.Overlap == nil || pl.Overlap.From != 2 || pl.Overlap.To != 4 {
			t.Errorf("scan below %d: overlap %+v, want offsets 2–4 written twice", below, pl.Overlap)
		}
		found := false
		for _, f := range fs {
			found = found || f.Code == CodeSegmentWrittenTwice && strings.Contains(f.Message, "2–4")
		}
		if !found {
			t.Errorf("scan below %d: no %s finding: %+v", below, CodeSegmentWrittenTwice, fs)
		}
	}
}

// TestLogBoundsImpossibleAreUnverified: the bounds a reset reads never
// carry an impossible segment's end; with a manifest the end is the
// manifest's (a named, unverified fallback), without one it is unknown.
func TestLogBoundsImpossibleAreUnverified(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	l := Layout{DataDir: data, ClusterDir: filepath.Join(data, ClusterSubdir)}
	for _, p := range []string{"orders/0", "orders/1"} {
		dir := filepath.Join(data, p)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, SegmentLogName(0, 1)), EncodeBatch(math.MinInt64+3, 2, 1, nil), 0o644)
	}
	os.WriteFile(filepath.Join(data, "orders/0", ManifestFile), []byte(`{"epoch":1,"highWatermark":4,"logStartOffset":0}`), 0o644)
	b := ReadLogBounds(l, "orders", 0)
	if b.End == nil || b.End.Source != SourceManifest || b.End.Value != 4 || !strings.Contains(b.Fallback, "impossible log bound") {
		t.Errorf("with a manifest: %+v (fallback %q)", b.End, b.Fallback)
	}
	b = ReadLogBounds(l, "orders", 1)
	if b.End != nil || b.Start != nil || !strings.Contains(b.Unknown, "impossible log bound") {
		t.Errorf("without a manifest: end %+v unknown %q", b.End, b.Unknown)
	}
}

// FuzzListSegments: any set of names in a partition dir (one per line)
// lists and reads without a panic; every name kaas cannot parse is
// ignored, all of them together are one finding, and a log end read is
// never negative nor before the log start.
func FuzzListSegments(f *testing.F) {
	var many strings.Builder
	for i := range 200 {
		many.WriteString("junk-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + ".log\n")
	}
	f.Add(many.String(), EncodeBatch(0, 3, 1, nil))
	f.Add("00000001-00000000000000001000.log\n00000000000000000005.log\n+5.log\n-1.log\n99999999999999999999.log\nffffffffff-00000000000000000000.log\n", EncodeBatch(5, 5, 1, nil))
	f.Add("00000001-09223372036854775802.log\n", EncodeBatch(9223372036854775802, 10, 1, nil))
	f.Add("a.log.sealed\nrecovery-checkpoint.json\n00000001-00000000000000000000.index\n", []byte{})
	f.Fuzz(func(t *testing.T, names string, segment []byte) {
		dir := t.TempDir()
		unparsable, created := 0, map[string]bool{}
		for _, n := range strings.Split(names, "\n") {
			if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\x00") || len(n) > 200 || created[n] || len(created) >= 300 {
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, n), segment, 0o644); err != nil {
				continue
			}
			created[n] = true
			if _, _, _, ok := ParseSegmentName(n); !ok && strings.HasSuffix(n, SegmentLogExt) && !strings.HasSuffix(n, SegmentSealedExt) {
				unparsable++
			}
		}
		ls, err := ListSegments(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ls.Ignored) != unparsable {
			t.Fatalf("%d names ignored, %d unparsable", len(ls.Ignored), unparsable)
		}
		pl, fs, err := ReadListedLog(ls)
		n := 0
		for _, f := range fs {
			if f.Code == CodeSegmentUnparsable {
				n++
			}
		}
		if (unparsable > 0) != (n == 1) || n > 1 {
			t.Fatalf("%d unparsable names gave %d findings", unparsable, n)
		}
		if err == nil && (pl.LogStart < 0 || pl.LogEnd < pl.LogStart) {
			t.Fatalf("bounds [%d, %d)", pl.LogStart, pl.LogEnd)
		}
	})
}
