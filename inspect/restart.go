package inspect

import (
	"cmp"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// Rolling restart planning: each broker restart is two assignment versions
// (the broker leaves, the broker rejoins), each computed as the controller
// computes it (restartmodel.go). Groups are independent of each other, so
// an order's cost is a sum over groups, and every order of up to
// ExhaustiveMaxBrokers brokers is evaluated (a depth-first walk over the
// orders shares each prefix's state); beyond that a greedy order improved
// by pairwise swaps.

// ExhaustiveMaxBrokers is the largest broker count whose every restart order
// is evaluated (8! = 40,320 orders).
const ExhaustiveMaxBrokers = 8

// RestartGroup is one known group as the plan starts.
type RestartGroup struct {
	ID string
	// Loaded: in memory on its coordinator, so the controller reports it
	// active and places an explicit entry for it.
	Loaded bool
	// Members: the group has members; after a move they rejoin the new
	// coordinator (which loads the group, so it stays active) and each
	// move is one rebalance. A group without members that moves is
	// unloaded for good (kaas relinquishes it and nobody rejoins).
	Members bool
}

// RestartInput is what the plan starts from.
type RestartInput struct {
	// Brokers in the order assignment.json lists them (the naive order).
	Brokers    []string
	Controller string
	Epoch      int64
	Version    int64
	// Entries maps each group to its winning explicit entry's broker.
	Entries   map[string]string
	Groups    []RestartGroup
	Failover  FailoverModel
	Placement string // "rendezvous" (default) or "hash"
	// SearchBudget bounds the heuristic search (beyond
	// ExhaustiveMaxBrokers) in group-steps: one broker's restart applied
	// to one group with members (0: DefaultSearchBudget). The swaps stop
	// when it is spent, and the plan says so.
	SearchBudget int64
	// Progress, when set, is told the orders evaluated so far and an
	// estimate of how many the search takes (a terminal shows it).
	Progress func(done, total int64)
	// Rules are the generation's (the volume model's row): how long a
	// restart must take, and what a controller failover can do besides
	// the predicted version.
	Rules RestartRules
}

// RestartRules are the generation's restart waits and failover races.
type RestartRules struct {
	Restart  volume.RestartRule
	Failover volume.FailoverRule
}

// RestartRulesFor is the generation's rules (the newest generation's when
// unknown); a --failover model given by hand takes that model's failover rule.
func RestartRulesFor(gen volume.Generation, fm FailoverModel) RestartRules {
	s, ok := gen.Spec()
	if !ok {
		s, _ = volume.AllGenerations[len(volume.AllGenerations)-1].Spec()
	}
	rules := RestartRules{Restart: s.Restart, Failover: s.Failover}
	if fm != "" && s.Failover.Reloads != (fm == FailoverReload) {
		for _, g := range volume.AllGenerations {
			if o, _ := g.Spec(); o.Failover.Reloads == (fm == FailoverReload) {
				rules.Failover = o.Failover
			}
		}
	}
	return rules
}

// DefaultSearchBudget is the heuristic's bound: about 3 seconds for the
// best order and as much for the worst on one core, whatever the broker
// and group counts (127 brokers and 1,270 groups took minutes unbounded:
// its pairwise swaps cost the 4th power of the broker count).
const DefaultSearchBudget = 500_000_000

// RestartScore is what one order costs. Only groups with members count in
// Moves, MovedTwice and MaxWithoutCoordinator: those are the rebalances and
// the consumers that stall.
type RestartScore struct {
	Moves                 int `json:"moves"`
	GroupsMoved           int `json:"groupsMoved"`
	MovedTwice            int `json:"movedTwice"`
	MaxWithoutCoordinator int `json:"maxWithoutCoordinator"`
	Failovers             int `json:"failovers"`
	// IdleMoves are coordinator changes of groups without members (no
	// rebalance; a consumer joining then finds the new coordinator).
	IdleMoves int `json:"idleMoves"`
}

// compareScore orders scores, best first: fewer moves, fewer groups moved
// twice, fewer groups without a coordinator at once, fewer failovers.
func compareScore(a, b RestartScore) int {
	return cmp.Or(cmp.Compare(a.Moves, b.Moves), cmp.Compare(a.MovedTwice, b.MovedTwice),
		cmp.Compare(a.MaxWithoutCoordinator, b.MaxWithoutCoordinator), cmp.Compare(a.Failovers, b.Failovers))
}

// GroupMove is one group whose coordinator a version changes.
type GroupMove struct {
	Group   string `json:"group"`
	From    string `json:"from"`
	To      string `json:"to"`
	Members bool   `json:"members"`
	// Back: the group returns to the broker it had before this restart step.
	Back bool `json:"back"`
	// NotCoordinator: the old coordinator is running and answers
	// NOT_COORDINATOR (members rejoin); otherwise the group had no
	// coordinator until this version.
	NotCoordinator bool   `json:"notCoordinator"`
	Cause          string `json:"cause"`
}

// RestartVersion is one assignment version the controller should write.
type RestartVersion struct {
	Event           string   `json:"event"` // "stop" or "start"
	Broker          string   `json:"broker"`
	Written         bool     `json:"written"` // false: no broker alive, no controller, no version
	Version         int64    `json:"assignmentVersion"`
	ControllerEpoch int64    `json:"controllerEpoch"`
	Controller      string   `json:"controller"`
	Failover        bool     `json:"failover"`
	Brokers         []string `json:"brokers"`
	Entries         int      `json:"entries"`
	// WithoutCoordinator: groups on the stopped broker; from the stop until
	// this version is applied they have no coordinator.
	WithoutCoordinator []string    `json:"withoutCoordinator"`
	Moves              []GroupMove `json:"moves"`
	// Coordinators is every known group's coordinator once this version is
	// applied ("" none); --follow compares the real version with it.
	Coordinators map[string]string `json:"-"`
	EntryOf      map[string]string `json:"-"`
}

// RestartStep is one broker's restart: its stop and its start.
type RestartStep struct {
	N       int              `json:"step"`
	Broker  string           `json:"broker"`
	Stop    RestartVersion   `json:"stop"`
	Start   RestartVersion   `json:"start"`
	WaitFor []string         `json:"waitFor"`
	Score   RestartScoreStep `json:"score"`
}

// RestartScoreStep is one step's share of the order's cost.
type RestartScoreStep struct {
	Moves              int `json:"moves"`
	WithoutCoordinator int `json:"withoutCoordinator"`
	IdleMoves          int `json:"idleMoves"`
}

// RestartOrder is one order with its cost and, when detailed, its steps.
type RestartOrder struct {
	Order []string      `json:"order"`
	Score RestartScore  `json:"score"`
	Steps []RestartStep `json:"steps,omitempty"`
}

// RestartSearch says how the plan was found.
type RestartSearch struct {
	Method string `json:"method"` // "exhaustive" or "heuristic"
	Orders int64  `json:"ordersEvaluated"`
	// Bounded: the search bound (RestartInput.SearchBudget) ended the
	// heuristic's swaps while they still improved.
	Bounded   bool   `json:"bounded"`
	Objective string `json:"objective"`
	Detail    string `json:"detail"`
}

// restartSim is the compiled model: brokers as indexes into the sorted ids,
// and for each alive set a rolling restart passes through (all brokers, or
// all but one) every group's hash-tier coordinator and placement.
type restartSim struct {
	in      RestartInput
	ids     []string // sorted
	index   map[string]int
	listed  []int // listed order, as indexes
	groups  []string
	members []bool
	init    []gstate
	// hash[d+1][g] / place[d+1][g]: with broker d down (d = -1: none).
	hash, place [][]int8
	scored      []int    // groups with members
	sh, sp      [][]int8 // hash and place rows of the scored groups only
	ctrl        int      // controller index, -1 none
	drop        bool
}

type gstate struct {
	coord, entry int8 // -1: none / no entry
	loaded       bool
	moves        uint8
}

func newRestartSim(in RestartInput) (*restartSim, error) {
	m := &restartSim{in: in, index: map[string]int{}, drop: in.Failover == FailoverDrop}
	if err := m.compileBrokers(); err != nil {
		return nil, err
	}
	rings, alive := m.downSets()
	for g, grp := range in.Groups {
		m.compileGroup(g, grp, rings, alive)
	}
	n := len(m.ids)
	m.sh = make([][]int8, n+1)
	m.sp = make([][]int8, n+1)
	for d := 0; d <= n; d++ {
		m.sh[d] = make([]int8, len(m.scored))
		m.sp[d] = make([]int8, len(m.scored))
		for i, g := range m.scored {
			m.sh[d][i], m.sp[d][i] = m.hash[d][g], m.place[d][g]
		}
	}
	return m, nil
}

// compileBrokers numbers the brokers by their sorted ids (at most 127, so
// an index fits an int8, each listed once) and finds the controller.
func (m *restartSim) compileBrokers() error {
	in := m.in
	if len(in.Brokers) == 0 {
		return fmt.Errorf("the assignment lists no broker: nothing to restart")
	}
	if len(in.Brokers) > 127 {
		return fmt.Errorf("%d brokers: plan restart handles at most 127", len(in.Brokers))
	}
	m.ids = slices.Clone(in.Brokers)
	slices.Sort(m.ids)
	for i, id := range m.ids {
		if i > 0 && m.ids[i-1] == id {
			return fmt.Errorf("broker %s is listed twice", id)
		}
		m.index[id] = i
	}
	for _, b := range in.Brokers {
		m.listed = append(m.listed, m.index[b])
	}
	m.ctrl = -1
	if i, ok := m.index[in.Controller]; ok {
		m.ctrl = i
	}
	return nil
}

// downSets makes, for each alive set a rolling restart passes through (all
// brokers, then all but broker d, at d+1), its hash ring and its alive ids,
// and sizes the hash and placement rows for every group.
func (m *restartSim) downSets() (rings []*grouphash.Ring, alive [][]string) {
	n := len(m.ids)
	m.hash = make([][]int8, n+1)
	m.place = make([][]int8, n+1)
	rings = make([]*grouphash.Ring, n+1)
	alive = make([][]string, n+1)
	for d := -1; d < n; d++ {
		var bs []grouphash.Broker
		for i, id := range m.ids {
			if i != d {
				bs = append(bs, grouphash.Broker{ID: id, Health: grouphash.HealthAlive})
				alive[d+1] = append(alive[d+1], id)
			}
		}
		rings[d+1] = grouphash.NewRing(bs)
		m.hash[d+1] = make([]int8, len(m.in.Groups))
		m.place[d+1] = make([]int8, len(m.in.Groups))
	}
	return rings, alive
}

// compileGroup fills group g's hash-tier coordinator and placement under
// every alive set, and its state before the restart (its explicit entry,
// if any, is its coordinator).
func (m *restartSim) compileGroup(g int, grp RestartGroup, rings []*grouphash.Ring, alive [][]string) {
	m.groups = append(m.groups, grp.ID)
	m.members = append(m.members, grp.Members)
	h := grouphash.FNV1a32(grp.ID)
	for d := 0; d <= len(m.ids); d++ {
		hc := rings[d].PickHash(h).Coordinator
		m.hash[d][g] = m.idx(hc)
		if m.in.Placement == "hash" {
			m.place[d][g] = m.hash[d][g]
		} else {
			m.place[d][g] = m.idx(grouphash.Rendezvous(grp.ID, alive[d]))
		}
	}
	st := gstate{coord: m.hash[0][g], entry: -1, loaded: grp.Loaded}
	if e, ok := m.in.Entries[grp.ID]; ok {
		st.entry = m.idx(e)
		st.coord = st.entry
	}
	m.init = append(m.init, st)
	if grp.Members {
		m.scored = append(m.scored, g)
	}
}

// idx is a broker's index, -1 for an id the model does not hold.
func (m *restartSim) idx(id string) int8 {
	if i, ok := m.index[id]; ok {
		return int8(i)
	}
	return -1
}

// next is one version for one group: down is the broker down once the
// version is written (-1 none), drop a Go failover.
func (m *restartSim) next(g int, st gstate, down int, drop bool) gstate {
	alive := func(b int8) bool { return b >= 0 && int(b) != down }
	var ne int8 = -1
	if st.loaded && alive(st.coord) && !drop {
		if alive(st.entry) {
			ne = st.entry
		} else {
			ne = m.place[down+1][g]
		}
	}
	nc := ne
	if nc < 0 {
		nc = m.hash[down+1][g]
	}
	out := st
	out.entry = ne
	if nc != st.coord {
		out.coord = nc
		out.loaded = m.members[g]
		if out.moves < 255 {
			out.moves++
		}
	}
	return out
}

// event advances the controller for a stop (down = b) or start (down = -1)
// of broker b: whether a version is written and whether it is a failover.
func (m *restartSim) event(ctrl, b int, stop bool) (newCtrl int, written, failover bool) {
	n := len(m.ids)
	if stop {
		if n == 1 {
			return -1, false, false
		}
		if ctrl == b || ctrl < 0 {
			// The lowest alive broker id takes the lease (ids are sorted).
			nc := 0
			if b == 0 {
				nc = 1
			}
			return nc, true, true
		}
		return ctrl, true, false
	}
	if ctrl < 0 {
		return b, true, true
	}
	return ctrl, true, false
}

// scoreOrder evaluates one order over the groups with members.
func (m *restartSim) scoreOrder(order []int) RestartScore {
	st := make([]gstate, len(m.scored))
	for i, g := range m.scored {
		st[i] = m.init[g]
	}
	var s RestartScore
	ctrl := m.ctrl
	for _, b := range order {
		s.add(m.step(st, &ctrl, b))
	}
	return s
}

type stepCost struct{ moves, twice, without, failovers, first int }

func (s *RestartScore) add(c stepCost) {
	s.Moves += c.moves
	s.MovedTwice += c.twice
	s.MaxWithoutCoordinator = max(s.MaxWithoutCoordinator, c.without)
	s.Failovers += c.failovers
	s.GroupsMoved += c.first
}

// step restarts broker b over the scored groups' states (in place). It is
// the search's inner loop: the same rules as next, over the scored groups'
// own rows (every scored group has members, so a move keeps it loaded);
// both versions of the restart are applied to a group in one pass.
func (m *restartSim) step(st []gstate, ctrl *int, b int) stepCost {
	return m.stepInto(st, st, ctrl, b, true)
}

// stepInto is step reading src and, when write, storing into dst (the
// search's last level only needs the cost).
func (m *restartSim) stepInto(dst, src []gstate, ctrl *int, b int, write bool) stepCost {
	var c stepCost
	b8 := int8(b)
	c1, w1, f1 := m.event(*ctrl, b, true)
	c2, w2, f2 := m.event(c1, b, false)
	*ctrl = c2
	if f1 {
		c.failovers++
	}
	if f2 {
		c.failovers++
	}
	keep1, keep2 := !(f1 && m.drop), !(f2 && m.drop)
	h1, p1 := m.sh[b+1], m.sp[b+1]
	h2, p2 := m.sh[0], m.sp[0]
	for i := range src {
		x := src[i]
		if x.coord == b8 {
			c.without++
		}
		moves := x.moves
		// The stop (b down), then the start (every broker up).
		if w1 && x.apply(keep1, b8, p1[i], h1[i]) {
			moves++
		}
		if w2 && x.apply(keep2, -1, p2[i], h2[i]) {
			moves++
		}
		if moves != x.moves {
			c.moves += int(moves - x.moves)
			if x.moves == 0 {
				c.first++
			}
			if x.moves < 2 && moves >= 2 {
				c.twice++
			}
			x.moves = min(moves, 2)
		}
		if write {
			dst[i] = x
		}
	}
	return c
}

// search walks every order (n ≤ ExhaustiveMaxBrokers) or runs the
// heuristic, and returns the best and the worst order.
func (m *restartSim) search() (best, worst []int, bs, ws RestartScore, sr RestartSearch) {
	n := len(m.ids)
	sr.Objective = "fewest coordinator moves of groups with members, then fewest groups moved twice, then fewest groups without a coordinator at once, then fewest controller failovers; ties keep the listed order"
	if n <= ExhaustiveMaxBrokers {
		best, worst, bs, ws, sr.Orders = m.exhaustive()
		sr.Method = "exhaustive"
		sr.Detail = fmt.Sprintf("every one of the %d orders of %d brokers evaluated", sr.Orders, n)
		return
	}
	budget := m.in.SearchBudget
	if budget <= 0 {
		budget = DefaultSearchBudget
	}
	prog := m.progress(budget)
	b := m.heuristic(false, budget/2, prog)
	w := m.heuristic(true, budget/2, prog)
	best, bs, worst, ws = b.order, b.score, w.order, w.score
	sr.Method = "heuristic"
	sr.Orders, sr.Bounded = b.evals+w.evals, b.stopped || w.stopped
	sr.Detail = fmt.Sprintf("%d brokers (more than %d): greedy order (at each step the restart that costs least now; for the worst, most), then pairwise swaps while they improve; %s; not guaranteed optimal",
		n, ExhaustiveMaxBrokers, b.searched(w))
	return
}

// heuristicResult is one heuristic search: the order found, what it
// searched, and whether its budget ended the swaps early.
type heuristicResult struct {
	order         []int
	score         RestartScore
	evals         int64
	passes, swaps int
	stopped       bool
	budget        int64
}

// searched says what the best (r) and worst (w) searches evaluated.
func (r heuristicResult) searched(w heuristicResult) string {
	say := func(x heuristicResult, what string) string {
		out := fmt.Sprintf("%s: %d orders in %s of swaps", what, x.evals, render.Plural(x.passes, "pass", "passes"))
		if x.stopped {
			out += fmt.Sprintf(", stopped at the search bound (%d group-steps) while swaps still improved", x.budget)
		}
		return out
	}
	return say(r, "best") + "; " + say(w, "worst")
}

// progress is the search's progress reporter (nil: none): orders
// evaluated against the most the budget allows.
func (m *restartSim) progress(budget int64) func(int64) {
	if m.in.Progress == nil {
		return nil
	}
	total := budget / m.orderCost()
	var done int64
	return func(n int64) {
		done += n
		m.in.Progress(min(done, total), total)
	}
}

// orderCost is the work of scoring one order, in group-steps.
func (m *restartSim) orderCost() int64 { return int64(len(m.ids)) * int64(max(1, len(m.scored))) }

// exhaustive evaluates every permutation of the listed order by a
// depth-first walk; the first level is split across the CPUs.
func (m *restartSim) exhaustive() (best, worst []int, bs, ws RestartScore, count int64) {
	n := len(m.ids)
	results := make([]orderExtremes, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for first := 0; first < n; first++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			m.newPermWalk(first, &results[first]).walk(0, m.ctrl, RestartScore{})
		}()
	}
	wg.Wait()
	// Results are in listed-order-lexicographic order of the first broker,
	// so the strict comparisons keep the earliest order on ties.
	for i, r := range results {
		count += r.count
		if i == 0 || compareScore(r.bs, bs) < 0 {
			best, bs = r.best, r.bs
		}
		if i == 0 || compareScore(r.ws, ws) > 0 {
			worst, ws = r.worst, r.ws
		}
	}
	return
}

