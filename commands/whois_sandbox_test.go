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

// stopPrediction is a whois what-if checked against the sandbox: what
// whois predicted for each group, and what it says once the broker is
// really stopped and the controller has written its next version.
type stopPrediction struct {
	groups    []string
	idle      map[string]bool // unloaded by the sandbox before the prediction
	predicted []inspect.WhoisResult
	actual    []inspect.WhoisResult
	stderr    string // of the prediction
}

// want is the coordinator predicted for groups[i]. A group the sandbox
// unloaded (an Empty group that moved, as on kaas) is not active, so the
// next version gives it no entry whatever the model: whois cannot see
// that from the volume, so it is checked against the hash tier whois names.
func (p stopPrediction) want(i int) string {
	if p.idle[p.groups[i]] {
		return p.predicted[i].HashCoordinator
	}
	return p.predicted[i].Coordinator
}

// predictStop starts a 4-broker sandbox with opts and 16 groups holding a
// commit, stops kaas-3 (that recompute gives every active group an entry),
// asks whois with whatIf (which names the broker down), then stops down
// and asks whois again.
func predictStop(t *testing.T, opts sandbox.Options, down string, whatIf ...string) stopPrediction {
	t.Helper()
	opts.Brokers, opts.Topics = 4, []sandbox.Topic{{Name: "orders", Partitions: 1}}
	s := sandbox.Start(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := stopPrediction{idle: map[string]bool{}}
	for i := 0; i < 16; i++ {
		g := fmt.Sprintf("svc-%d", i)
		p.groups = append(p.groups, g)
		if err := s.Commit(ctx, g, map[string]map[int32]int64{"orders": {0: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.StopBroker("kaas-3"); err != nil {
		t.Fatal(err)
	}
	for _, g := range p.groups {
		p.idle[g] = s.Unloaded(g)
	}
	data := s.Layout().DataDir
	r := runCLI(t, "", nil, append(append([]string{"whois", "--data-dir", data, "-o", "json"}, whatIf...), p.groups...)...)
	if r.Code != 0 {
		t.Fatalf("whois %v: exit %d: %s", whatIf, r.Code, r.Err)
	}
	p.stderr = r.Err
	if err := json.Unmarshal([]byte(r.Out), &p.predicted); err != nil || len(p.predicted) != len(p.groups) {
		t.Fatalf("prediction: %d answers for %d groups: %v", len(p.predicted), len(p.groups), err)
	}
	if _, err := s.StopBroker(down); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", nil, append([]string{"whois", "--data-dir", data, "-o", "json"}, p.groups...)...)
	if err := json.Unmarshal([]byte(r.Out), &p.actual); err != nil || len(p.actual) != len(p.groups) {
		t.Fatalf("after the stop: %d answers for %d groups: %v (%s)", len(p.actual), len(p.groups), err, r.Err)
	}
	return p
}

// 'whois --what-if-down B --placement rendezvous' predicts what today's
// controller does when B dies: the sandbox places entries for active
// groups exactly as kaas does, so the prediction must be the outcome.
func TestWhatIfDownPredictsTheController(t *testing.T) {
	t.Parallel()
	for _, placement := range []sandbox.Placement{sandbox.PlacementRendezvous, sandbox.PlacementHash} {
		t.Run(string(placement), func(t *testing.T) {
			p := predictStop(t, sandbox.Options{Placement: placement}, "kaas-1", "--what-if-down", "kaas-1", "--placement", string(placement))
			nIdle, moves := 0, 0
			for i, g := range p.groups {
				if p.idle[g] {
					nIdle++
				}
				if p.want(i) != p.actual[i].Coordinator {
					t.Errorf("%s (unloaded %v): predicted %s, the controller placed it on %s", g, p.idle[g], p.want(i), p.actual[i].Coordinator)
				}
				if m := p.predicted[i].Moves; m != nil && *m {
					moves++
				}
			}
			if nIdle == 0 || nIdle == len(p.groups) {
				t.Fatalf("%d of %d groups unloaded: the test needs both kinds", nIdle, len(p.groups))
			}
			if moves == 0 {
				t.Error("nothing moved: the test proves nothing")
			}
		})
	}
}
