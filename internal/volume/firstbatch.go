package volume

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/kaasctl/kaasctl/internal/safefs"
)

// BatchHead is the header of the first record batch of a partition's log:
// where the log as it is now begins, and when its first records were
// written. A group's committed offset older than those records was not
// committed on this log (the topic was deleted and recreated under the
// same name, or the log was rewritten from its start).
type BatchHead struct {
	// Segment is the first segment's .log file, Epoch the leader epoch
	// in its name (kaas starts a segment at every takeover).
	Segment string `json:"segment"`
	Epoch   int64  `json:"epoch"`
	// BaseOffset is the batch's first offset; LastOffset its last.
	BaseOffset int64 `json:"baseOffset"`
	LastOffset int64 `json:"lastOffset"`
	// FirstTime and MaxTime are the batch's base and max timestamps (the
	// producers' clocks, CreateTime, or the broker's with LogAppendTime).
	FirstTime time.Time `json:"firstTime"`
	MaxTime   time.Time `json:"maxTime"`
}

// FirstBatch reads the header of the first batch of the log in dir (a
// partition dir): the first segment by base offset, then epoch. A dir
// with no segment, an empty first segment, or a header that is not a
// RecordBatch v2 is a *FileError saying so.
func FirstBatch(dir string) (*BatchHead, error) {
	ls, err := ListSegments(dir)
	if err != nil {
		return nil, err
	}
	if len(ls.Segments) == 0 {
		return nil, &FileError{Path: dir, Problem: "no segment files: the log holds no record"}
	}
	seg := ls.Segments[0]
	d, err := safefs.OpenDir(dir)
	if err != nil {
		return nil, &FileError{Path: dir, Problem: "cannot open: " + readProblem(err)}
	}
	defer d.Close()
	f, err := d.OpenRegular(filepath.Base(seg.Log))
	if err != nil {
		return nil, &FileError{Path: seg.Log, Problem: "cannot open: " + readProblem(err)}
	}
	defer f.Close()
	buf := make([]byte, batchHeaderLen)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, &FileError{Path: seg.Log, Problem: "cannot read: " + readProblem(err)}
	}
	h, perr := ParseBatchHead(buf[:n])
	if perr != nil {
		return nil, &FileError{Path: seg.Log, Problem: perr.Error()}
	}
	h.Segment, h.Epoch = seg.Log, seg.Epoch
	return &h, nil
}

// ParseBatchHead decodes the first bytes of a RecordBatch v2: its offsets
// and timestamps. Fewer bytes than a header, another magic, a negative
// offset or one that overflows with its last delta, and a negative
// timestamp other than -1 (none) are errors.
func ParseBatchHead(b []byte) (BatchHead, error) {
	var h BatchHead
	switch {
	case len(b) == 0:
		return h, errors.New("the first segment is empty: the log holds no record")
	case len(b) < batchHeaderLen:
		return h, fmt.Errorf("the first batch is cut short (%d of the %d header bytes)", len(b), batchHeaderLen)
	case b[batchMagicAt] != 2:
		return h, fmt.Errorf("the first batch has magic %d, not a RecordBatch v2", b[batchMagicAt])
	}
	h.BaseOffset = int64(binary.BigEndian.Uint64(b[0:8]))
	delta := int32(binary.BigEndian.Uint32(b[23:27]))
	if h.BaseOffset < 0 || delta < 0 || h.BaseOffset > (1<<63-1)-int64(delta) {
		return h, fmt.Errorf("the first batch holds offsets no log can have (base %d, last delta %d)", h.BaseOffset, delta)
	}
	h.LastOffset = h.BaseOffset + int64(delta)
	first := int64(binary.BigEndian.Uint64(b[27:35]))
	maxT := int64(binary.BigEndian.Uint64(b[35:43]))
	for _, ts := range []int64{first, maxT} {
		if ts < -1 {
			return h, fmt.Errorf("the first batch has timestamp %d, which no producer or broker writes", ts)
		}
	}
	if first >= 0 {
		h.FirstTime = time.UnixMilli(first).UTC()
	}
	if maxT >= 0 {
		h.MaxTime = time.UnixMilli(maxT).UTC()
	}
	return h, nil
}
