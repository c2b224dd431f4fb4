package volume

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
)

// KaasIndexIntervalBytes is kaas's default sparse-index interval: an
// index entry is written before a batch once this many log bytes were
// appended since the last entry.
const KaasIndexIntervalBytes = 4096

// EncodeBatch returns a RecordBatch v2 as kaas stores it: baseOffset,
// count records with the given values (value i of the batch, or empty),
// timestamps ts, and a valid CRC-32C. It is what the sandbox and the
// tests write into segment files.
func EncodeBatch(baseOffset int64, count int, ts int64, values [][]byte) []byte {
	if count < 1 {
		count = 1
	}
	var recs []byte
	for i := 0; i < count; i++ {
		var v []byte
		if i < len(values) {
			v = values[i]
		}
		var body []byte
		body = append(body, 0)                     // attributes
		body = binary.AppendVarint(body, 0)        // timestampDelta
		body = binary.AppendVarint(body, int64(i)) // offsetDelta
		body = binary.AppendVarint(body, -1)       // key: null
		body = binary.AppendVarint(body, int64(len(v)))
		body = append(body, v...)
		body = binary.AppendVarint(body, 0) // headers
		recs = binary.AppendVarint(recs, int64(len(body)))
		recs = append(recs, body...)
	}
	b := make([]byte, batchHeaderLen, batchHeaderLen+len(recs))
	binary.BigEndian.PutUint64(b[0:8], uint64(baseOffset))
	binary.BigEndian.PutUint32(b[8:12], uint32(batchHeaderLen-batchLogOverhead+len(recs)))
	binary.BigEndian.PutUint32(b[12:16], 0) // partitionLeaderEpoch
	b[batchMagicAt] = 2
	binary.BigEndian.PutUint16(b[21:23], 0) // attributes
	binary.BigEndian.PutUint32(b[23:27], uint32(count-1))
	binary.BigEndian.PutUint64(b[27:35], uint64(ts))
	binary.BigEndian.PutUint64(b[35:43], uint64(ts))
	binary.BigEndian.PutUint64(b[43:51], ^uint64(0))    // producerId -1
	binary.BigEndian.PutUint16(b[51:53], ^uint16(0))    // producerEpoch -1
	binary.BigEndian.PutUint32(b[53:57], ^uint32(0))    // baseSequence -1
	binary.BigEndian.PutUint32(b[57:61], uint32(count)) // records
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b[batchCRCAt:batchCRCAt+4], crc32.Checksum(b[21:], castagnoli))
	return b
}

// SegmentWriter appends batches to one segment the way kaas does: the
// batch bytes at the end of the .log, and an index entry (offset relative
// to the segment base, byte position) before a batch once
// KaasIndexIntervalBytes were written since the last entry.
type SegmentWriter struct {
	Base      int64
	log, idx  *os.File
	size      int64
	lastIndex int64
	// Next is the offset the next batch gets.
	Next int64
}

// CreateSegment creates <epoch:08x>-<base:020>.log and .index in dir.
func CreateSegment(dir string, base, epoch int64) (*SegmentWriter, error) {
	log, err := os.OpenFile(filepath.Join(dir, SegmentLogName(base, epoch)), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	idx, err := os.OpenFile(filepath.Join(dir, SegmentIndexName(base, epoch)), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		log.Close()
		return nil, err
	}
	return &SegmentWriter{Base: base, log: log, idx: idx, Next: base}, nil
}

// Append writes one batch of count records at w.Next.
func (w *SegmentWriter) Append(count int, ts int64, values [][]byte) error {
	if err := w.write(EncodeBatch(w.Next, count, ts, values), w.Next); err != nil {
		return err
	}
	w.Next += int64(max(count, 1))
	return nil
}

// BatchBase is the base offset of the RecordBatch at the start of raw
// (false when raw is too short to hold one's head).
func BatchBase(raw []byte) (int64, bool) {
	if len(raw) < batchLogOverhead {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(raw[0:8])), true
}

// AppendRaw appends the complete RecordBatch v2 batches at the start of
// raw as they are (a broker's Fetch answer: kaas stores the produced
// bytes), each starting at w.Next or later, with kaas's index entries. It
// stops at the first incomplete batch, or one that starts before w.Next
// or holds a bound kaas could not have written, and returns the bytes it
// appended.
func (w *SegmentWriter) AppendRaw(raw []byte) (int, error) {
	done := 0
	for len(raw)-done >= batchLastDeltaAt+4 {
		h := raw[done:]
		length := int(int32(binary.BigEndian.Uint32(h[8:12])))
		if length < batchMinKaasLength || batchLogOverhead+length > len(h) {
			break
		}
		base := int64(binary.BigEndian.Uint64(h[0:8]))
		end, bad := batchEnd(base, int32(binary.BigEndian.Uint32(h[batchLastDeltaAt:batchLastDeltaAt+4])), false, w.Base)
		if bad != "" || base < w.Next {
			break
		}
		if err := w.write(h[:batchLogOverhead+length], base); err != nil {
			return done, err
		}
		w.Next = end
		done += batchLogOverhead + length
	}
	return done, nil
}

// write puts one batch starting at base at the end of the .log, after the
// index entry kaas writes before it once KaasIndexIntervalBytes were
// appended since the last one.
func (w *SegmentWriter) write(batch []byte, base int64) error {
	if w.size-w.lastIndex >= KaasIndexIntervalBytes {
		var e [indexEntryLen]byte
		binary.BigEndian.PutUint32(e[0:4], uint32(base-w.Base))
		binary.BigEndian.PutUint32(e[4:8], uint32(w.size))
		if _, err := w.idx.Write(e[:]); err != nil {
			return err
		}
		w.lastIndex = w.size
	}
	if _, err := w.log.WriteAt(batch, w.size); err != nil {
		return err
	}
	w.size += int64(len(batch))
	return nil
}

// Close closes both files.
func (w *SegmentWriter) Close() error {
	err := w.log.Close()
	if e := w.idx.Close(); err == nil {
		err = e
	}
	return err
}

// WriteRecords creates dir (and its parents) and a segment in it holding
// the records [start, end), in batches of up to 5 records stamped ts (Unix
// milliseconds), at leader epoch 1: a partition's log as kaas writes it,
// for tests and labs that need one.
func WriteRecords(dir string, start, end, ts int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	w, err := CreateSegment(dir, start, 1)
	if err != nil {
		return err
	}
	for w.Next < end {
		if err := w.Append(int(min(5, end-w.Next)), ts, nil); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}
