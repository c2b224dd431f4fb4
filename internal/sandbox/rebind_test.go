package sandbox

import (
	"net"
	"testing"
	"time"
)

// A broker started again while another socket holds its old port waits
// for the port instead of failing (kaas's broker keeps its address).
func TestStartBrokerWaitsForItsPort(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 2})
	addr, ok := sb.Addr("kaas-1")
	if !ok {
		t.Fatal("no address for kaas-1")
	}
	if _, err := sb.StopBroker("kaas-1"); err != nil {
		t.Fatal(err)
	}
	holder, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("hold %s: %v", addr, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := sb.StartBroker("kaas-1")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("StartBroker returned while %s was held: %v", addr, err)
	case <-time.After(300 * time.Millisecond):
	}
	holder.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("StartBroker after the port was released: %v", err)
		}
	case <-time.After(rebindWait + 5*time.Second):
		t.Fatal("StartBroker did not return after the port was released")
	}
	if got, _ := sb.Addr("kaas-1"); got != addr {
		t.Errorf("kaas-1 came back on %s, want its old address %s", got, addr)
	}
}
