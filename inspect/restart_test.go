package inspect

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func restartFixture(n, groups int, seed uint64, withEntries bool) RestartInput {
	r := rand.New(rand.NewPCG(seed, 7))
	in := RestartInput{Entries: map[string]string{}, Version: 10, Epoch: 2}
	for i := 0; i < n; i++ {
		in.Brokers = append(in.Brokers, fmt.Sprintf("kaas-%d", i))
	}
	in.Controller = in.Brokers[r.IntN(n)]
	for i := 0; i < groups; i++ {
		g := RestartGroup{ID: fmt.Sprintf("group-%04d", i)}
		switch r.IntN(4) {
		case 0: // idle
		case 1:
			g.Loaded = true
		default:
			g.Loaded, g.Members = true, true
		}
		if withEntries && g.Loaded && r.IntN(2) == 0 {
			in.Entries[g.ID] = in.Brokers[r.IntN(n)]
		}
		in.Groups = append(in.Groups, g)
	}
	return in
}

// The plan's version-by-version simulation and the one-version predictor
// (what --follow uses) are the same model: composing PredictVersion along
// an order gives every version's coordinators the plan printed.
func TestRestartPlanMatchesOneVersionPredictor(t *testing.T) {
	t.Parallel()
	for _, fm := range []FailoverModel{FailoverReload, FailoverDrop} {
		for _, placement := range []string{"rendezvous", "hash"} {
			for seed := uint64(1); seed <= 4; seed++ {
				in := restartFixture(2+int(seed), 60, seed, seed%2 == 0)
				in.Failover, in.Placement = fm, placement
				p, err := PlanRestart(in, nil)
				if err != nil {
					t.Fatal(err)
				}
				var groups []string
				st := ClusterState{Alive: in.Brokers, Controller: in.Controller, Entries: maps.Clone(in.Entries), Loaded: map[string]bool{}, Members: map[string]bool{}}
				for _, g := range in.Groups {
					groups = append(groups, g.ID)
					st.Loaded[g.ID], st.Members[g.ID] = g.Loaded, g.Members
				}
				for _, o := range []RestartOrder{p.Plan, p.Naive, p.Worst} {
					// The search's fused scoring and the version-by-version
					// detail count the same moves.
					sum, without := 0, 0
					for _, s := range o.Steps {
						sum += s.Score.Moves
						without = max(without, s.Score.WithoutCoordinator)
					}
					if sum != o.Score.Moves || without != o.Score.MaxWithoutCoordinator {
						t.Fatalf("%s/%s seed %d: steps add up to %d moves (max without %d), the score says %+v", fm, placement, seed, sum, without, o.Score)
					}
					cur := st
					for _, s := range o.Steps {
						for _, v := range []RestartVersion{s.Stop, s.Start} {
							var alive []string
							for _, b := range in.Brokers {
								if v.Event == "start" || b != s.Broker {
									alive = append(alive, b)
								}
							}
							out := PredictVersion(cur, alive, groups, fm, placement)
							if out.Controller != v.Controller || out.Failover != v.Failover {
								t.Fatalf("%s/%s seed %d step %d %s: controller %s failover %v, plan says %s %v", fm, placement, seed, s.N, v.Event, out.Controller, out.Failover, v.Controller, v.Failover)
							}
							for _, g := range groups {
								if out.Coordinators[g] != v.Coordinators[g] {
									t.Fatalf("%s/%s seed %d step %d %s %s: predictor %s, plan %s", fm, placement, seed, s.N, v.Event, g, out.Coordinators[g], v.Coordinators[g])
								}
							}
							cur = cur.Advance(groups, out.Alive, out.Controller, out.Entries)
						}
					}
				}
				if compareScore(p.Plan.Score, p.Naive.Score) > 0 || compareScore(p.Naive.Score, p.Worst.Score) > 0 {
					t.Fatalf("plan %+v, naive %+v, worst %+v: not ordered", p.Plan.Score, p.Naive.Score, p.Worst.Score)
				}
			}
		}
	}
}

