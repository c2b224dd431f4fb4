package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestTransactionsFollowTheHashTier(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3, Topics: []Topic{{Name: "orders", Partitions: 2}}})
	const txn = "payments-tx-0"
	_, rt := volumeRouter(t, sb)
	coord := rt.Txn(txn).Coordinator

	// A transactional producer commits through the sandbox.
	cl := newClient(t, sb, kgo.TransactionalID(txn), kgo.TransactionTimeout(10*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("paid")}).FirstErr(); err != nil {
		t.Fatalf("transactional produce: %v", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit: %v", err)
	}

	// InitProducerID and EndTxn for that id on any other broker: NOT_COORDINATOR.
	for _, id := range sb.BrokerIDs() {
		ip := kmsg.NewPtrInitProducerIDRequest()
		tid := txn
		ip.TransactionalID = &tid
		ip.TransactionTimeoutMillis = 10000
		got := direct(t, sb, id, ip).(*kmsg.InitProducerIDResponse).ErrorCode
		if (id == coord) != (got == 0) || (id != coord && got != errNotCoordinator) {
			t.Errorf("InitProducerID(%s) on %s (coordinator %s): error %d", txn, id, coord, got)
		}
		if id == coord {
			continue
		}
		et := kmsg.NewPtrEndTxnRequest()
		et.TransactionalID = txn
		if got := direct(t, sb, id, et).(*kmsg.EndTxnResponse).ErrorCode; got != errNotCoordinator {
			t.Errorf("EndTxn on %s: error %d, want NOT_COORDINATOR", id, got)
		}
	}
}

func TestTransactionalOffsetsReachTheFileAtCommit(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3, Topics: []Topic{{Name: "orders", Partitions: 1}, {Name: "payments", Partitions: 1}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := sb.Produce(ctx, "orders", 1, 3); err != nil {
		t.Fatal(err)
	}
	opts := append([]kgo.Opt{kgo.SeedBrokers(sb.Bootstrap()...), kgo.TransactionalID("eos-tx"), kgo.TransactionTimeout(10 * time.Second),
		kgo.FetchIsolationLevel(kgo.ReadCommitted())}, ConsumerOpts("eos", "orders")...)
	sess, err := kgo.NewGroupTransactSession(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := sess.Begin(); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 3; {
		fs := sess.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of 3", n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			sess.Produce(ctx, &kgo.Record{Topic: "payments", Value: r.Value}, nil)
		})
	}
	if _, ok := sb.CommittedOffsets("eos"); ok {
		t.Fatal("offsets on the volume before the transaction committed")
	}
	committed, err := sess.End(ctx, kgo.TryCommit)
	if err != nil || !committed {
		t.Fatalf("End: committed %v, %v", committed, err)
	}
	f, ok := readOffsets(t, sb, "eos")
	if !ok || f.Offsets["orders/0"] != 3 {
		t.Fatalf("eos offsets file after the commit = %v (exists %v), want orders/0=3", f.Offsets, ok)
	}
}
