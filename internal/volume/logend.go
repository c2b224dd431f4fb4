package volume

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kaasctl/kaasctl/internal/safefs"
)

// RecordBatch v2 header, as kaas reads it (segment.rs parse_batch_offsets,
// scan_high_watermark): baseOffset int64 at 0, batchLength int32 at 8 (the
// bytes after the length field), partitionLeaderEpoch at 12, magic at 16,
// crc at 17 (CRC-32C of byte 21 to the end), attributes at 21,
// lastOffsetDelta int32 at 23.
const (
	batchLogOverhead   = 12 // baseOffset + batchLength
	batchMinKaasLength = 16 // kaas stops its scan below this batchLength
	batchHeaderLen     = 61 // a complete v2 header with the record count
	batchMagicAt       = 16
	batchCRCAt         = 17
	batchLastDeltaAt   = 23
	indexEntryLen      = 8 // rel_offset int32, file position uint32
)

// How a partition's log end was found.
const (
	LogEndEmpty      = "empty"      // the active segment holds no byte
	LogEndIndex      = "index"      // hop from the last .index entry that verifies
	LogEndCheckpoint = "checkpoint" // hop from recovery-checkpoint.json's byte position
	LogEndTail       = "tail"       // a CRC-verified batch found in the segment's last bytes
	LogEndScan       = "scan"       // a forward scan of the active segment
)

// logEndWindow is the read size while hopping over batch headers, and
// tailWindow how far from the end the tail search looks.
const (
	logEndWindow = 64 << 10
	tailWindow   = 1 << 20
	// scanFirstBelow: an active segment this small is scanned from byte 0
	// (one read); above it the index, the checkpoint and the tail are tried.
	scanFirstBelow = 64 << 10
	// indexTailEntries: how many of the index's last entries are tried.
	indexTailEntries = 64
)

// PartitionLog is one partition's log bounds as kaas's recovery computes
// them: the first segment's base offset, and the active (last) segment's
// last complete RecordBatch's baseOffset + lastOffsetDelta + 1.
type PartitionLog struct {
	Dir      string `json:"dir"`
	Segments int    `json:"segments"`
	// LogStart is the first segment's base offset.
	LogStart int64 `json:"logStart"`
	// LogEnd is the next offset kaas will assign after a restart.
	LogEnd int64 `json:"logEnd"`
	// Active is the last segment's .log path, ActiveBase its base offset.
	Active     string `json:"activeSegment"`
	ActiveBase int64  `json:"activeBase"`
	ActiveSize int64  `json:"activeSize"`
	// Method says how the last complete batch was found (LogEnd*).
	Method string `json:"method"`
	// TornBytes are bytes after the last complete batch: a write cut off
	// by a crash, ignored by kaas (and truncated by its takeover).
	TornBytes int64 `json:"tornBytes"`
	// ModTime is the active segment's modification time: the answer is
	// as old as that write.
	ModTime time.Time `json:"modTime"`
	// Reads and BytesRead are the I/O the answer cost.
	Reads     int   `json:"reads"`
	BytesRead int64 `json:"bytesRead"`
	// Overlap is an offset range the active segment holds twice, as the
	// index's last entries show it (nil: none seen; DeepOverlap reads the
	// whole index).
	Overlap *Overlap `json:"writtenTwice,omitempty"`
}

// Finding codes of the segment reader.
const (
	CodeSegmentTorn       = "segment.tornTail"
	CodeSegmentIndexStale = "segment.indexStale"
	CodeSegmentUnreadable = "segment.unreadable"
	CodeSegmentUnparsable = "segment.unparsableName"
	CodeSegmentDuplicate  = "segment.duplicateBase"
	// CodeSegmentImpossible: a batch bound kaas could never have written
	// (a negative or overflowing offset, a first batch below the segment's
	// base, a log end before the log start): the log end is unknown, never
	// taken from it.
	CodeSegmentImpossible = "segment.impossibleBound"
)

