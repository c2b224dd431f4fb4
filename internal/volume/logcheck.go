package volume

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Finding codes of the log checks.
const (
	// CodeManifestTrails: manifest.json's highWatermark is below the log
	// end the segments give (kaas rewrites it only on takeover, segment
	// roll and close).
	CodeManifestTrails = "manifest.trailsLog"
	// CodeManifestAhead: manifest.json's highWatermark is above the log
	// end (a phantom high watermark kaas rewinds on restart).
	CodeManifestAhead = "manifest.aheadOfLog"
	// CodeOffsetsBeyondLogEnd: committed offsets past the real log end.
	CodeOffsetsBeyondLogEnd = "offsets.beyondLogEnd"
	// CodeOffsetsBelowLogStart: committed offsets below the log start
	// (retention deleted the records).
	CodeOffsetsBelowLogStart = "offsets.belowLogStart"
)

// PartitionDirs lists every DATA/<topic>/<partition> directory (kaas's own
// dirs, dot dirs and the cluster dir left out), sorted.
func PartitionDirs(l Layout) []TopicPartition {
	if l.DataDir == "" {
		return nil
	}
	topics, err := os.ReadDir(l.DataDir)
	if err != nil {
		return nil
	}
	var names []string
	for _, t := range topics {
		if !t.IsDir() || strings.HasPrefix(t.Name(), ".") || t.Name() == ClusterSubdir || t.Name() == OffsetsDir || filepath.Join(l.DataDir, t.Name()) == l.ClusterDir {
			continue
		}
		names = append(names, t.Name())
	}
	// A pool dir holds only topic dirs of the partitions placed there.
	for _, root := range l.LogDirs {
		ents, _ := os.ReadDir(root)
		for _, t := range ents {
			if t.IsDir() && !strings.HasPrefix(t.Name(), ".") && !slices.Contains(names, t.Name()) {
				names = append(names, t.Name())
			}
		}
	}
	var out []TopicPartition
	for _, name := range names {
		for _, p := range TopicPartitionDirs(l, name) {
			out = append(out, TopicPartition{Topic: name, Partition: p})
		}
	}
	slices.SortFunc(out, func(a, b TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	return out
}

// LogCheck is the log side of volume check: every partition's log end
// from its segments and the manifests against it.
type LogCheck struct {
	gen   GenerationInfo
	ends  map[string]int64 // topic/partition → log end from the segments
	byKey map[TopicPartition]*LogBounds
	// Partitions counts the partition dirs read; Findings the results.
	Partitions int
	Findings   []Finding
	// Bounds are the log bounds of every partition whose segments could be
	// read, from them (with its manifest when there is one), sorted by
	// topic then partition.
	Bounds []LogBounds
}

// NewLogCheck reads every partition dir's segments (in parallel) and
// compares its manifest (ms, from ScanManifests) with the log end.
func NewLogCheck(l Layout, ms []*Manifest) *LogCheck {
	l = l.WithGeneration()
	lc := &LogCheck{gen: l.Gen, ends: map[string]int64{}}
	tps := PartitionDirs(l)
	dirs := make([]string, len(tps))
	for i, tp := range tps {
		dirs[i] = l.PartitionDir(tp.Topic, tp.Partition)
	}
	man := map[string]*Manifest{}
	for _, m := range ms {
		man[m.Topic+"/"+strconv.Itoa(int(m.Partition))] = m
	}
	lc.Partitions = len(dirs)
	for i, r := range ReadPartitionLogs(dirs, 16) {
		key := tps[i].Topic + "/" + strconv.Itoa(int(tps[i].Partition))
		lc.Findings = append(lc.Findings, r.Findings...)
		if r.Err != nil {
			// A partition dir without segments: kaas has nothing to recover
			// either (a manifest-only dir is reported by the manifest scan).
			// The reader names an unreadable or impossible segment itself;
			// a dir that cannot be listed is named here.
			var fe *FileError
			if !hasSegmentProblem(r.Findings) && errors.As(r.Err, &fe) && !strings.HasPrefix(fe.Problem, noSegmentFiles) {
				lc.Findings = append(lc.Findings, unreadableFinding(fe))
			}
			continue
		}
		lc.ends[key] = r.Log.LogEnd
		m := man[key]
		lc.Bounds = append(lc.Bounds, LogBounds{Topic: tps[i].Topic, Partition: tps[i].Partition, Log: r.Log, Manifest: m,
			Start: &Fact{Value: r.Log.LogStart, Source: SourceSegments, Path: dirs[i]},
			End:   &Fact{Value: r.Log.LogEnd, Source: SourceSegments, Path: dirs[i]}})
		if m == nil {
			continue
		}
		switch d := r.Log.LogEnd - m.HighWatermark; {
		case d > 0:
			// Info, not a warning: every running kaas keeps its manifests
			// behind the log, and nothing is to be repaired; it is named
			// so that whoever reads manifests knows by how much.
			lc.Findings = append(lc.Findings, Finding{Severity: SevInfo, Code: CodeManifestTrails, Path: m.Path,
				Message: fmt.Sprintf("manifest.json says highWatermark %d but the segments end at %d: it trails the log by %d records (kaas rewrites it only on takeover, segment roll and close); kaas re-scans the segments when a broker takes the partition over at a new epoch, but the Go flavour keeps this value when a restart hands the partition back at the epoch the manifest holds, and then serves it as the log end; anything reading the manifest for offline lag or an offset reset is off by %d (lag under-reported, --to-latest and clamping %d records back); every kaas generation (Go and Rust) keeps manifests this way (%s)", m.HighWatermark, r.Log.LogEnd, d, d, d, lc.gen.Assumes()),
				Fix:     "nothing to repair: the next takeover or clean close rewrites it; read log ends from the segments (kaasctl does offline); if a live broker serves less than the segments hold, restart the partition's leader so the next takeover (a new epoch) re-scans them"})
		case d < 0:
			lc.Findings = append(lc.Findings, Finding{Severity: SevWarning, Code: CodeManifestAhead, Path: m.Path,
				Message: fmt.Sprintf("manifest.json says highWatermark %d but the segments end at %d: %d records it counts are not in the log (a write lost in a crash); kaas rewinds to %d on restart, so consumers committed past it will hit OFFSET_OUT_OF_RANGE (%s)", m.HighWatermark, r.Log.LogEnd, -d, r.Log.LogEnd, lc.gen.Assumes()),
				Fix:     "nothing to repair in the manifest (kaas rewrites it); check the groups committed past the log end (offsets.beyondLogEnd)"})
		}
	}
	return lc
}

// hasSegmentProblem reports whether the reader already named why a log
// end is unknown.
func hasSegmentProblem(fs []Finding) bool {
	for _, f := range fs {
		if f.Code == CodeSegmentUnreadable || f.Code == CodeSegmentImpossible {
			return true
		}
	}
	return false
}

// Bounds is one partition's bounds as the check read them from its
// segments (nil when its dir holds none that could be read).
func (lc *LogCheck) Bound(topic string, partition int32) *LogBounds {
	if lc == nil {
		return nil
	}
	if lc.byKey == nil {
		lc.byKey = make(map[TopicPartition]*LogBounds, len(lc.Bounds))
		for i := range lc.Bounds {
			b := &lc.Bounds[i]
			lc.byKey[TopicPartition{Topic: b.Topic, Partition: b.Partition}] = b
		}
	}
	return lc.byKey[TopicPartition{Topic: topic, Partition: partition}]
}

// Finish returns the log findings (segments and manifests); committed
// offsets against the log are the read model's (CheckResult's OnCounted).
func (lc *LogCheck) Finish() []Finding { return lc.Findings }
