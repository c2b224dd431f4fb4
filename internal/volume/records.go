package volume

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"

	"github.com/kaasctl/kaasctl/internal/safefs"
)

// The record reader: the batch holding an offset, found through the
// segment's sparse .index, read and checked as a consumer's fetch would
// get it (CRC-32C, codec), its records parsed (varints, headers), and the
// batches after it walked by their headers for the transactions they open
// and end. Every read is bounded (RecordLimits): a hostile or huge segment
// never costs more than the limits, whatever its sizes claim.

// RecordLimits bound what the record reader reads and keeps.
type RecordLimits struct {
	// SeekBytes bounds the bytes read to find the batch from the index
	// entry before it (kaas writes an entry every 4 KiB of log, so a
	// usable index needs one batch and a few headers).
	SeekBytes int64
	// MaxBatchBytes: a larger batch is read by its header only.
	MaxBatchBytes int
	// MaxDecompressed bounds a compressed batch's records once decoded.
	MaxDecompressed int
	// ScanBytes and ScanBatches bound the walk of the batch headers after
	// the batch that finds the transactions' markers.
	ScanBytes   int64
	ScanBatches int
	// Peek is how many records are kept (MaxPeek at most); PreviewBytes
	// how much of each key and value.
	Peek         int
	PreviewBytes int
}

// Record reader bounds (DefaultRecordLimits' values).
const (
	MaxPeek             = 100
	DefaultPreviewBytes = 64
	MaxPreviewBytes     = 4096
	indexProbeMax       = 64 // index binary-search probes (2^64 entries)
	recordWindow        = 16 << 10
	controlBodyMax      = 4 << 10
)

// DefaultRecordLimits are the limits kaasctl reads with: at most 256 KiB
// to find a batch, 1 MiB of batch (kaas's default max.message.bytes),
// 8 MiB decoded, 500 batch headers or 256 KiB after it.
func DefaultRecordLimits() RecordLimits {
	return RecordLimits{SeekBytes: 256 << 10, MaxBatchBytes: 1 << 20, MaxDecompressed: 8 << 20, ScanBytes: 256 << 10, ScanBatches: 500, Peek: 1, PreviewBytes: DefaultPreviewBytes}
}

// MaxBytes is the most the reader reads for one offset under l (index
// probes, seek, the batch, the peeked batches after it, the scan).
func (l RecordLimits) MaxBytes() int64 {
	return indexProbeMax*indexEntryLen + l.SeekBytes + int64(l.MaxBatchBytes)*int64(max(1, l.Peek)) + l.ScanBytes + 2*recordWindow
}

func (l RecordLimits) norm() RecordLimits {
	d := DefaultRecordLimits()
	if l.SeekBytes <= 0 {
		l.SeekBytes = d.SeekBytes
	}
	if l.MaxBatchBytes <= 0 {
		l.MaxBatchBytes = d.MaxBatchBytes
	}
	if l.MaxDecompressed <= 0 {
		l.MaxDecompressed = d.MaxDecompressed
	}
	if l.ScanBytes <= 0 {
		l.ScanBytes = d.ScanBytes
	}
	if l.ScanBatches <= 0 {
		l.ScanBatches = d.ScanBatches
	}
	l.Peek = min(max(l.Peek, 1), MaxPeek)
	if l.PreviewBytes <= 0 {
		l.PreviewBytes = d.PreviewBytes
	}
	l.PreviewBytes = min(l.PreviewBytes, MaxPreviewBytes)
	return l
}

// Batch attribute bits (RecordBatch v2).
const (
	attrCodecMask     = 0x07
	attrTransactional = 0x10
	attrControl       = 0x20
)

// Codec names by the attributes' low bits.
var codecNames = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