// noSegmentFiles starts the problem of a partition dir without segments.
const noSegmentFiles = "no segment files"

// ReadPartitionLog reads one partition dir's log bounds. It costs a few
// small reads: the index's last entries and the bytes after the entry that
// verifies (magic 2, the base offset the entry names, the length within
// the file); without a usable index it looks for a CRC-verified batch in
// the segment's last MiB, and only when that fails scans the active
// segment forward, exactly as kaas does. An error means the log end is
// unknown (no segment, or the active segment cannot be read).
func ReadPartitionLog(dir string) (*PartitionLog, []Finding, error) {
	ls, err := ListSegments(dir)
	if err != nil {
		return nil, nil, err
	}
	return ReadListedLog(ls)
}

// ReadListedLog is ReadPartitionLog over a listing already made.
func ReadListedLog(ls SegmentListing) (*PartitionLog, []Finding, error) {
	return readListedLog(ls, scanFirstBelow)
}

// readListedLog scans an active segment below scanBelow bytes from byte 0
// (tests pass 0 to take the index path on small segments).
func readListedLog(ls SegmentListing, scanBelow int64) (*PartitionLog, []Finding, error) {
	var finds []Finding
	if len(ls.Ignored) > 0 {
		finds = append(finds, aggregateNames(ls.Dir, ls.Ignored, Finding{Severity: SevInfo, Code: CodeSegmentUnparsable,
			Message: "a .log file whose name is not <epoch:08x>-<base:020>.log or <base:020>.log: kaas skips it, and so does the log end"},
			".log files whose names are not <epoch:08x>-<base:020>.log or <base:020>.log: kaas skips them, and so does the log end"))
	}
	if len(ls.Segments) == 0 {
		return nil, finds, &FileError{Path: ls.Dir, Problem: noSegmentFiles + " (*.log)"}
	}
	for i := 1; i < len(ls.Segments); i++ {
		if ls.Segments[i].Base == ls.Segments[i-1].Base {
			finds = append(finds, Finding{Severity: SevWarning, Code: CodeSegmentDuplicate, Path: ls.Segments[i].Log,
				Message: fmt.Sprintf("two segments start at offset %d (epochs %d and %d): kaas's order between them is the directory's; kaasctl takes the higher epoch as the later", ls.Segments[i].Base, ls.Segments[i-1].Epoch, ls.Segments[i].Epoch),
				Fix:     "check which leader wrote the lower epoch's segment; kaas reads both"})
		}
	}
	act := ls.Segments[len(ls.Segments)-1]
	pl := &PartitionLog{Dir: ls.Dir, Segments: len(ls.Segments), LogStart: ls.Segments[0].Base, Active: act.Log, ActiveBase: act.Base}
	f, info, err := safefs.Open(act.Log)
	if err != nil {
		fe := &FileError{Path: act.Log, Problem: "cannot read the active segment: " + readProblem(err)}
		return nil, append(finds, unreadableFinding(fe)), fe
	}
	defer f.Close()
	pl.ActiveSize, pl.ModTime = info.Size, info.ModTime
	r := &segReader{f: f, size: info.Size, pl: pl, scanBelow: scanBelow, base: act.Base, seg: act.Log}
	err = r.logEnd(act, ls.Checkpoint, &finds)
	if err == nil && pl.LogEnd < pl.LogStart {
		err = &boundError{pos: -1, what: fmt.Sprintf("the log would end at %d, before it starts at %d (the first segment's name)", pl.LogEnd, pl.LogStart)}
	}
	var be *boundError
	if errors.As(err, &be) {
		return nil, append(finds, impossibleFinding(act.Log, be)), &FileError{Path: act.Log, Problem: be.Error()}
	}
	if err != nil {
		fe := &FileError{Path: act.Log, Problem: "cannot read the active segment: " + readProblem(err)}
		return nil, append(finds, unreadableFinding(fe)), fe
	}
	if pl.Method == LogEndCheckpoint || pl.Method == LogEndTail {
		// The index was not read on the way: its tail still tells an
		// offset range written twice.
		pl.Overlap = r.indexTailOverlap(act)
	}
	if o := pl.Overlap; o != nil {
		finds = append(finds, WrittenTwiceFinding(o))
	}
	if pl.TornBytes > 0 {
		finds = append(finds, Finding{Severity: SevWarning, Code: CodeSegmentTorn, Path: act.Log,
			Message: fmt.Sprintf("%d bytes after the last complete batch (log end %d, byte %d): a write cut off by a crash; kaas does not read past them, and what it does next depends on its generation: %s", pl.TornBytes, pl.LogEnd, pl.ActiveSize-pl.TornBytes,
				strings.ReplaceAll(GenerationInfo{}.BrokerFact(func(b BrokerFacts) string { return b.TornTail }), "BYTES", strconv.FormatInt(pl.ActiveSize-pl.TornBytes, 10))),
			Fix: fmt.Sprintf("on the Go flavour nothing (its next leader truncates them); on Rust, with every broker stopped: truncate -s %d %s (the records in them were never acknowledged)",
				pl.ActiveSize-pl.TornBytes, act.Log)})
	}
	return pl, finds, nil
}

