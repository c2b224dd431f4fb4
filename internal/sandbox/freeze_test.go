package sandbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A frozen broker accepts a connection and answers nothing until it is
// thawed; then it answers what it read meanwhile. It stays listed alive.
func TestFreezeBroker(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 2, Topics: []Topic{{Name: "orders", Partitions: 1}}})
	id := sb.BrokerIDs()[1]
	addr, _ := sb.Addr(id)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ask := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err := cl.Broker(1).Request(ctx, kmsg.NewPtrApiVersionsRequest())
		return err
	}
	if err := ask(10 * time.Second); err != nil {
		t.Fatalf("before the freeze: %v", err)
	}
	if out, err := sb.Command("freeze " + id); err != nil || !isFrozen(sb, id) {
		t.Fatalf("freeze: %q %v", out, err)
	}
	if err := ask(300 * time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a frozen broker answered: %v", err)
	}
	alive := false
	for _, b := range sb.Assignment().Brokers {
		alive = alive || b.ID == id && b.Health == "alive"
	}
	if !alive {
		t.Errorf("a frozen broker left assignment.json: %+v", sb.Assignment().Brokers)
	}
	done := make(chan error, 1)
	go func() { done <- ask(10 * time.Second) }()
	if out, err := sb.Command("thaw " + id); err != nil || isFrozen(sb, id) {
		t.Fatalf("thaw: %q %v", out, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("after the thaw: %v", err)
	}
	if _, err := sb.Command("freeze kaas-99"); err == nil {
		t.Error("freeze of an unknown broker accepted")
	}
}

// isFrozen reports whether broker id is frozen.
func isFrozen(s *Sandbox, id string) bool {
	_, ok := s.frozen.Load(id)
	return ok
}