// BatchInfo is a RecordBatch's header as the segment holds it.
type BatchInfo struct {
	Segment       string `json:"segment"`
	Position      int64  `json:"position"`
	BaseOffset    int64  `json:"baseOffset"`
	LastOffset    int64  `json:"lastOffset"`
	Bytes         int64  `json:"bytes"`
	LeaderEpoch   int32  `json:"leaderEpoch"`
	Magic         int8   `json:"magic"`
	Attributes    int16  `json:"attributes"`
	Codec         string `json:"codec"`
	Transactional bool   `json:"transactional"`
	Control       bool   `json:"control"`
	FirstTime     int64  `json:"firstTimestampMs"`
	MaxTime       int64  `json:"maxTimestampMs"`
	ProducerID    int64  `json:"producerId"`
	ProducerEpoch int16  `json:"producerEpoch"`
	BaseSequence  int32  `json:"baseSequence"`
	Records       int32  `json:"records"`
	// CRCValid is false when the stored CRC-32C does not match the
	// batch's bytes (checked only for a batch read whole: CRCChecked).
	CRCChecked bool `json:"crcChecked"`
	CRCValid   bool `json:"crcValid"`
}

// Control record types (the key's type field).
const (
	ControlAbort  = "ABORT"
	ControlCommit = "COMMIT"
)

// Record is one record of a batch, its key and value cut to a preview.
type Record struct {
	Offset      int64 `json:"offset"`
	TimestampMs int64 `json:"timestampMs"`
	// KeyBytes and ValueBytes are the sizes (-1: null).
	KeyBytes   int      `json:"keyBytes"`
	ValueBytes int      `json:"valueBytes"`
	Key        []byte   `json:"key"`
	Value      []byte   `json:"value"`
	Headers    int      `json:"headers"`
	HeaderKeys []string `json:"headerKeys,omitempty"`
	// Control is COMMIT or ABORT for a control record.
	Control string `json:"control,omitempty"`
}

// RecordRead is what the reader found at an offset.
type RecordRead struct {
	Offset int64 `json:"offset"`
	// Batch holds Offset, or is the first batch after it (a consumer
	// positioned in a gap reads on from there); nil when none was found.
	Batch *BatchInfo `json:"batch,omitempty"`
	// Records start at Offset (or the batch's first), at most Peek.
	Records []Record `json:"records"`
	// Problem says why the records are not there ("" when they are):
	// past the log end, a bound reached, a corrupt batch, a codec error.
	Problem string `json:"problem,omitempty"`
	// Corrupt: the batch's bytes cannot be what kaas stored (CRC, record
	// framing, codec): a consumer's fetch of it fails.
	Corrupt   bool  `json:"corrupt"`
	Reads     int   `json:"reads"`
	BytesRead int64 `json:"bytesRead"`
	// batchSeg is Batch's segment (an index in the listing), seg the
	// segment of the last batch the peek read.
	batchSeg, seg int
}

// boundedFile reads one segment under a byte budget shared by the whole
// read of an offset, keeping a small window for header walks.
type boundedFile struct {
	f      *os.File
	path   string
	size   int64
	rr     *RecordRead
	budget *int64
	win    []byte
	winAt  int64
	// narrow: header reads take the header alone (the batches walked are
	// large, so a window would read their bodies); buf is the reused
	// window buffer.
	narrow bool
	buf    []byte
	hdr    [batchHeaderLen]byte
}

var errBudget = errors.New("read bound reached")

func openBounded(path string, rr *RecordRead, budget *int64) (*boundedFile, error) {
	f, info, err := safefs.Open(path)
	if err != nil {
		return nil, &FileError{Path: path, Problem: readProblem(err)}
	}
	return &boundedFile{f: f, path: path, size: info.Size, rr: rr, budget: budget}, nil
}

func (b *boundedFile) Close() { b.f.Close() }

// at returns n bytes at off (fewer at the end of the file), through the
// window when they fit one.
func (b *boundedFile) at(off int64, n int) ([]byte, error) {
	if off < 0 || off >= b.size || n <= 0 {
		return nil, nil
	}
	n = int(min(int64(n), b.size-off))
	if b.win != nil && off >= b.winAt && off+int64(n) <= b.winAt+int64(len(b.win)) {
		s := off - b.winAt
		return b.win[s : s+int64(n)], nil
	}
	want := n
	windowed := n < recordWindow && !(b.narrow && n <= batchHeaderLen)
	if windowed {
		want = int(min(int64(recordWindow), b.size-off))
	}
	if int64(want) > *b.budget {
		want = int(max(int64(n), *b.budget))
		if int64(want) > *b.budget {
			return nil, errBudget
		}
	}
	var buf []byte
	switch {
	case windowed:
		if cap(b.buf) < recordWindow {
			b.buf = make([]byte, recordWindow)
		}
		buf = b.buf[:want] // the window is reused: callers copy what they keep
	case want <= batchHeaderLen:
		buf = b.hdr[:want]
	default:
		buf = make([]byte, want)
	}
	m, err := b.f.ReadAt(buf, off)
	b.rr.Reads++
	b.rr.BytesRead += int64(m)
	*b.budget -= int64(m)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, &FileError{Path: b.path, Problem: readProblem(err)}
	}
	if windowed {
		b.win, b.winAt = buf[:m], off
	}
	return buf[:min(m, n)], nil
}

