package inspect

import (
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// The same open transaction at a committed offset: a blocker where the
// generation's brokers hold read_committed consumers (Rust 0.2.18), none
// on the Go flavour, whose fetch serves them to the high watermark.
func TestClassifyBlockerByGeneration(t *testing.T) {
	t.Parallel()
	rr := &volume.RecordRead{Offset: 5, Batch: &volume.BatchInfo{BaseOffset: 5, LastOffset: 6, Transactional: true, ProducerID: 9, CRCChecked: true, CRCValid: true},
		Records: []volume.Record{{Offset: 5, ValueBytes: 3, Value: []byte("pay")}}}
	scan := &volume.TxnScan{From: 5, To: 8, Complete: true, FirstPlain: 7, Txns: []volume.LogTxn{{ProducerID: 9, FirstOffset: 5, LastOffset: 6, Batches: 1}}}
	part := &PartitionState{Topic: "orders", Partition: 0, Resume: volume.Fact{Value: 5, Source: volume.SourceFile}, LogEnd: volume.Fact{Value: 8, Source: volume.SourceSegments}, Lag: 3, LagKnown: true}
	for _, c := range []struct {
		gen    volume.Generation
		kind   string
		stable int64
	}{{volume.Gen018, BlockOpenTxn, 5}, {volume.GenGo, BlockNone, 8}} {
		f := &BlockerFacts{Group: "g", Part: part, Record: rr, Scan: scan, Gen: volume.GenerationInfo{Gen: c.gen}, Now: time.Unix(1e9, 0)}
		b := ClassifyBlocker(f)
		if b.Kind != c.kind || b.StableEnd == nil || *b.StableEnd != c.stable {
			t.Errorf("%s: kind %s, last stable %v: %s", c.gen, b.Kind, b.StableEnd, b.Detail)
		}
		if c.kind == BlockNone && !strings.Contains(b.Detail, "high watermark") {
			t.Errorf("%s: the detail does not say why: %s", c.gen, b.Detail)
		}
	}
}
