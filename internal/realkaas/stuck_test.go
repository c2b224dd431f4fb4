//go:build realkaas && unix

package realkaas

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// Why is it stuck (issue 33), on both flavours: a transactional producer
// left open until kaas's reaper aborts it, with a read_committed group
// consuming the partition. What kaas did is asserted first (the slot
// file, the marker queue, where the consumer stops), then what kaasctl
// names: on Rust 0.2.18 the consumer stops at the transaction's first
// record while it is open, the reaper writes no ABORT marker and it stays
// there for good, and describe --why, txn list --hanging and groups
// health name the transaction (ListOffsets read_committed answers the
// high watermark there, so the last stable offset comes from the
// segments). The Go flavour differs from what the volume model said of
// it (its coordinator writing the reaper's markers): it writes no
// transaction marker at all and serves read_committed fetches up to the
// high watermark, so the consumer reads the open transaction's records
// as they arrive and nothing blocks; kaasctl names no blocker there.

type whyDoc struct {
	Groups []struct {
		Group    string `json:"group"`
		Blocked  int    `json:"blocked"`
		Blockers []struct {
			Topic       string `json:"topic"`
			Partition   int32  `json:"partition"`
			Committed   int64  `json:"committed"`
			Kind        string `json:"kind"`
			Detail      string `json:"detail"`
			StableEnd   *int64 `json:"lastStableOffset"`
			StableSrc   string `json:"lastStableSource"`
			FixCommand  string `json:"fixCommand"`
			Transaction *struct {
				ID          string `json:"transactionalId"`
				ProducerID  int64  `json:"producerId"`
				Epoch       int16  `json:"epoch"`
				FirstOffset int64  `json:"firstOffset"`
			} `json:"transaction"`
		} `json:"partitions"`
	} `json:"groups"`
}

type hangingDoc struct {
	Transactions []struct {
		ID         string `json:"id"`
		ProducerID int64  `json:"producerId"`
		Holds      []struct {
			Group     string `json:"group"`
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
			Committed int64  `json:"committed"`
		} `json:"holds"`
	} `json:"transactions"`
}

func TestRealBlockedByReapedTransaction(t *testing.T) {
	forFlavours(t, func(t *testing.T, f Flavour) {
		c := newFlavourCluster(t, f, "orders:2")
		brokers := strings.Join(c.Addrs(), ",")
		vflags := []string{"--data-dir", c.Data, "--kaas-version", f.KaasVersion()}
		produce(t, c, "orders", 2, 5) // 0-4 on both partitions
		open := txnProducer(t, c, "tx-hang", 15*time.Second)
		inTxn(t, open, []int32{0}, 2, "hang", nil) // orders/0: 5-6 in the transaction
		produce(t, c, "orders", 2, 1)              // orders/0: 7 after it; orders/1: 5
		cs := startConsumerOpts(t, c, "g-rc", []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted())}, "orders")
		opened := time.Now()
		// While it is open: where the consumer stops, and what the leader
		// answers to ListOffsets read_committed (the last stable offset).
		want := map[tp]int64{{"orders", 0}: 5, {"orders", 1}: 6}
		if f.KaasVersion() != "0.2.18" {
			want[tp{"orders", 0}] = 8 // the Go flavour serves the open transaction's records (checked below)
		}
		waitPositions(t, want, cs)
		openDoc := decode[whyDoc](t, kaasctl(t, append([]string{"groups", "describe", "g-rc", "--why", "-b", brokers, "-o", "json"}, vflags...)...))
		_, openPos := cs.snapshot()
		t.Logf("%s: while open (%s): consumer at %s, log ends %s", f.Name(), time.Since(opened).Round(100*time.Millisecond), fmtOffsets(openPos), fmtOffsets(logEnds(t, c, "orders")))
		realWhileOpen(t, f, openDoc, openPos)
		waitFor(t, 120*time.Second, "the reaper to abort tx-hang", func() error {
			for _, r := range decode[txnListView](t, ok(t, append([]string{"txn", "list", "-o", "json"}, vflags...)...)).Transactions {
				if r.ID == "tx-hang" && r.State == "CompleteAbort" {
					return nil
				}
			}
			return fmt.Errorf("not aborted yet")
		})
		t.Logf("%s: tx-hang aborted by the reaper %s after it opened (timeout 15 s)", f.Name(), time.Since(opened).Round(100*time.Millisecond))
		l := layoutOf(t, c)
		queued := 0
		filepath.Walk(l.MarkerQueuePath(), func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				b, _ := os.ReadFile(p)
				t.Logf("marker queue: %s: %s", p, b)
				queued++
			}
			return nil
		})
		if f.KaasVersion() == "0.2.18" {
			realStuckRust(t, c, cs, brokers, vflags, queued)
			return
		}
		realStuckGo(t, c, cs, brokers, vflags)
	})
}