// parseBatchHeader reads a v2 header at pos of h (61 bytes or more).
func parseBatchHeader(h []byte, seg string, pos int64) BatchInfo {
	bi := BatchInfo{Segment: seg, Position: pos,
		BaseOffset:    int64(binary.BigEndian.Uint64(h[0:8])),
		Bytes:         batchLogOverhead + int64(int32(binary.BigEndian.Uint32(h[8:12]))),
		LeaderEpoch:   int32(binary.BigEndian.Uint32(h[12:16])),
		Magic:         int8(h[batchMagicAt]),
		Attributes:    int16(binary.BigEndian.Uint16(h[21:23])),
		FirstTime:     int64(binary.BigEndian.Uint64(h[27:35])),
		MaxTime:       int64(binary.BigEndian.Uint64(h[35:43])),
		ProducerID:    int64(binary.BigEndian.Uint64(h[43:51])),
		ProducerEpoch: int16(binary.BigEndian.Uint16(h[51:53])),
		BaseSequence:  int32(binary.BigEndian.Uint32(h[53:57])),
		Records:       int32(binary.BigEndian.Uint32(h[57:61])),
	}
	delta := int32(binary.BigEndian.Uint32(h[batchLastDeltaAt : batchLastDeltaAt+4]))
	bi.LastOffset = bi.BaseOffset + int64(delta)
	if c := int(bi.Attributes & attrCodecMask); c < len(codecNames) {
		bi.Codec = codecNames[c]
	} else {
		bi.Codec = fmt.Sprintf("unknown(%d)", c)
	}
	bi.Transactional = bi.Attributes&attrTransactional != 0
	bi.Control = bi.Attributes&attrControl != 0
	return bi
}

// headerAt reads and checks the batch header at pos: nil (and no error)
// where kaas's recovery would stop (too short, a length below 16 or past
// the file, not magic 2, an impossible bound).
func (b *boundedFile) headerAt(pos int64, segBase int64, first bool) (*BatchInfo, error) {
	bi, ok, err := b.header(pos, segBase, first)
	if !ok {
		return nil, err
	}
	return &bi, nil
}

// header is headerAt by value (ok false where the log stops).
func (b *boundedFile) header(pos int64, segBase int64, first bool) (BatchInfo, bool, error) {
	h, err := b.at(pos, batchHeaderLen)
	if err != nil || len(h) < batchHeaderLen {
		return BatchInfo{}, false, err
	}
	length := int64(int32(binary.BigEndian.Uint32(h[8:12])))
	if length < batchHeaderLen-batchLogOverhead || pos+batchLogOverhead+length > b.size || h[batchMagicAt] != 2 {
		return BatchInfo{}, false, nil
	}
	base := int64(binary.BigEndian.Uint64(h[0:8]))
	if _, bad := batchEnd(base, int32(binary.BigEndian.Uint32(h[batchLastDeltaAt:batchLastDeltaAt+4])), first, segBase); bad != "" {
		return BatchInfo{}, false, nil
	}
	return parseBatchHeader(h, b.path, pos), true, nil
}

