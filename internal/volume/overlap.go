package volume

import (
	"encoding/binary"
	"fmt"
	"path/filepath"

	"github.com/kaasctl/kaasctl/internal/safefs"
)

// Overlap is an offset range an active segment holds twice: its index
// goes back in offsets at a byte position, which kaas's append path never
// does on its own. A leader that took the partition over at a stale end
// (the manifest's, below the segment's last batch) appended there, so the
// records from From on were written again after the ones already in the
// file; the log end read from the last batch then no longer shows the gap.
type Overlap struct {
	Segment string `json:"segment"`
	// From is the first offset written again (the index entry after the
	// step back, to the index's granularity); To the highest offset the
	// index named before the step back (the earlier copy reaches at least
	// there).
	From int64 `json:"from"`
	To   int64 `json:"to"`
	// At is the byte position of the step back in the segment.
	At int64 `json:"at"`
}

// Describe words the overlap for a finding.
func (o *Overlap) Describe() string {
	return fmt.Sprintf("offsets %d–%d are in %s twice: its index steps back from offset %d to %d at byte %d",
		o.From, o.To, filepath.Base(o.Segment), o.To, o.From, o.At)
}

// CodeSegmentWrittenTwice is the finding of an overlap.
const CodeSegmentWrittenTwice = "segment.writtenTwice"

// overlapTailEntries is how many of the index's last entries every read of
// a partition checks for a step back (64 KiB); DeepOverlap reads up to
// deepOverlapBytes of it.
const (
	overlapTailEntries = 8192
	deepOverlapBytes   = 16 << 20
)

// indexOverlap finds the last step back in a run of index entries read
// from the entry at first (nil when the offsets only go up).
func indexOverlap(seg string, base int64, buf []byte) *Overlap {
	var out *Overlap
	prev := int64(-1)
	for i := 0; i+indexEntryLen <= len(buf); i += indexEntryLen {
		rel := int64(int32(binary.BigEndian.Uint32(buf[i : i+4])))
		pos := int64(binary.BigEndian.Uint32(buf[i+4 : i+8]))
		if rel < 0 {
			continue
		}
		if prev >= 0 && rel < prev {
			out = &Overlap{Segment: seg, From: base + rel, To: base + prev, At: pos}
		}
		prev = max(prev, rel)
	}
	return out
}

// DeepOverlap reads the whole index of a partition's active segment (up to
// 16 MiB) for an offset range written twice: for a partition whose
// committed offsets are past its log end, where the tail every read checks
// may not reach back to the step.
func DeepOverlap(l *PartitionLog) *Overlap {
	if l == nil || l.Active == "" {
		return nil
	}
	idx := l.Active[:len(l.Active)-len(".log")] + ".index"
	f, info, err := safefs.Open(idx)
	if err != nil {
		return nil
	}
	defer f.Close()
	n := min(info.Size, deepOverlapBytes) / indexEntryLen * indexEntryLen
	buf := make([]byte, n)
	m, _ := f.ReadAt(buf, info.Size/indexEntryLen*indexEntryLen-n)
	return indexOverlap(l.Active, l.ActiveBase, buf[:m/indexEntryLen*indexEntryLen])
}

// WrittenTwiceFinding is the finding of an overlap.
func WrittenTwiceFinding(o *Overlap) Finding {
	return Finding{Severity: SevError, Code: CodeSegmentWrittenTwice, Path: o.Segment,
		Message: o.Describe() + ": a leader took the partition over at a stale log end and appended there, so those offsets now name two different records; consumers that had read past the stale end skip the new ones",
		Fix:     "kaasctl groups describe shows the groups committed past the stale end; check what each consumer read, then reset them explicitly (kaasctl offsets reset --to-offset); restarting the leader does not remove the second copy"}
}
