package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/views"
)

// whySandbox is a sandbox with "orders" (2 partitions) and the flags that
// point kaasctl at it.
func whySandbox(t *testing.T) (*sandbox.Sandbox, []string) {
	t.Helper()
	s := sandbox.Start(t, sandbox.Options{Brokers: 2, Topics: []sandbox.Topic{{Name: "orders", Partitions: 2}}})
	return s, []string{"-b", strings.Join(s.Bootstrap(), ","), "--data-dir", s.Layout().DataDir, "--kaas-version", "0.2.18"}
}

// whyLiveDoc runs groups describe --why -o json on the sandbox.
func whyLiveDoc(t *testing.T, flags []string, extra ...string) (views.GroupsWhyView, cliResult) {
	t.Helper()
	r := runCLI(t, "", nil, append(append([]string{"groups", "describe"}, flags...), append([]string{"--why", "-o", "json"}, extra...)...)...)
	var doc views.GroupsWhyView
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", r.Code, err, r.Out, r.Err)
	}
	return doc, r
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// refusingConsumer is a group member that consumes orders and commits
// what it processed every 100 ms, but cannot get past refuse on
// orders/0: its committed offset there stays on that record.
type refusingConsumer struct {
	cl     *kgo.Client
	cancel func()
	done   chan struct{}
}

