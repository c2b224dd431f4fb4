package volume

import (
	"testing"
)

func TestParseSlotName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]int{"slot-0.json": 0, "slot-49.json": 49, "slot-50.json": -1, "slot-00.json": -1, "slot-07.json": -1,
		"slot-.json": -1, "slot-1.json.tmp": -1, "slot-x.json": -1, "slot--1.json": -1} {
		if got := ParseSlotName(name); got != want {
			t.Errorf("%s: %d, want %d", name, got, want)
		}
	}
}

func TestParseTxnSlot(t *testing.T) {
	t.Parallel()
	// Fixture ids from kaas's golden tests: tx-commit → slot-9, tx-ongoing → slot-25.
	sf, fs, err := ParseTxnSlot("slot-9.json", 9, []byte(`{"tx-commit":{"pid":5,"epoch":1,"state":""},"tx-ongoing":{"pid":6,"epoch":0,"state":"Ongoing","ongoingSinceMs":1,"transactionTimeoutMs":60000}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c := codes(fs); c != "warning:txn.wrongSlot" || len(sf.Entries) != 2 {
		t.Fatalf("findings %s, %d entries", c, len(sf.Entries))
	}
	if e := sf.Entries[0]; e.ID != "tx-commit" || e.State != TxnEmpty || e.WrongSlot || e.Undecodable {
		t.Errorf("tx-commit %+v", e)
	}
	if e := sf.Entries[1]; !e.WrongSlot || e.TransactionTimeoutMs != 60000 {
		t.Errorf("tx-ongoing %+v", e)
	}
	sf, fs, err = ParseTxnSlot("slot-40.json", 40, []byte(`{"tx-bare":{"pid":1,"epoch":0,"state":"Empty"}}`))
	if err != nil || codes(fs) != "error:txn.unknownState" || !sf.Entries[0].Undecodable {
		t.Errorf("state Empty: %v %s %+v", err, codes(fs), sf)
	}
	sf, fs, err = ParseTxnSlot("slot-40.json", 40, nil)
	if err != nil || len(sf.Entries) != 0 || codes(fs) != "info:txn.emptyFile" {
		t.Errorf("empty slot: %v %s", err, codes(fs))
	}
	if _, _, err := ParseTxnSlot("slot-1.json", 1, []byte(`{"a":`)); err == nil {
		t.Error("truncated slot accepted")
	}
}

func TestProducerFiles(t *testing.T) {
	t.Parallel()
	if p, fs, err := ParseProducerIDFile("kaas-2.json", "kaas-2", []byte(`{"nextBlock":1000}`)); err != nil || len(fs) != 0 || p.NextBlock != 1000 {
		t.Errorf("%v %v %+v", err, fs, p)
	}
	if _, _, err := ParseProducerIDFile("kaas-2.json", "kaas-2", []byte(`{"nextBlock":1.5}`)); err == nil {
		t.Error("fractional nextBlock accepted")
	}
	ff, fs, err := ParseFenceFile("from-kaas-0.json", "kaas-0", []byte(`{"3298534884100":2,"x":1}`))
	if err != nil || len(ff.Entries) != 1 || ff.Entries[0].PID != 3298534884100 || codes(fs) != "error:fences.badEntry" {
		t.Errorf("%v %+v %s", err, ff, codes(fs))
	}
	m, fs, err := ParseMarker("to-kaas-1/5-2.json", "kaas-1", "5-3.json", []byte(`{"transactionalId":"t","producerId":5,"producerEpoch":2,"commit":true,"coordinatorEpoch":1,"partitions":[{"topic":"o","partitions":[1]}]}`))
	if err != nil || !m.Commit || codes(fs) != "warning:markers.nameMismatch" {
		t.Errorf("%v %+v %s", err, m, codes(fs))
	}
	if _, _, err := ParseMarker("m.json", "kaas-1", "5-2.json", []byte(`{"producerId":5}`)); err == nil {
		t.Error("marker without epoch/commit accepted")
	}
	mf, fs, err := ParseManifest("manifest.json", "t", 0, []byte(`{"epoch":1,"highWatermark":10,"logStartOffset":20}`))
	if err != nil || mf.HighWatermark != 10 || codes(fs) != "error:manifest.badRange" {
		t.Errorf("%v %+v %s", err, mf, codes(fs))
	}
}