// orderExtremes are the best and worst orders seen (the first seen on
// ties) and how many orders were.
type orderExtremes struct {
	best, worst []int
	bs, ws      RestartScore
	count       int64
	ok          bool
}

// offer counts one complete order and keeps it if it is the best or the
// worst so far.
func (r *orderExtremes) offer(perm []int, score RestartScore) {
	r.count++
	if !r.ok || compareScore(score, r.bs) < 0 {
		r.best, r.bs = slices.Clone(perm), score
	}
	if !r.ok || compareScore(score, r.ws) > 0 {
		r.worst, r.ws = slices.Clone(perm), score
	}
	r.ok = true
}

// permWalk is one depth-first walk of the orders that start with the
// first listed broker: the order so far (perm, its positions used), the
// scored groups' states after each step, and where it keeps what it finds.
type permWalk struct {
	m      *restartSim
	first  int
	perm   []int
	used   []bool
	states [][]gstate
	r      *orderExtremes
}

// newPermWalk prepares the walk of the orders starting at listed position
// first, from the groups' states before the restart.
func (m *restartSim) newPermWalk(first int, r *orderExtremes) *permWalk {
	n := len(m.ids)
	w := &permWalk{m: m, first: first, perm: make([]int, 0, n), used: make([]bool, n), states: make([][]gstate, n+1), r: r}
	for d := range w.states {
		w.states[d] = make([]gstate, len(m.scored))
	}
	for i, g := range m.scored {
		w.states[0][i] = m.init[g]
	}
	return w
}

