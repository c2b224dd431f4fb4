package sandbox

import (
	"os"
	"sync"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// KaasManifests (the "kaas-manifests" quirk): the sandbox keeps each
// partition's files the way kaas does. Segment files in kaas's format
// (<epoch:08x>-<base:020>.log and .index, RecordBatch v2) follow the log
// end on every refresh, and manifest.json is written only when kaas writes
// it: when a partition is first opened, on takeover (a new leader epoch)
// and on close. Between those the manifest trails the log, as on a real
// cluster, so offline tools that trust it see the failure kaas's own
// recovery never makes.
type kaasLog struct {
	l      volume.Layout
	mu     sync.Mutex
	segs   map[tp]*volume.SegmentWriter
	epochs map[tp]uint32
	last   map[tp]manifest
}

func newKaasLog(l volume.Layout) *kaasLog {
	return &kaasLog{l: l, segs: map[tp]*volume.SegmentWriter{}, epochs: map[tp]uint32{}, last: map[tp]manifest{}}
}

// EmulateKaasManifests switches the quirk on or off (off by default). Off,
// manifests follow the log end on every refresh again.
func (s *Sandbox) EmulateKaasManifests(on bool) { s.kaasManifests.Store(on) }

// observe brings one partition's segments up to end and writes its
// manifest only on open or takeover.
func (k *kaasLog) observe(topic string, part int32, epoch uint32, start, end int64, mw *manifestWriter) {
	if validTopicName(topic) != nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	key := tp{topic, part}
	w := k.segs[key]
	if w == nil {
		dir := k.l.PartitionDir(topic, part)
		if dir == "" || os.MkdirAll(dir, 0o755) != nil {
			return
		}
		var err error
		if w, err = volume.CreateSegment(dir, start, int64(epoch)); err != nil {
			return
		}
		k.segs[key] = w
	}
	for w.Next < end {
		n := int(min(50, end-w.Next))
		if w.Append(n, 0, nil) != nil {
			break
		}
	}
	mf := manifest{Epoch: epoch, HighWatermark: w.Next, LogStartOffset: start}
	k.last[key] = mf
	if prev, seen := k.epochs[key]; !seen || prev != epoch {
		k.epochs[key] = epoch
		_ = mw.write(topic, part, mf)
	}
}

// close writes every manifest current (kaas flushes them on partition
// close) and closes the segment files.
func (k *kaasLog) close(mw *manifestWriter) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, mf := range k.last {
		_ = mw.write(key.topic, key.part, mf)
	}
	for key, w := range k.segs {
		_ = w.Close()
		delete(k.segs, key)
	}
}
