package wire

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// RecordStamp is one record's offset and timestamp.
type RecordStamp struct {
	Offset    int64     `json:"offset"`
	Timestamp time.Time `json:"timestamp"`
}

// StampRange asks for the records of one partition in [From, To).
type StampRange struct {
	Topic     string
	Partition int32
	From, To  int64
}

// maxStampBytes bounds what one partition's fetch may return: the check
// needs two records, not the log.
const maxStampBytes = 256 << 10

// RecordStamps reads the offsets and timestamps of the records in each
// range, with one bounded fetch per partition (a consumer on the same
// connection settings, at most maxStampBytes per partition, no group). It
// stops when every range is covered or the client's timeout passes; a
// partition whose records did not arrive in time is missing from the
// answer, or holds fewer stamps than asked for.
func (c *Client) RecordStamps(ctx context.Context, ranges []StampRange) (map[string]map[int32][]RecordStamp, error) {
	out := map[string]map[int32][]RecordStamp{}
	start, left := stampStarts(ranges)
	if len(start) == 0 {
		return out, nil
	}
	rc, err := NewClient(c.Settings, WithKgoOpts(
		kgo.ConsumePartitions(start),
		kgo.FetchMaxBytes(maxStampBytes),
		kgo.FetchMaxPartitionBytes(maxStampBytes),
		kgo.FetchMaxWait(200*time.Millisecond),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
	))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	cctx, cancel := c.WithTimeout(ctx)
	defer cancel()
	pending := 0
	for _, ps := range left {
		pending += len(ps)
	}
	for pending > 0 {
		fs := rc.KGO.PollFetches(cctx)
		if cctx.Err() != nil {
			break
		}
		pending -= takeStamps(fs, left, out)
	}
	return out, nil
}

// stampStarts is where the consumer starts in each partition with a
// non-empty range, and the end of each range still to reach.
func stampStarts(ranges []StampRange) (start map[string]map[int32]kgo.Offset, left map[string]map[int32]int64) {
	start, left = map[string]map[int32]kgo.Offset{}, map[string]map[int32]int64{}
	for _, r := range ranges {
		if r.To <= r.From {
			continue
		}
		if start[r.Topic] == nil {
			start[r.Topic], left[r.Topic] = map[int32]kgo.Offset{}, map[int32]int64{}
		}
		start[r.Topic][r.Partition] = kgo.NewOffset().At(r.From)
		left[r.Topic][r.Partition] = r.To
	}
	return start, left
}

// takeStamps adds the stamps of one poll's records inside their ranges to
// out and returns how many partitions it finished: their range's last
// record arrived, or (a range ending in a gap: compaction, control
// records) a later offset was seen. Finished partitions leave left.
func takeStamps(fs kgo.Fetches, left map[string]map[int32]int64, out map[string]map[int32][]RecordStamp) int {
	done := 0
	fs.EachRecord(func(r *kgo.Record) {
		end, ok := left[r.Topic][r.Partition]
		if !ok || r.Offset >= end {
			return
		}
		if out[r.Topic] == nil {
			out[r.Topic] = map[int32][]RecordStamp{}
		}
		out[r.Topic][r.Partition] = append(out[r.Topic][r.Partition], RecordStamp{Offset: r.Offset, Timestamp: r.Timestamp})
		if r.Offset == end-1 {
			delete(left[r.Topic], r.Partition)
			done++
		}
	})
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		end, ok := left[p.Topic][p.Partition]
		if !ok || len(p.Records) == 0 {
			return
		}
		if p.Records[len(p.Records)-1].Offset >= end-1 {
			delete(left[p.Topic], p.Partition)
			done++
		}
	})
	return done
}
