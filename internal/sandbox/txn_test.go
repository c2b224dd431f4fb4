package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestTransactionsFollowTheHashTier(t *testing.T) {
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
