package wire

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// recordBatch encodes one uncompressed v2 record batch of n records from base,
// record i at t0 + i seconds.
func recordBatch(base int64, n int, t0 time.Time) []byte {
	var recs []byte
	for i := range n {
		r := kmsg.Record{TimestampDelta64: int64(i) * 1000, TimestampDelta: int32(i * 1000), OffsetDelta: int32(i), Value: []byte("v")}
		body := r.AppendTo(nil)
		// AppendTo writes Length as given (0): re-encode with the real length.
		r.Length = int32(len(body) - 1)
		recs = append(recs, r.AppendTo(nil)...)
	}
	b := kmsg.RecordBatch{FirstOffset: base, Magic: 2, LastOffsetDelta: int32(n - 1), FirstTimestamp: t0.UnixMilli(),
		MaxTimestamp: t0.Add(time.Duration(n-1) * time.Second).UnixMilli(), ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(n), Records: recs}
	raw := b.AppendTo(nil)
	b.Length = int32(len(raw) - 12)
	return b.AppendTo(nil)
}

func TestTimestampAt(t *testing.T) {
	t.Parallel()
	t0 := time.UnixMilli(1_700_000_000_000)
	raw := append(recordBatch(0, 5, t0), recordBatch(5, 5, t0.Add(time.Minute))...)
	dec := kgo.DefaultDecompressor()
	for _, c := range []struct {
		off  int64
		want time.Time
	}{
		{0, t0}, {3, t0.Add(3 * time.Second)}, {5, t0.Add(time.Minute)}, {9, t0.Add(time.Minute + 4*time.Second)},
	} {
		got, err := timestampAt(raw, c.off, dec)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("offset %d: %v, %v; want %v", c.off, got, err, c.want)
		}
	}
	if _, err := timestampAt(raw, 10, dec); err == nil {
		t.Error("offset past the data: no error")
	}
	// A truncated answer (the broker cut the last batch at the byte bound).
	if got, err := timestampAt(raw[:len(raw)-7], 2, dec); err != nil || !got.Equal(t0.Add(2*time.Second)) {
		t.Errorf("truncated answer: %v, %v", got, err)
	}
}

func FuzzTimestampAt(f *testing.F) {
	t0 := time.UnixMilli(1_700_000_000_000)
	f.Add(recordBatch(0, 3, t0), int64(1))
	f.Add(append(recordBatch(10, 2, t0), recordBatch(12, 2, t0)...), int64(13))
	f.Add([]byte{}, int64(0))
	f.Add(make([]byte, 61), int64(0))
	dec := kgo.DefaultDecompressor()
	f.Fuzz(func(t *testing.T, raw []byte, off int64) {
		// Any input: an answer or an error, never a panic or a hang.
		_, _ = timestampAt(raw, off, dec)
	})
}

func TestTimestampsAtManyOffsets(t *testing.T) {
	t.Parallel()
	t0 := time.UnixMilli(1_700_000_000_000)
	raw := append(recordBatch(0, 5, t0), recordBatch(5, 5, t0.Add(time.Minute))...)
	got, err := timestampsAt(raw, []int64{1, 1, 4, 7, 12}, kgo.DefaultDecompressor())
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]time.Time{1: t0.Add(time.Second), 4: t0.Add(4 * time.Second), 7: t0.Add(time.Minute + 2*time.Second)}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v (12 is past the data)", got, want)
	}
	for o, ts := range want {
		if !got[o].Equal(ts) {
			t.Errorf("offset %d: %v, want %v", o, got[o], ts)
		}
	}
}

// Against kfake: many offsets of one partition in one call, O(brokers)
// Fetch requests, and a clear error for an offset past the log end.
func TestRecordTimestampsKfake(t *testing.T) {
	t.Parallel()
	c := newCluster(t, kfake.SeedTopics(2, "orders"))
	produce(t, c.ListenAddrs(), "orders", map[int32]int{0: 50, 1: 50})
	vl := watchVersions(c)
	cl := dial(t, settings(t, c.ListenAddrs(), nil, nil))
	before := time.Now().Add(-time.Minute)
	got, err := cl.RecordTimestamps(context.Background(), map[string]map[int32][]int64{"orders": {0: {0, 10, 49}, 1: {3, 60}}})
	if err != nil {
		t.Fatal(err)
	}
	for p, offs := range map[int32][]int64{0: {0, 10, 49}, 1: {3}} {
		for _, o := range offs {
			rt := got["orders"][p][o]
			if rt.Err != "" || rt.Time.Before(before) || rt.Time.After(time.Now().Add(time.Second)) {
				t.Errorf("orders/%d@%d: %+v", p, o, rt)
			}
		}
	}
	if rt := got["orders"][1][60]; rt.Err == "" {
		t.Errorf("offset past the log end: %+v, want an error", rt)
	}
	if _, n := vl.get(kmsg.Fetch); n > ProbeRounds*3 {
		t.Errorf("%d Fetch requests for 2 partitions on 3 brokers (at most %d rounds of one per leader)", n, ProbeRounds)
	}
}

// timestampAt is timestampsAt for one offset.
func timestampAt(raw []byte, offset int64, dec kgo.Decompressor) (time.Time, error) {
	got, err := timestampsAt(raw, []int64{offset}, dec)
	if ts, ok := got[offset]; ok {
		return ts, nil
	}
	if err == nil {
		err = fmt.Errorf("no record at or after offset %d in the fetched data", offset)
	}
	return time.Time{}, err
}
