package sandbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A request is answered from a listing begun after it arrived: requests
// arriving while kfake lists share the next listing, and a listing nobody
// waits for is never made.
func TestGroupListerSharesTheNextListing(t *testing.T) {
	t.Parallel()
	began := make(chan int, 4)
	release := make(chan struct{}, 4)
	n := 0
	l := &groupLister{fetch: func(ctx context.Context) (*kmsg.ListGroupsResponse, error) {
		n++ // only run() calls fetch, one listing at a time
		began <- n
		<-release
		if n == 3 {
			return nil, errors.New("kfake went away")
		}
		r := kmsg.NewPtrListGroupsResponse()
		r.ThrottleMillis = int32(n) // which listing answered
		return r, nil
	}}
	wait := func(c *listCall) *listCall {
		t.Helper()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Fatal("the listing never finished")
		}
		return c
	}

	first := l.join("kaas-0")
	if got := <-began; got != 1 {
		t.Fatalf("listing %d began first", got)
	}
	// Arriving while listing 1 runs: both wait for listing 2.
	second, third := l.join("kaas-1"), l.join("kaas-2")
	if second == first || third != second {
		t.Fatal("requests arriving during a listing must share the next one, not the running one")
	}
	release <- struct{}{}
	if r := wait(first).resp; r == nil || r.ThrottleMillis != 1 {
		t.Fatalf("first request answered from %+v, want listing 1", r)
	}
	if got := <-began; got != 2 {
		t.Fatalf("listing %d began second", got)
	}
	release <- struct{}{}
	if r := wait(second).resp; r == nil || r.ThrottleMillis != 2 {
		t.Fatalf("second request answered from %+v, want listing 2", r)
	}

	// A failed listing reaches its waiters as an error.
	failed := l.join("")
	<-began
	release <- struct{}{}
	if c := wait(failed); c.err == nil || c.resp != nil {
		t.Fatalf("failed listing: resp %v, err %v", c.resp, c.err)
	}
	// Nobody waiting: no further listing is made.
	l.mu.Lock()
	defer l.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for l.running {
		l.mu.Unlock()
		if time.Now().After(deadline) {
			l.mu.Lock()
			t.Fatal("the lister kept running with nobody waiting")
		}
		time.Sleep(time.Millisecond)
		l.mu.Lock()
	}
	if n != 3 {
		t.Errorf("%d listings for 3 rounds of requests", n)
	}
}

// A listing on an idle kfake begins once every running broker has a
// request waiting, without waiting out the gather time; short of that it
// waits for the rest of the round.
func TestGroupListerStartsWhenTheRoundIsIn(t *testing.T) {
	t.Parallel()
	began := make(chan struct{}, 2)
	l := &groupLister{
		fetch: func(ctx context.Context) (*kmsg.ListGroupsResponse, error) {
			began <- struct{}{}
			return kmsg.NewPtrListGroupsResponse(), nil
		},
		brokers: func() int { return 3 },
		gather:  time.Hour, // only a full round starts the listing
	}
	a := l.join("kaas-0")
	b := l.join("kaas-1")
	select {
	case <-began:
		t.Fatal("the listing began with two of three brokers asking")
	default:
	}
	c := l.join("kaas-2")
	select {
	case <-began:
	case <-time.After(10 * time.Second):
		t.Fatal("the listing did not begin once every broker asked")
	}
	if a != b || b != c {
		t.Fatal("one round got different listings")
	}
	<-c.done
}
