package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Segment file names in a partition dir (kaas-storage segment.rs and the
// Go flavour's internal/storage/segment.go agree on all of them):
//
//	<epoch:08x>-<base:020>.log    a segment written under leader epoch
//	<epoch:08x>-<base:020>.index  its sparse index (8-byte entries)
//	<base:020>.log                the older name, epoch 0
//	*.log.sealed                  a sealed-by-takeover marker, never read
//
// Both generations list every *.log whose stem parses, sort by base offset
// and treat the last one as the active segment.
const (
	SegmentLogExt    = ".log"
	SegmentIndexExt  = ".index"
	SegmentSealedExt = ".log.sealed"
	// RecoveryCheckpointFile is Rust kaas's trusted scan start for the
	// active segment ({"segmentBase","bytePos","highWatermark"}).
	RecoveryCheckpointFile = "recovery-checkpoint.json"
)

// PartitionDir is DATA/<topic>/<partition>, or the partition's dir in the
// first pool log dir (Layout.LogDirs) that has it when the data dir has
// not; "" when the data dir is unknown or the topic name cannot be a
// directory.
func (l Layout) PartitionDir(topic string, partition int32) string {
	if !safeComponent(topic) || partition < 0 {
		return ""
	}
	rel := filepath.Join(topic, strconv.Itoa(int(partition)))
	def := l.Path(Location{l.spec().Partitions, rel})
	if len(l.LogDirs) == 0 || dirExists(def) {
		return def
	}
	for _, root := range l.LogDirs {
		if p := filepath.Join(root, rel); dirExists(p) {
			return p
		}
	}
	return def
}

// SegmentFile is one segment of a partition as its name describes it.
type SegmentFile struct {
	// Base is the offset of the segment's first record.
	Base int64 `json:"baseOffset"`
	// Epoch is the leader epoch in the name (0 for the older form).
	Epoch int64 `json:"epoch"`
	// EpochPrefixed is false for the older <base:020>.log form.
	EpochPrefixed bool   `json:"epochPrefixed"`
	Log           string `json:"log"`
	// Index is the matching .index path (it may not exist).
	Index string `json:"index"`
}

// SegmentListing is what a partition dir holds, as kaas lists it.
type SegmentListing struct {
	Dir string `json:"dir"`
	// Segments sorted by base offset (then epoch): the last is the active
	// segment.
	Segments []SegmentFile `json:"segments"`
	// Sealed are .log.sealed markers (skipped, as kaas skips them).
	Sealed []string `json:"sealed"`
	// Ignored are *.log names kaas cannot parse (it skips them too).
	Ignored []string `json:"ignored"`
	// Checkpoint is the recovery-checkpoint.json path when present.
	Checkpoint string `json:"checkpoint,omitempty"`
}

// ParseSegmentName parses a segment file name (.log or .index): the base
// offset, the epoch and whether the name is epoch-prefixed. It accepts
// what kaas accepts (an epoch of at most 8 hex digits, a decimal base)
// and refuses a negative base offset, which kaas never writes.
func ParseSegmentName(name string) (base, epoch int64, prefixed, ok bool) {
	stem, found := strings.CutSuffix(name, SegmentLogExt)
	if !found {
		if stem, found = strings.CutSuffix(name, SegmentIndexExt); !found {
			return 0, 0, false, false
		}
	}
	if e, b, dash := strings.Cut(stem, "-"); dash {
		ev, err := strconv.ParseUint(e, 16, 32)
		if err != nil || e == "" || e[0] == '+' {
			return 0, 0, false, false
		}
		bv, err := strconv.ParseInt(b, 10, 64)
		if err != nil || bv < 0 || b[0] == '+' {
			return 0, 0, false, false
		}
		return bv, int64(ev), true, true
	}
	bv, err := strconv.ParseInt(stem, 10, 64)
	if err != nil || bv < 0 || stem[0] == '+' {
		return 0, 0, false, false
	}
	return bv, 0, false, true
}

// SegmentLogName is the name kaas gives a new segment.
func SegmentLogName(base, epoch int64) string {
	return fmt.Sprintf("%08x-%020d%s", uint32(epoch), base, SegmentLogExt)
}

// SegmentIndexName is the matching index name.
func SegmentIndexName(base, epoch int64) string {
	return fmt.Sprintf("%08x-%020d%s", uint32(epoch), base, SegmentIndexExt)
}

// ListSegments lists the segments of one partition dir; a dir that
// cannot be listed (or does not exist) is a *FileError saying why.
func ListSegments(dir string) (SegmentListing, error) {
	out := SegmentListing{Dir: dir, Segments: []SegmentFile{}, Sealed: []string{}, Ignored: []string{}}
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return out, &FileError{Path: dir, Problem: "no partition dir (not in this data dir: a pool log dir (--log-dirs), a deleted topic, or never written)"}
		}
		return out, &FileError{Path: dir, Problem: "cannot list: " + readProblem(err)}
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case name == RecoveryCheckpointFile && e.Type().IsRegular():
			out.Checkpoint = filepath.Join(dir, name)
			continue
		case strings.HasSuffix(name, SegmentSealedExt):
			out.Sealed = append(out.Sealed, filepath.Join(dir, name))
			continue
		case !strings.HasSuffix(name, SegmentLogExt):
			continue
		}
		base, epoch, prefixed, ok := ParseSegmentName(name)
		if !ok || e.IsDir() {
			out.Ignored = append(out.Ignored, filepath.Join(dir, name))
			continue
		}
		sf := SegmentFile{Base: base, Epoch: epoch, EpochPrefixed: prefixed, Log: filepath.Join(dir, name),
			Index: filepath.Join(dir, strings.TrimSuffix(name, SegmentLogExt)+SegmentIndexExt)}
		out.Segments = append(out.Segments, sf)
	}
	slices.SortFunc(out.Segments, func(a, b SegmentFile) int {
		if a.Base != b.Base {
			if a.Base < b.Base {
				return -1
			}
			return 1
		}
		return int(a.Epoch - b.Epoch)
	})
	slices.Sort(out.Sealed)
	slices.Sort(out.Ignored)
	return out, nil
}

// TopicPartitionDirs lists the partitions of topic that have a directory
// in the data dir (DATA/<topic>/<n>), sorted; nil when there is none.
func TopicPartitionDirs(l Layout, topic string) []int32 {
	if !safeComponent(topic) || l.PartitionDir(topic, 0) == "" {
		return nil
	}
	var out []int32
	for _, root := range l.partitionRoots() {
		ents, err := os.ReadDir(filepath.Join(root, topic))
		if err != nil {
			continue
		}
		for _, e := range ents {
			n, err := strconv.ParseInt(e.Name(), 10, 32)
			if !e.IsDir() || err != nil || n < 0 || strconv.FormatInt(n, 10) != e.Name() || slices.Contains(out, int32(n)) {
				continue
			}
			out = append(out, int32(n))
		}
	}
	slices.Sort(out)
	return out
}
