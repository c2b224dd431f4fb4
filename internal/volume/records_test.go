package volume

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// plantBatches writes batches as one segment (with kaas's index) in a
// new partition dir and lists it.
func plantBatches(t testing.TB, base int64, batches ...[]byte) SegmentListing {
	t.Helper()
	dir := t.TempDir()
	w, err := CreateSegment(dir, base, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if n, err := w.AppendRaw(b); err != nil || n != len(b) {
			t.Fatalf("append: %d of %d bytes, %v", n, len(b), err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ls, err := ListSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

func values(vs ...string) []BatchRecord {
	var out []BatchRecord
	for _, v := range vs {
		out = append(out, BatchRecord{Key: []byte("k-" + v), Value: []byte(v), Headers: [][2][]byte{{[]byte("trace"), []byte("x")}}})
	}
	return out
}

// compressBatch re-encodes an uncompressed batch's records with codec
// (1 gzip, 2 snappy, 3 lz4, 4 zstd) and fixes its length and CRC.
func compressBatch(t *testing.T, raw []byte, codec int) []byte {
	t.Helper()
	body := raw[batchHeaderLen:]
	var out bytes.Buffer
	switch codec {
	case 1:
		w := gzip.NewWriter(&out)
		w.Write(body)
		w.Close()
	case 2:
		out.Write(s2.EncodeSnappy(nil, body))
	case 3:
		w := lz4.NewWriter(&out)
		w.Write(body)
		w.Close()
	case 4:
		w, _ := zstd.NewWriter(&out)
		w.Write(body)
		w.Close()
	}
	b := append(append([]byte{}, raw[:batchHeaderLen]...), out.Bytes()...)
	binary.BigEndian.PutUint32(b[8:12], uint32(len(b)-batchLogOverhead))
	binary.BigEndian.PutUint16(b[21:23], binary.BigEndian.Uint16(b[21:23])|uint16(codec))
	binary.BigEndian.PutUint32(b[batchCRCAt:batchCRCAt+4], crc32.Checksum(b[21:], castagnoli))
	return b
}

func TestReadRecordsAt(t *testing.T) {
	t.Parallel()
	plain := EncodeBatchOf(BatchOf{Base: 100, TimestampMs: 1000, ProducerID: -1, Records: values("a", "b", "c")})
	next := EncodeBatchOf(BatchOf{Base: 103, TimestampMs: 2000, ProducerID: -1, Records: values("d", "e")})
	ls := plantBatches(t, 100, plain, next)

	rr, err := ReadRecordsAt(ls, 101, RecordLimits{Peek: 3})
	if err != nil || rr.Problem != "" {
		t.Fatalf("read: %v %q", err, rr.Problem)
	}
	if rr.Batch.BaseOffset != 100 || rr.Batch.LastOffset != 102 || !rr.Batch.CRCValid || rr.Batch.Codec != "none" {
		t.Fatalf("batch %+v", rr.Batch)
	}
	var got []string
	for _, r := range rr.Records {
		got = append(got, string(r.Value))
		if r.Headers != 1 || r.HeaderKeys[0] != "trace" || r.KeyBytes != len(r.Key) {
			t.Fatalf("record %+v", r)
		}
	}
	if strings.Join(got, ",") != "b,c,d" || rr.Records[0].Offset != 101 || rr.Records[2].Offset != 103 || rr.Records[2].TimestampMs != 2000 {
		t.Fatalf("records %v %+v", got, rr.Records)
	}
	if rr, _ := ReadRecordsAt(ls, 105, RecordLimits{}); rr.Batch != nil || !strings.Contains(rr.Problem, "log ends before it") {
		t.Fatalf("past the end: %+v", rr)
	}
}

func TestReadRecordsAtCodecs(t *testing.T) {
	t.Parallel()
	for codec, name := range map[int]string{1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"} {
		raw := compressBatch(t, EncodeBatchOf(BatchOf{Base: 0, ProducerID: -1, Records: values("x", "y")}), codec)
		rr, err := ReadRecordsAt(plantBatches(t, 0, raw), 1, RecordLimits{Peek: 5})
		if err != nil || rr.Problem != "" || rr.Batch.Codec != name || len(rr.Records) != 1 || string(rr.Records[0].Value) != "y" {
			t.Fatalf("%s: %v %+v", name, err, rr)
		}
	}
}

func TestReadRecordsAtCorrupt(t *testing.T) {
	t.Parallel()
	raw := EncodeBatchOf(BatchOf{Base: 0, ProducerID: -1, Records: values("poison")})
	raw[len(raw)-3] ^= 0xff
	rr, err := ReadRecordsAt(plantBatches(t, 0, raw), 0, RecordLimits{})
	if err != nil || !rr.Corrupt || rr.Batch == nil || rr.Batch.CRCValid || !strings.Contains(rr.Problem, "CRC-32C") {
		t.Fatalf("corrupt: %v %+v", err, rr)
	}
	// A batch over the bound is read by its header only.
	big := EncodeBatchOf(BatchOf{Base: 0, ProducerID: -1, Records: []BatchRecord{{Value: bytes.Repeat([]byte("v"), 3000)}}})
	rr, _ = ReadRecordsAt(plantBatches(t, 0, big), 0, RecordLimits{MaxBatchBytes: 1024})
	if rr.Batch == nil || rr.Batch.CRCChecked || rr.Corrupt || !strings.Contains(rr.Problem, "over the read bound") || rr.BytesRead > 40<<10 {
		t.Fatalf("big: %+v", rr)
	}
}

func TestScanTransactions(t *testing.T) {
	t.Parallel()
	open := EncodeBatchOf(BatchOf{Base: 10, ProducerID: 7, ProducerEpoch: 2, Transactional: true, Records: values("t1", "t2")})
	other := EncodeBatchOf(BatchOf{Base: 12, ProducerID: 8, Transactional: true, Records: values("u")})
	commit := EncodeBatchOf(BatchOf{Base: 13, ProducerID: 8, Control: true, Commit: true})
	plain := EncodeBatchOf(BatchOf{Base: 14, ProducerID: -1, Records: values("p")})
	ls := plantBatches(t, 10, open, other, commit, plain)
	rr, _ := ReadRecordsAt(ls, 10, RecordLimits{})
	s := ScanTransactions(ls, rr, RecordLimits{})
	if !s.Complete || s.To != 15 || len(s.Txns) != 2 {
		t.Fatalf("scan %+v", s)
	}
	if tx := s.Txn(7); tx == nil || tx.End != "" || tx.FirstOffset != 10 || tx.ProducerEpoch != 2 {
		t.Fatalf("open txn %+v", tx)
	}
	if tx := s.Txn(8); tx == nil || tx.End != ControlCommit || tx.EndOffset != 13 {
		t.Fatalf("committed txn %+v", tx)
	}
	if lso, ok := s.StableEnd(); !ok || lso != 10 {
		t.Fatalf("stable end %d %v", lso, ok)
	}
	// The budget stops the walk: undetermined, never a guess.
	s = ScanTransactions(ls, &RecordRead{Batch: &BatchInfo{BaseOffset: 12, Position: int64(len(open))}}, RecordLimits{ScanBytes: 10})
	if _, ok := s.StableEnd(); ok || s.Complete {
		t.Fatalf("bounded scan %+v", s)
	}
}

// A segment over 1 MiB found through the index reads a bounded number
// of bytes, however far in the offset is.
func TestReadRecordsAtUsesTheIndex(t *testing.T) {
	t.Parallel()
	var batches [][]byte
	for i := int64(0); i < 4000; i++ {
		batches = append(batches, EncodeBatchOf(BatchOf{Base: i, ProducerID: -1, Records: []BatchRecord{{Value: bytes.Repeat([]byte{'x'}, 400)}}}))
	}
	ls := plantBatches(t, 0, batches...)
	if fi, _ := os.Stat(ls.Segments[0].Log); fi.Size() < 1<<20 {
		t.Fatalf("segment only %d bytes", fi.Size())
	}
	rr, err := ReadRecordsAt(ls, 3999, RecordLimits{})
	if err != nil || rr.Problem != "" || rr.Records[0].Offset != 3999 {
		t.Fatalf("%v %+v", err, rr)
	}
	if rr.BytesRead > 64<<10 {
		t.Fatalf("read %d bytes for one record", rr.BytesRead)
	}
	// Without the index the seek bound stops the walk with a reason.
	os.Remove(filepath.Join(ls.Dir, SegmentIndexName(0, 1)))
	rr, _ = ReadRecordsAt(ls, 3999, RecordLimits{SeekBytes: 64 << 10})
	if rr.Batch != nil || !strings.Contains(rr.Problem, "stale .index") || rr.BytesRead > 64<<10+indexProbeMax*8 {
		t.Fatalf("no index: %+v", rr)
	}
}

// recordSeeds are hostile and ordinary segments for FuzzReadRecords: a
// plain batch, a transaction and its marker, a truncated batch, a wrong
// CRC, huge sizes, a control batch alone, compressed records.
func recordSeeds(t *testing.T) [][]byte {
	plain := EncodeBatchOf(BatchOf{Base: 0, ProducerID: -1, Records: values("a", "b")})
	txn := EncodeBatchOf(BatchOf{Base: 2, ProducerID: 5, Transactional: true, Records: values("t")})
	marker := EncodeBatchOf(BatchOf{Base: 3, ProducerID: 5, Control: true})
	badCRC := bytes.Clone(plain)
	badCRC[len(badCRC)-1] ^= 1
	huge := bytes.Clone(plain)
	binary.BigEndian.PutUint32(huge[8:12], 0x7fffffff)
	hugeRecords := bytes.Clone(plain)
	binary.BigEndian.PutUint32(hugeRecords[57:61], 0x7fffffff)
	hugeVarint := bytes.Clone(plain)
	hugeVarint[batchHeaderLen] = 0xfe // record length varint: huge
	binary.BigEndian.PutUint32(hugeVarint[batchCRCAt:batchCRCAt+4], crc32.Checksum(hugeVarint[21:], castagnoli))
	return [][]byte{
		plain, append(append(bytes.Clone(plain), txn...), marker...), plain[:len(plain)-5], badCRC, huge, hugeRecords, hugeVarint, marker,
		compressBatch(t, plain, 1), compressBatch(t, plain, 2), compressBatch(t, plain, 3), compressBatch(t, plain, 4),
	}
}

func FuzzReadRecords(f *testing.F) {
	for i, s := range recordSeeds(&testing.T{}) {
		f.Add(s, int64(i%3), uint8(i%4))
	}
	f.Fuzz(func(t *testing.T, data []byte, offset int64, peek uint8) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, SegmentLogName(0, 1)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		ls, err := ListSegments(dir)
		if err != nil {
			t.Fatal(err)
		}
		lim := RecordLimits{Peek: int(peek), MaxBatchBytes: 64 << 10, MaxDecompressed: 256 << 10, SeekBytes: 64 << 10, ScanBytes: 64 << 10}
		rr, err := ReadRecordsAt(ls, offset, lim)
		checkErr(t, err)
		if err != nil {
			return
		}
		if rr.BytesRead > lim.norm().MaxBytes() {
			t.Fatalf("read %d bytes, over the bound %d", rr.BytesRead, lim.norm().MaxBytes())
		}
		if len(rr.Records) > max(1, int(peek)) || (rr.Batch == nil && rr.Problem == "") {
			t.Fatalf("result %+v", rr)
		}
		for _, r := range rr.Records {
			if r.Offset < offset || len(r.Key) > DefaultPreviewBytes || len(r.Value) > DefaultPreviewBytes {
				t.Fatalf("record %+v for offset %d", r, offset)
			}
		}
		if s := ScanTransactions(ls, rr, lim); s != nil && s.BytesRead > lim.ScanBytes {
			t.Fatalf("scan read %d bytes", s.BytesRead)
		}
	})
}

// A read_committed consumer sitting on a COMMIT marker, with an aborted
// transaction and its marker after it, stops at the open transaction
// after those: Blocking names it; a plain record in between is read
// first, so nothing blocks there.
func TestScanBlockingAfterMarkers(t *testing.T) {
	t.Parallel()
	commitMarker := EncodeBatchOf(BatchOf{Base: 9, ProducerID: 1, Control: true, Commit: true})
	aborted := EncodeBatchOf(BatchOf{Base: 10, ProducerID: 2, Transactional: true, Records: values("a", "b", "c")})
	abortMarker := EncodeBatchOf(BatchOf{Base: 13, ProducerID: 2, Control: true})
	open := EncodeBatchOf(BatchOf{Base: 14, ProducerID: 3, ProducerEpoch: 4, Transactional: true, Records: values("x", "y")})
	plain := EncodeBatchOf(BatchOf{Base: 16, ProducerID: -1, Records: values("p")})
	for _, c := range []struct {
		name    string
		batches [][]byte
		want    int64 // -1: none
	}{
		{"markers and aborted records first", [][]byte{commitMarker, aborted, abortMarker, open, plain}, 3},
		{"a plain record first", [][]byte{commitMarker, EncodeBatchOf(BatchOf{Base: 10, ProducerID: -1, Records: values("p")}), EncodeBatchOf(BatchOf{Base: 11, ProducerID: 3, Transactional: true, Records: values("x")})}, -1},
	} {
		ls := plantBatches(t, 9, c.batches...)
		rr, _ := ReadRecordsAt(ls, 9, RecordLimits{})
		got := ScanTransactions(ls, rr, RecordLimits{}).Blocking()
		if (got == nil) != (c.want < 0) || (got != nil && (got.ProducerID != c.want || got.FirstOffset != 14 || got.ProducerEpoch != 4)) {
			t.Errorf("%s: blocking %+v, want producer %d", c.name, got, c.want)
		}
	}
}