// ReadPartitionLogs reads many partition dirs with up to workers reads in
// flight (the cost is file-system round trips, which overlap on NFS and
// local disks alike); result i belongs to dirs[i].
func ReadPartitionLogs(dirs []string, workers int) []PartitionLogResult {
	out := make([]PartitionLogResult, len(dirs))
	if workers < 1 {
		workers = 1
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(dirs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(dirs) {
					return
				}
				pl, fs, err := ReadPartitionLog(dirs[i])
				out[i] = PartitionLogResult{Log: pl, Findings: fs, Err: err}
			}
		}()
	}
	wg.Wait()
	return out
}

// PartitionLogResult is one ReadPartitionLogs answer.
type PartitionLogResult struct {
	Log      *PartitionLog
	Findings []Finding
	Err      error
}

// boundError is a batch whose bounds kaas could never have written: the
// log end is unknown (never a negative or overflowed number).
type boundError struct {
	pos  int64 // the batch's byte position (-1: not one batch)
	what string
}

func (e *boundError) Error() string {
	if e.pos < 0 {
		return "impossible log bound: " + e.what
	}
	return fmt.Sprintf("impossible log bound: the batch at byte %d has %s", e.pos, e.what)
}

// unreadableFinding reports a partition whose log end cannot be read
// (its active segment is a FIFO, a link, unreadable, or fails with an I/O
// error; or its dir cannot be listed).
func unreadableFinding(fe *FileError) Finding {
	return Finding{Severity: SevError, Code: CodeSegmentUnreadable, Path: fe.Path,
		Message: fe.Problem + "; the partition's log end is unknown offline: its lag is not computed and no offline reset is planned against it (kaas reads the segments on takeover and fails or hangs the same way, unless it follows a link kaasctl does not)",
		Fix:     "look at the file (ls -l, dmesg for I/O errors): replace a link or a FIFO with the real segment, fix its permissions, or restore it from a backup"}
}

// impossibleFinding reports a segment whose bounds kaas could not have
// written.
func impossibleFinding(path string, be *boundError) Finding {
	return Finding{Severity: SevError, Code: CodeSegmentImpossible, Path: path,
		Message: be.Error() + "; kaas never writes such a batch (a flipped bit, bytes copied from elsewhere, or a damaged disk), yet its recovery would take it as the log end on the next takeover; kaasctl treats this partition's log end as unknown: no lag is computed from it and no reset writes an offset derived from it",
		Fix:     "find what wrote the bytes (a restore, a copy, a failing disk); with the partition's producers stopped, move the segment aside or restore it from a backup so the leader recovers the log from the segments before it; reset its groups with --to-offset N once the records are checked"}
}

