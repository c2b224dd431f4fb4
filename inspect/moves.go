// Package inspect is kaasctl's pure analysis: data in, data out, no I/O.
package inspect

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// Cause says why a group's (or transactional id's) coordinator changed
// between two assignment versions.
//
// When several apply, the first in this order wins:
//
//  1. broker_left — the old coordinator was alive in the old version and is
//     no longer alive (gone from brokers[], or listed as draining/dead) in
//     the new one. Also when the key ends with no coordinator at all.
//  2. entry_added / entry_removed / entry_moved — the group's winning
//     explicit consumerGroups[] entry appeared, disappeared, or names
//     another broker. An entry change beats every broker-set cause below:
//     the entry is what decided the new coordinator.
//  3. controller_failover — the controller epoch went up (a new controller
//     term, normally a new lease holder) and the move is not explained by
//     1 or 2: the new controller published its own view of the cluster.
//  4. broker_joined — the new coordinator was not alive in the old version
//     and is now (including the move out of "no coordinator").
//  5. divisor_changed — a hash-tier move between two brokers that were
//     alive in both versions, caused only by the number of listed brokers
//     (the FNV modulus) changing.
//  6. otherwise the hash ring changed shape without changing size (one
//     broker replaced by another, or a health flip): broker_joined when a
//     broker joined the alive set, else broker_left.
type Cause string

const (
	CauseBrokerLeft         Cause = "broker_left"
	CauseBrokerJoined       Cause = "broker_joined"
	CauseDivisorChanged     Cause = "divisor_changed"
	CauseEntryAdded         Cause = "entry_added"
	CauseEntryRemoved       Cause = "entry_removed"
	CauseEntryMoved         Cause = "entry_moved"
	CauseControllerFailover Cause = "controller_failover"
	// CauseUnknown is only used for moves seen in broker logs that no
	// assignment snapshot explains.
	CauseUnknown Cause = "unknown"
)

// Causes lists every cause in precedence order.
var Causes = []Cause{CauseBrokerLeft, CauseEntryAdded, CauseEntryRemoved, CauseEntryMoved,
	CauseControllerFailover, CauseBrokerJoined, CauseDivisorChanged}

// Move is one key whose coordinator differs between two versions.
type Move struct {
	Kind     Kind           `json:"kind"`
	Key      string         `json:"key"`
	From     string         `json:"from"`
	To       string         `json:"to"`
	FromTier grouphash.Tier `json:"fromTier"`
	ToTier   grouphash.Tier `json:"toTier"`
	Cause    Cause          `json:"cause"`
	Detail   string         `json:"detail"`
}

// RoutingState is one assignment prepared for comparisons: its router and
// alive/listed sets. Build it once per version and reuse it.
type RoutingState struct {
	Epoch      int64
	Version    int64
	Controller string
	Router     *grouphash.Router
	alive      map[string]bool
	listed     map[string]bool
}

// NewRoutingState prepares an assignment. A nil assignment is an empty
// cluster (no brokers, no entries).
func NewRoutingState(a *volume.Assignment) *RoutingState {
	if a == nil {
		a = &volume.Assignment{}
	}
	rs := &RoutingState{
		Epoch:      a.ControllerEpoch,
		Version:    a.AssignmentVersion,
		Controller: a.Controller,
		Router:     a.Router(),
		alive:      make(map[string]bool, len(a.Brokers)),
		listed:     make(map[string]bool, len(a.Brokers)),
	}
	for _, b := range a.Brokers {
		rs.listed[b.ID] = true
		if b.Health == grouphash.HealthAlive {
			rs.alive[b.ID] = true
		}
	}
	return rs
}

// Transition describes what changed at the cluster level between two
// versions; every Move is judged against it.
type Transition struct {
	Old, New        *RoutingState
	Joined          []string // alive in New, not in Old
	Left            []string // alive in Old, not in New
	ListedJoined    []string // listed in New, not in Old (any health)
	ListedLeft      []string // listed in Old, not in New
	OldDivisor      int
	NewDivisor      int
	Failover        bool // controller epoch went up
	ControllerMoved bool // controller id differs

	// Sentences shared by many moves, built once.
	divNote, setNote, failNote string
}

// NewTransition compares two prepared versions.
func NewTransition(old, cur *RoutingState) *Transition {
	t := &Transition{Old: old, New: cur,
		OldDivisor: old.Router.Ring().Len(), NewDivisor: cur.Router.Ring().Len(),
		Failover:        cur.Epoch > old.Epoch,
		ControllerMoved: cur.Controller != old.Controller,
	}
	for id := range cur.alive {
		if !old.alive[id] {
			t.Joined = append(t.Joined, id)
		}
	}
	for id := range old.alive {
		if !cur.alive[id] {
			t.Left = append(t.Left, id)
		}
	}
	for id := range cur.listed {
		if !old.listed[id] {
			t.ListedJoined = append(t.ListedJoined, id)
		}
	}
	for id := range old.listed {
		if !cur.listed[id] {
			t.ListedLeft = append(t.ListedLeft, id)
		}
	}
	for _, s := range [][]string{t.Joined, t.Left, t.ListedJoined, t.ListedLeft} {
		slices.Sort(s)
	}
	t.divNote = fmt.Sprintf("hash divisor %d → %d", t.OldDivisor, t.NewDivisor)
	t.setNote = t.buildSetChangeNote()
	t.failNote = t.buildFailoverDetail()
	return t
}