// walk tries every unused broker at depth, with the controller at ctrl and
// the cost so far acc, and goes on to the next depth until the order is
// complete.
func (w *permWalk) walk(depth, ctrl int, acc RestartScore) {
	m, n := w.m, len(w.m.ids)
	for pos := 0; pos < n; pos++ {
		if (depth == 0 && pos != w.first) || w.used[pos] {
			continue
		}
		b := m.listed[pos]
		c := ctrl
		last := depth == n-1
		cost := m.stepInto(w.states[depth+1], w.states[depth], &c, b, !last)
		next := acc
		next.add(cost)
		w.perm = append(w.perm, b)
		if last {
			w.r.offer(w.perm, next)
		} else {
			w.used[pos] = true
			w.walk(depth+1, c, next)
			w.used[pos] = false
		}
		w.perm = w.perm[:len(w.perm)-1]
	}
}

// heuristic builds an order greedily and improves it by pairwise swaps
// (worst: maximises instead), spending at most budget group-steps; prog
// (nil: none) is told each order evaluated.
func (m *restartSim) heuristic(worst bool, budget int64, prog func(int64)) heuristicResult {
	n := len(m.ids)
	better := func(a, b RestartScore) bool {
		if worst {
			return compareScore(a, b) > 0
		}
		return compareScore(a, b) < 0
	}
	r := heuristicResult{budget: budget}
	spent := int64(0)
	order := m.greedy(better)
	spent += int64(n) * int64(n) * int64(max(1, len(m.scored)))
	r.evals += int64(n * n)
	score := m.scoreOrder(order)
	// Never worse than the listed order.
	if s := m.scoreOrder(m.listed); better(s, score) {
		order, score = slices.Clone(m.listed), s
	}
	cost := m.orderCost()
	// Pairwise swaps while one improves (at most n passes), within budget.
	for pass := 0; pass < n && !r.stopped; pass++ {
		improved := false
		r.passes++
		for i := 0; i < n && !r.stopped; i++ {
			for j := i + 1; j < n; j++ {
				if spent+cost > budget {
					r.stopped = true
					break
				}
				spent += cost
				order[i], order[j] = order[j], order[i]
				s := m.scoreOrder(order)
				r.evals++
				r.swaps++
				if prog != nil {
					prog(1)
				}
				if better(s, score) {
					score, improved = s, true
				} else {
					order[i], order[j] = order[j], order[i]
				}
			}
		}
		if !improved && !r.stopped {
			break
		}
	}
	r.order, r.score = order, score
	return r
}

