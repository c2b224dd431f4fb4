package wire

import (
	"context"
	"sync"
)

// Group gathering: the one place kaasctl asks the brokers which groups
// exist. groups list, groups describe --all/--regex, doctor, offsets reset
// --all-groups and the exporter ask for the rounds they need; inspect
// merges the answers with the volume.

// FindChunk is the most keys sent in one FindCoordinator request.
const FindChunk = 1000

// GroupRounds says what GatherGroups asks besides ListGroups (which goes to
// every broker, each answer kept apart).
type GroupRounds struct {
	// Coordinators asks FindCoordinator (batched, FindChunk keys a
	// request) for every listed group and every Extra one.
	Coordinators bool
	// Extra are groups known elsewhere (the volume) whose coordinators are
	// looked up too; they are asked while the brokers list.
	Extra []string
	// Describe asks DescribeGroups for every listed group on its
	// coordinator (it implies Coordinators).
	Describe bool
}

// GatheredGroups is what the brokers answered, raw.
type GatheredGroups struct {
	// Listings is every broker's ListGroups answer, in metadata order.
	Listings []BrokerGroups
	// Coords is FindCoordinator per listed and Extra group (nil unless
	// asked).
	Coords map[string]Coordinator
	// Described is each listed group as its coordinator (Coords) describes
	// it; a group whose lookup failed carries the lookup's error, as
	// DescribeGroups reports it (nil unless asked).
	Described map[string]DescribedGroup
	// ListedCoords[i][j] is FindCoordinator's answer for
	// Listings[i].Groups[j] when it was asked with that broker's listing
	// (Key "" otherwise: look it up in Coords); ListedDescribed[i][j] is
	// the group as broker i described it (Group "" when it was not asked).
	// They hold what Coords and Described hold, in listing order, so that
	// a merge walking the listings needs no lookup by name.
	ListedCoords    [][]Coordinator
	ListedDescribed [][]DescribedGroup
}

// GatherGroups lists the groups of every broker and makes the rounds r
// asks for. The rounds overlap: each broker's groups are looked up as soon
// as it has listed them, and described at once on the broker that listed
// them (on kaas a broker lists the groups it coordinates), while the Extra
// lookups run beside the listings. A description is kept only from the
// broker FindCoordinator names; a listed group whose coordinator did not
// list it is described on its coordinator afterwards. It fails only when
// the broker list, or a FindCoordinator request, fails.
func (c *Client) GatherGroups(ctx context.Context, r GroupRounds) (*GatheredGroups, error) {
	brokers, err := c.Brokers(ctx)
	if err != nil {
		return nil, err
	}
	if r.Describe {
		r.Coordinators = true
	}
	gr := newGatherRun(c, r, len(brokers))
	jobs := len(brokers)
	if r.Coordinators {
		jobs++
	}
	c.forEach(jobs, func(i int) {
		if i == len(brokers) {
			gr.lookup(ctx, dedupe(r.Extra))
			return
		}
		gr.list(ctx, i, brokers[i])
	})
	if gr.err != nil {
		return nil, gr.err
	}
	out := &GatheredGroups{Listings: gr.listings}
	if !r.Coordinators {
		return out, nil
	}
	gr.coords = coordinatorMap(gr.found)
	out.Coords, out.ListedCoords = gr.coords, gr.listedCoords
	if r.Describe {
		out.Described, out.ListedDescribed = gr.described(ctx), gr.spec
	}
	return out, nil
}

// gatherRun is one GatherGroups in flight.
type gatherRun struct {
	c        *Client
	r        GroupRounds
	listings []BrokerGroups
	// spec[i][j] is listings[i].Groups[j] as broker i describes it (Group
	// "" when it was not asked).
	spec [][]DescribedGroup

	// extra is r.Extra as a set: a listed group in it is looked up with
	// the Extra ones, not again (read-only once built).
	extra map[string]bool

	// listedCoords[i] is FindCoordinator's answers for listings[i], in
	// its order (written only by broker i's goroutine).
	listedCoords [][]Coordinator

	mu     sync.Mutex
	found  [][]Coordinator        // FindCoordinator's answers, a list a request
	err    error                  // the first FindCoordinator failure
	coords map[string]Coordinator // found, keyed once every lookup is done
}

func newGatherRun(c *Client, r GroupRounds, brokers int) *gatherRun {
	gr := &gatherRun{c: c, r: r, listings: make([]BrokerGroups, brokers), spec: make([][]DescribedGroup, brokers), listedCoords: make([][]Coordinator, brokers)}
	if r.Coordinators && len(r.Extra) > 0 {
		gr.extra = make(map[string]bool, len(r.Extra))
		for _, g := range r.Extra {
			gr.extra[g] = true
		}
	}
	return gr
}

// list asks broker i for its groups, then (as asked) looks them up and
// describes them on it, both at once.
func (gr *gatherRun) list(ctx context.Context, i int, b Broker) {
	gr.listings[i] = gr.c.listGroups(ctx, b)
	if !gr.r.Coordinators || len(gr.listings[i].Groups) == 0 {
		return
	}
	names := make([]string, len(gr.listings[i].Groups))
	for j, g := range gr.listings[i].Groups {
		names[j] = g.Group
	}
	if !gr.r.Describe {
		gr.listedCoords[i] = gr.lookupListed(ctx, names)
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		gr.listedCoords[i] = gr.lookupListed(ctx, names)
	}()
	gr.spec[i] = gr.c.describeListed(ctx, b.NodeID, gr.listings[i].Groups)
	wg.Wait()
}

