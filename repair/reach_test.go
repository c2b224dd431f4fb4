package repair

import (
	"net"
	"slices"
	"testing"
	"time"
)

// A listening loopback port is reachable, a closed one is not, and the
// answer keeps the order given.
func TestReachableBrokers(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	up := ln.Addr().String()
	got := ReachableBrokers([]string{deadAddr, up, up}, 2*time.Second)
	if !slices.Equal(got, []string{up, up}) {
		t.Fatalf("reachable %v, want only %s twice", got, up)
	}
	if got := ReachableBrokers(nil, time.Second); len(got) != 0 {
		t.Fatalf("no brokers: %v", got)
	}
}
