package wire

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ProbeBytes bounds each partition of a timestamp probe. A broker returns
// at least the whole first record batch at the offset anyway; the bound
// lets one probe also answer for other offsets a little further on (other
// groups at nearby offsets of the same partition).
const ProbeBytes = 16 << 10

// ProbeRounds caps the Fetch rounds of one RecordTimestamps call. A Fetch
// names each partition once, so distinct offsets of one partition that one
// answer does not reach need another round; offsets still unanswered after
// the last round are left out (the caller asks again later).
const ProbeRounds = 3

// RecordTime is the timestamp of the record at one offset.
type RecordTime struct {
	// Time is the record's timestamp (CreateTime or LogAppendTime, as the
	// topic is configured); zero when Err is set.
	Time time.Time `json:"time"`
	Err  string    `json:"error,omitempty"`
}

// RecordTimestamps finds the timestamp of the record at each given offset
// (or the first record after it): one metadata request for the leaders,
// then per round one Fetch per leader carrying all of its partitions at
// their lowest unanswered offset (each bounded by ProbeBytes), concurrently;
// at most ProbeRounds rounds. O(brokers) requests however many partitions
// and groups.
func (c *Client) RecordTimestamps(ctx context.Context, want map[string]map[int32][]int64) (map[string]map[int32]map[int64]RecordTime, error) {
	out := recordTimes{}
	if len(want) == 0 {
		return out, nil
	}
	md, err := c.metadata(ctx, slices.Sorted(maps.Keys(want)))
	if err != nil {
		return nil, err
	}
	parts := probeParts(want, md, out)
	dec := kgo.DefaultDecompressor()
	var mu sync.Mutex
	for range ProbeRounds {
		perLeader := map[int32][]*probePart{}
		for _, pp := range parts {
			if len(pp.pending) > 0 {
				perLeader[pp.leader] = append(perLeader[pp.leader], pp)
			}
		}
		if len(perLeader) == 0 {
			break
		}
		leaders := slices.Sorted(maps.Keys(perLeader))
		c.forEach(len(leaders), func(i int) {
			leader := leaders[i]
			ps := perLeader[leader]
			kresp, err := c.request(ctx, leader, probeFetchRequest(ps))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				for _, pp := range ps {
					out.fail(pp, err.Error())
				}
				return
			}
			c.readProbeAnswer(kresp.(*kmsg.FetchResponse), leader, ps, dec, out)
		})
	}
	return out, nil
}

// recordTimes is RecordTimestamps' answer: by topic, partition and offset.
type recordTimes map[string]map[int32]map[int64]RecordTime

// set records the answer for one offset.
func (out recordTimes) set(t string, p int32, off int64, rt RecordTime) {
	if out[t] == nil {
		out[t] = map[int32]map[int64]RecordTime{}
	}
	if out[t][p] == nil {
		out[t][p] = map[int64]RecordTime{}
	}
	out[t][p][off] = rt
}

// fail answers every offset still pending on pp with why, and drops them.
func (out recordTimes) fail(pp *probePart, why string) {
	for _, o := range pp.pending {
		out.set(pp.topic, pp.part, o, RecordTime{Err: why})
	}
	pp.pending = nil
}

// probePart is one partition of a timestamp probe: its leader and the
// offsets still unanswered (sorted, without duplicates).
type probePart struct {
	topic   string
	part    int32
	leader  int32
	pending []int64
}

// probeParts is every wanted partition with a leader in md, in topic and
// partition order; the offsets of a partition without one are answered
// with that error in out.
func probeParts(want map[string]map[int32][]int64, md *Metadata, out recordTimes) []*probePart {
	var parts []*probePart
	for _, t := range slices.Sorted(maps.Keys(want)) {
		tm := md.Topics[t]
		for _, p := range slices.Sorted(maps.Keys(want[t])) {
			offs := slices.Clone(want[t][p])
			slices.Sort(offs)
			offs = slices.Compact(offs)
			leader := int32(-1)
			if tm != nil {
				if l, ok := tm.Partitions[p]; ok {
					leader = l
				}
			}
			if leader < 0 {
				for _, o := range offs {
					out.set(t, p, o, RecordTime{Err: "no leader for the partition in the cluster metadata"})
				}
				continue
			}
			parts = append(parts, &probePart{topic: t, part: p, leader: leader, pending: offs})
		}
	}
	return parts
}