// greedy builds an order by taking, at each step, the restart that costs
// least now (or most: better decides).
func (m *restartSim) greedy(better func(a, b RestartScore) bool) []int {
	n := len(m.ids)
	st := make([]gstate, len(m.scored))
	for i, g := range m.scored {
		st[i] = m.init[g]
	}
	ctrl := m.ctrl
	used := make([]bool, n)
	var order []int
	tmp := make([]gstate, len(st))
	for len(order) < n {
		pick := -1
		var pickCost RestartScore
		for pos := 0; pos < n; pos++ {
			if used[pos] {
				continue
			}
			copy(tmp, st)
			c := ctrl
			var s RestartScore
			s.add(m.step(tmp, &c, m.listed[pos]))
			if pick < 0 || better(s, pickCost) {
				pick, pickCost = pos, s
			}
		}
		used[pick] = true
		order = append(order, m.listed[pick])
		m.step(st, &ctrl, m.listed[pick])
	}
	return order
}

// detail simulates an order over every known group, version by version.
func (m *restartSim) detail(order []int) RestartOrder {
	r := &restartReplay{m: m, st: slices.Clone(m.init), ctrl: m.ctrl, version: m.in.Version, epoch: m.in.Epoch}
	out := RestartOrder{Order: m.names(order), Steps: []RestartStep{}}
	for n, b := range order {
		step := RestartStep{N: n + 1, Broker: m.ids[b]}
		before := make([]int8, len(r.st))
		for g := range r.st {
			before[g] = r.st[g].coord
		}
		step.Stop = r.event(&step, b, true, before)
		step.Start = r.event(&step, b, false, before)
		step.WaitFor = m.waitFor(step)
		out.Steps = append(out.Steps, step)
	}
	out.Score = m.scoreOrder(order)
	for _, s := range out.Steps {
		out.Score.IdleMoves += s.Score.IdleMoves
	}
	return out
}