// TxnMove compares one transactional id (hash tier only).
func (t *Transition) TxnMove(id string) (Move, bool) {
	h := grouphash.FNV1a32(id)
	r0 := t.Old.Router.TxnHash(id, h)
	r1 := t.New.Router.TxnHash(id, h)
	if r0.Coordinator == r1.Coordinator {
		return Move{}, false
	}
	return t.classify(KindTxn, id, r0, r1), true
}

func (t *Transition) classify(kind Kind, key string, r0, r1 grouphash.Resolution) Move {
	return t.classifyUncached(kind, key, r0, r1)
}

func (t *Transition) classifyUncached(kind Kind, key string, r0, r1 grouphash.Resolution) Move {
	m := Move{Kind: kind, Key: key, From: r0.Coordinator, To: r1.Coordinator, FromTier: r0.Tier, ToTier: r1.Tier}
	from, to := r0.Coordinator, r1.Coordinator
	switch {
	case from != "" && t.Old.alive[from] && !t.New.alive[from]:
		m.Cause = CauseBrokerLeft
		if t.New.listed[from] {
			h, _ := mvHealthOf(t.New, from)
			m.Detail = from + " is now " + h
		} else {
			m.Detail = from + " left the cluster"
		}
		if r0.HasExplicit && !r1.HasExplicit {
			m.Detail += "; its explicit entry was retired"
		}
	case to == "" && from != "":
		m.Cause = CauseBrokerLeft
		m.Detail = "no broker can coordinate it now (COORDINATOR_NOT_AVAILABLE)"
	case r0.HasExplicit != r1.HasExplicit || r0.ExplicitBroker != r1.ExplicitBroker:
		switch {
		case !r0.HasExplicit:
			m.Cause = CauseEntryAdded
			if r1.Hash.Coordinator == r1.ExplicitBroker {
				m.Detail = "explicit entry added for " + r1.ExplicitBroker + " (the hash tier now agrees)"
			} else {
				m.Detail = "explicit entry added for " + r1.ExplicitBroker + " (the hash tier says " + mvNone(r1.Hash.Coordinator) + ")"
			}
		case !r1.HasExplicit:
			m.Cause = CauseEntryRemoved
			m.Detail = "explicit entry for " + r0.ExplicitBroker + " retired; back to the hash tier"
		default:
			m.Cause = CauseEntryMoved
			m.Detail = "explicit entry moved " + r0.ExplicitBroker + " → " + r1.ExplicitBroker
		}
	case t.Failover:
		m.Cause = CauseControllerFailover
		m.Detail = t.failoverDetail()
	case to != "" && !t.Old.alive[to] && t.New.alive[to]:
		m.Cause = CauseBrokerJoined
		m.Detail = to + " joined"
		if t.OldDivisor != t.NewDivisor {
			m.Detail += "; " + t.divisorNote()
		}
	case t.OldDivisor != t.NewDivisor:
		m.Cause = CauseDivisorChanged
		m.Detail = t.divisorNote() + t.setChangeNote()
	case len(t.Joined) > 0 || len(t.ListedJoined) > 0:
		m.Cause = CauseBrokerJoined
		m.Detail = "broker set changed at the same size" + t.setChangeNote()
	default:
		m.Cause = CauseBrokerLeft
		m.Detail = "broker set changed at the same size" + t.setChangeNote()
	}
	return m
}

func (t *Transition) divisorNote() string { return t.divNote }

func (t *Transition) failoverDetail() string { return t.failNote }

func (t *Transition) buildFailoverDetail() string {
	if t.ControllerMoved {
		return fmt.Sprintf("controller %s (epoch %d) → %s (epoch %d)", mvNone(t.Old.Controller), t.Old.Epoch, mvNone(t.New.Controller), t.New.Epoch)
	}
	return fmt.Sprintf("controller %s re-elected (epoch %d → %d)", mvNone(t.New.Controller), t.Old.Epoch, t.New.Epoch)
}

func (t *Transition) setChangeNote() string { return t.setNote }