// batchEnd is the log end after a complete batch (baseOffset +
// lastOffsetDelta + 1) when kaas could have written the batch; otherwise
// what is impossible. A segment's first batch (first) starts at its base
// offset (segBase, from its name) or later; a later batch may go back (a
// leader that took the partition over at a stale end writes offsets
// twice: an overlap, not an impossible bound). The arithmetic never
// overflows.
func batchEnd(base int64, delta int32, first bool, segBase int64) (int64, string) {
	switch {
	case base < 0:
		return 0, fmt.Sprintf("a negative base offset %d (bit 63 set)", base)
	case delta < 0:
		return 0, fmt.Sprintf("a negative lastOffsetDelta %d (base offset %d)", delta, base)
	case base > math.MaxInt64-int64(delta)-1:
		return 0, fmt.Sprintf("base offset %d + lastOffsetDelta %d, which overflows a 64-bit offset", base, delta)
	case first && base < segBase:
		return 0, fmt.Sprintf("base offset %d, below the segment's base offset %d (its name): the log would start past its end", base, segBase)
	}
	return base + int64(delta) + 1, ""
}

type segReader struct {
	f    *os.File
	size int64
	pl   *PartitionLog
	buf  []byte
	// base is the active segment's base offset (its name).
	base int64
	// scanBelow: a smaller active segment is scanned from byte 0.
	scanBelow int64
	have      []byte // the last read, at haveAt
	haveAt    int64
	// seg is the active segment's path (for an Overlap).
	seg string
}