// restartReplay is detail's simulation of one order over every known
// group: each group's state, the controller, and the assignment's version
// and controller epoch as the controller writes them.
type restartReplay struct {
	m              *restartSim
	st             []gstate
	ctrl           int
	version, epoch int64
}

// brokerName is the id of broker index i, "" for none.
func (m *restartSim) brokerName(i int8) string {
	if i < 0 {
		return ""
	}
	return m.ids[i]
}

// event applies broker b's stop or start: the version the controller
// writes for it (if it writes one), the groups left without a coordinator
// and the moves, counted into the step's score. before is every group's
// coordinator before the step, to tell a move back.
func (r *restartReplay) event(step *RestartStep, b int, stop bool, before []int8) RestartVersion {
	m := r.m
	nc, written, failover := m.event(r.ctrl, b, stop)
	r.ctrl = nc
	down := -1
	v := RestartVersion{Event: "start", Broker: m.ids[b], Written: written, Failover: failover,
		WithoutCoordinator: []string{}, Moves: []GroupMove{}, Brokers: []string{},
		Coordinators: map[string]string{}, EntryOf: map[string]string{}}
	if stop {
		v.Event, down = "stop", b
	}
	if written {
		r.version++
		if failover {
			r.epoch++
		}
	}
	v.Version, v.ControllerEpoch, v.Controller = r.version, r.epoch, m.brokerName(int8(r.ctrl))
	for i, id := range m.ids {
		if i != down {
			v.Brokers = append(v.Brokers, id)
		}
	}
	for g := range r.st {
		r.group(&v, step, g, b, down, stop, before[g])
	}
	return v
}

