package sandbox

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListGroups on the sandbox: every broker lists the groups it coordinates,
// and all of them are one kfake underneath, which lists every group each
// time it is asked (one at a time, hashing every group name). A client
// listing N groups asks every broker at once, so kfake would list them
// once per broker. Instead the requests that arrive while kfake is
// listing wait for the next listing together, and each broker answers
// from it: a listing begun after every request it serves arrived, as if
// each had been relayed alone, at a third of the cost on three brokers.

// listGather is the longest a listing waits, when kfake is idle, for the
// other requests of the same round: a client asks every broker at once,
// and its requests arrive within a millisecond or so of each other (each
// on its own new connection). It stops waiting as soon as every running
// broker has a request waiting.
const listGather = 2 * time.Millisecond

// listTimeout bounds one kfake listing.
const listTimeout = 10 * time.Second

// groupLister shares kfake's listings among concurrent requests.
type groupLister struct {
	fetch func(context.Context) (*kmsg.ListGroupsResponse, error)
	// brokers is how many brokers a client's round asks (the running
	// ones); gather is the longest a listing waits for them (listGather
	// when zero).
	brokers func() int
	gather  time.Duration

	mu      sync.Mutex
	next    *listCall     // the listing requests arriving now will get (not begun)
	running bool          // a goroutine is making listings
	arrived chan struct{} // a request joined (one pending signal at most)
	// last is the latest listing that succeeded, finished at lastAt after
	// lastTook (latest).
	last     *kmsg.ListGroupsResponse
	lastAt   time.Time
	lastTook time.Duration
}

// latest is the latest listing that succeeded (nil when none), when it
// finished and how long kfake took.
func (l *groupLister) latest() (*kmsg.ListGroupsResponse, time.Time, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last, l.lastAt, l.lastTook
}

// listCall is one kfake listing and who was waiting for it.
type listCall struct {
	done chan struct{}
	resp *kmsg.ListGroupsResponse // nil when err is set
	err  error
	// askers are the brokers whose requests wait for it ("" for the
	// sandbox's own looks).
	askers map[string]bool

	// owners[i] is the broker coordinating resp.Groups[i], routed once
	// for every broker's answer (ownersOnce); counts is how many each has.
	ownersOnce sync.Once
	owners     []string
	counts     map[string]int
}

// ownersBy routes every listed group once, by rs.
func (c *listCall) ownersBy(rs *routeState) ([]string, map[string]int) {
	c.ownersOnce.Do(func() {
		c.owners = make([]string, len(c.resp.Groups))
		c.counts = map[string]int{}
		for i, g := range c.resp.Groups {
			c.owners[i] = rs.group(g.Group)
			c.counts[c.owners[i]]++
		}
	})
	return c.owners, c.counts
}

// join returns the listing a request to broker asker ("": the sandbox's
// own) arriving now is answered from: one that has not begun yet.
func (l *groupLister) join(asker string) *listCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.next == nil {
		l.next = &listCall{done: make(chan struct{}), askers: map[string]bool{}}
	}
	c := l.next
	c.askers[asker] = true
	if l.arrived == nil {
		l.arrived = make(chan struct{}, 1)
	}
	select {
	case l.arrived <- struct{}{}:
	default:
	}
	if !l.running {
		l.running = true
		go l.run()
	}
	return c
}

// waitRound holds a listing about to begin on an idle kfake until every
// running broker has a request waiting for it, or the gather time is up.
func (l *groupLister) waitRound() {
	d := l.gather
	if d == 0 {
		d = listGather
	}
	t := time.NewTimer(d)
	defer t.Stop()
	want := -1
	if l.brokers != nil {
		want = l.brokers()
	}
	for {
		l.mu.Lock()
		full := want >= 0 && l.next != nil && len(l.next.askers) >= want
		arrived := l.arrived
		l.mu.Unlock()
		if full {
			return
		}
		select {
		case <-arrived:
		case <-t.C:
			return
		}
	}
}

