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
	// OnListed, when set, is called once every broker's listing is in,
	// with the listings (Listings, which it must not modify), while the
	// lookups and descriptions are still in flight: work that needs only
	// the listings is done by the time they come back. GatherGroups
	// returns after it returns.
	OnListed func([]BrokerGroups)
}

// GatheredGroups is what the brokers answered, raw.
type GatheredGroups struct {
	// Listings is every broker's ListGroups answer, in metadata order.
	Listings []BrokerGroups
	// ListedCoords[i][j] is FindCoordinator's answer for
	// Listings[i].Groups[j] when it was asked with that broker's listing
	// (Key "" otherwise: look it up in Coords); ListedDescribed[i][j] is
	// the group as broker i described it (Group "" when it was not asked,
	// and for a group that never joined, which is not asked either: read
	// the descriptions through ListedDescription). ListedDescribed[i] is
	// nil when none of broker i's groups was asked.
	// They hold what Coords and Described hold, in listing order, so that
	// a merge walking the listings needs no lookup by name.
	ListedCoords    [][]Coordinator
	ListedDescribed [][]DescribedGroup

	asked     bool                      // Coordinators was asked
	described bool                      // Describe was asked
	listedAsk bool                      // the listings were described as listed (GatherGroups)
	lookups   [][]Coordinator           // FindCoordinator's answers, a list a request
	again     map[string]DescribedGroup // listed groups described on their coordinator afterwards

	coordsOnce sync.Once
	coords     map[string]Coordinator
	descOnce   sync.Once
	desc       map[string]DescribedGroup
}

// NewGatheredGroups is a gathering from answers already keyed by group
// (coords and described may be nil: not asked).
func NewGatheredGroups(listings []BrokerGroups, coords map[string]Coordinator, described map[string]DescribedGroup) *GatheredGroups {
	g := &GatheredGroups{Listings: listings, asked: coords != nil, described: described != nil}
	g.coordsOnce.Do(func() { g.coords = coords })
	g.descOnce.Do(func() { g.desc = described })
	return g
}

// Coords is FindCoordinator's answer per listed and Extra group (nil unless
// asked), keyed on first use: a merge that walks the listings with
// ListedCoords never pays for the map.
func (g *GatheredGroups) Coords() map[string]Coordinator {
	g.coordsOnce.Do(func() {
		if g.asked {
			g.coords = coordinatorMap(g.lookups)
		}
	})
	return g.coords
}

// Described is each listed group as its coordinator (Coords) describes it;
// a group whose lookup failed carries the lookup's error, as DescribeGroups
// reports it (nil unless asked). Keyed on first use, as Coords.
func (g *GatheredGroups) Described() map[string]DescribedGroup {
	g.descOnce.Do(func() {
		if g.described {
			g.desc = g.describedMap()
		}
	})
	return g.desc
}

// listedCoord is broker i's j-th listed group's coordinator, from the
// aligned answers, else by name.
func (g *GatheredGroups) listedCoord(i, j int, group string) Coordinator {
	if l := g.ListedCoords; i < len(l) && j < len(l[i]) && l[i][j].Key == group {
		return l[i][j]
	}
	return g.Coords()[group]
}

// describedMap keys the descriptions: the ones the listings hold
// (listedAnswer), then the ones asked of the coordinators afterwards
// (again).
func (g *GatheredGroups) describedMap() map[string]DescribedGroup {
	n := 0
	for _, l := range g.Listings {
		n += len(l.Groups)
	}
	out := make(map[string]DescribedGroup, n)
	for i, l := range g.Listings {
		for j := range l.Groups {
			if d, ok := g.listedAnswer(i, j); ok {
				out[d.Group] = d
			}
		}
	}
	for k, d := range g.again {
		out[k] = d
	}
	return out
}

// listedAnswer is what the gathering already says of broker i's j-th
// listed group: its lookup's failure, or the description its coordinator
// made as it listed it; false when neither (it is described again, on
// its coordinator).
func (g *GatheredGroups) listedAnswer(i, j int) (DescribedGroup, bool) {
	l := g.Listings[i]
	group := l.Groups[j].Group
	co := g.listedCoord(i, j, group)
	switch {
	case co.Err != "" || co.NodeID < 0:
		return lookupFailed(group, co), true
	case co.NodeID == l.Broker.NodeID:
		return g.ListedDescription(i, j)
	}
	return DescribedGroup{}, false
}

