package volume

import (
	"encoding/binary"
	"hash/crc32"
)

// BatchRecord is one record for EncodeBatchOf: a key and value (nil:
// null) and headers.
type BatchRecord struct {
	Key, Value []byte
	Headers    [][2][]byte
}

// BatchOf describes a RecordBatch v2 for EncodeBatchOf: its base offset
// and timestamp, its producer (-1 for none) and whether it is
// transactional or a control batch (Abort or Commit marks which).
type BatchOf struct {
	Base          int64
	TimestampMs   int64
	ProducerID    int64
	ProducerEpoch int16
	Transactional bool
	// Control writes one control record: COMMIT when Commit, else ABORT.
	Control bool
	Commit  bool
	Records []BatchRecord
}

// EncodeBatchOf returns the batch as a producer (or, for a control
// batch, the transaction coordinator's marker) writes it, uncompressed,
// with a valid CRC-32C: what tests and the sandbox plant in segments.
func EncodeBatchOf(o BatchOf) []byte {
	recs := o.Records
	if o.Control {
		typ := uint16(0)
		if o.Commit {
			typ = 1
		}
		key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), typ)
		val := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), 0)
		recs = []BatchRecord{{Key: key, Value: val}}
	}
	if len(recs) == 0 {
		recs = []BatchRecord{{}}
	}
	var body []byte
	for i, r := range recs {
		var rec []byte
		rec = append(rec, 0)
		rec = binary.AppendVarint(rec, 0)
		rec = binary.AppendVarint(rec, int64(i))
		rec = appendVarBytes(rec, r.Key)
		rec = appendVarBytes(rec, r.Value)
		rec = binary.AppendVarint(rec, int64(len(r.Headers)))
		for _, h := range r.Headers {
			rec = appendVarBytes(appendVarBytes(rec, h[0]), h[1])
		}
		body = binary.AppendVarint(body, int64(len(rec)))
		body = append(body, rec...)
	}
	b := make([]byte, batchHeaderLen, batchHeaderLen+len(body))
	binary.BigEndian.PutUint64(b[0:8], uint64(o.Base))
	binary.BigEndian.PutUint32(b[8:12], uint32(batchHeaderLen-batchLogOverhead+len(body)))
	b[batchMagicAt] = 2
	var attrs uint16
	if o.Transactional || o.Control {
		attrs |= attrTransactional
	}
	if o.Control {
		attrs |= attrControl
	}
	binary.BigEndian.PutUint16(b[21:23], attrs)
	binary.BigEndian.PutUint32(b[23:27], uint32(len(recs)-1))
	binary.BigEndian.PutUint64(b[27:35], uint64(o.TimestampMs))
	binary.BigEndian.PutUint64(b[35:43], uint64(o.TimestampMs))
	binary.BigEndian.PutUint64(b[43:51], uint64(o.ProducerID))
	binary.BigEndian.PutUint16(b[51:53], uint16(o.ProducerEpoch))
	binary.BigEndian.PutUint32(b[53:57], ^uint32(0))
	binary.BigEndian.PutUint32(b[57:61], uint32(len(recs)))
	b = append(b, body...)
	binary.BigEndian.PutUint32(b[batchCRCAt:batchCRCAt+4], crc32.Checksum(b[21:], castagnoli))
	return b
}

func appendVarBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	return append(binary.AppendVarint(b, int64(len(v))), v...)
}