// probeFetchRequest is one leader's Fetch of a round: each of its
// partitions from its lowest pending offset, at most ProbeBytes each, not
// waiting for new data, outside any fetch session.
func probeFetchRequest(ps []*probePart) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = int32(min(1<<30, ProbeBytes*(1+len(ps))))
	req.SessionEpoch = -1
	byTopic := map[string]*kmsg.FetchRequestTopic{}
	for _, pp := range ps {
		rt := byTopic[pp.topic]
		if rt == nil {
			req.Topics = append(req.Topics, kmsg.NewFetchRequestTopic())
			rt = &req.Topics[len(req.Topics)-1]
			rt.Topic = pp.topic
			byTopic[pp.topic] = rt
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = pp.part
		rp.FetchOffset = pp.pending[0]
		rp.CurrentLeaderEpoch = -1
		rp.LogStartOffset = -1
		rp.PartitionMaxBytes = ProbeBytes
		rt.Partitions = append(rt.Partitions, rp)
	}
	return req
}

// readProbeAnswer answers what leader's Fetch answer holds for ps (the
// first answer for a partition counts; a partition error fails it) and
// fails the partitions the answer left out.
func (c *Client) readProbeAnswer(resp *kmsg.FetchResponse, leader int32, ps []*probePart, dec kgo.Decompressor, out recordTimes) {
	answered := map[*probePart]bool{}
	find := map[string]*probePart{}
	for _, pp := range ps {
		find[pp.topic+"\x00"+strconv.Itoa(int(pp.part))] = pp
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			pp := find[rt.Topic+"\x00"+strconv.Itoa(int(rp.Partition))]
			if pp == nil || answered[pp] {
				continue
			}
			answered[pp] = true
			if rp.ErrorCode != 0 {
				out.fail(pp, errText(rp.ErrorCode, nil))
				continue
			}
			out.answer(pp, rp.RecordBatches, dec)
		}
	}
	for _, pp := range ps {
		if !answered[pp] {
			out.fail(pp, fmt.Sprintf("broker %s left the partition out of its Fetch answer", c.brokerName(leader)))
		}
	}
}

// answer records the timestamps batches hold for pp's pending offsets and
// keeps the rest pending for the next round; when the batches do not even
// reach the offset fetched from, that one is answered with why and given
// up, so every round makes progress.
func (out recordTimes) answer(pp *probePart, batches []byte, dec kgo.Decompressor) {
	got, err := timestampsAt(batches, pp.pending, dec)
	var rest []int64
	for _, o := range pp.pending {
		if ts, ok := got[o]; ok {
			out.set(pp.topic, pp.part, o, RecordTime{Time: ts})
		} else {
			rest = append(rest, o)
		}
	}
	if len(rest) == len(pp.pending) {
		// Not even the offset fetched from: give up on it.
		why := fmt.Sprintf("no record at or after offset %d in the fetched data", rest[0])
		if err != nil {
			why = err.Error()
		}
		out.set(pp.topic, pp.part, rest[0], RecordTime{Err: why})
		rest = rest[1:]
	}
	pp.pending = rest
}

// timestampsAt finds, in raw record batches, the timestamp of the record at
// each of the sorted offsets (or of the first record after it: compaction
// or a transaction marker may have removed the offset itself). Offsets past
// the data are left out. A partial batch at the end (the broker cut it at
// the byte bound) is ignored.
func timestampsAt(raw []byte, offsets []int64, dec kgo.Decompressor) (map[int64]time.Time, error) {
	out := map[int64]time.Time{}
	idx := 0
	for len(raw) >= 12 && idx < len(offsets) {
		length := int32(raw[8])<<24 | int32(raw[9])<<16 | int32(raw[10])<<8 | int32(raw[11])
		end := 12 + int(length)
		if length < 0 || end > len(raw) {
			break
		}
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw[:end]); err != nil {
			return out, fmt.Errorf("record batch: %v", err)
		}
		raw = raw[end:]
		last := b.FirstOffset + int64(b.LastOffsetDelta)
		if b.Magic != 2 || last < offsets[idx] || b.Attributes&0x20 != 0 { // old format, before the offset, or a control batch
			continue
		}
		if b.Attributes&0x08 != 0 { // LogAppendTime: one timestamp for the batch
			for idx < len(offsets) && offsets[idx] <= last {
				out[offsets[idx]] = time.UnixMilli(b.MaxTimestamp)
				idx++
			}
			continue
		}
		recs, err := dec.Decompress(b.Records, kgo.CompressionCodecType(b.Attributes&0x07))
		if err != nil {
			return out, fmt.Errorf("decompress record batch: %v", err)
		}
		for range b.NumRecords {
			n, sz := kbin.Varint(recs)
			if sz <= 0 || n < 0 || sz+int(n) > len(recs) {
				break
			}
			var r kmsg.Record
			if err := r.ReadFrom(recs[:sz+int(n)]); err != nil {
				return out, fmt.Errorf("record: %v", err)
			}
			recs = recs[sz+int(n):]
			o := b.FirstOffset + int64(r.OffsetDelta)
			for idx < len(offsets) && offsets[idx] <= o {
				out[offsets[idx]] = time.UnixMilli(b.FirstTimestamp + r.TimestampDelta64)
				idx++
			}
		}
	}
	return out, nil
}