// group applies the event (broker b stopped or started, down the broker
// down after it) to group g, whose coordinator before the step was
// before, and records it in the version v and the step's score.
func (r *restartReplay) group(v *RestartVersion, step *RestartStep, g, b, down int, stop bool, before int8) {
	m := r.m
	x := r.st[g]
	if stop && int(x.coord) == b {
		v.WithoutCoordinator = append(v.WithoutCoordinator, m.groups[g])
		if m.members[g] {
			step.Score.WithoutCoordinator++
		}
	}
	if v.Written {
		y := m.next(g, x, down, v.Failover && m.drop)
		if y.coord != x.coord {
			mv := GroupMove{Group: m.groups[g], From: m.brokerName(x.coord), To: m.brokerName(y.coord), Members: m.members[g],
				Back:           !stop && y.coord == before,
				NotCoordinator: x.coord >= 0 && int(x.coord) != b,
				Cause:          m.cause(x, y, stop, b, v.Failover)}
			v.Moves = append(v.Moves, mv)
			if m.members[g] {
				step.Score.Moves++
			} else {
				step.Score.IdleMoves++
			}
		}
		r.st[g] = y
	}
	v.Coordinators[m.groups[g]] = m.brokerName(r.st[g].coord)
	if r.st[g].entry >= 0 {
		v.Entries++
		v.EntryOf[m.groups[g]] = m.brokerName(r.st[g].entry)
	}
}

func (m *restartSim) cause(x, y gstate, stop bool, b int, failover bool) string {
	switch {
	case stop && int(x.coord) == b:
		return "coordinator stopped"
	case failover && m.drop && x.entry >= 0:
		return "controller failover dropped its entry"
	case x.entry < 0 && y.entry >= 0:
		return "first explicit entry (" + m.placementName() + " placement)"
	case x.entry >= 0 && y.entry >= 0:
		return "entry placed again (" + m.placementName() + ")"
	case x.entry >= 0 && y.entry < 0:
		return "entry retired (group not active)"
	}
	return fmt.Sprintf("hash divisor changed (%d → %d brokers)", divisor(len(m.ids), stop, true), divisor(len(m.ids), stop, false))
}

func divisor(n int, stop, before bool) int {
	if stop == before {
		return n
	}
	return n - 1
}

func (m *restartSim) placementName() string {
	if m.in.Placement == "hash" {
		return "hash"
	}
	return "rendezvous"
}

func (m *restartSim) waitFor(s RestartStep) []string {
	var w []string
	stopV, startV := s.Stop, s.Start
	rules := m.in.Rules
	if stopV.Written {
		when := ""
		if rules.Restart.LeaveVersion != "" && !stopV.Failover {
			when = " (it comes " + rules.Restart.LeaveVersion + ")"
		}
		w = append(w, fmt.Sprintf("assignment v%d (epoch %d, controller %s) listing %s, once %s is stopped%s", stopV.Version, stopV.ControllerEpoch, stopV.Controller, strings.Join(stopV.Brokers, ","), s.Broker, when))
		w = append(w, m.failoverWaits(stopV, s.Broker)...)
	} else {
		w = append(w, fmt.Sprintf("no version once %s is stopped (no broker alive, no controller)", s.Broker))
	}
	w = append(w, m.stopToStart(stopV, s.Broker))
	w = append(w, fmt.Sprintf("assignment v%d (epoch %d, controller %s) listing %s, once %s is started and ready", startV.Version, startV.ControllerEpoch, startV.Controller, strings.Join(startV.Brokers, ","), s.Broker))
	moved := map[string]bool{}
	for _, v := range []RestartVersion{stopV, startV} {
		for _, mv := range v.Moves {
			if mv.Members {
				moved[mv.Group] = true
			}
		}
	}
	if len(moved) > 0 {
		w = append(w, fmt.Sprintf("%d moved group(s) with members Stable again on their new coordinator (groups describe, or plan restart --follow -b), then the next step", len(moved)))
	} else {
		w = append(w, "no group with members moves: the next step once the broker is ready")
	}
	return w
}

// stopToStart is how long to wait between a broker's stop and its start,
// and why: the groups the stop version moves must re-join first.
func (m *restartSim) stopToStart(stopV RestartVersion, b string) string {
	var moved []string
	for _, mv := range stopV.Moves {
		if mv.Members {
			moved = append(moved, mv.Group)
		}
	}
	r := m.in.Rules.Restart
	least := ""
	if r.StopToStart > 0 {
		least = fmt.Sprintf(", and at least %s after the stop", r.StopToStart)
	}
	if len(moved) == 0 {
		if least == "" {
			return fmt.Sprintf("nothing more before starting %s: no group with members moves at its stop", b)
		}
		return fmt.Sprintf("%s after the stop, then start %s (no group with members moves at its stop)", r.StopToStart, b)
	}
	why := ""
	if r.Why != "" {
		why = ": " + r.Why
	}
	return fmt.Sprintf("the %s its stop moves (%s) to be Stable on the new coordinator for 2 s, its heartbeat to the controller reporting them (groups describe, or plan restart --follow -b)%s, before starting %s%s",
		render.Plural(len(moved), "group", "groups"), strings.Join(moved, ", "), least, b, why)
}

