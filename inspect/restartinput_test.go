package inspect

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

func TestBuildRestartInput(t *testing.T) {
	t.Parallel()
	a := version(3, 12, "kaas-0", all3, map[string]string{"orders": "kaas-1"})
	a.Brokers = append(a.Brokers, volume.BrokerEntry{ID: "kaas-3", Health: "dead"})
	a.ConsumerGroups = append(a.ConsumerGroups, volume.GroupEntry{GroupID: "orders", Broker: "kaas-2"}) // a duplicate loses
	rt := a.Router()
	coord := func(g string) int32 {
		o, _ := BrokerOrdinal(rt.Group(g).Coordinator)
		return o
	}
	other := func(g string) int32 { return (coord(g) + 1) % 3 }
	live := []wire.BrokerGroups{
		{Broker: wire.Broker{NodeID: coord("busy")}, Groups: []wire.ListedGroup{{Group: "busy", State: "Stable"}}},
		{Broker: wire.Broker{NodeID: coord("empty")}, Groups: []wire.ListedGroup{{Group: "empty", State: "Empty"}}},
		{Broker: wire.Broker{NodeID: other("stale")}, Groups: []wire.ListedGroup{{Group: "stale", State: "Stable"}}},
		{Err: "broker 2: i/o timeout"},
	}
	base := RestartReading{Assignment: a, AssignmentPath: "/d/__cluster/assignment.json", Generation: "the Go generation",
		Gen: volume.GenGo, OffsetGroups: []string{"ledger"}, Placement: "rendezvous"}
	for _, tc := range []struct {
		name     string
		edit     func(r *RestartReading)
		groups   string // ID:loaded/members
		activity string
		failover FailoverModel
		notes    int
	}{
		{name: "offline", groups: "ledger:-- orders:LM", activity: "offline: groups with an explicit entry (active at v12)", failover: FailoverDrop, notes: 2},
		{name: "all active", edit: func(r *RestartReading) { r.AllActive = true }, groups: "ledger:LM orders:LM", activity: "assumed (--all-active)", failover: FailoverDrop, notes: 2},
		{name: "live", edit: func(r *RestartReading) { r.Live, r.LiveAsked = live, true },
			groups: "busy:LM empty:L- ledger:-- orders:-- stale:--", activity: "live: ListGroups on every broker (3 answered, 1 failed)", failover: FailoverDrop, notes: 3},
		{name: "--failover", edit: func(r *RestartReading) { r.FailoverFlag, r.Failover = "reload", FailoverReload },
			groups: "ledger:-- orders:LM", activity: "offline", failover: FailoverReload, notes: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := base
			if tc.edit != nil {
				tc.edit(&r)
			}
			in, src := BuildRestartInput(r)
			var gs []string
			for _, g := range in.Groups {
				gs = append(gs, fmt.Sprintf("%s:%s%s", g.ID, map[bool]string{true: "L", false: "-"}[g.Loaded], map[bool]string{true: "M", false: "-"}[g.Members]))
			}
			if got := strings.Join(gs, " "); got != tc.groups {
				t.Errorf("groups %s, want %s", got, tc.groups)
			}
			if !strings.HasPrefix(src.Activity, tc.activity) || in.Failover != tc.failover || len(src.Notes) != tc.notes {
				t.Errorf("activity %q failover %s notes %q", src.Activity, in.Failover, src.Notes)
			}
			if strings.Join(in.Brokers, ",") != "kaas-0,kaas-1,kaas-2" || in.Entries["orders"] != "kaas-1" || in.Controller != "kaas-0" || in.Version != 12 || in.Epoch != 3 {
				t.Errorf("input %+v", in)
			}
			if !strings.Contains(src.Notes[0], `kaas-3 is listed with health "dead"`) || src.Assignment != "/d/__cluster/assignment.json (v12, controller kaas-0, epoch 3)" {
				t.Errorf("sources %+v", src)
			}
			if (r.FailoverFlag != "") != (src.FailoverWhy == "--failover reload") {
				t.Errorf("failover why %q", src.FailoverWhy)
			}
		})
	}
}