// indexStart is the byte position of the last index entry at or below
// offset whose batch verifies (0 without one): a binary search over the
// entries, 8 bytes a probe.
func indexStart(seg SegmentFile, offset int64, b *boundedFile) int64 {
	f, info, err := safefs.Open(seg.Index)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := info.Size / indexEntryLen
	var e [indexEntryLen]byte
	entry := func(i int64) (int64, int64, bool) {
		if *b.budget < indexEntryLen {
			return 0, 0, false
		}
		m, _ := f.ReadAt(e[:], i*indexEntryLen)
		b.rr.Reads++
		b.rr.BytesRead += int64(m)
		*b.budget -= int64(m)
		if m < indexEntryLen {
			return 0, 0, false
		}
		return int64(int32(binary.BigEndian.Uint32(e[0:4]))), int64(binary.BigEndian.Uint32(e[4:8])), true
	}
	lo, hi := int64(0), n-1
	best := int64(-1)
	for probes := 0; lo <= hi && probes < indexProbeMax; probes++ {
		mid := lo + (hi-lo)/2
		rel, _, ok := entry(mid)
		if !ok {
			return 0
		}
		if rel >= 0 && seg.Base <= math.MaxInt64-rel && seg.Base+rel <= offset {
			best, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	if best < 0 {
		return 0
	}
	rel, pos, ok := entry(best)
	if !ok {
		return 0
	}
	if h, err := b.headerAt(pos, seg.Base, false); err != nil || h == nil || h.BaseOffset != seg.Base+rel {
		return 0 // a stale or hostile entry: walk from the segment's start
	}
	return pos
}

// ReadRecordsAt reads the records of ls's log from offset: the batch
// holding it (or the first after it), checked and decoded, and up to
// lim.Peek records. A segment that cannot be opened is a *FileError; what
// the log holds at the offset is in the RecordRead (Problem when nothing).
func ReadRecordsAt(ls SegmentListing, offset int64, lim RecordLimits) (*RecordRead, error) {
	lim = lim.norm()
	rr := &RecordRead{Offset: offset, Records: []Record{}}
	si := -1
	for i, s := range ls.Segments {
		if s.Base <= offset {
			si = i
		}
	}
	if si < 0 {
		if len(ls.Segments) == 0 {
			rr.Problem = noSegmentFiles
			return rr, nil
		}
		si = 0 // below the log start: a consumer is reset to it
	}
	budget := lim.SeekBytes + indexProbeMax*indexEntryLen
	for ; si < len(ls.Segments); si++ {
		seg := ls.Segments[si]
		b, err := openBounded(seg.Log, rr, &budget)
		if err != nil {
			return rr, err
		}
		pos := int64(0)
		if seg.Base <= offset {
			pos = indexStart(seg, offset, b)
		}
		bi, err := seekBatch(b, seg, pos, offset)
		b.Close()
		if errors.Is(err, errBudget) {
			rr.Problem = fmt.Sprintf("no batch holding offset %d within %d bytes of the index entry before it (a missing or stale .index)", offset, lim.SeekBytes)
			return rr, nil
		}
		if err != nil {
			return rr, err
		}
		if bi != nil {
			rr.Batch, rr.seg, rr.batchSeg = bi, si, si
			return rr, readPeek(ls, rr, lim)
		}
	}
	rr.Problem = fmt.Sprintf("no record at or after offset %d: the log ends before it", offset)
	return rr, nil
}

// seekBatch walks batch headers from pos to the batch holding offset or
// the first after it (nil: the segment ends first).
func seekBatch(b *boundedFile, seg SegmentFile, pos, offset int64) (*BatchInfo, error) {
	first := pos == 0
	for {
		bi, err := b.headerAt(pos, seg.Base, first)
		if err != nil || bi == nil {
			return nil, err
		}
		if bi.LastOffset >= offset {
			return bi, nil
		}
		first = false
		pos += bi.Bytes
	}
}

// readPeek reads rr.Batch whole and the batches after it until lim.Peek
// records are kept.
func readPeek(ls SegmentListing, rr *RecordRead, lim RecordLimits) error {
	bi := rr.Batch
	for n := 0; n < lim.Peek; n++ {
		budget := int64(lim.MaxBatchBytes) + recordWindow
		b, err := openBounded(bi.Segment, rr, &budget)
		if err != nil {
			return err
		}
		recs, problem, corrupt := readBatchRecords(b, bi, rr.Offset, lim)
		b.Close()
		rr.Records = append(rr.Records, recs...)
		if bi == rr.Batch {
			rr.Problem, rr.Corrupt = problem, corrupt
		}
		if len(rr.Records) >= lim.Peek || problem != "" {
			break
		}
		if bi = nextBatch(ls, rr, bi, lim); bi == nil {
			break
		}
	}
	if len(rr.Records) > lim.Peek {
		rr.Records = rr.Records[:lim.Peek]
	}
	return nil
}

// nextBatch is the header of the batch after bi (nil at the end).
func nextBatch(ls SegmentListing, rr *RecordRead, bi *BatchInfo, lim RecordLimits) *BatchInfo {
	budget := int64(recordWindow)
	for si := rr.seg; si < len(ls.Segments); si++ {
		seg := ls.Segments[si]
		pos := int64(0)
		if seg.Log == bi.Segment {
			pos = bi.Position + bi.Bytes
		} else if seg.Base <= bi.LastOffset {
			continue
		}
		b, err := openBounded(seg.Log, rr, &budget)
		if err != nil {
			return nil
		}
		next, _ := b.headerAt(pos, seg.Base, pos == 0)
		b.Close()
		if next != nil {
			rr.seg = si
			return next
		}
	}
	return nil
}

// readBatchRecords reads bi whole (a batch over lim.MaxBatchBytes by its
// header only), checks its CRC, decodes its records and keeps those at or
// after from. problem says why no record is kept; corrupt that the bytes
// cannot be what kaas stored.
func readBatchRecords(b *boundedFile, bi *BatchInfo, from int64, lim RecordLimits) ([]Record, string, bool) {
	if bi.Bytes > int64(lim.MaxBatchBytes) {
		return nil, fmt.Sprintf("the batch is %d bytes, over the read bound of %d: only its header was read", bi.Bytes, lim.MaxBatchBytes), false
	}
	raw, err := b.at(bi.Position, int(bi.Bytes))
	if err != nil || int64(len(raw)) < bi.Bytes {
		return nil, fmt.Sprintf("the batch at byte %d could not be read whole", bi.Position), false
	}
	bi.CRCChecked = true
	bi.CRCValid = crc32.Checksum(raw[batchCRCAt+4:], castagnoli) == binary.BigEndian.Uint32(raw[batchCRCAt:batchCRCAt+4])
	if !bi.CRCValid {
		return nil, fmt.Sprintf("the batch's CRC-32C does not match its bytes (stored %08x): a consumer's fetch of it fails its CRC check", binary.BigEndian.Uint32(raw[batchCRCAt:batchCRCAt+4])), true
	}
	body, err := decompress(bi.Codec, raw[batchHeaderLen:], lim.MaxDecompressed)
	if err != nil {
		return nil, fmt.Sprintf("the %s records do not decode: %v", bi.Codec, err), !errors.Is(err, errDecodedTooLarge)
	}
	recs, perr := parseRecords(body, bi, from, lim)
	if perr != "" {
		return recs, perr, true
	}
	return recs, "", false
}

// LogTxn is one producer's transaction as the log shows it: its data
// batches from FirstOffset, and the marker that ended it when the scan
// reached one (End "" : open as far as the scan went).
type LogTxn struct {
	ProducerID    int64  `json:"producerId"`
	ProducerEpoch int16  `json:"producerEpoch"`
	FirstOffset   int64  `json:"firstOffset"`
	LastOffset    int64  `json:"lastOffset"`
	Batches       int    `json:"batches"`
	End           string `json:"end,omitempty"`
	EndOffset     int64  `json:"endOffset,omitempty"`
}

// TxnScan is a walk over batch headers from one batch on.
type TxnScan struct {
	// From is the first offset scanned, To the offset after the last
	// batch scanned; Complete: the walk reached the log end.
	From     int64 `json:"from"`
	To       int64 `json:"to"`
	Complete bool  `json:"complete"`
	// Txns are the transactions that started in the scan, by first offset.
	Txns []LogTxn `json:"transactions"`
	// FirstPlain is the base offset of the first batch outside any
	// transaction (-1: none in the scan).
	FirstPlain int64 `json:"firstPlain"`
	Reads      int   `json:"reads"`
	BytesRead  int64 `json:"bytesRead"`
}

// StableEnd is the last stable offset as far as the scan tells: the first
// offset of the first transaction still open, else To when the scan
// reached the log end (ok false: undetermined within the bound).
func (s *TxnScan) StableEnd() (int64, bool) {
	for _, t := range s.Txns {
		if t.End == "" {
			return t.FirstOffset, true
		}
	}
	return s.To, s.Complete
}

// Blocking is the open transaction a read_committed consumer at the
// scan's start stops at: the first one still open, with nothing it
// delivers before it (only markers and aborted transactions' records;
// nil: none, or a record it reads comes first).
func (s *TxnScan) Blocking() *LogTxn {
	for i := range s.Txns {
		t := &s.Txns[i]
		if s.FirstPlain >= 0 && s.FirstPlain < t.FirstOffset {
			return nil
		}
		switch t.End {
		case "":
			return t
		case ControlAbort:
			continue // read_committed consumers skip its records
		}
		return nil // committed (or an unread marker): delivered first
	}
	return nil
}

// Txn is the transaction of producer pid that the scan saw start (nil:
// none).
func (s *TxnScan) Txn(pid int64) *LogTxn {
	for i := range s.Txns {
		if s.Txns[i].ProducerID == pid {
			return &s.Txns[i]
		}
	}
	return nil
}

// ScanTransactions walks the batch headers from rr's batch to the log end
// or lim.ScanBytes, pairing each producer's transactional batches with the
// COMMIT or ABORT marker that ends them (nil when rr has no batch).
func ScanTransactions(ls SegmentListing, rr *RecordRead, lim RecordLimits) *TxnScan {
	if rr == nil || rr.Batch == nil {
		return nil
	}
	lim = lim.norm()
	s := &TxnScan{From: rr.Batch.BaseOffset, To: rr.Batch.BaseOffset, FirstPlain: -1}
	budget := lim.ScanBytes
	open := map[int64]int{} // producer id → index in s.Txns while open
	batches := lim.ScanBatches
	cnt := &RecordRead{}
	pos := rr.Batch.Position
	for si := rr.batchSeg; si < len(ls.Segments); si, pos = si+1, 0 {
		seg := ls.Segments[si]
		b, err := openBounded(seg.Log, cnt, &budget)
		if err != nil {
			break
		}
		done := s.scanSegment(b, seg, pos, open, &batches)
		b.Close()
		if !done {
			break
		}
		if si == len(ls.Segments)-1 {
			s.Complete = true
		}
	}
	s.Reads, s.BytesRead = cnt.Reads, cnt.BytesRead
	return s
}

// scanSegment walks one segment from pos; false when the budget ran out.
func (s *TxnScan) scanSegment(b *boundedFile, seg SegmentFile, pos int64, open map[int64]int, batches *int) bool {
	for first := pos == 0; ; first = false {
		if *batches <= 0 {
			return false
		}
		*batches--
		bi, ok, err := b.header(pos, seg.Base, first)
		if err != nil {
			return false
		}
		if !ok {
			return true
		}
		s.To = max(s.To, bi.LastOffset+1)
		pos += bi.Bytes
		b.narrow = bi.Bytes > recordWindow/8 // large batches: read their headers alone
		if !bi.Transactional || bi.ProducerID < 0 {
			if !bi.Control && s.FirstPlain < 0 {
				s.FirstPlain = bi.BaseOffset
			}
			continue
		}
		i, isOpen := open[bi.ProducerID]
		if !bi.Control {
			if !isOpen {
				s.Txns = append(s.Txns, LogTxn{ProducerID: bi.ProducerID, ProducerEpoch: bi.ProducerEpoch, FirstOffset: bi.BaseOffset})
				i = len(s.Txns) - 1
				open[bi.ProducerID] = i
			}
			s.Txns[i].LastOffset, s.Txns[i].Batches = bi.LastOffset, s.Txns[i].Batches+1
			continue
		}
		if isOpen {
			s.Txns[i].End, s.Txns[i].EndOffset = controlOf(b, &bi), bi.BaseOffset
			delete(open, bi.ProducerID)
		}
	}
}

// controlOf is the type of a control batch's marker (COMMIT or ABORT;
// "marker" when its record cannot be read within the bound).
func controlOf(b *boundedFile, bi *BatchInfo) string {
	if bi.Bytes <= controlBodyMax {
		if raw, err := b.at(bi.Position, int(bi.Bytes)); err == nil && int64(len(raw)) == bi.Bytes {
			if recs, _ := parseRecords(raw[batchHeaderLen:], bi, bi.BaseOffset, RecordLimits{Peek: 1, PreviewBytes: 8}); len(recs) > 0 && recs[0].Control != "" {
				return recs[0].Control
			}
		}
	}
	return "marker"
}
