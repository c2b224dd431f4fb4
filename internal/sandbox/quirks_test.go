package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// With the quirk on, ListOffsets by timestamp answers 0 as kaas's Go
// generation does; earliest/latest stay right, and off it answers as Kafka.
func TestZeroTimestampOffsetsQuirk(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 2, Topics: []Topic{{Name: "orders", Partitions: 1}}})
	cl, err := kgo.NewClient(kgo.SeedBrokers(sb.Bootstrap()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Topic: "orders", Timestamp: base.Add(time.Duration(i) * time.Minute)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	at := func() int64 {
		t.Helper()
		lo, err := adm.ListOffsetsAfterMilli(ctx, base.Add(5*time.Minute).UnixMilli(), "orders")
		if err != nil {
			t.Fatal(err)
		}
		o, _ := lo.Lookup("orders", 0)
		return o.Offset
	}
	if got := at(); got != 5 {
		t.Fatalf("normal sandbox: offset %d for the 6th record's time", got)
	}
	if out, err := sb.Command("quirk zero-timestamp-offsets on"); err != nil || out == "" {
		t.Fatalf("control: %q %v", out, err)
	}
	if got := at(); got != 0 {
		t.Errorf("quirk on: offset %d, want 0", got)
	}
	ends, err := adm.ListEndOffsets(ctx, "orders")
	if o, _ := ends.Lookup("orders", 0); err != nil || o.Offset != 10 {
		t.Errorf("quirk on: end offset %d %v", o.Offset, err)
	}
	if _, err := sb.Command("quirk zero-timestamp-offsets maybe"); err == nil {
		t.Error("bad quirk value accepted")
	}
	sb.EmulateZeroTimestampOffsets(false)
	if got := at(); got != 5 {
		t.Errorf("quirk off: offset %d", got)
	}
	// The Rust broker's answer: -1/-1, which kadm turns into the log end.
	if out, err := sb.Command("quirk no-timestamp-offsets on"); err != nil || out == "" {
		t.Fatalf("control: %q %v", out, err)
	}
	if got := at(); got != 10 {
		t.Errorf("Rust quirk on: kadm gave offset %d, want the log end 10", got)
	}
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "orders"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = base.Add(5 * time.Minute).UnixMilli()
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].Offset != -1 || resp.Topics[0].Partitions[0].Timestamp != -1 {
		t.Errorf("Rust quirk on: raw answer %+v %v, want offset -1 timestamp -1", resp, err)
	}
	sb.EmulateNoTimestampOffsets(false)
	if got := at(); got != 5 {
		t.Errorf("Rust quirk off: offset %d", got)
	}
}

// With the quirk on, OffsetFetch with null topics ("every committed offset")
// is answered with no topics, as a real Go kaas broker does; naming the partitions answers
// them. Both the v7 (one group) and the v8 (groups array) shapes.
func TestOffsetFetchAllIsEmpty(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 2, Topics: []Topic{{Name: "orders", Partitions: 2}}})
	if out, err := sb.Command("quirk empty-offsetfetch-all on"); err != nil || out == "" {
		t.Fatalf("control: %q %v", out, err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(sb.Bootstrap()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	off := kadm.Offsets{}
	off.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 7, LeaderEpoch: -1})
	off.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 9, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "g-all", off); err != nil {
		t.Fatal(err)
	}
	for _, v := range []int16{7, 8} {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = v
		req.Group = "g-all"
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = "g-all"
		req.Groups = []kmsg.OffsetFetchRequestGroup{rg}
		if v < 8 {
			req.Groups = nil
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		n := len(resp.Topics)
		for _, g := range resp.Groups {
			n += len(g.Topics)
			if g.ErrorCode != 0 {
				t.Errorf("v%d: group error %d", v, g.ErrorCode)
			}
		}
		if n != 0 || resp.ErrorCode != 0 {
			t.Errorf("v%d: OffsetFetch-all answered %d topics (error %d); kaas answers none", v, n, resp.ErrorCode)
		}
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 7
	req.Group = "g-all"
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = "orders", []int32{0, 1}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 || resp.Topics[0].Partitions[1].Offset != 9 {
		t.Errorf("named partitions: %+v, want orders/1 at 9", resp.Topics)
	}
}
