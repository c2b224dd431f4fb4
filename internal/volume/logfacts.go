package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Where a partition fact came from. Every offline answer says which.
const (
	// SourceWire: ListOffsets / OffsetFetch answered by a broker now.
	SourceWire = "wire"
	// SourceSegments: the partition's segment files, read as kaas's own
	// recovery reads them on restart (the offline truth).
	SourceSegments = "segments"
	// SourceManifest: manifest.json, which kaas rewrites only on takeover,
	// segment roll and close, so it trails the log; used only when the
	// segments cannot be read, and always said so.
	SourceManifest = "manifest"
	// SourceFile: a committed offset from the group's offset file.
	SourceFile = "file"
)

// Fact is one offset with its provenance: where it came from and as of
// when (a file's modification time, or the moment a broker answered).
type Fact struct {
	Value  int64     `json:"value"`
	Source string    `json:"source"`
	Path   string    `json:"path,omitempty"`
	AsOf   time.Time `json:"asOf"`
}

// Age is how old the fact was at now (0 when AsOf is unknown).
func (f *Fact) Age(now time.Time) time.Duration {
	if f == nil || f.AsOf.IsZero() || now.Before(f.AsOf) {
		return 0
	}
	return now.Sub(f.AsOf)
}

// LogBounds are a partition's log start and end with their provenance.
type LogBounds struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Start and End are nil when unknown; Unknown then names the missing
	// evidence ("no segment files in DIR and no manifest", ...).
	Start   *Fact  `json:"start"`
	End     *Fact  `json:"end"`
	Unknown string `json:"unknown,omitempty"`
	// Fallback is non-empty when End came from the manifest: why the
	// segments could not give it.
	Fallback string `json:"fallback,omitempty"`
	// Log is the segment reading (nil when the segments could not be read).
	Log *PartitionLog `json:"log,omitempty"`
	// Manifest is the partition's manifest when it was read (for the
	// "manifest trails the log" finding), else nil.
	Manifest *Manifest `json:"manifest,omitempty"`
	// Findings of the segment reader and the manifest parser.
	Findings []Finding `json:"findings,omitempty"`
	// NoDir: the partition has no dir on this volume (or the data dir is
	// unknown): nothing here to read its log from.
	NoDir bool `json:"-"`
}

// PartitionDirExists reports whether the partition's dir is on the
// volume (its bounds were read from what is there, or failed to be).
func (b *LogBounds) PartitionDirExists() bool { return b != nil && !b.NoDir }

// Impossible is the problem of a partition whose segments hold a bound
// kaas could never have written (a CodeSegmentImpossible finding), or "":
// such a log end is never evidence, neither read offline nor as what a
// broker that recovered those segments serves.
func (b *LogBounds) Impossible() string {
	if b == nil {
		return ""
	}
	for _, f := range b.Findings {
		if f.Code == CodeSegmentImpossible {
			return f.Path + ": " + strings.SplitN(f.Message, ";", 2)[0]
		}
	}
	return ""
}

// EndSource is End's source, or "" when unknown.
func (b *LogBounds) EndSource() string {
	if b == nil || b.End == nil {
		return ""
	}
	return b.End.Source
}

// LogReader gives each partition's log bounds from its segments, with the
// manifest only as a named fallback, reading each partition once. Safe
// for concurrent use.
type LogReader struct {
	L  Layout
	mu sync.Mutex
	// cache by topic NUL partition
	cache map[string]*LogBounds
}

// NewLogReader returns a reader over l's data dir.
func NewLogReader(l Layout) *LogReader { return &LogReader{L: l} }

// Get returns the bounds of one partition (never nil).
func (r *LogReader) Get(topic string, partition int32) *LogBounds {
	key := topic + "\x00" + strconv.Itoa(int(partition))
	r.mu.Lock()
	if b, ok := r.cache[key]; ok {
		r.mu.Unlock()
		return b
	}
	r.mu.Unlock()
	b := ReadLogBounds(r.L, topic, partition)
	r.mu.Lock()
	if r.cache == nil {
		r.cache = map[string]*LogBounds{}
	}
	r.cache[key] = b
	r.mu.Unlock()
	return b
}

// Put caches bounds already read (a volume check's, before the brokers
// were asked), so Get answers with them.
func (r *LogReader) Put(b *LogBounds) {
	key := b.Topic + "\x00" + strconv.Itoa(int(b.Partition))
	r.mu.Lock()
	if r.cache == nil {
		r.cache = map[string]*LogBounds{}
	}
	r.cache[key] = b
	r.mu.Unlock()
}

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Prefetch reads many partitions, workers at a time, so that later Gets
// are answered from memory (a volume of thousands of partitions costs
// round trips that overlap).
func (r *LogReader) Prefetch(tps []TopicPartition, workers int) {
	workers = max(1, min(workers, len(tps)))
	ch := make(chan TopicPartition)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tp := range ch {
				r.Get(tp.Topic, tp.Partition)
			}
		}()
	}
	for _, tp := range tps {
		ch <- tp
	}
	close(ch)
	wg.Wait()
}

// ReadLogBounds reads one partition: the segments first; the manifest
// only when they cannot be read (no data dir, no segment file, an
// unreadable active segment), and then Fallback says why.
func ReadLogBounds(l Layout, topic string, partition int32) *LogBounds {
	b := &LogBounds{Topic: topic, Partition: partition}
	dir := l.PartitionDir(topic, partition)
	if dir == "" {
		b.NoDir = true
		if l.DataDir == "" {
			b.Unknown = "the data dir is unknown (pass --data-dir): no segment files to read the log end from"
		} else {
			b.Unknown = fmt.Sprintf("topic name %q cannot be a directory of the data dir", DisplayName(topic))
		}
		return b
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		b.NoDir = true
		b.Unknown = "no partition dir (not in this data dir: a pool log dir, a deleted topic, or never written; " + l.PoolNote() + ")"
		return b
	}
	m, mfs, merr := (&ManifestReader{L: l}).Get(topic, partition)
	if merr == nil {
		b.Manifest = m
	}
	pl, fs, err := ReadPartitionLog(dir)
	b.Findings = append(b.Findings, fs...)
	if err == nil {
		b.Log = pl
		b.Start = &Fact{Value: pl.LogStart, Source: SourceSegments, Path: dir, AsOf: pl.ModTime}
		b.End = &Fact{Value: pl.LogEnd, Source: SourceSegments, Path: pl.Active, AsOf: pl.ModTime}
		return b
	}
	problem := err.Error()
	if fe, ok := err.(*FileError); ok {
		problem = fe.Problem
	}
	why := "segments: " + problem
	if merr != nil {
		mwhy := merr.Error()
		if fe, ok := merr.(*FileError); ok {
			mwhy = fe.Problem
		}
		b.Unknown = why + "; manifest: " + mwhy
		return b
	}
	b.Findings = append(b.Findings, mfs...)
	if m.LogStartOffset < 0 || m.HighWatermark < 0 || m.LogStartOffset > m.HighWatermark {
		b.Unknown = why + fmt.Sprintf("; manifest: inconsistent (logStartOffset %d, highWatermark %d)", m.LogStartOffset, m.HighWatermark)
		return b
	}
	var asOf time.Time
	if fi, err := os.Stat(m.Path); err == nil {
		asOf = fi.ModTime()
	}
	b.Fallback = problem
	b.Start = &Fact{Value: m.LogStartOffset, Source: SourceManifest, Path: m.Path, AsOf: asOf}
	b.End = &Fact{Value: m.HighWatermark, Source: SourceManifest, Path: m.Path, AsOf: asOf}
	return b
}
