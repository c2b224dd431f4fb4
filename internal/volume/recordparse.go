package volume

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// errDecodedTooLarge: a batch decodes to more than the bound.
var errDecodedTooLarge = errors.New("decodes to more than the read bound")

// xerialMagic starts snappy in the framing Java producers write.
var xerialMagic = []byte{130, 83, 78, 65, 80, 80, 89, 0}

// zstdDecoder is one decoder for every zstd batch (DecodeAll is safe for
// concurrent use), bounded at the largest MaxDecompressed kaasctl uses.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxMemory(64<<20))
})

// decompress decodes a batch's records section by its codec, never to
// more than limit bytes.
func decompress(codec string, src []byte, limit int) ([]byte, error) {
	switch codec {
	case "none":
		return src, nil
	case "gzip":
		r, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		return readLimited(r, limit)
	case "lz4":
		return readLimited(lz4.NewReader(bytes.NewReader(src)), limit)
	case "snappy":
		return unsnappy(src, limit)
	case "zstd":
		d, err := zstdDecoder()
		if err != nil {
			return nil, err
		}
		out, err := d.DecodeAll(src, nil)
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || len(out) > limit {
			return nil, errDecodedTooLarge
		}
		return out, err
	}
	return nil, fmt.Errorf("codec %s is not one Kafka defines", codec)
}

func readLimited(r io.Reader, limit int) ([]byte, error) {
	var out bytes.Buffer
	n, err := out.ReadFrom(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if n > int64(limit) {
		return nil, errDecodedTooLarge
	}
	return out.Bytes(), nil
}

// unsnappy decodes a raw snappy block or Java's xerial framing (a header,
// then big-endian lengths and blocks), checking every claimed length
// against limit before allocating.
func unsnappy(src []byte, limit int) ([]byte, error) {
	if !(len(src) > 16 && bytes.HasPrefix(src, xerialMagic)) {
		n, err := s2.DecodedLen(src)
		if err != nil {
			return nil, err
		}
		if n > limit {
			return nil, errDecodedTooLarge
		}
		return s2.Decode(nil, src)
	}
	var out []byte
	for rest := src[16:]; len(rest) > 0; {
		if len(rest) < 4 {
			return nil, errors.New("xerial framing cut short")
		}
		size := int64(binary.BigEndian.Uint32(rest))
		rest = rest[4:]
		if size > int64(len(rest)) {
			return nil, errors.New("xerial block longer than the batch")
		}
		n, err := s2.DecodedLen(rest[:size])
		if err != nil {
			return nil, err
		}
		if len(out)+n > limit {
			return nil, errDecodedTooLarge
		}
		block, err := s2.Decode(nil, rest[:size])
		if err != nil {
			return nil, err
		}
		out = append(out, block...)
		rest = rest[size:]
	}
	return out, nil
}

// recordCursor reads a records section's varints and byte strings.
type recordCursor struct {
	b   []byte
	bad string
}

func (c *recordCursor) varint(what string) int64 {
	if c.bad != "" {
		return 0
	}
	v, n := binary.Varint(c.b)
	if n <= 0 {
		c.bad = "a malformed varint (" + what + ")"
		return 0
	}
	c.b = c.b[n:]
	return v
}

// bytes returns a length-prefixed byte string (nil, -1 for null).
func (c *recordCursor) bytes(what string) ([]byte, int) {
	n := c.varint(what + " length")
	if c.bad != "" {
		return nil, 0
	}
	if n < 0 {
		return nil, -1
	}
	if n > int64(len(c.b)) {
		c.bad = fmt.Sprintf("a %s of %d bytes past the record's end", what, n)
		return nil, 0
	}
	v := c.b[:n]
	c.b = c.b[n:]
	return v, int(n)
}

// parseRecords parses the records of bi from body, keeping those at or
// after from (at most lim.Peek, previews cut to lim.PreviewBytes); the
// problem names the first malformed record.
func parseRecords(body []byte, bi *BatchInfo, from int64, lim RecordLimits) ([]Record, string) {
	var out []Record
	c := &recordCursor{b: body}
	for i := int32(0); i < bi.Records && len(out) < lim.Peek; i++ {
		size := c.varint("record length")
		if c.bad == "" && (size < 0 || size > int64(len(c.b))) {
			c.bad = fmt.Sprintf("a record length of %d bytes past the batch's end", size)
		}
		if c.bad != "" {
			return out, fmt.Sprintf("record %d of the batch at offset %d: %s", i, bi.BaseOffset, c.bad)
		}
		rc := &recordCursor{b: c.b[:size]}
		c.b = c.b[size:]
		r, ok := parseRecord(rc, bi, lim)
		if rc.bad != "" {
			return out, fmt.Sprintf("record %d of the batch at offset %d: %s", i, bi.BaseOffset, rc.bad)
		}
		if ok && r.Offset >= from {
			out = append(out, r)
		}
	}
	return out, ""
}

// parseRecord parses one record (ok false for a record the cursor could
// not read).
func parseRecord(rc *recordCursor, bi *BatchInfo, lim RecordLimits) (Record, bool) {
	if len(rc.b) < 1 {
		rc.bad = "an empty record"
		return Record{}, false
	}
	rc.b = rc.b[1:] // attributes, unused in v2
	tsDelta := rc.varint("timestamp delta")
	offDelta := rc.varint("offset delta")
	key, kn := rc.bytes("key")
	val, vn := rc.bytes("value")
	nh := rc.varint("header count")
	if rc.bad != "" {
		return Record{}, false
	}
	if nh < 0 || nh > int64(len(rc.b)) {
		rc.bad = fmt.Sprintf("a header count of %d past the record's end", nh)
		return Record{}, false
	}
	r := Record{Offset: bi.BaseOffset + offDelta, TimestampMs: bi.FirstTime + tsDelta, KeyBytes: kn, ValueBytes: vn,
		Key: preview(key, lim.PreviewBytes), Value: preview(val, lim.PreviewBytes), Headers: int(nh)}
	for h := int64(0); h < nh; h++ {
		hk, _ := rc.bytes("header key")
		rc.bytes("header value")
		if rc.bad != "" {
			return Record{}, false
		}
		if len(r.HeaderKeys) < 8 {
			r.HeaderKeys = append(r.HeaderKeys, string(preview(hk, 64)))
		}
	}
	if bi.Control {
		r.Control = controlType(key)
	}
	return r, true
}

// controlType is COMMIT or ABORT from a control record's key (version
// int16, type int16); "" when it is neither.
func controlType(key []byte) string {
	if len(key) < 4 {
		return ""
	}
	switch binary.BigEndian.Uint16(key[2:4]) {
	case 0:
		return ControlAbort
	case 1:
		return ControlCommit
	}
	return ""
}

func preview(b []byte, n int) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b[:min(len(b), n)])
}