// neverJoined reports whether a listed group has had no member since it was
// created: Empty with no protocol type (kaas sets the type from the first
// JoinGroup and keeps it; Kafka rejects a join without one). Describing it
// would say Empty, no protocol type, no protocol, no members, so it is not
// asked: a 10,000-group kaas whose groups were committed by tools answers
// without describing them.
func neverJoined(g ListedGroup) bool {
	return g.State == "Empty" && g.ProtocolType == "" && g.GroupType != "consumer"
}

// describeListed describes a broker's listed groups on it, in listing
// order; a group that never joined is answered without asking.
func (c *Client) describeListed(ctx context.Context, node int32, listed []ListedGroup) []DescribedGroup {
	out := make([]DescribedGroup, len(listed))
	var ask []string
	for j, g := range listed {
		if neverJoined(g) {
			out[j] = DescribedGroup{Group: g.Group, Coordinator: node, State: g.State, Members: []Member{}}
		} else {
			ask = append(ask, g.Group)
		}
	}
	if len(ask) == 0 {
		return out
	}
	got := c.describeOn(ctx, node, ask)
	for j, g := range listed {
		if d, ok := got[g.Group]; ok {
			out[j] = d
		}
	}
	return out
}

// lookup asks FindCoordinator for keys, in chunks of FindChunk, and
// returns the answers in request order (nil when a request failed).
func (gr *gatherRun) lookup(ctx context.Context, keys []string) [][]Coordinator {
	lists, err := gr.c.findManyLists(ctx, keys, false)
	gr.mu.Lock()
	defer gr.mu.Unlock()
	if err != nil {
		if gr.err == nil {
			gr.err = err
		}
		return nil
	}
	gr.found = append(gr.found, lists...)
	return lists
}

// lookupListed looks up a broker's listed groups but those asked with
// Extra, and returns the answers aligned with names (Key "" where a name
// was asked with Extra, or an answer did not come back in request order).
// A group two brokers list is asked twice (rare: a stale listing); both
// answers are the same question's.
func (gr *gatherRun) lookupListed(ctx context.Context, names []string) []Coordinator {
	todo := names
	if gr.extra != nil {
		todo = make([]string, 0, len(names))
		for _, k := range names {
			if !gr.extra[k] {
				todo = append(todo, k)
			}
		}
	}
	lists := gr.lookup(ctx, todo)
	if lists == nil {
		return nil
	}
	out := make([]Coordinator, len(names))
	j := 0
	for _, l := range lists {
		for _, co := range l {
			for j < len(names) && names[j] != co.Key {
				j++ // asked with Extra, or answered out of order
			}
			if j == len(names) {
				return out
			}
			out[j] = co
			j++
		}
	}
	return out
}

// listedCoord is broker i's j-th listed group's coordinator, from the
// aligned answers, else by name.
func (gr *gatherRun) listedCoord(i, j int, group string) Coordinator {
	if l := gr.listedCoords[i]; j < len(l) && l[j].Key == group {
		return l[j]
	}
	return gr.coords[group]
}

// described keeps each listed group's description from its coordinator:
// the one made on the listing broker when that is the coordinator, else
// one asked of the coordinator now.
func (gr *gatherRun) described(ctx context.Context) map[string]DescribedGroup {
	n := 0
	for _, l := range gr.listings {
		n += len(l.Groups)
	}
	out := make(map[string]DescribedGroup, n)
	var elsewhere []string // listed by a broker that is not the coordinator
	for i, l := range gr.listings {
		for j, g := range l.Groups {
			co := gr.listedCoord(i, j, g.Group)
			switch {
			case co.Err != "" || co.NodeID < 0:
				out[g.Group] = DescribedGroup{Group: g.Group, Coordinator: co.NodeID, Members: []Member{}, Code: co.Code, Err: "coordinator lookup: " + co.Err}
			case co.NodeID == l.Broker.NodeID && gr.spec[i][j].Group != "":
				out[g.Group] = gr.spec[i][j]
			default:
				elsewhere = append(elsewhere, g.Group)
			}
		}
	}
	var again []string
	for _, g := range dedupe(elsewhere) {
		if _, done := out[g]; !done {
			again = append(again, g)
		}
	}
	for _, d := range gr.c.DescribeGroups(ctx, again, gr.coords) {
		out[d.Group] = d
	}
	return out
}

// FindManyCoordinators is FindCoordinators for any number of keys: requests
// of at most FindChunk keys, DefaultConcurrency (or Concurrency) in flight.
// It fails with the first request that fails.
func (c *Client) FindManyCoordinators(ctx context.Context, keys []string, txn bool) (map[string]Coordinator, error) {
	lists, err := c.findManyLists(ctx, keys, txn)
	if err != nil {
		return nil, err
	}
	return coordinatorMap(lists), nil
}

// findManyLists is FindManyCoordinators' answers, one list a request.
func (c *Client) findManyLists(ctx context.Context, keys []string, txn bool) ([][]Coordinator, error) {
	var chunks [][]string
	for len(keys) > 0 {
		n := min(FindChunk, len(keys))
		chunks = append(chunks, keys[:n])
		keys = keys[n:]
	}
	out := make([][]Coordinator, len(chunks))
	errs := make([]error, len(chunks))
	if len(chunks) == 1 {
		out[0], errs[0] = c.findCoordinatorList(ctx, chunks[0], txn)
	} else {
		c.forEach(len(chunks), func(i int) {
			out[i], errs[i] = c.findCoordinatorList(ctx, chunks[i], txn)
		})
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// coordinatorMap keys the answers of many requests by key.
func coordinatorMap(lists [][]Coordinator) map[string]Coordinator {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	out := make(map[string]Coordinator, n)
	for _, l := range lists {
		for _, co := range l {
			out[co.Key] = co
		}
	}
	return out
}
