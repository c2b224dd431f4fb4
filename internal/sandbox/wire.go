package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxFrame bounds one Kafka frame; a client announcing more is dropped.
const maxFrame = 100 << 20

// frame is one request as read off a client connection.
type frame struct {
	raw      []byte // the whole frame without its 4-byte size prefix
	key      int16
	version  int16
	corrID   int32
	bodyOff  int  // where the request body starts in raw
	flexible bool // the request (and so its response) uses flexible encoding
}

func (f *frame) body() []byte { return f.raw[f.bodyOff:] }

// readFrame reads one size-prefixed frame.
func readFrame(r io.Reader) ([]byte, error) {
	var sz [4]byte
	if _, err := io.ReadFull(r, sz[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(sz[:]))
	if n < 0 || n > maxFrame {
		return nil, fmt.Errorf("frame size %d out of range", n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

var errShortHeader = errors.New("truncated request header")

// parseRequestHeader decodes the request header (v1, or v2 for flexible
// requests: v1 plus tagged fields).
func parseRequestHeader(raw []byte) (*frame, error) {
	if len(raw) < 10 {
		return nil, errShortHeader
	}
	f := &frame{
		raw:     raw,
		key:     int16(binary.BigEndian.Uint16(raw[0:])),
		version: int16(binary.BigEndian.Uint16(raw[2:])),
		corrID:  int32(binary.BigEndian.Uint32(raw[4:])),
	}
	off := 8
	cl := int16(binary.BigEndian.Uint16(raw[off:]))
	off += 2
	if cl > 0 {
		off += int(cl)
	}
	if off > len(raw) {
		return nil, errShortHeader
	}
	if req := kmsg.RequestForKey(f.key); req != nil {
		req.SetVersion(f.version)
		f.flexible = req.IsFlexible()
	}
	if f.flexible {
		n, sz := binary.Uvarint(raw[off:])
		if sz <= 0 {
			return nil, errShortHeader
		}
		off += sz
		for i := uint64(0); i < n; i++ {
			_, s1 := binary.Uvarint(raw[off:])
			if s1 <= 0 {
				return nil, errShortHeader
			}
			off += s1
			l, s2 := binary.Uvarint(raw[off:])
			if s2 <= 0 {
				return nil, errShortHeader
			}
			off += s2 + int(l)
			if off > len(raw) {
				return nil, errShortHeader
			}
		}
	}
	f.bodyOff = off
	return f, nil
}

// decode parses the request body into its kmsg type.
func (f *frame) decode() (kmsg.Request, error) {
	req := kmsg.RequestForKey(f.key)
	if req == nil {
		return nil, fmt.Errorf("unknown api key %d", f.key)
	}
	req.SetVersion(f.version)
	if err := req.ReadFrom(f.body()); err != nil {
		return nil, fmt.Errorf("decode %s v%d: %w", kmsg.NameForKey(f.key), f.version, err)
	}
	return req, nil
}

// withBody rebuilds the frame with the same header and a new body.
func (f *frame) withBody(req kmsg.Request) []byte {
	out := make([]byte, 0, f.bodyOff+256)
	out = append(out, f.raw[:f.bodyOff]...)
	return req.AppendTo(out)
}

// responseHeaderLen is the size of the response header for this request:
// the correlation id, plus an empty tag section for flexible responses
// (ApiVersions always answers with header v0).
func (f *frame) responseHeaderLen() int {
	if f.flexible && f.key != int16(kmsg.ApiVersions) {
		return 5
	}
	return 4
}

// encodeResponse builds a full response frame (size prefix included).
func (f *frame) encodeResponse(resp kmsg.Response) []byte {
	resp.SetVersion(f.version)
	out := make([]byte, 4, 64)
	out = binary.BigEndian.AppendUint32(out, uint32(f.corrID))
	if f.responseHeaderLen() == 5 {
		out = append(out, 0)
	}
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out
}

// decodeResponse parses an upstream response frame (no size prefix) for f.
func (f *frame) decodeResponse(raw []byte) (kmsg.Response, error) {
	h := f.responseHeaderLen()
	if len(raw) < h {
		return nil, errors.New("truncated response header")
	}
	resp := kmsg.ResponseForKey(f.key)
	if resp == nil {
		return nil, fmt.Errorf("unknown api key %d", f.key)
	}
	resp.SetVersion(f.version)
	if err := resp.ReadFrom(raw[h:]); err != nil {
		return nil, fmt.Errorf("decode %s response v%d: %w", kmsg.NameForKey(f.key), f.version, err)
	}
	return resp, nil
}

// withSize prefixes a raw upstream response frame with its size.
func withSize(raw []byte) []byte {
	out := make([]byte, 4, 4+len(raw))
	binary.BigEndian.PutUint32(out, uint32(len(raw)))
	return append(out, raw...)
}

// produceAcks reads the acks field of a Produce request without decoding
// its records: acks=0 means the broker sends no response.
func produceAcks(f *frame) int16 {
	b := f.body()
	if f.version >= 3 {
		if f.flexible {
			l, n := binary.Uvarint(b)
			if n <= 0 {
				return -1
			}
			b = b[n:]
			if l > 0 {
				if int(l-1) > len(b) {
					return -1
				}
				b = b[l-1:]
			}
		} else {
			if len(b) < 2 {
				return -1
			}
			l := int16(binary.BigEndian.Uint16(b))
			b = b[2:]
			if l > 0 {
				if int(l) > len(b) {
					return -1
				}
				b = b[l:]
			}
		}
	}
	if len(b) < 2 {
		return -1
	}
	return int16(binary.BigEndian.Uint16(b))
}
