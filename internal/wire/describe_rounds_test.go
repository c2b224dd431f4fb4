package wire

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
)

func TestListedHolds(t *testing.T) {
	t.Parallel()
	listings := []BrokerGroups{
		{Broker: Broker{NodeID: 0}, Groups: []ListedGroup{{Group: "a"}, {Group: "c"}, {Group: "e"}}},
		{Broker: Broker{NodeID: 1}, Err: "broker kaas-1: ListGroups: timeout"},
		{Broker: Broker{NodeID: 2}, Groups: []ListedGroup{}},
	}
	want := map[int32][]string{0: {"a", "b", "e"}, 1: {"x"}, 2: {"y"}, 3: {"z"}}
	got := ListedHolds(want, listings)
	// Node 1's listing failed and node 3 was not asked: their groups are
	// unknown, not "not held".
	if fmt.Sprint(got) != "map[a:true b:false e:true y:false]" {
		t.Errorf("held %v", got)
	}
}

// TestDescribeRoundsOnKfake runs the fallback and the holding question
// against kfake, which answers OffsetFetch-all as Kafka does.
func TestDescribeRoundsOnKfake(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, kfake.SeedTopics(2, "orders"))
	brokers := cl.ListenAddrs()
	produce(t, brokers, "orders", map[int32]int{0: 30, 1: 10})
	adm := kadm.NewClient(mustKgo(t, brokers))
	commit(t, adm, "fallback", "orders", map[int32]int64{0: 12, 1: 10})
	commit(t, adm, "other", "orders", map[int32]int64{0: 1})
	c := dial(t, settings(t, brokers, nil, nil))
	ctx := context.Background()
	groups := []string{"fallback", "nothing"}
	coords, err := c.FindCoordinators(ctx, groups, false)
	if err != nil {
		t.Fatal(err)
	}
	ans := c.FetchAllWithLogs(ctx, groups, coords)
	if ans.LogsErr != nil {
		t.Fatal(ans.LogsErr)
	}
	fo := ans.Committed["fallback"].Offsets["orders"]
	if len(fo) != 2 || fo[0].Offset != 12 || fo[1].Offset != 10 || len(ans.Committed["nothing"].Offsets) != 0 {
		t.Errorf("committed %+v", ans.Committed)
	}
	if lo := ans.Logs["orders"]; lo[0].End != 30 || lo[1].End != 10 {
		t.Errorf("logs %+v", ans.Logs)
	}
	if ans := c.FetchAllWithLogs(ctx, nil, nil); ans.Committed != nil || ans.Logs != nil {
		t.Errorf("nothing asked, something answered: %+v", ans)
	}
	// Asked without listings, each coordinator answers for its groups.
	want := map[int32][]string{}
	for _, g := range []string{"fallback", "other", "never-committed"} {
		n := cl.CoordinatorFor(g)
		want[n] = append(want[n], g)
	}
	held := c.CoordinatorHolds(ctx, want, nil)
	if fmt.Sprint(held) != "map[fallback:true never-committed:false other:true]" {
		t.Errorf("asked: held %v", held)
	}
	ls, err := c.ListGroupsEveryBroker(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.Counter.Reset()
	if got := c.CoordinatorHolds(ctx, want, ls); fmt.Sprint(got) != fmt.Sprint(held) || c.Counter.Total() != 0 {
		t.Errorf("from listings: held %v after %d requests", got, c.Counter.Total())
	}
	if c.CoordinatorHolds(ctx, nil, ls) != nil {
		t.Error("nothing asked: want nil")
	}
}
