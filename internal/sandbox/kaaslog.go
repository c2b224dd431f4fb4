package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// The sandbox keeps each partition's files the way kaas does, always:
// segment files in kaas's format (<epoch:08x>-<base:020>.log and .index)
// holding the produced RecordBatch v2 bytes as the brokers store them
// (fetched from kfake as they arrive, so their timestamps, keys and values
// are the real ones), a new segment at the log end when a partition's
// leader epoch changes (a takeover), and manifest.json written only when
// kaas writes it: when a partition is first opened, on takeover and on
// close. Between those the manifest trails the log, as on a real cluster,
// so every offline answer on the sandbox takes the path it takes on a real
// volume (the segments), and offline tools that trust the manifest see
// the failure kaas's own recovery never makes. The "kaas-manifests" quirk
// turned off makes the manifests follow the log end on every refresh
// instead (the segments are written either way).
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

// EmulateKaasManifests switches how manifests are written: on (the
// default), as kaas writes them (open, takeover, close: they trail the
// log); off, at every refresh (they follow the log end). Segment files
// are written either way.
func (s *Sandbox) EmulateKaasManifests(on bool) { s.kaasManifests.Store(on) }

// PlantLogs stops the sandbox writing segment files and manifests: a test
// that plants its own (a log longer than what is served, a torn tail)
// keeps them as it wrote them, instead of racing the next refresh, which
// would write the partition afresh from what the brokers hold.
func (s *Sandbox) PlantLogs() { s.plantedLogs.Store(true) }

// fetchFunc returns record batches of one partition from an offset on.
type fetchFunc func(topic string, part int32, from int64) ([]byte, error)

// observe brings one partition's segments up to end with the batches
// fetch returns and writes its manifest on open or takeover (at every call
// when follow is set).
func (k *kaasLog) observe(topic string, part int32, epoch uint32, start, end int64, mw *manifestWriter, follow bool, fetch fetchFunc) {
	if validTopicName(topic) != nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	key := tp{topic, part}
	w := k.segs[key]
	dir := k.l.PartitionDir(topic, part)
	if dir == "" {
		return
	}
	prev, seen := k.epochs[key]
	switch {
	case w == nil:
		// This process writes the partition's log afresh from what the
		// brokers hold (a restarted, persisted sandbox included).
		if os.MkdirAll(dir, 0o755) != nil {
			return
		}
		removeSegments(dir)
		w = k.create(key, dir, start, epoch)
	case prev != epoch || start > w.Next:
		// A takeover (a new leader epoch), or records deleted before they
		// were written here: a new segment from the log end on.
		w.Close()
		w = k.create(key, dir, max(w.Next, start), epoch)
	}
	if w == nil {
		return
	}
	for w.Next < end {
		raw, err := fetch(topic, part, w.Next)
		if err != nil || len(raw) == 0 {
			break
		}
		if b, ok := volume.BatchBase(raw); ok && b < w.Next && w.Next == w.Base {
			// The log starts inside a batch (records deleted up to the
			// middle of it): the segment starts with the whole batch, as
			// kaas's holds it.
			w.Close()
			removeSegments(dir)
			if w = k.create(key, dir, b, epoch); w == nil {
				return
			}
		}
		if n, err := w.AppendRaw(raw); err != nil || n == 0 {
			break
		}
	}
	mf := manifest{Epoch: epoch, HighWatermark: w.Next, LogStartOffset: start}
	k.last[key] = mf
	if !seen || prev != epoch || follow {
		k.epochs[key] = epoch
		_ = mw.write(topic, part, mf)
	}
}

// create starts a segment at base (nil when it cannot be made).
func (k *kaasLog) create(key tp, dir string, base int64, epoch uint32) *volume.SegmentWriter {
	w, err := volume.CreateSegment(dir, base, int64(epoch))
	if err != nil {
		delete(k.segs, key)
		return nil
	}
	k.segs[key] = w
	return w
}

// removeSegments removes a partition dir's segment files.
func removeSegments(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if n := e.Name(); e.Type().IsRegular() && (strings.HasSuffix(n, volume.SegmentLogExt) || strings.HasSuffix(n, volume.SegmentIndexExt)) {
			os.Remove(filepath.Join(dir, n))
		}
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

// fetchMaxBytes bounds one fetch of a partition's batches.
const fetchMaxBytes = 1 << 20

// newFetcher is the client the segments are filled with: Fetch capped at
// v12, which names topics (v13 wants topic ids).
func newFetcher(addr string) (*kgo.Client, error) {
	v := kversion.Stable()
	v.SetMaxKeyVersion(kmsg.Fetch.Int16(), 12)
	return kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(v), kgo.RequestRetries(1))
}

// fetchBatches returns the record batches kfake holds for one partition
// from an offset on (read uncommitted: every batch up to the high
// watermark, transaction markers included, as kaas's segments hold them).
func (s *Sandbox) fetchBatches(topic string, part int32, from int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(s.ctx, 3*time.Second)
	defer cancel()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 0, 1, fetchMaxBytes
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = part, from, fetchMaxBytes, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, s.fetcher)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.Partition != part {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, err
			}
			return p.RecordBatches, nil
		}
	}
	return nil, fmt.Errorf("fetch %s/%d: no answer for the partition", topic, part)
}