// Exhaustive search: the plan is the minimum over every order (checked by
// scoring each order separately).
func TestRestartPlanIsTheMinimum(t *testing.T) {
	t.Parallel()
	in := restartFixture(4, 200, 9, true)
	in.Failover = FailoverDrop
	p, err := PlanRestart(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Search.Orders != 24 || p.Search.Method != "exhaustive" {
		t.Fatalf("search %+v", p.Search)
	}
	m, _ := newRestartSim(in)
	perm := []int{0, 1, 2, 3}
	var all []RestartScore
	var permute func(k int)
	permute = func(k int) {
		if k == len(perm) {
			all = append(all, m.scoreOrder(perm))
			return
		}
		for i := k; i < len(perm); i++ {
			perm[k], perm[i] = perm[i], perm[k]
			permute(k + 1)
			perm[k], perm[i] = perm[i], perm[k]
		}
	}
	permute(0)
	best := slices.MinFunc(all, compareScore)
	worst := slices.MaxFunc(all, compareScore)
	if compareScore(best, p.Plan.Score) != 0 || compareScore(worst, p.Worst.Score) != 0 {
		t.Fatalf("plan %+v worst %+v; by brute force %+v and %+v", p.Plan.Score, p.Worst.Score, best, worst)
	}
	if best.Moves == worst.Moves {
		t.Fatal("every order costs the same: the fixture proves nothing")
	}
}

// A hand-checked case: 2 brokers, Rust, one active group on the hash tier.
func TestRestartTwoBrokersByHand(t *testing.T) {
	t.Parallel()
	in := RestartInput{Brokers: []string{"kaas-0", "kaas-1"}, Controller: "kaas-0", Version: 3, Epoch: 1,
		Groups: []RestartGroup{{ID: "g", Loaded: true, Members: true}}, Failover: FailoverReload}
	p, err := PlanRestart(in, []string{"kaas-1", "kaas-0"})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Given.Steps[0]
	if s.Stop.Version != 4 || s.Start.Version != 5 || s.Stop.Failover || !slices.Equal(s.Stop.Brokers, []string{"kaas-0"}) {
		t.Fatalf("step 1: %+v", s)
	}
	// The second step restarts the controller: a failover to kaas-1.
	s2 := p.Given.Steps[1]
	if !s2.Stop.Failover || s2.Stop.Controller != "kaas-1" || s2.Stop.ControllerEpoch != 2 || s2.Start.Controller != "kaas-1" {
		t.Fatalf("step 2: %+v", s2)
	}
	if p.Given.Score.Failovers != 1 {
		t.Fatalf("failovers %d", p.Given.Score.Failovers)
	}
	if _, err := PlanRestart(in, []string{"kaas-1"}); err == nil {
		t.Fatal("an order missing a broker was accepted")
	}
}

func TestRestartHeuristicBeyondEight(t *testing.T) {
	t.Parallel()
	in := restartFixture(10, 100, 3, true)
	p, err := PlanRestart(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Search.Method != "heuristic" || compareScore(p.Plan.Score, p.Naive.Score) > 0 || compareScore(p.Worst.Score, p.Naive.Score) < 0 {
		t.Fatalf("search %+v plan %+v naive %+v worst %+v", p.Search, p.Plan.Score, p.Naive.Score, p.Worst.Score)
	}
}

// BenchmarkPlanRestart8Brokers1000Groups is the search alone: every order
// of 8 brokers scored over 1,000 groups, without the detailed replays.
func BenchmarkPlanRestart8Brokers1000Groups(b *testing.B) {
	in := restartFixture(8, 1000, 5, true)
	for b.Loop() {
		m, err := newRestartSim(in)
		if err != nil {
			b.Fatal(err)
		}
		m.search()
	}
}

// At plan restart's own limit (127 brokers, 1,270 groups with members)
// the heuristic stops at its bound instead of running for minutes (its
// swaps cost the 4th power of the broker count), says what it searched,
// and reports its progress; its plan is still no worse than the listed
// order. 'make test' runs it without -race (scripts/test.sh says why).
func TestRestartSearchBoundedAtItsLimit(t *testing.T) {
	t.Parallel()
	in := restartFixture(127, 1270, 5, true)
	// A tenth of the default bound keeps the test short; the benchmark
	// below runs the default.
	in.SearchBudget = DefaultSearchBudget / 10
	var calls, last, total int64
	in.Progress = func(done, tot int64) {
		calls++
		if done < last || done > tot {
			t.Errorf("progress %d/%d after %d", done, tot, last)
		}
		last, total = done, tot
	}
	p, err := PlanRestart(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Search.Method != "heuristic" || !p.Search.Bounded || !strings.Contains(p.Search.Detail, "stopped at the search bound") {
		t.Fatalf("search %+v", p.Search)
	}
	if calls == 0 || total == 0 || last == 0 {
		t.Errorf("progress: %d calls, %d/%d", calls, last, total)
	}
	if compareScore(p.Plan.Score, p.Naive.Score) > 0 || compareScore(p.Worst.Score, p.Naive.Score) < 0 {
		t.Errorf("plan %+v naive %+v worst %+v", p.Plan.Score, p.Naive.Score, p.Worst.Score)
	}
	// Unbounded for small clusters: 10 brokers search to the end.
	small, err := PlanRestart(restartFixture(10, 100, 3, true), nil)
	if err != nil || small.Search.Bounded {
		t.Errorf("10 brokers: %+v %v", small.Search, err)
	}
}

// BenchmarkPlanRestartAtTheLimit is plan restart at 127 brokers and 1,270
// groups with members: the bounded heuristic and the three detailed
// orders.
func BenchmarkPlanRestartAtTheLimit(b *testing.B) {
	in := restartFixture(127, 1270, 5, true)
	for b.Loop() {
		if _, err := PlanRestart(in, nil); err != nil {
			b.Fatal(err)
		}
	}
}