// readAt reads up to n bytes at off (fewer at the end of the file). The
// last read is kept: the window read to verify an index entry's batch is
// the one the hop starts with.
func (r *segReader) readAt(off int64, n int) ([]byte, error) {
	if off >= r.size || n <= 0 {
		return nil, nil
	}
	if int64(n) > r.size-off {
		n = int(r.size - off)
	}
	if r.have != nil && off == r.haveAt && len(r.have) >= n {
		return r.have[:n], nil
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	m, err := r.f.ReadAt(b, off)
	r.pl.Reads++
	r.pl.BytesRead += int64(m)
	if err != nil && !errors.Is(err, io.EOF) {
		r.have = nil
		return nil, err
	}
	r.have, r.haveAt = b[:m], off
	return b[:m], nil
}

func (r *segReader) logEnd(act SegmentFile, checkpoint string, finds *[]Finding) error {
	pl := r.pl
	if r.size == 0 {
		pl.LogEnd, pl.Method = act.Base, LogEndEmpty
		return nil
	}
	if r.size > r.scanBelow {
		if pos, seed, ok := r.fromCheckpoint(act, checkpoint); ok {
			end, stop, err := r.hop(pos, seed)
			if err != nil {
				return err
			}
			pl.LogEnd, pl.TornBytes, pl.Method = end, r.size-stop, LogEndCheckpoint
			return nil
		}
		pos, base, ok, err := r.fromIndex(act, finds)
		if err != nil {
			return err
		}
		if !ok && r.size > tailWindow {
			// A smaller segment is scanned whole: one read, kaas's answer.
			pos, base, ok, err = r.fromTail(act)
			if err != nil {
				return err
			}
			if ok {
				pl.Method = LogEndTail
			}
		} else {
			pl.Method = LogEndIndex
		}
		if ok {
			end, stop, err := r.hop(pos, base)
			if err != nil {
				return err
			}
			pl.LogEnd, pl.TornBytes = end, r.size-stop
			return nil
		}
	}
	end, stop, err := r.hop(0, act.Base)
	if err != nil {
		return err
	}
	pl.LogEnd, pl.TornBytes, pl.Method = end, r.size-stop, LogEndScan
	return nil
}

// hop walks batch headers from pos (a batch boundary) by kaas's rule: a
// batch counts when its 12-byte head, a batchLength of at least 16 and
// its whole body are in the file; the first that is not ends the log.
// seed is the log end if no batch at pos is complete. It returns the log
// end and the byte where the complete batches stop, or a *boundError for a
// batch kaas could not have written.
func (r *segReader) hop(pos, seed int64) (int64, int64, error) {
	end := seed
	first := pos == 0
	for {
		if r.size-pos < batchLogOverhead+batchMinKaasLength {
			return end, pos, nil
		}
		b, err := r.readAt(pos, logEndWindow)
		if err != nil {
			return 0, 0, err
		}
		if len(b) < batchLogOverhead+batchMinKaasLength {
			return end, pos, nil // the file shrank under the read
		}
		off := 0
		for len(b)-off >= batchLogOverhead+batchMinKaasLength {
			h := b[off:]
			length := int64(int32(binary.BigEndian.Uint32(h[8:12])))
			if length < batchMinKaasLength || pos+batchLogOverhead+length > r.size {
				return end, pos, nil
			}
			base := int64(binary.BigEndian.Uint64(h[0:8]))
			if !first && base >= 0 && base < end && r.pl.Overlap == nil {
				// Offsets going back inside a segment are an offset
				// range written twice: a leader that took the partition
				// over at a stale end appended there. kaas's recovery
				// takes the last batch's end, and so does kaasctl.
				r.pl.Overlap = &Overlap{Segment: r.seg, From: base, To: end - 1, At: pos}
			}
			next, bad := batchEnd(base, int32(binary.BigEndian.Uint32(h[batchLastDeltaAt:batchLastDeltaAt+4])), first, r.base)
			if bad != "" {
				return 0, 0, &boundError{pos: pos, what: bad}
			}
			end, first = next, false
			pos += batchLogOverhead + length
			if batchLogOverhead+length > int64(len(b)-off) {
				break // the next head is past this window
			}
			off += int(batchLogOverhead + length)
		}
	}
}

// plausible reports whether the bytes at h look like a v2 batch head
// that belongs to this segment: magic 2, a length that fits the file from
// pos, and (when want >= 0) the base offset want.
func (r *segReader) plausible(h []byte, pos, segBase, want int64) bool {
	if len(h) < batchLastDeltaAt+4 || h[batchMagicAt] != 2 {
		return false
	}
	length := int64(int32(binary.BigEndian.Uint32(h[8:12])))
	if length < batchHeaderLen-batchLogOverhead || pos+batchLogOverhead+length > r.size {
		return false
	}
	base := int64(binary.BigEndian.Uint64(h[0:8]))
	if want >= 0 {
		return base == want
	}
	delta := int32(binary.BigEndian.Uint32(h[batchLastDeltaAt : batchLastDeltaAt+4]))
	return base >= segBase && base-segBase < 1<<31 && delta >= 0
}

// fromIndex returns the position and base offset of the last index entry
// that points at a batch that verifies.
func (r *segReader) fromIndex(act SegmentFile, finds *[]Finding) (int64, int64, bool, error) {
	f, info, err := safefs.Open(act.Index)
	if err != nil {
		return 0, 0, false, nil
	}
	defer f.Close()
	n := info.Size / indexEntryLen
	if n == 0 {
		return 0, 0, false, nil
	}
	// The tail read for the overlap check holds the entries tried below.
	tail := min(n, overlapTailEntries)
	all := make([]byte, tail*indexEntryLen)
	m, err := f.ReadAt(all, (n-tail)*indexEntryLen)
	r.pl.Reads++
	r.pl.BytesRead += int64(m)
	if m < len(all) {
		return 0, 0, false, nil
	}
	r.pl.Overlap = indexOverlap(act.Log, act.Base, all)
	k := min(n, indexTailEntries)
	buf := all[(tail-k)*indexEntryLen:]
	skipped := 0
	for i := k - 1; i >= 0; i-- {
		e := buf[i*indexEntryLen:]
		rel := int64(int32(binary.BigEndian.Uint32(e[0:4])))
		pos := int64(binary.BigEndian.Uint32(e[4:8]))
		if rel < 0 || pos >= r.size || act.Base > math.MaxInt64-rel {
			skipped++
			continue
		}
		h, err := r.readAt(pos, logEndWindow)
		if err != nil {
			return 0, 0, false, err
		}
		if r.plausible(h, pos, act.Base, act.Base+rel) {
			if skipped > 0 {
				*finds = append(*finds, Finding{Severity: SevInfo, Code: CodeSegmentIndexStale, Path: act.Index,
					Message: fmt.Sprintf("the last %d index entries point past the log or at no batch (the log was truncated after them); kaas rebuilds the index on takeover", skipped)})
			}
			return pos, act.Base + rel, true, nil
		}
		skipped++
	}
	*finds = append(*finds, Finding{Severity: SevInfo, Code: CodeSegmentIndexStale, Path: act.Index,
		Message: fmt.Sprintf("none of the index's last %d entries points at a batch of this segment; the log end was found without it", k)})
	return 0, 0, false, nil
}

// indexTailOverlap checks the index's last entries for a step back (nil:
// none, or no index).
func (r *segReader) indexTailOverlap(act SegmentFile) *Overlap {
	f, info, err := safefs.Open(act.Index)
	if err != nil {
		return nil
	}
	defer f.Close()
	n := info.Size / indexEntryLen
	tail := min(n, overlapTailEntries)
	buf := make([]byte, tail*indexEntryLen)
	m, _ := f.ReadAt(buf, (n-tail)*indexEntryLen)
	r.pl.Reads++
	r.pl.BytesRead += int64(m)
	return indexOverlap(act.Log, act.Base, buf[:m/indexEntryLen*indexEntryLen])
}

// fromCheckpoint uses Rust kaas's recovery-checkpoint.json when it names
// the active segment and a byte position within it.
func (r *segReader) fromCheckpoint(act SegmentFile, path string) (int64, int64, bool) {
	if path == "" {
		return 0, 0, false
	}
	data, err := safefs.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	var cp struct {
		SegmentBase   *int64 `json:"segmentBase"`
		BytePos       *int64 `json:"bytePos"`
		HighWatermark *int64 `json:"highWatermark"`
	}
	if json.Unmarshal(data, &cp) != nil || cp.SegmentBase == nil || cp.BytePos == nil || cp.HighWatermark == nil {
		return 0, 0, false
	}
	if *cp.SegmentBase != act.Base || *cp.BytePos < 0 || *cp.BytePos > r.size || *cp.HighWatermark < act.Base {
		return 0, 0, false
	}
	if *cp.BytePos < r.size {
		h, err := r.readAt(*cp.BytePos, batchHeaderLen)
		if err != nil || !r.plausible(h, *cp.BytePos, act.Base, *cp.HighWatermark) {
			return 0, 0, false
		}
	}
	return *cp.BytePos, *cp.HighWatermark, true
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fromTail looks in the segment's last MiB for the first position that
// holds a whole batch whose CRC-32C verifies.
func (r *segReader) fromTail(act SegmentFile) (int64, int64, bool, error) {
	start := max(0, r.size-tailWindow)
	b, err := r.readAt(start, tailWindow)
	if err != nil {
		return 0, 0, false, err
	}
	for off := 0; off+batchHeaderLen <= len(b); off++ {
		h := b[off:]
		pos := start + int64(off)
		if !r.plausible(h, pos, act.Base, -1) {
			continue
		}
		length := int(int32(binary.BigEndian.Uint32(h[8:12])))
		if off+batchLogOverhead+length > len(b) {
			continue
		}
		if crc32.Checksum(h[batchCRCAt+4:batchLogOverhead+length], castagnoli) != binary.BigEndian.Uint32(h[batchCRCAt:batchCRCAt+4]) {
			continue
		}
		return pos, int64(binary.BigEndian.Uint64(h[0:8])), true, nil
	}
	return 0, 0, false, nil
}
