//go:build realkaas && unix

package realkaas

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Transactions on the Rust broker: one committed, one aborted, one left
// open past its timeout for the reaper; what a read_committed consumer
// sees of each, and what txn list and volume check say.

type txnListView struct {
	Transactions []txnView `json:"transactions"`
}

type txnView struct {
	ID         string `json:"id"`
	State      string `json:"state"`
	Epoch      int16  `json:"epoch"`
	Reaped     bool   `json:"reaped"`
	Finished   bool   `json:"finished"`
	ProducerID int64  `json:"producerId"`
}

// txnProducer is a transactional producer of one id, writing to orders.
func txnProducer(t *testing.T, c *Cluster, id string, timeout time.Duration) *kgo.Client {
	t.Helper()
	return newClient(t, c, kgo.TransactionalID(id), kgo.TransactionTimeout(timeout),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0), kgo.RequiredAcks(kgo.AllISRAcks()))
}

// inTxn produces n records to each of parts in one transaction and ends it
// with commit (or abort); end false leaves it open.
func inTxn(t *testing.T, cl *kgo.Client, parts []int32, n int, tag string, end *bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatalf("begin %s: %v", tag, err)
	}
	var rs []*kgo.Record
	for _, p := range parts {
		for i := 0; i < n; i++ {
			rs = append(rs, &kgo.Record{Topic: "orders", Partition: p, Value: []byte(fmt.Sprintf("%s-%d-%d", tag, p, i))})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("producing in %s: %v", tag, err)
	}
	if end == nil {
		return
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(*end)); err != nil {
		t.Fatalf("ending %s (commit %v): %v", tag, *end, err)
	}
}

func TestRustTransactions(t *testing.T) {
	t.Parallel()
	c := newRustCluster(t, "orders:3")
	produce(t, c, "orders", 3, 5) // offsets 0-4 on every partition, outside any transaction
	all3 := []int32{0, 1, 2}
	commit, abort := true, false
	inTxn(t, txnProducer(t, c, "tx-commit", time.Minute), all3, 4, "commit", &commit)
	inTxn(t, txnProducer(t, c, "tx-abort", time.Minute), all3, 3, "abort", &abort)
	open := txnProducer(t, c, "tx-reaped", 4*time.Second)
	inTxn(t, open, all3, 2, "reaped", nil)
	opened := time.Now()
	l := layoutOf(t, c)
	waitFor(t, 40*time.Second, "the reaper to abort tx-reaped", func() error {
		rows := decode[txnListView](t, ok(t, "txn", "list", "--data-dir", c.Data, "--kaas-version", "0.2.18", "-o", "json")).Transactions
		for _, r := range rows {
			if r.ID == "tx-reaped" && r.State == "CompleteAbort" {
				return nil
			}
		}
		return fmt.Errorf("txn list: %+v", rows)
	})
	t.Logf("tx-reaped aborted by the reaper %s after it opened (timeout 4 s, reaper every 10 s)", time.Since(opened).Round(100*time.Millisecond))
	for _, f := range []string{"txn_state", "producer_fences", "marker_queue"} { // what kaas wrote
		filepath.Walk(filepath.Join(l.ClusterDir, f), func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				b, _ := os.ReadFile(p)
				t.Logf("%s: %s", strings.TrimPrefix(p, l.ClusterDir+"/"), b)
			}
			return nil
		})
	}
	// What kaasctl says: the committed and the aborted one are finished,
	// the reaped one is not (no ABORT marker).
	rows := decode[txnListView](t, ok(t, "txn", "list", "--data-dir", c.Data, "--kaas-version", "0.2.18", "-o", "json")).Transactions
	want := map[string]string{"tx-commit": "CompleteCommit finished", "tx-abort": "CompleteAbort finished", "tx-reaped": "CompleteAbort reaped"}
	for _, r := range rows {
		got := r.State + " finished"
		if r.Reaped {
			got = r.State + " reaped"
		}
		if r.Reaped == r.Finished || want[r.ID] != got {
			t.Errorf("txn list: %s is %s (reaped %v, finished %v); want %s", r.ID, r.State, r.Reaped, r.Finished, want[r.ID])
		}
	}
	vc := decode[checkView](t, kaasctl(t, "volume", "check", "--data-dir", c.Data, "--kaas-version", "0.2.18", "-o", "json"))
	named := 0
	for _, f := range vc.Findings {
		if f.Code == "txn.reapedWithoutMarkers" {
			named++
			if !strings.Contains(f.Message, `"tx-reaped"`) {
				t.Errorf("volume check flags another transaction: %s", f.Message)
			}
		}
	}
	if named != 1 {
		t.Errorf("volume check names %d reaped transactions without markers, want tx-reaped alone: %+v", named, vc.Findings)
	}
	// read_committed: 0-4 plain, 5-8 committed (9 its marker), 10-12
	// aborted (13 its marker), 14-15 the reaped transaction's, no marker;
	// then one plain record (16). A read_committed consumer delivers 0-8
	// and stops: the last stable offset stays at 14.
	produce(t, c, "orders", 3, 1)
	ends := logEnds(t, c, "orders")
	cs := startConsumerOpts(t, c, "g-rc", []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted())}, "orders")
	waitPositions(t, all("orders", 3, 9), cs)
	unc := startConsumer(t, c, "g-ru", "orders")
	waitPositions(t, ends, unc)
	_, pos := cs.snapshot()
	t.Logf("log ends %s; read_committed stopped at %s; read_uncommitted reached the end", fmtOffsets(ends), fmtOffsets(pos))
	for k, p := range pos {
		if p != 9 {
			t.Errorf("read_committed consumer at %s on %s: it should stop below the reaped transaction (14) with nothing between 9 and 14 to deliver", fmtOffsets(map[tp]int64{k: p}), k)
		}
	}
	cs.stop()
	unc.stop()
	// A full restart does not finish it either.
	termAll(t, c)
	startAll(t, c)
	cs = startConsumerOpts(t, c, "g-rc2", []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted())}, "orders")
	waitPositions(t, all("orders", 3, 9), cs)
	ends = logEnds(t, c, "orders")
	eventually(t, 30*time.Second, "after a full restart a read_committed consumer reads past the reaped transaction (the volume check fix says so)", func() error {
		if _, pos := cs.snapshot(); fmtOffsets(pos) != fmtOffsets(ends) {
			return fmt.Errorf("at %s, log ends %s", fmtOffsets(pos), fmtOffsets(ends))
		}
		return nil
	})
}
