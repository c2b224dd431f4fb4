package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
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
}