// realStuckRust: no marker; the consumer stops at 5 on orders/0 and reads
// orders/1 to its end; kaasctl names the transaction everywhere.
func realStuckRust(t *testing.T, c *Cluster, cs *consumer, brokers string, vflags []string, queued int) {
	if queued != 0 {
		t.Errorf("Rust 0.2.18 queued %d marker files for a reaped transaction (its reaper writes none)", queued)
	}
	waitPositions(t, map[tp]int64{{"orders", 0}: 5, {"orders", 1}: 6}, cs)
	doc := decode[whyDoc](t, kaasctl(t, append([]string{"groups", "describe", "g-rc", "--why", "-b", brokers, "-o", "json"}, vflags...)...))
	var found bool
	for _, b := range doc.Groups[0].Blockers {
		if b.Partition != 0 {
			t.Errorf("orders/%d named: %+v", b.Partition, b)
			continue
		}
		found = true
		tx := b.Transaction
		if b.Kind != "abortedWithoutMarkers" || b.Committed != 5 || tx == nil || tx.ID != "tx-hang" || tx.FirstOffset != 5 ||
			b.StableEnd == nil || *b.StableEnd != 5 || b.StableSrc != "segments" || !strings.Contains(b.FixCommand, "--topic orders:0 --to-offset 7") {
			t.Errorf("describe --why on Rust 0.2.18: %+v (transaction %+v, last stable %v)", b, tx, deref(b.StableEnd))
		}
	}
	if !found {
		t.Errorf("describe --why names no blocker on orders/0: %+v", doc)
	}
	h := decode[hangingDoc](t, ok(t, append([]string{"txn", "list", "--hanging", "-o", "json"}, vflags...)...))
	if len(h.Transactions) != 1 || h.Transactions[0].ID != "tx-hang" || len(h.Transactions[0].Holds) != 1 || h.Transactions[0].Holds[0].Group != "g-rc" || h.Transactions[0].Holds[0].Committed != 5 {
		t.Errorf("txn list --hanging: %+v", h)
	}
	hl := kaasctl(t, append([]string{"groups", "health", "g-rc", "-b", brokers, "--window", "3s", "--interval", "1s", "-o", "json"}, vflags...)...)
	if !strings.Contains(hl.stdout, `"BLOCKED"`) {
		t.Errorf("groups health does not say BLOCKED:\n%v", hl)
	}
	// Through the health window and everything before it, the consumer
	// stayed where the transaction starts.
	if _, pos := cs.snapshot(); pos[tp{"orders", 0}] != 5 {
		t.Errorf("read_committed consumer moved past the reaped transaction: %s", fmtOffsets(pos))
	}
}

// realStuckGo: the Go flavour's reaper has its coordinator write the
// ABORT marker, so the consumer reads past the transaction and kaasctl
// names no blocker on orders/0.
func realStuckGo(t *testing.T, c *Cluster, cs *consumer, brokers string, vflags []string) {
	ends := logEnds(t, c, "orders")
	t.Logf("go: log ends %s", fmtOffsets(ends))
	l := layoutOf(t, c)
	ls, err := volume.ListSegments(l.PartitionDir("orders", 0))
	if err != nil {
		t.Fatal(err)
	}
	rr, err := volume.ReadRecordsAt(ls, 5, volume.RecordLimits{Peek: 5})
	if err != nil {
		t.Fatal(err)
	}
	sc := volume.ScanTransactions(ls, rr, volume.RecordLimits{})
	if tx := sc.Txn(rr.Batch.ProducerID); rr.Batch == nil || !rr.Batch.Transactional || tx == nil || tx.End != "" || !sc.Complete || ends[tp{"orders", 0}] != 8 {
		t.Errorf("go: the segments after the reaper: batch %+v, walk %+v, log ends %s: want the transaction's records with no marker after them", rr.Batch, sc, fmtOffsets(ends))
	}
	if _, pos := cs.snapshot(); pos[tp{"orders", 0}] != 8 {
		t.Errorf("go: read_committed consumer at %s, want the log end 8", fmtOffsets(pos))
	}
	doc := decode[whyDoc](t, kaasctl(t, append([]string{"groups", "describe", "g-rc", "--why", "-b", brokers, "-o", "json"}, vflags...)...))
	if doc.Groups[0].Blocked != 0 {
		t.Errorf("describe --why on the Go flavour names a blocker after its reaper wrote the markers: %+v", doc.Groups[0])
	}
	h := decode[hangingDoc](t, ok(t, append([]string{"txn", "list", "--hanging", "-o", "json"}, vflags...)...))
	if len(h.Transactions) != 0 {
		t.Errorf("txn list --hanging on the Go flavour: %+v", h)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// realWhileOpen: what kaasctl says while the transaction is open. Rust
// 0.2.18 holds the consumer at 5: an open transaction; the Go flavour
// served it to the end: no blocker.
func realWhileOpen(t *testing.T, f Flavour, doc whyDoc, pos map[tp]int64) {
	t.Helper()
	if f.KaasVersion() != "0.2.18" {
		if pos[tp{"orders", 0}] != 8 || doc.Groups[0].Blocked != 0 {
			t.Errorf("go: while open: consumer at %s, blockers %+v: the Go flavour serves read_committed consumers to the high watermark", fmtOffsets(pos), doc.Groups[0].Blockers)
		}
		return
	}
	if len(doc.Groups[0].Blockers) != 1 || doc.Groups[0].Blockers[0].Kind != "openTransaction" || doc.Groups[0].Blockers[0].Committed != 5 {
		t.Errorf("rust: while open: blockers %+v", doc.Groups[0].Blockers)
	}
}
