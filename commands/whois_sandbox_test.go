package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
)

// 'whois --what-if-down B --placement rendezvous' predicts what today's
// controller does when B dies: the sandbox places entries for active
// groups exactly as kaas does, so the prediction must be the outcome.
func TestWhatIfDownPredictsTheController(t *testing.T) {
	t.Parallel()
	for _, placement := range []sandbox.Placement{sandbox.PlacementRendezvous, sandbox.PlacementHash} {
		t.Run(string(placement), func(t *testing.T) {
			s := sandbox.Start(t, sandbox.Options{Brokers: 4, Placement: placement, Topics: []sandbox.Topic{{Name: "orders", Partitions: 1}}})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var groups []string
			for i := 0; i < 16; i++ {
				g := fmt.Sprintf("svc-%d", i)
				groups = append(groups, g)
				if err := s.Commit(ctx, g, map[string]map[int32]int64{"orders": {0: 1}}); err != nil {
					t.Fatal(err)
				}
			}
			// A first recompute gives every active group its entry.
			if _, err := s.StopBroker("kaas-3"); err != nil {
				t.Fatal(err)
			}
			// The groups kaas-3 coordinated moved and, being Empty, were
			// unloaded (as on kaas): no broker reports them active, so the
			// next version gives them no entry (an entry they have is
			// retired) and they route by the hash tier. whois cannot see
			// from the volume which groups are loaded: it is asked about
			// the active ones, and the idle ones are checked against the
			// hash tier it names.
			data := s.Layout().DataDir
			idle := map[string]bool{}
			for _, g := range groups {
				idle[g] = s.Unloaded(g)
			}
			args := append([]string{"whois", "--data-dir", data, "--what-if-down", "kaas-1", "--placement", string(placement), "-o", "json"}, groups...)
			r := runCLI(t, "", nil, args...)
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Err)
			}
			var rs []inspect.WhoisResult
			if err := json.Unmarshal([]byte(r.Out), &rs); err != nil {
				t.Fatal(err)
			}
			predicted := map[string]string{}
			nIdle := 0
			for _, x := range rs {
				predicted[x.Key] = x.Coordinator
				if idle[x.Key] {
					predicted[x.Key] = x.HashCoordinator
					nIdle++
				}
			}
			if nIdle == 0 || nIdle == len(groups) {
				t.Fatalf("%d of %d groups unloaded: the test needs both kinds", nIdle, len(groups))
			}
			if _, err := s.StopBroker("kaas-1"); err != nil {
				t.Fatal(err)
			}
			r = runCLI(t, "", nil, append([]string{"whois", "--data-dir", data, "-o", "json"}, groups...)...)
			var actual []inspect.WhoisResult
			if err := json.Unmarshal([]byte(r.Out), &actual); err != nil {
				t.Fatal(err)
			}
			moves := 0
			for i, g := range groups {
				if predicted[g] != actual[i].Coordinator {
					t.Errorf("%s (unloaded %v): predicted %s, the controller placed it on %s", g, idle[g], predicted[g], actual[i].Coordinator)
				}
				if rs[i].Moves != nil && *rs[i].Moves {
					moves++
				}
			}
			if moves == 0 {
				t.Error("nothing moved: the test proves nothing")
			}
		})
	}
}