func startRefusingConsumer(t *testing.T, s *sandbox.Sandbox, group string, refuse int64, readCommitted bool) *refusingConsumer {
	t.Helper()
	opts := sandbox.ConsumerOpts(group, "orders")
	if readCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := s.Client(opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &refusingConsumer{cl: cl, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		var mu sync.Mutex
		next := map[int32]int64{}
		for ctx.Err() == nil {
			fs := cl.PollRecords(ctx, 100)
			fs.EachRecord(func(r *kgo.Record) {
				mu.Lock()
				defer mu.Unlock()
				if r.Partition == 0 && refuse >= 0 && r.Offset >= refuse {
					next[0] = refuse // the record it cannot process
					return
				}
				next[r.Partition] = max(next[r.Partition], r.Offset+1)
			})
			mu.Lock()
			offs := map[string]map[int32]kgo.EpochOffset{"orders": {}}
			for p, o := range next {
				offs["orders"][p] = kgo.EpochOffset{Epoch: -1, Offset: o}
			}
			mu.Unlock()
			if len(offs["orders"]) > 0 {
				cctx, cc := context.WithTimeout(ctx, 2*time.Second)
				cl.CommitOffsetsSync(cctx, offs, nil)
				cc()
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(c.stop)
	return c
}

func (c *refusingConsumer) stop() {
	c.cancel()
	<-c.done
	c.cl.Close()
}

// A record the consumer refuses: it sits on orders/0 offset 4 for the
// whole window while its member is alive; --why names the record with
// its evidence, and the printed reset, run as printed once the consumer
// is stopped, moves exactly that partition one record on: a consumer
// then drains the group, and another group is untouched.
func TestGroupsWhySandboxRefusedRecord(t *testing.T) {
	t.Parallel()
	s, flags := whySandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.Produce(ctx, "orders", 2, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, "g-other", map[string]map[int32]int64{"orders": {0: 2, 1: 3}}); err != nil {
		t.Fatal(err)
	}
	c := startRefusingConsumer(t, s, "g-poison", 4, false)
	waitFor(t, "g-poison to commit 4 and 10", 30*time.Second, func() bool {
		o, _ := s.CommittedOffsets("g-poison")
		return o["orders/0"] == 4 && o["orders/1"] == 10
	})
	doc, r := whyLiveDoc(t, flags, "g-poison", "--window", "2s", "--peek", "2")
	if r.Code != 3 || len(doc.Groups) != 1 || len(doc.Groups[0].Blockers) != 1 {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	b := doc.Groups[0].Blockers[0]
	if b.Kind != inspect.BlockRecord || b.Topic != "orders" || b.Partition != 0 || b.Committed != 4 || b.Lag != 6 || b.Stuck == nil || !b.Stuck.Alive {
		t.Fatalf("blocker %+v", b)
	}
	if rec := b.Record.Records; len(rec) != 2 || rec[0].Offset != 4 || string(rec[0].Value) != "orders-0-4" || b.Record.Batch.Transactional {
		t.Fatalf("record %+v", b.Record)
	}
	if !strings.HasPrefix(b.FixCommand, "kaasctl offsets reset --data-dir "+flags[3]+" --kaas-version 0.2.18") || !strings.HasSuffix(b.FixCommand, " --group g-poison --topic orders:0 --to-offset 5 --execute") {
		t.Fatalf("fix %q", b.FixCommand)
	}
	c.stop()
	waitFor(t, "g-poison to be Empty", 30*time.Second, func() bool {
		d, _ := whyLiveDoc(t, flags, "g-poison")
		return len(d.Groups) == 1 && d.Groups[0].State == "Empty"
	})
	if r := runCLI(t, "", nil, strings.Fields(b.FixCommand)[1:]...); r.Code != 0 {
		t.Fatalf("%s: exit %d\n%s\n%s", b.FixCommand, r.Code, r.Out, r.Err)
	}
	if o, _ := s.CommittedOffsets("g-poison"); o["orders/0"] != 5 || o["orders/1"] != 10 {
		t.Fatalf("after the fix: %v", o)
	}
	if o, _ := s.CommittedOffsets("g-other"); o["orders/0"] != 2 || o["orders/1"] != 3 {
		t.Fatalf("g-other moved: %v", o)
	}
	startRefusingConsumer(t, s, "g-poison", -1, false)
	waitFor(t, "g-poison to drain", 30*time.Second, func() bool {
		o, _ := s.CommittedOffsets("g-poison")
		return o["orders/0"] == 10
	})
}

// plantSlot writes one transactional id's entry into the sandbox's slot
// file, as kaas's coordinator would hold it.
func plantSlot(t *testing.T, s *sandbox.Sandbox, id, entry string) {
	t.Helper()
	dir := s.Layout().TxnStatePath()
	writeFile(t, dir, grouphash.TxnSlotFile(id), fmt.Sprintf(`{%q:%s}`, id, entry))
}

// An open transaction left by a producer holds a read_committed group at
// its first record: --why names it with the producer id and epoch, the
// leader's last stable offset at the committed offset (lag 0 to it, lag
// to the log end above 0; taken from the segments: the sandbox answers
// ListOffsets read_committed with the high watermark, as 0.2.18 does), for each thing the slot files and the marker
// queue then say: Ongoing within its timeout, aborted by the reaper with
// no marker written, a COMMIT marker pending for a broker. When the
// producer commits, the group moves on and BLOCKED is gone.
// openTxn is a sandbox where producer "pay-tx" left a transaction open
// on orders/1 (offsets 5–7, records after it at 8–9) and read_committed
// group g-rc sits at its first record.
type openTxn struct {
	s     *sandbox.Sandbox
	flags []string
	p     *kgo.Client
	pid   int64
	epoch int16
}

func startOpenTxn(t *testing.T, ctx context.Context) *openTxn {
	t.Helper()
	s, flags := whySandbox(t)
	if err := s.Produce(ctx, "orders", 2, 5); err != nil {
		t.Fatal(err)
	}
	p, err := s.Client(kgo.TransactionalID("pay-tx"), kgo.TransactionTimeout(10*time.Minute), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := p.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 1, Value: fmt.Appendf(nil, "pay-%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Produce(ctx, "orders", 2, 2); err != nil { // after the transaction's records
		t.Fatal(err)
	}
	pid, epoch, err := p.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	startRefusingConsumer(t, s, "g-rc", -1, true)
	waitFor(t, "g-rc to reach the transaction", 30*time.Second, func() bool {
		o, _ := s.CommittedOffsets("g-rc")
		return o["orders/1"] == 5 && o["orders/0"] == 7
	})
	return &openTxn{s: s, flags: flags, p: p, pid: pid, epoch: epoch}
}

func TestGroupsWhySandboxTransactions(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ot := startOpenTxn(t, ctx)
	s, flags, p, pid, epoch := ot.s, ot.flags, ot.p, ot.pid, ot.epoch
	since := time.Now().Add(-time.Minute).UnixMilli()
	cases := []struct {
		slot, marker, kind string
	}{
		{fmt.Sprintf(`{"pid":%d,"epoch":%d,"state":"Ongoing","ongoingSinceMs":%d,"transactionTimeoutMs":600000,"partitions":[{"topic":"orders","partitions":[1]}]}`, pid, epoch, since), "", inspect.BlockOpenTxn},
		{fmt.Sprintf(`{"pid":%d,"epoch":%d,"state":"CompleteAbort"}`, pid, epoch+1), "", inspect.BlockReapedNoMarkers},
		{fmt.Sprintf(`{"pid":%d,"epoch":%d,"state":"CompleteCommit"}`, pid, epoch), fmt.Sprintf(`{"transactionalId":"pay-tx","producerId":%d,"producerEpoch":%d,"commit":true,"coordinatorEpoch":1,"partitions":[{"topic":"orders","partitions":[1]}]}`, pid, epoch), inspect.BlockMarkersPending},
	}
	mq := filepath.Join(s.Layout().MarkerQueuePath(), "to-kaas-1")
	for _, c := range cases {
		plantSlot(t, s, "pay-tx", c.slot)
		os.RemoveAll(mq)
		if c.marker != "" {
			writeFile(t, mq, fmt.Sprintf("%d-%d.json", pid, epoch), c.marker)
		}
		var b inspect.PartitionBlocker
		waitFor(t, c.kind, 20*time.Second, func() bool {
			doc, _ := whyLiveDoc(t, flags, "g-rc")
			for _, x := range doc.Groups[0].Blockers {
				if x.Partition == 1 {
					b = x
				}
			}
			return b.Kind == c.kind
		})
		if b.Committed != 5 || b.Txn == nil || b.Txn.ProducerID != pid || b.Txn.Epoch != epoch || b.Txn.TransactionalID != "pay-tx" || b.Txn.FirstOffset != 5 ||
			b.StableEnd == nil || *b.StableEnd != 5 || b.StableSource != "segments" || *b.StableLag != 0 || b.Lag != 5 || !strings.Contains(b.Detail, "read_committed") {
			t.Fatalf("%s: blocker %+v (stable %v)", c.kind, b, b.StableEnd)
		}
		if !b.Record.Batch.Transactional || b.Record.Batch.ProducerID != pid || string(b.Record.Records[0].Value) != "pay-0" {
			t.Fatalf("%s: record %+v", c.kind, b.Record)
		}
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(mq)
	waitFor(t, "g-rc to read past the transaction", 30*time.Second, func() bool {
		o, _ := s.CommittedOffsets("g-rc")
		return o["orders/1"] == 10 // past 3 records of the transaction and 2 after it; the COMMIT marker is at 10
	})
	doc, r := whyLiveDoc(t, flags, "g-rc")
	if r.Code != 0 || doc.Groups[0].Blocked != 0 {
		t.Fatalf("after the commit: exit %d\n%s", r.Code, r.Out)
	}
}

// The exporter's refresh names the same blocker: BLOCKED among the
// group's conditions and kaas_group_blocked_partitions by kind, once the
// committed offset stayed over two refreshes.
func TestExporterBlockedSandbox(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ot := startOpenTxn(t, ctx)
	plantSlot(t, ot.s, "pay-tx", fmt.Sprintf(`{"pid":%d,"epoch":%d,"state":"CompleteAbort"}`, ot.pid, ot.epoch+1))
	addr := startExporterInProcess(t, ot.s, exporterOptions{listen: "127.0.0.1:0", interval: 200 * time.Millisecond, window: time.Minute, stopAfter: time.Hour})
	want := []string{`kaas_group_blocked_partitions{group="g-rc",kind="abortedWithoutMarkers"} 1`, `kaas_group_condition{group="g-rc",condition="BLOCKED"} 1`}
	var page string
	waitFor(t, "BLOCKED on the exporter", 30*time.Second, func() bool {
		page = scrape(t, addr)
		return strings.Contains(page, want[0]) && strings.Contains(page, want[1])
	})
	if strings.Contains(page, `kaas_group_condition{group="g-rc",condition="STOP"}`) {
		t.Errorf("g-rc commits: no STOP expected\n%s", page)
	}
}