func (t *Transition) buildSetChangeNote() string {
	var parts []string
	if len(t.Left) > 0 {
		parts = append(parts, strings.Join(t.Left, ", ")+" left")
	}
	if len(t.Joined) > 0 {
		parts = append(parts, strings.Join(t.Joined, ", ")+" joined")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

func mvHealthOf(rs *RoutingState, id string) (string, bool) {
	if rs.alive[id] {
		return grouphash.HealthAlive, true
	}
	if rs.listed[id] {
		return "not alive", true
	}
	return "", false
}

func mvNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// MovesInput is what ComputeMoves compares.
type MovesInput struct {
	Old, New *volume.Assignment
	// Groups are known groups beyond the explicit entries of both versions
	// (offset-file names, --group flags, log lines). Duplicates are fine.
	Groups []string
	// TxnIDs are transactional ids to check too.
	TxnIDs []string
}

// MovesResult is every key whose coordinator changed.
type MovesResult struct {
	Transition *Transition
	Moves      []Move // groups first, then txn ids; each sorted by key
	// Entries are the winning explicit entries added, removed or moved,
	// sorted by group.
	Entries       []EntryChange
	GroupsChecked int
	TxnsChecked   int
}

// ComputeMoves finds every group (entries of either version ∪ in.Groups)
// and transactional id whose coordinator changes from Old to New.
func ComputeMoves(in MovesInput) MovesResult {
	return ComputeMovesPrepared(NewRoutingState(in.Old), NewRoutingState(in.New), in.Old, in.New, in.Groups, in.TxnIDs)
}

// ComputeMovesPrepared is ComputeMoves for already prepared states (a
// trace reuses each version's state for two comparisons).
func ComputeMovesPrepared(old, cur *RoutingState, oldA, newA *volume.Assignment, groups, txns []string) MovesResult {
	t := NewTransition(old, cur)
	res := MovesResult{Transition: t}
	keys := UnionGroups(oldA, newA, groups)
	res.GroupsChecked = len(keys)
	// Large key sets are split over the CPUs; each part keeps key order,
	// and the parts are joined in order.
	parts := 1
	if len(keys) >= parallelMin {
		parts = runtime.GOMAXPROCS(0)
	}
	type part struct {
		moves   []Move
		entries []EntryChange
	}
	out := make([]part, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := len(keys)*p/parts, len(keys)*(p+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[p].moves, out[p].entries = t.groupRange(keys[lo:hi])
		}()
	}
	wg.Wait()
	nm, ne := 0, 0
	for _, p := range out {
		nm += len(p.moves)
		ne += len(p.entries)
	}
	res.Moves = make([]Move, 0, nm+len(txns))
	res.Entries = make([]EntryChange, 0, ne)
	for _, p := range out {
		res.Moves = append(res.Moves, p.moves...)
		res.Entries = append(res.Entries, p.entries...)
	}
	tx := slices.Clone(txns)
	slices.Sort(tx)
	tx = slices.Compact(tx)
	res.TxnsChecked = len(tx)
	for _, id := range tx {
		if m, ok := t.TxnMove(id); ok {
			res.Moves = append(res.Moves, m)
		}
	}
	return res
}

// parallelMin is the number of keys from which ComputeMovesPrepared uses
// every CPU.
const parallelMin = 20000

// groupRange compares keys (sorted) and returns their moves and entry
// changes, in key order. A Transition is read-only, so ranges may run
// concurrently.
func (t *Transition) groupRange(keys []string) ([]Move, []EntryChange) {
	var moves []Move
	var entries []EntryChange
	old, cur := t.Old, t.New
	for _, g := range keys {
		h := grouphash.FNV1a32(g)
		r0 := old.Router.GroupHash(g, h)
		r1 := cur.Router.GroupHash(g, h)
		if r0.HasExplicit != r1.HasExplicit || r0.ExplicitBroker != r1.ExplicitBroker {
			ec := EntryChange{Group: g, OldBroker: r0.ExplicitBroker, NewBroker: r1.ExplicitBroker}
			switch {
			case !r0.HasExplicit:
				ec.Change = "added"
			case !r1.HasExplicit:
				ec.Change = "removed"
			default:
				ec.Change = "moved"
			}
			entries = append(entries, ec)
		}
		if r0.Coordinator != r1.Coordinator {
			moves = append(moves, t.classify(KindGroup, g, r0, r1))
		}
	}
	return moves, entries
}

// UnionGroups is the sorted, deduplicated union of both versions' explicit
// entries and extra names.
func UnionGroups(a, b *volume.Assignment, extra []string) []string {
	n := len(extra)
	if a != nil {
		n += len(a.ConsumerGroups)
	}
	if b != nil {
		n += len(b.ConsumerGroups)
	}
	keys := make([]string, 0, n)
	for _, x := range []*volume.Assignment{a, b} {
		if x == nil {
			continue
		}
		for _, e := range x.ConsumerGroups {
			keys = append(keys, e.GroupID)
		}
	}
	keys = append(keys, extra...)
	slices.Sort(keys)
	return slices.Compact(keys)
}

// CountByCause counts moves per cause, in precedence order, omitting zeros.
func CountByCause(ms []Move) []CauseCount {
	counts := map[Cause]int{}
	for _, m := range ms {
		counts[m.Cause]++
	}
	var out []CauseCount
	for _, c := range append(slices.Clone(Causes), CauseUnknown) {
		if counts[c] > 0 {
			out = append(out, CauseCount{Cause: c, Count: counts[c]})
		}
	}
	return out
}

// CauseCount is one line of a per-cause summary.
type CauseCount struct {
	Cause Cause `json:"cause"`
	Count int   `json:"count"`
}

func (c Cause) String() string { return string(c) }