// failoverWaits are the generation's caveats of a version written by a new
// controller: when it comes, the groups that lose their entry if their
// broker connects last (Rust), the extra version a graceful stop can write
// first (Go).
func (m *restartSim) failoverWaits(v RestartVersion, b string) []string {
	if !v.Failover {
		return nil
	}
	f := m.in.Rules.Failover
	var w []string
	if f.Timing != "" {
		w = append(w, "the new controller's first version: "+f.Timing)
	}
	if f.FirstReportEmpty {
		w = append(w, "that version knowing it may differ from this plan: "+f.LastToConnect+"; plan restart --follow accepts it and names the broker")
	}
	if f.ExtraVersionOnStop {
		w = append(w, fmt.Sprintf("possibly one version more before it: %s (still listing %s alive); plan restart --follow accepts it", f.ExtraVersion, b))
	}
	return w
}

func (m *restartSim) names(order []int) []string {
	out := make([]string, len(order))
	for i, b := range order {
		out[i] = m.ids[b]
	}
	return out
}

// ParseOrder checks an operator's order against the brokers.
func (m *restartSim) parseOrder(order []string) ([]int, error) {
	seen := map[int]bool{}
	var out []int
	for _, b := range order {
		i, ok := m.index[b]
		if !ok {
			return nil, fmt.Errorf("--brokers-order: %s is not a broker of the assignment (brokers: %s)", b, strings.Join(m.in.Brokers, ", "))
		}
		if seen[i] {
			return nil, fmt.Errorf("--brokers-order: %s is listed twice", b)
		}
		seen[i] = true
		out = append(out, i)
	}
	if len(out) != len(m.ids) {
		var missing []string
		for i, id := range m.ids {
			if !seen[i] {
				missing = append(missing, id)
			}
		}
		return nil, fmt.Errorf("--brokers-order must name every broker once; missing: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// RestartPlan is plan restart's answer.
type RestartPlan struct {
	Brokers     []string      `json:"brokers"`
	Controller  string        `json:"controller"`
	Version     int64         `json:"assignmentVersion"`
	Epoch       int64         `json:"controllerEpoch"`
	Failover    FailoverModel `json:"failover"`
	FailoverWhy string        `json:"failoverReason"`
	Placement   string        `json:"placement"`
	Groups      struct {
		Known       int `json:"known"`
		WithMembers int `json:"withMembers"`
		LoadedEmpty int `json:"loadedEmpty"`
		Idle        int `json:"idle"`
	} `json:"groups"`
	// StopToStartSeconds is the least time between a broker's stop and its
	// start (the generation's rule; every step's waitFor says why).
	StopToStartSeconds int           `json:"stopToStartSeconds"`
	Search             RestartSearch `json:"search"`
	Plan               RestartOrder  `json:"plan"`
	Naive              RestartOrder  `json:"naive"`
	Worst              RestartOrder  `json:"worst"`
	Given              *RestartOrder `json:"given,omitempty"`
}

// PlanRestart finds the best and worst orders, scores the listed order
// (and given, when non-empty), and details each version of them.
func PlanRestart(in RestartInput, given []string) (*RestartPlan, error) {
	if in.Failover == "" {
		in.Failover = FailoverReload
	}
	if in.Placement == "" {
		in.Placement = "rendezvous"
	}
	sort.SliceStable(in.Groups, func(i, j int) bool { return in.Groups[i].ID < in.Groups[j].ID })
	m, err := newRestartSim(in)
	if err != nil {
		return nil, err
	}
	var givenIdx []int
	if len(given) > 0 {
		if givenIdx, err = m.parseOrder(given); err != nil {
			return nil, err
		}
	}
	p := &RestartPlan{Brokers: slices.Clone(in.Brokers), Controller: in.Controller, Version: in.Version, Epoch: in.Epoch,
		Failover: in.Failover, Placement: in.Placement, StopToStartSeconds: int(in.Rules.Restart.StopToStart / time.Second)}
	for _, g := range in.Groups {
		p.Groups.Known++
		switch {
		case g.Members:
			p.Groups.WithMembers++
		case g.Loaded:
			p.Groups.LoadedEmpty++
		default:
			p.Groups.Idle++
		}
	}
	best, worst, _, _, sr := m.search()
	p.Search = sr
	p.Plan = m.detail(best)
	p.Naive = m.detail(m.listed)
	p.Worst = m.detail(worst)
	if givenIdx != nil {
		g := m.detail(givenIdx)
		p.Given = &g
	}
	return p, nil
}

// apply is one version the controller writes for a group: down is the
// broker that is stopped (-1: none), placed where the controller would put
// a new entry, hashed the hash tier's answer. A loaded group on a broker
// that is up keeps its entry (when the controller keeps entries, and the
// entry's broker is up) or gets a placed one; otherwise it has none and
// routes by the hash tier. It reports whether the coordinator moved.
func (x *gstate) apply(keep bool, down, placed, hashed int8) bool {
	ne := int8(-1)
	if keep && x.loaded && x.coord >= 0 && x.coord != down {
		if x.entry >= 0 && x.entry != down {
			ne = x.entry
		} else {
			ne = placed
		}
	}
	co := ne
	if co < 0 {
		co = hashed
	}
	x.entry = ne
	if co == x.coord {
		return false
	}
	x.coord, x.loaded = co, true
	return true
}

// RestartReading is what plan restart read to build its input:
// assignment.json, the groups with an offset file and, with brokers,
// every broker's ListGroups answer.
type RestartReading struct {
	Assignment     *volume.Assignment
	AssignmentPath string
	Gen            volume.Generation // the volume's generation (the failover model when not given)
	Generation     string            // the generation assumed, in words (the sources line)
	OffsetGroups   []string          // groups with an offset file on the volume
	// Live: every broker's ListGroups answer; LiveAsked: the brokers were
	// asked (the activity then comes from the answers, even if none came).
	Live      []wire.BrokerGroups
	LiveAsked bool
	// AllActive (offline): every known group is taken as active with
	// members.
	AllActive bool
	// FailoverFlag is --failover as given ("": the model comes from Gen),
	// Failover the model it names.
	FailoverFlag string
	Failover     FailoverModel
	Placement    string // rendezvous or hash
}

// RestartSources says where the plan's inputs came from.
type RestartSources struct {
	Assignment string `json:"assignment"`
	Activity   string `json:"activity"`
	// FailoverWhy is why the failover model applies (the plan's
	// failoverReason).
	FailoverWhy string   `json:"-"`
	Generation  string   `json:"generation"`
	Notes       []string `json:"notes"`
}

// BuildRestartInput is the plan's starting state from what was read: the
// alive brokers, the controller, the winning explicit entries, the
// failover model, and every known group with its activity (live: loaded
// when its coordinator lists it, with members unless Empty; offline: the
// groups with an entry, or all with AllActive).
func BuildRestartInput(r RestartReading) (RestartInput, RestartSources) {
	a := r.Assignment
	var in RestartInput
	src := RestartSources{Notes: []string{}, Generation: r.Generation,
		Assignment: fmt.Sprintf("%s (v%d, controller %s, epoch %d)", r.AssignmentPath, a.AssignmentVersion, noneIfEmpty(a.Controller), a.ControllerEpoch)}
	in.Controller, in.Epoch, in.Version, in.Placement = a.Controller, a.ControllerEpoch, a.AssignmentVersion, r.Placement
	for _, b := range a.Brokers {
		if b.Health != "alive" {
			src.Notes = append(src.Notes, fmt.Sprintf("%s is listed with health %q: it is not restarted, and the controller's next version drops it", b.ID, b.Health))
			continue
		}
		if !slices.Contains(in.Brokers, b.ID) {
			in.Brokers = append(in.Brokers, b.ID)
		}
	}
	if r.FailoverFlag != "" {
		in.Failover, src.FailoverWhy = r.Failover, "--failover "+r.FailoverFlag
		src.Notes = append(src.Notes, "controller failover model "+r.FailoverFlag+" (from --failover)")
	} else {
		in.Failover, src.FailoverWhy = FailoverFor(r.Gen)
		src.Notes = append(src.Notes, "controller failover model "+string(in.Failover)+": "+src.FailoverWhy)
	}
	in.Entries = map[string]string{}
	known := map[string]bool{}
	for _, e := range a.ConsumerGroups {
		if _, dup := in.Entries[e.GroupID]; !dup {
			in.Entries[e.GroupID] = e.Broker
		}
		known[e.GroupID] = true
	}
	for _, name := range r.OffsetGroups {
		known[name] = true
	}
	in.Rules = RestartRulesFor(r.Gen, in.Failover)
	loaded, members := restartActivity(r, in.Entries, known, &src)
	for _, name := range slices.Sorted(maps.Keys(known)) {
		if IsCanary(name) {
			delete(in.Entries, name) // the probe's: no consumer rebalances
			continue
		}
		in.Groups = append(in.Groups, RestartGroup{ID: name, Loaded: loaded[name], Members: members[name]})
	}
	return in, src
}

// restartActivity says which groups are loaded and which have members,
// and where that came from; live answers add the groups they list to known.
func restartActivity(r RestartReading, entries map[string]string, known map[string]bool, src *RestartSources) (loaded, members map[string]bool) {
	loaded, members = map[string]bool{}, map[string]bool{}
	switch {
	case r.LiveAsked:
		names := NewNodeNamer(r.Assignment)
		rt := r.Assignment.Router()
		failed := 0
		for _, ans := range r.Live {
			if ans.Err != "" {
				failed++
				continue
			}
			broker := names.Name(ans.Broker.NodeID)
			for _, lg := range ans.Groups {
				known[lg.Group] = true
				if rt.Group(lg.Group).Coordinator != broker || lg.State == "Dead" {
					continue // a stale copy, or gone
				}
				loaded[lg.Group] = true
				members[lg.Group] = lg.State != "Empty"
			}
		}
		src.Activity = fmt.Sprintf("live: ListGroups on every broker (%d answered, %d failed); a group is active when its coordinator lists it, with members unless Empty", len(r.Live)-failed, failed)
		if failed > 0 {
			src.Notes = append(src.Notes, fmt.Sprintf("%d broker(s) did not answer ListGroups: the groups they coordinate are counted idle, so the plan may understate their moves", failed))
		}
	case r.AllActive:
		for name := range known {
			loaded[name], members[name] = true, true
		}
		src.Activity = "assumed (--all-active): every known group is active with members"
	default:
		for name := range entries {
			loaded[name], members[name] = true, true
		}
		src.Activity = "offline: groups with an explicit entry (active at v" + fmt.Sprint(r.Assignment.AssignmentVersion) + ") are assumed to have members; other offset-file groups idle (give -b for live activity)"
	}
	return loaded, members
}
