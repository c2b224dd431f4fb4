package wire

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// gatherCluster is a 3-broker kfake with committed groups g00..g(n-1).
func gatherCluster(t *testing.T, n int) (*kfake.Cluster, []string) {
	t.Helper()
	cl := newCluster(t, kfake.SeedTopics(2, "t"))
	adm := kadm.NewClient(mustKgo(t, cl.ListenAddrs()))
	var groups []string
	for i := 0; i < n; i++ {
		g := fmt.Sprintf("g%02d", i)
		groups = append(groups, g)
		commit(t, adm, g, "t", map[int32]int64{0: 1})
	}
	return cl, groups
}

func TestGatherGroupsOverlapsRounds(t *testing.T) {
	t.Parallel()
	cl, groups := gatherCluster(t, 12)
	liveMember(t, cl, "t")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := dial(t, settings(t, cl.ListenAddrs(), nil, nil))
	c.Counter.Reset()
	gg, err := c.GatherGroups(ctx, GroupRounds{Extra: []string{"only-on-volume", "g00"}, Describe: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(gg.Listings) != 3 {
		t.Fatalf("%d listings, want one per broker", len(gg.Listings))
	}
	listed := ListedBy(gg.Listings)
	for _, g := range append(groups, "live") {
		co := cl.CoordinatorFor(g)
		if got := listed[g]; len(got) != 1 || got[0] != co {
			t.Errorf("%s listed by %v, want its coordinator %d", g, got, co)
		}
		if c := gg.Coords()[g]; c.NodeID != co || c.Err != "" {
			t.Errorf("%s: coordinator %+v, want node %d", g, c, co)
		}
		d, ok := gg.Described()[g]
		if !ok || d.Coordinator != co || d.Err != "" {
			t.Errorf("%s: described %+v (present %v), want by node %d", g, d, ok, co)
		}
	}
	if c, ok := gg.Coords()["only-on-volume"]; !ok || c.NodeID != cl.CoordinatorFor("only-on-volume") {
		t.Errorf("an Extra group was not looked up: %+v", c)
	}
	if _, ok := gg.Described()["only-on-volume"]; ok {
		t.Error("an Extra group that no broker lists was described")
	}
	if d := gg.Described()["live"]; d.State != "Stable" || len(d.Members) != 1 {
		t.Errorf("live: %+v", d)
	}
	if d := gg.Described()["g00"]; d.State != "Empty" || len(d.Members) != 0 {
		t.Errorf("g00: %+v", d)
	}
	if n := c.Counter.ByAPI("ListGroups"); n != 3 {
		t.Errorf("%d ListGroups, want 3", n)
	}
	// The committed-only groups never joined (Empty, no protocol type):
	// they are not described; "live" is, once, on the broker that lists
	// it, and nothing again: every group was listed by its coordinator. One
	// lookup per broker plus one for Extra (g00 is asked once only).
	if n := c.Counter.ByAPI("DescribeGroups"); n != 1 {
		t.Errorf("%d DescribeGroups, want 1 (the joined group's coordinator)", n)
	}
	if n := c.Counter.ByAPI("FindCoordinator"); n > 4 {
		t.Errorf("%d FindCoordinator, want at most 4", n)
	}
	// The listing-ordered answers hold what the maps hold; g00, asked
	// with Extra, is not among them (Key "").
	for i, l := range gg.Listings {
		for j, g := range l.Groups {
			co := gg.ListedCoords[i][j]
			d, _ := gg.ListedDescription(i, j)
			switch {
			case g.Group == "g00":
				if co.Key != "" {
					t.Errorf("g00 (asked with Extra) has a listing-ordered answer %+v", co)
				}
			case co != gg.Coords()[g.Group]:
				t.Errorf("%s: listing-ordered coordinator %+v, Coords %+v", g.Group, co, gg.Coords()[g.Group])
			}
			if d.Group != g.Group || !reflect.DeepEqual(d, gg.Described()[g.Group]) {
				t.Errorf("%s: listing-ordered description %+v, Described %+v", g.Group, d, gg.Described()[g.Group])
			}
		}
	}
}

func TestGatherGroupsStaleListingDescribedOnCoordinator(t *testing.T) {
	t.Parallel()
	cl, _ := gatherCluster(t, 6)
	co := cl.CoordinatorFor("g00")
	stale := (co + 1) % 3
	ghost := ""
	for i := 0; ghost == ""; i++ {
		if g := fmt.Sprintf("ghost-%d", i); cl.CoordinatorFor(g) != stale {
			ghost = g
		}
	}
	// The stale broker lists g00 and ghost, and describes anything asked
	// as Stable with 7 members: that description must never be used.
	cl.ControlKey(int16(kmsg.ListGroups), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		if cl.CurrentNode() != stale {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
		for _, name := range []string{"g00", ghost} {
			g := kmsg.NewListGroupsResponseGroup()
			g.Group, g.ProtocolType, g.GroupState = name, "consumer", "Stable"
			resp.Groups = append(resp.Groups, g)
		}
		return resp, nil, true
	})
	cl.ControlKey(int16(kmsg.DescribeGroups), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		if cl.CurrentNode() != stale {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
		for _, name := range req.(*kmsg.DescribeGroupsRequest).Groups {
			g := kmsg.NewDescribeGroupsResponseGroup()
			g.Group, g.State, g.ProtocolType = name, "Stable", "consumer"
			g.Members = make([]kmsg.DescribeGroupsResponseGroupMember, 7)
			resp.Groups = append(resp.Groups, g)
		}
		return resp, nil, true
	})
	c := dial(t, settings(t, cl.ListenAddrs(), nil, nil))
	gg, err := c.GatherGroups(context.Background(), GroupRounds{Describe: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := gg.Described()["g00"]; d.Coordinator != co || d.State != "Empty" || len(d.Members) != 0 {
		t.Errorf("g00 (listed by its coordinator %d and stale on %d): %+v", co, stale, d)
	}
	// ghost is listed only by the stale broker: described on its
	// coordinator afterwards, which knows no such group.
	if d := gg.Described()[ghost]; d.Coordinator != cl.CoordinatorFor(ghost) || len(d.Members) == 7 {
		t.Errorf("%s: %+v, want described by node %d", ghost, d, cl.CoordinatorFor(ghost))
	}
}

func TestGatherGroupsListOnly(t *testing.T) {
	t.Parallel()
	cl, groups := gatherCluster(t, 4)
	c := dial(t, settings(t, cl.ListenAddrs(), nil, nil))
	c.Counter.Reset()
	gg, err := c.GatherGroups(context.Background(), GroupRounds{Extra: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if gg.Coords() != nil || gg.Described() != nil {
		t.Errorf("rounds not asked for were made: %+v", gg)
	}
	if n := len(ListedBy(gg.Listings)); n != len(groups) {
		t.Errorf("%d groups listed, want %d", n, len(groups))
	}
	if n := c.Counter.ByAPI("FindCoordinator") + c.Counter.ByAPI("DescribeGroups"); n != 0 {
		t.Errorf("%d lookups or describes, want none", n)
	}
}

// OnListed sees every broker's listing once, the gathering's own, and
// GatherGroups returns only after it returned.
func TestGatherGroupsOnListed(t *testing.T) {
	t.Parallel()
	cl, groups := gatherCluster(t, 6)
	c := dial(t, settings(t, cl.ListenAddrs(), nil, nil))
	calls, listed, returned := 0, 0, false
	var seen []BrokerGroups
	gg, err := c.GatherGroups(context.Background(), GroupRounds{Describe: true, OnListed: func(ls []BrokerGroups) {
		calls++
		seen = ls
		for _, l := range ls {
			listed += len(l.Groups)
		}
		returned = true
	}})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || !returned {
		t.Fatalf("OnListed called %d times (returned %v), want once before GatherGroups returns", calls, returned)
	}
	if len(seen) != 3 || &seen[0] != &gg.Listings[0] {
		t.Errorf("OnListed saw %d listings, not the gathering's 3", len(seen))
	}
	if listed != len(groups) {
		t.Errorf("OnListed saw %d listed groups, want %d", listed, len(groups))
	}
	if len(gg.Coords()) != len(groups) {
		t.Errorf("%d coordinators looked up, want %d", len(gg.Coords()), len(groups))
	}
}

func TestFindManyCoordinatorsChunks(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	c := dial(t, settings(t, cl.ListenAddrs(), nil, nil))
	keys := make([]string, 2*FindChunk+5)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	if _, err := c.Brokers(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Counter.Reset()
	m, err := c.FindManyCoordinators(context.Background(), keys, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != len(keys) {
		t.Fatalf("%d answers for %d keys", len(m), len(keys))
	}
	for _, k := range keys {
		if m[k].NodeID != cl.CoordinatorFor(k) {
			t.Fatalf("%s: node %d, want %d", k, m[k].NodeID, cl.CoordinatorFor(k))
		}
	}
	if n := c.Counter.ByAPI("FindCoordinator"); n != 3 {
		t.Errorf("%d FindCoordinator requests for %d keys, want 3", n, len(keys))
	}
}

// A group that never joined is answered without DescribeGroups; the answer
// must be what the coordinator says when asked.
func TestGatherGroupsNeverJoinedMatchesDescribe(t *testing.T) {
	t.Parallel()
	cl, groups := gatherCluster(t, 3)
	c := dial(t, settings(t, cl.ListenAddrs(), nil, nil))
	ctx := context.Background()
	gg, err := c.GatherGroups(ctx, GroupRounds{Describe: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range c.DescribeGroups(ctx, groups, gg.Coords()) {
		got := gg.Described()[d.Group]
		if got.Group != d.Group || got.Coordinator != d.Coordinator || got.State != d.State || got.ProtocolType != d.ProtocolType ||
			got.Protocol != d.Protocol || len(got.Members) != len(d.Members) || got.Err != d.Err {
			t.Errorf("%s: gathered %+v, described %+v", d.Group, got, d)
		}
	}
	for _, c := range []struct {
		g    ListedGroup
		want bool
	}{
		{ListedGroup{State: "Empty"}, true},
		{ListedGroup{State: "Empty", ProtocolType: "consumer"}, false}, // joined once: may keep a protocol
		{ListedGroup{State: "Empty", GroupType: "consumer"}, false},    // KIP-848 group
		{ListedGroup{State: "Stable"}, false},
		{ListedGroup{}, false}, // ListGroups below v4 has no state
	} {
		if got := neverJoined(c.g); got != c.want {
			t.Errorf("neverJoined(%+v) = %v", c.g, got)
		}
	}
}

// A gathering whose lookups and descriptions all came with the listings
// keys nothing until asked: a merge walking the listings never pays for
// the maps, and the maps, once asked for, hold every answer.
func TestGatherGroupsKeysAnswersOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	cl, groups := gatherCluster(t, 9)
	liveMember(t, cl, "t")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := dial(t, settings(t, cl.ListenAddrs(), nil, nil))
	gg, err := c.GatherGroups(ctx, GroupRounds{Describe: true})
	if err != nil {
		t.Fatal(err)
	}
	if gg.coords != nil || gg.desc != nil || gg.again != nil {
		t.Fatalf("keyed before use: coords %d, described %d, described again %d", len(gg.coords), len(gg.desc), len(gg.again))
	}
	coords, desc := gg.Coords(), gg.Described()
	for _, g := range append(groups, "live") {
		if co := coords[g]; co.NodeID != cl.CoordinatorFor(g) {
			t.Errorf("%s: coordinator %+v, want node %d", g, co, cl.CoordinatorFor(g))
		}
		if d, ok := desc[g]; !ok || d.Group != g || d.Coordinator != cl.CoordinatorFor(g) {
			t.Errorf("%s: described %+v", g, d)
		}
	}
	if d := desc["live"]; d.State != "Stable" || len(d.Members) != 1 {
		t.Errorf("live: %+v", d)
	}
}

// A broker's listed groups are looked up on the next broker, never on the
// one that listed them: every key is asked of a node other than its
// listing's, and the lookups spread over the brokers.
func TestGatherGroupsLooksUpOnTheNextBroker(t *testing.T) {
	t.Parallel()
	cl, groups := gatherCluster(t, 24)
	var mu sync.Mutex
	askedOn := map[string][]int32{} // key → nodes FindCoordinator was asked on
	cl.ControlKey(int16(kmsg.FindCoordinator), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		node := cl.CurrentNode()
		mu.Lock()
		defer mu.Unlock()
		for _, k := range req.(*kmsg.FindCoordinatorRequest).CoordinatorKeys {
			askedOn[k] = append(askedOn[k], node)
		}
		return nil, nil, false
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := dial(t, settings(t, cl.ListenAddrs(), nil, nil))
	gg, err := c.GatherGroups(ctx, GroupRounds{Coordinators: true})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	nodes := map[int32]bool{}
	for _, l := range gg.Listings {
		for _, g := range l.Groups {
			on := askedOn[g.Group]
			if len(on) != 1 {
				t.Errorf("%s (listed by %d) asked on %v, want once", g.Group, l.Broker.NodeID, on)
				continue
			}
			if on[0] == l.Broker.NodeID {
				t.Errorf("%s looked up on the broker that listed it (%d)", g.Group, on[0])
			}
			nodes[on[0]] = true
		}
	}
	if len(nodes) < 2 {
		t.Errorf("lookups of %d groups all went to %v", len(groups), nodes)
	}
	for _, g := range groups {
		if co := gg.Coords()[g]; co.NodeID != cl.CoordinatorFor(g) {
			t.Errorf("%s: coordinator %+v, want %d", g, co, cl.CoordinatorFor(g))
		}
	}
}