// ListedDescription is broker i's j-th listed group as broker i described
// it when it listed it: its DescribeGroups answer, or, for a group that
// never joined (not asked), what that answer would be, made from the
// listing. False when it was not described as listed.
func (g *GatheredGroups) ListedDescription(i, j int) (DescribedGroup, bool) {
	if i < len(g.ListedDescribed) && j < len(g.ListedDescribed[i]) && g.ListedDescribed[i][j].Group != "" {
		return g.ListedDescribed[i][j], true
	}
	if g.listedAsk && i < len(g.Listings) && j < len(g.Listings[i].Groups) && neverJoined(g.Listings[i].Groups[j]) {
		return neverJoinedAnswer(g.Listings[i].Groups[j], g.Listings[i].Broker.NodeID), true
	}
	return DescribedGroup{}, false
}

func lookupFailed(group string, co Coordinator) DescribedGroup {
	return DescribedGroup{Group: group, Coordinator: co.NodeID, Members: []Member{}, Code: co.Code, Err: "coordinator lookup: " + co.Err}
}

// GatherGroups lists the groups of every broker and makes the rounds r
// asks for. The rounds overlap: each broker's groups are looked up as soon
// as it has listed them (on the next broker in metadata order, see list),
// and described at once on the broker that listed them (on kaas a broker
// lists the groups it coordinates), while the Extra lookups run beside the
// listings (on the seeds). A description is kept only from the
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
	var hook sync.WaitGroup
	if r.OnListed != nil {
		hook.Go(func() {
			gr.listed.Wait()
			r.OnListed(gr.listings)
		})
	}
	c.forEach(jobs, func(i int) {
		if i == len(brokers) {
			gr.lookup(ctx, dedupe(r.Extra), -1)
			return
		}
		gr.list(ctx, i, brokers[i], brokers[(i+1)%len(brokers)].NodeID)
	})
	hook.Wait()
	if gr.err != nil {
		return nil, gr.err
	}
	out := &GatheredGroups{Listings: gr.listings}
	if !r.Coordinators {
		return out, nil
	}
	out.asked, out.lookups, out.ListedCoords = true, gr.found, gr.listedCoords
	if r.Describe {
		out.described, out.listedAsk, out.ListedDescribed = true, true, gr.spec
		out.again = gr.describeElsewhere(ctx, out)
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
	// listed is done once every listing is in.
	listed sync.WaitGroup

	mu    sync.Mutex
	found [][]Coordinator // FindCoordinator's answers, a list a request
	err   error           // the first FindCoordinator failure
}

func newGatherRun(c *Client, r GroupRounds, brokers int) *gatherRun {
	gr := &gatherRun{c: c, r: r, listings: make([]BrokerGroups, brokers), spec: make([][]DescribedGroup, brokers), listedCoords: make([][]Coordinator, brokers)}
	gr.listed.Add(brokers)
	if r.Coordinators && len(r.Extra) > 0 {
		gr.extra = make(map[string]bool, len(r.Extra))
		for _, g := range r.Extra {
			gr.extra[g] = true
		}
	}
	return gr
}