// run makes listings while requests wait for one.
func (l *groupLister) run() {
	l.waitRound()
	for {
		l.mu.Lock()
		c := l.next
		l.next = nil
		if c == nil {
			l.running = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
		began := time.Now()
		c.resp, c.err = l.fetch(ctx)
		cancel()
		if c.err == nil {
			l.mu.Lock()
			l.last, l.lastAt, l.lastTook = c.resp, time.Now(), time.Since(began)
			l.mu.Unlock()
		}
		close(c.done)
	}
}

// fetchKfakeGroups lists kfake's groups, unfiltered, at the newest version
// kfake serves (states and types are filtered, and the answer sorted, per
// broker). It asks kfake's one listener directly: a sharded request would
// copy the answer to merge it with nothing.
func (s *Sandbox) fetchKfakeGroups(ctx context.Context) (*kmsg.ListGroupsResponse, error) {
	resp, err := s.admin.SeedBrokers()[0].Request(ctx, kmsg.NewPtrListGroupsRequest())
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.ListGroupsResponse), nil
}

// listGroups answers a ListGroups to broker b from a shared kfake listing.
func (s *Sandbox) listGroups(b *broker, f *frame) *item {
	req, err := f.decode()
	if err != nil {
		return relay(f) // kfake answers or drops it, as it would
	}
	lreq := req.(*kmsg.ListGroupsRequest)
	call := s.lister.join(b.id)
	return &item{f: f, later: func(dead <-chan struct{}) []byte {
		select {
		case <-call.done:
		case <-dead:
			return nil
		}
		if call.err != nil {
			return nil // as when the relay to kfake fails: the connection closes
		}
		return f.encodeResponse(s.brokerListing(b, lreq, call))
	}}
}

// brokerListing is b's answer to lreq from kfake's listing: the groups b
// coordinates and has loaded, filtered by the request's states and types
// as kfake filters them, plus the stale listings the sandbox keeps.
func (s *Sandbox) brokerListing(b *broker, lreq *kmsg.ListGroupsRequest, call *listCall) *kmsg.ListGroupsResponse {
	all := call.resp
	r := lreq.ResponseKind().(*kmsg.ListGroupsResponse)
	r.ThrottleMillis, r.ErrorCode = all.ThrottleMillis, all.ErrorCode
	owners, counts := call.ownersBy(s.route.Load())
	r.Groups = make([]kmsg.ListGroupsResponseGroup, 0, counts[b.id])
	checkUnloaded := !s.unloaded.empty()
	for i := range all.Groups {
		g := &all.Groups[i]
		if owners[i] != b.id {
			continue
		}
		if len(lreq.StatesFilter) > 0 && !slices.Contains(lreq.StatesFilter, g.GroupState) {
			continue
		}
		if len(lreq.TypesFilter) > 0 && !slices.Contains(lreq.TypesFilter, g.GroupType) {
			continue
		}
		if !checkUnloaded || !s.unloaded.has(g.Group) {
			r.Groups = append(r.Groups, *g)
		}
	}
	s.addStaleListings(b, lreq, r) // stale.go (off by default)
	sortByGroup(r.Groups)
	return r
}

// sortByGroup sorts a broker's answer by group id, as kaas's Go broker
// answers (coordinator.go, ListGroups): each broker sorts its own share,
// all at once. The names are sorted with their positions beside them (a
// group is five fields), then the groups moved once.
func sortByGroup(gs []kmsg.ListGroupsResponseGroup) {
	type keyed struct {
		name string
		at   int
	}
	order := make([]keyed, len(gs))
	for i := range gs {
		order[i] = keyed{gs[i].Group, i}
	}
	slices.SortFunc(order, func(a, b keyed) int { return strings.Compare(a.name, b.name) })
	sorted := make([]kmsg.ListGroupsResponseGroup, len(gs))
	for i, k := range order {
		sorted[i] = gs[k.at]
	}
	copy(gs, sorted)
}
