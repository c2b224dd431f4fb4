// Package observe is kaasctl's read model: the only code that turns the
// volume and the brokers into group and partition state. It gathers the
// facts — offset files, the coordinators' answers, the log bounds the
// leaders serve and the segments hold — and hands them to inspect's rules
// (inspect.BuildGroup: which offset a consumer resumes from, the lag, the
// incidents), so every surface (describe, health, doctor, the exporter,
// reset planning) gives the same numbers for the same cluster.
package observe

import (
	"fmt"
	"strings"
	"sync"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// Logs gives partitions' log bounds from the volume (the segment files,
// manifest.json only as a named fallback), each read once, and keeps the
// findings of every partition read until Flush. Safe for concurrent use.
// A nil *Logs (no data dir) gives nil bounds.
type Logs struct {
	r  *volume.LogReader
	l  volume.Layout
	mu sync.Mutex
	// seen: partitions whose findings were collected.
	seen      map[*volume.LogBounds]bool
	findings  []volume.Finding
	fallbacks []string
	topics    map[string][]int32
	deep      map[*volume.LogBounds]bool
	first     firstBatches
}

// NewLogs reads l's partitions; nil when l has no data dir.
func NewLogs(l volume.Layout) *Logs {
	if l.DataDir == "" {
		return nil
	}
	return &Logs{r: volume.NewLogReader(l), l: l, seen: map[*volume.LogBounds]bool{}, topics: map[string][]int32{}, deep: map[*volume.LogBounds]bool{}}
}

// Get is one partition's bounds (nil without a data dir).
func (lg *Logs) Get(topic string, p int32) *volume.LogBounds {
	if lg == nil {
		return nil
	}
	b := lg.r.Get(topic, p)
	lg.mu.Lock()
	if !lg.seen[b] {
		lg.seen[b] = true
		lg.findings = append(lg.findings, b.Findings...)
		if b.EndSource() == volume.SourceManifest {
			lg.fallbacks = append(lg.fallbacks, fmt.Sprintf("%s/%d", topic, p))
		}
	}
	lg.mu.Unlock()
	return b
}

// Prefetch reads tps with parallel reads, so the bounds are as of before
// the brokers are asked.
func (lg *Logs) Prefetch(tps []volume.TopicPartition) {
	if lg == nil || len(tps) == 0 {
		return
	}
	lg.r.Prefetch(tps, 16)
	for _, tp := range tps {
		lg.Get(tp.Topic, tp.Partition)
	}
}

// Deepen reads the whole index of a partition's active segment for an
// offset range written twice, once per partition: for a partition whose
// committed offsets are past its log end, where the tail every read
// checks may not reach back.
func (lg *Logs) Deepen(b *volume.LogBounds) {
	if lg == nil || b == nil || b.Log == nil || b.Log.Overlap != nil {
		return
	}
	lg.mu.Lock()
	done := lg.deep[b]
	lg.deep[b] = true
	lg.mu.Unlock()
	if done {
		return
	}
	if ov := volume.DeepOverlap(b.Log); ov != nil {
		lg.mu.Lock()
		b.Log.Overlap = ov
		lg.findings = append(lg.findings, volume.WrittenTwiceFinding(ov))
		lg.mu.Unlock()
	}
}

// TopicPartitions are the partitions of topic with a dir on the volume
// (read once per topic).
func (lg *Logs) TopicPartitions(topic string) []int32 {
	if lg == nil {
		return nil
	}
	lg.mu.Lock()
	ps, ok := lg.topics[topic]
	lg.mu.Unlock()
	if ok {
		return ps
	}
	ps = volume.TopicPartitionDirs(lg.l, topic)
	lg.mu.Lock()
	lg.topics[topic] = ps
	lg.mu.Unlock()
	return ps
}

// Flush returns the findings of the partitions read since the last
// Flush, and a warning naming every manifest fallback ("" when none).
func (lg *Logs) Flush() ([]volume.Finding, string) {
	if lg == nil {
		return nil, ""
	}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	fs, fb := lg.findings, lg.fallbacks
	lg.findings, lg.fallbacks = nil, nil
	if len(fb) == 0 {
		return fs, ""
	}
	n := fmt.Sprintf("%d partition", len(fb))
	if len(fb) != 1 {
		n += "s"
	}
	return fs, n + " (" + strings.Join(fb, ", ") + "): the log end came from manifest.json because the segment files could not be read; kaas rewrites the manifest only on takeover, roll and close, so the lag there is likely larger (logEndSource \"manifest\" in -o json)"
}