// list asks broker i for its groups, then (as asked) looks them up and
// describes them on it, both at once. The lookups go to the next broker,
// ask (the seeds if it does not answer): never to the broker that listed
// the groups, whose view of the assignment could be the stale one that
// made it list them, and spread over the cluster, which answers them in
// parallel (a broker answers one connection's requests one at a time).
func (gr *gatherRun) list(ctx context.Context, i int, b Broker, ask int32) {
	gr.listings[i] = gr.c.listGroups(ctx, b)
	gr.listed.Done()
	if !gr.r.Coordinators || len(gr.listings[i].Groups) == 0 {
		return
	}
	names := make([]string, len(gr.listings[i].Groups))
	for j, g := range gr.listings[i].Groups {
		names[j] = g.Group
	}
	if !gr.r.Describe {
		gr.listedCoords[i] = gr.lookupListed(ctx, names, ask)
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		gr.listedCoords[i] = gr.lookupListed(ctx, names, ask)
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

// neverJoinedAnswer is what describing a group that never joined says: its
// listed state, no protocol, no members.
func neverJoinedAnswer(g ListedGroup, node int32) DescribedGroup {
	return DescribedGroup{Group: g.Group, Coordinator: node, State: g.State, Members: []Member{}}
}

// describeListed describes a broker's listed groups on it, in listing
// order (nil when none needs asking). A group that never joined is not
// asked, and its entry is left empty: ListedDescription makes its answer
// from the listing (100,000 groups committed by tools cost no 12 MB of
// descriptions).
func (c *Client) describeListed(ctx context.Context, node int32, listed []ListedGroup) []DescribedGroup {
	var ask []string
	for _, g := range listed {
		if !neverJoined(g) {
			ask = append(ask, g.Group)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	out := make([]DescribedGroup, len(listed))
	got := c.describeOn(ctx, node, ask)
	for j, g := range listed {
		if d, ok := got[g.Group]; ok {
			out[j] = d
		}
	}
	return out
}

// lookup asks FindCoordinator for keys, in chunks of FindChunk, of node
// (the seeds when it does not answer, or when node is negative), and
// returns the answers in request order (nil when a request failed).
func (gr *gatherRun) lookup(ctx context.Context, keys []string, node int32) [][]Coordinator {
	lists, err := gr.c.findManyListsOn(ctx, keys, false, node)
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

// lookupListed looks up, on broker ask, a broker's listed groups but those asked with
// Extra, and returns the answers aligned with names (Key "" where a name
// was asked with Extra, or an answer did not come back in request order).
// A group two brokers list is asked twice (rare: a stale listing); both
// answers are the same question's.
func (gr *gatherRun) lookupListed(ctx context.Context, names []string, ask int32) []Coordinator {
	todo := names
	if gr.extra != nil {
		todo = make([]string, 0, len(names))
		for _, k := range names {
			if !gr.extra[k] {
				todo = append(todo, k)
			}
		}
	}
	lists := gr.lookup(ctx, todo, ask)
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

// describeElsewhere describes, on its coordinator, each listed group that
// its coordinator did not describe when it listed it (a listing by a broker
// that does not coordinate the group): the only descriptions the listings
// did not already bring. Failed lookups are left to Described.
func (gr *gatherRun) describeElsewhere(ctx context.Context, g *GatheredGroups) map[string]DescribedGroup {
	answered := func(i, j int) bool {
		_, ok := g.listedAnswer(i, j)
		return ok
	}
	var elsewhere []string
	for i, l := range g.Listings {
		for j, lg := range l.Groups {
			if !answered(i, j) {
				elsewhere = append(elsewhere, lg.Group)
			}
		}
	}
	if len(elsewhere) == 0 {
		return nil
	}
	// A group two brokers list may be answered by the other listing.
	want := make(map[string]bool, len(elsewhere))
	for _, name := range elsewhere {
		want[name] = true
	}
	for i, l := range g.Listings {
		for j, lg := range l.Groups {
			if want[lg.Group] && answered(i, j) {
				delete(want, lg.Group)
			}
		}
	}
	var again []string
	for _, name := range dedupe(elsewhere) {
		if want[name] {
			again = append(again, name)
		}
	}
	if len(again) == 0 {
		return nil
	}
	out := make(map[string]DescribedGroup, len(again))
	for _, d := range gr.c.DescribeGroups(ctx, again, g.Coords()) {
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
	return c.findManyListsOn(ctx, keys, txn, -1)
}

// findManyListsOn is findManyLists asking node first (findCoordinatorListOn).
func (c *Client) findManyListsOn(ctx context.Context, keys []string, txn bool, node int32) ([][]Coordinator, error) {
	var chunks [][]string
	for len(keys) > 0 {
		n := min(FindChunk, len(keys))
		chunks = append(chunks, keys[:n])
		keys = keys[n:]
	}
	out := make([][]Coordinator, len(chunks))
	errs := make([]error, len(chunks))
	if len(chunks) == 1 {
		out[0], errs[0] = c.findCoordinatorListOn(ctx, chunks[0], txn, node)
	} else {
		c.forEach(len(chunks), func(i int) {
			out[i], errs[i] = c.findCoordinatorListOn(ctx, chunks[i], txn, node)
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
