package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kaasctl/kaasctl/internal/sandbox"
)

// FindCoordinator from every running sandbox broker equals what
// `kaasctl whois` computes from the sandbox's volume, before and after a
// broker stops (when explicit entries appear).
func TestSandboxFindCoordinatorEqualsWhois(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: []sandbox.Topic{{Name: "orders", Partitions: 1}}})
	var groups []string
	for i := range 24 {
		groups = append(groups, fmt.Sprintf("app-%d", i))
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(sb.Bootstrap()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, g := range groups {
		os := kadm.Offsets{}
		os.AddOffset("orders", 0, 1, -1)
		if err := kadm.NewClient(cl).CommitAllOffsets(ctx, g, os); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		var out, errb bytes.Buffer
		args := append([]string{"kaasctl", "whois", "--data-dir", sb.Layout().DataDir, "-o", "json"}, groups...)
		if code := Main(args, &IOStreams{Out: &out, Err: &errb, Getenv: func(string) string { return "" }}); code != 0 {
			t.Fatalf("%s: whois exit %d: %s", when, code, errb.String())
		}
		var rows []struct {
			Key, Coordinator, Tier string
		}
		if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
			t.Fatalf("%s: whois json: %v", when, err)
		}
		want := map[string]string{}
		tiers := map[string]bool{}
		for _, r := range rows {
			want[r.Key] = r.Coordinator
			tiers[r.Tier] = true
		}
		for _, id := range sb.BrokerIDs() {
			if !sb.Running(id) {
				continue
			}
			addr, _ := sb.Addr(id)
			bc, err := kgo.NewClient(kgo.SeedBrokers(addr))
			if err != nil {
				t.Fatal(err)
			}
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.CoordinatorKeys = groups
			resp, err := req.RequestWith(ctx, bc.SeedBrokers()[0])
			bc.Close()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(groups) || len(resp.Coordinators) != len(groups) {
				t.Fatalf("%s: whois answered %d groups and %s's FindCoordinator %d, want %d each", when, len(rows), id, len(resp.Coordinators), len(groups))
			}
			answered := map[string]bool{}
			for _, c := range resp.Coordinators {
				if answered[c.Key] || want[c.Key] == "" {
					t.Errorf("%s: FindCoordinator on %s answered %q twice or for a group not asked", when, id, c.Key)
				}
				answered[c.Key] = true
				if c.ErrorCode != 0 {
					t.Errorf("%s: FindCoordinator(%s) on %s: error code %d", when, c.Key, id, c.ErrorCode)
				}
				if fmt.Sprintf("kaas-%d", c.NodeID) != want[c.Key] {
					t.Errorf("%s: FindCoordinator(%s) on %s = node %d, whois says %s", when, c.Key, id, c.NodeID, want[c.Key])
				}
			}
		}
		t.Logf("%s: tiers %v", when, tiers)
	}
	check("start")
	if _, err := sb.StopBroker("kaas-1"); err != nil {
		t.Fatal(err)
	}
	check("after stop kaas-1")
	if a := sb.Assignment(); len(a.ConsumerGroups) == 0 || !strings.Contains(fmt.Sprint(a.Brokers), "kaas-2") {
		t.Fatalf("expected explicit entries after the stop: %+v", a)
	}
}
