package wire

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ProbeBytes bounds each partition of a timestamp probe: a broker returns
// at least the whole first record batch at the offset anyway, so a small
// bound only stops it from sending more batches after it.
const ProbeBytes = 1024

// RecordTime is the timestamp of the record at one offset.
type RecordTime struct {
	// Time is the record's timestamp (CreateTime or LogAppendTime, as the
	// topic is configured); zero when Err is set.
	Time time.Time `json:"time"`
	Err  string    `json:"error,omitempty"`
}

// RecordTimestamps finds, for each partition, the timestamp of the record
// at the given offset: one metadata request for the leaders, then one Fetch
// per leader carrying all of its partitions (each bounded by ProbeBytes),
// concurrently. O(brokers) requests however many partitions.
func (c *Client) RecordTimestamps(ctx context.Context, want map[string]map[int32]int64) (map[string]map[int32]RecordTime, error) {
	out := map[string]map[int32]RecordTime{}
	if len(want) == 0 {
		return out, nil
	}
	set := func(t string, p int32, rt RecordTime) {
		if out[t] == nil {
			out[t] = map[int32]RecordTime{}
		}
		out[t][p] = rt
	}
	md, err := c.metadata(ctx, slices.Sorted(maps.Keys(want)))
	if err != nil {
		return nil, err
	}
	perLeader := map[int32]map[string]map[int32]int64{}
	for t, ps := range want {
		tm := md.Topics[t]
		for p, off := range ps {
			leader := int32(-1)
			if tm != nil {
				if l, ok := tm.Partitions[p]; ok {
					leader = l
				}
			}
			if leader < 0 {
				set(t, p, RecordTime{Err: "no leader for the partition in the cluster metadata"})
				continue
			}
			if perLeader[leader] == nil {
				perLeader[leader] = map[string]map[int32]int64{}
			}
			if perLeader[leader][t] == nil {
				perLeader[leader][t] = map[int32]int64{}
			}
			perLeader[leader][t][p] = off
		}
	}
	leaders := slices.Sorted(maps.Keys(perLeader))
	var mu sync.Mutex
	dec := kgo.DefaultDecompressor()
	c.forEach(len(leaders), func(i int) {
		leader := leaders[i]
		parts := perLeader[leader]
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = 0
		req.MinBytes = 1
		req.MaxBytes = int32(min(1<<30, ProbeBytes*(1+countParts(parts))))
		req.SessionEpoch = -1
		for _, t := range slices.Sorted(maps.Keys(parts)) {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = t
			for _, p := range slices.Sorted(maps.Keys(parts[t])) {
				rp := kmsg.NewFetchRequestTopicPartition()
				rp.Partition = p
				rp.FetchOffset = parts[t][p]
				rp.CurrentLeaderEpoch = -1
				rp.LogStartOffset = -1
				rp.PartitionMaxBytes = ProbeBytes
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		kresp, err := c.request(ctx, leader, req)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			for t, ps := range parts {
				for p := range ps {
					set(t, p, RecordTime{Err: err.Error()})
				}
			}
			return
		}
		resp := kresp.(*kmsg.FetchResponse)
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				off, ok := parts[rt.Topic][rp.Partition]
				if !ok {
					continue
				}
				if rp.ErrorCode != 0 {
					set(rt.Topic, rp.Partition, RecordTime{Err: errText(rp.ErrorCode, nil)})
					continue
				}
				ts, err := timestampAt(rp.RecordBatches, off, dec)
				if err != nil {
					set(rt.Topic, rp.Partition, RecordTime{Err: err.Error()})
					continue
				}
				set(rt.Topic, rp.Partition, RecordTime{Time: ts})
			}
		}
		for t, ps := range parts {
			for p := range ps {
				if _, ok := out[t][p]; !ok {
					set(t, p, RecordTime{Err: fmt.Sprintf("broker %s left the partition out of its Fetch answer", c.brokerName(leader))})
				}
			}
		}
	})
	return out, nil
}

func countParts(m map[string]map[int32]int64) int {
	n := 0
	for _, ps := range m {
		n += len(ps)
	}
	return n
}

// timestampAt finds the timestamp of the record at offset (or the first
// record after it: compaction or a transaction marker may have removed the
// offset itself) in raw record batches.
func timestampAt(raw []byte, offset int64, dec kgo.Decompressor) (time.Time, error) {
	for len(raw) >= 12 {
		length := int32(raw[8])<<24 | int32(raw[9])<<16 | int32(raw[10])<<8 | int32(raw[11])
		end := 12 + int(length)
		if length < 0 || end > len(raw) {
			break // a partial batch at the end of the answer
		}
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw[:end]); err != nil {
			return time.Time{}, fmt.Errorf("record batch: %v", err)
		}
		raw = raw[end:]
		last := b.FirstOffset + int64(b.LastOffsetDelta)
		if b.Magic != 2 || last < offset || b.Attributes&0x20 != 0 { // old format, before the offset, or a control batch
			continue
		}
		logAppend := b.Attributes&0x08 != 0
		if logAppend {
			return time.UnixMilli(b.MaxTimestamp), nil
		}
		recs, err := dec.Decompress(b.Records, kgo.CompressionCodecType(b.Attributes&0x07))
		if err != nil {
			return time.Time{}, fmt.Errorf("decompress record batch: %v", err)
		}
		for range b.NumRecords {
			n, sz := kbin.Varint(recs)
			if sz <= 0 || n < 0 || sz+int(n) > len(recs) {
				break
			}
			var r kmsg.Record
			if err := r.ReadFrom(recs[:sz+int(n)]); err != nil {
				return time.Time{}, fmt.Errorf("record: %v", err)
			}
			recs = recs[sz+int(n):]
			if b.FirstOffset+int64(r.OffsetDelta) >= offset {
				return time.UnixMilli(b.FirstTimestamp + r.TimestampDelta64), nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("no record at or after offset %d in the fetched data", offset)
}
