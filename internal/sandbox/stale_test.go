package sandbox

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// listOn sends ListGroups to one broker and returns the group ids.
func listOn(t *testing.T, sb *Sandbox, id string) []string {
	t.Helper()
	addr, _ := sb.Addr(id)
	cl := newClient(t, sb, kgo.SeedBrokers(addr))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrListGroupsRequest().RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range resp.Groups {
		out = append(out, g.Group)
	}
	slices.Sort(out)
	return out
}

// With stale emulation on, a group that moves away from a running broker
// stays in that broker's ListGroups answer until the broker restarts; with
// it off (the default) ListGroups lists only coordinated groups.
func TestStaleGroupsAfterMove(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3, Topics: []Topic{{Name: "orders", Partitions: 1}}})
	sb.EmulateStaleGroups(true)
	cl := newClient(t, sb)
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var groups []string
	for i := range 12 {
		g := fmt.Sprintf("stale-%d", i)
		groups = append(groups, g)
		os := kadm.Offsets{}
		os.AddOffset("orders", 0, 1, -1)
		if err := adm.CommitAllOffsets(ctx, g, os); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string]string{}
	for _, g := range groups {
		before[g] = sb.Coordinator(g)
	}
	if _, err := sb.StopBroker("kaas-2"); err != nil {
		t.Fatal(err)
	}
	var movedFromLive int
	for _, g := range groups {
		from, to := before[g], sb.Coordinator(g)
		if from == to || from == "kaas-2" {
			continue
		}
		movedFromLive++
		if !slices.Contains(sb.StaleGroups(from), g) {
			t.Errorf("%s moved %s→%s but is not stale on %s", g, from, to, from)
		}
		if !slices.Contains(listOn(t, sb, from), g) {
			t.Errorf("%s: ListGroups on %s does not list the stale group", g, from)
		}
	}
	if movedFromLive == 0 {
		t.Fatal("no group moved between running brokers; pick other group names")
	}
	if _, err := sb.StopBroker("kaas-0"); err != nil {
		t.Fatal(err)
	}
	if n := len(sb.StaleGroups("kaas-0")); n != 0 {
		t.Errorf("kaas-0 stopped but still holds %d stale groups", n)
	}
	sb.EmulateStaleGroups(false)
	if err := sb.MakeStale("kaas-9", "x", ""); err == nil {
		t.Error("MakeStale on an unknown broker: no error")
	}
}
