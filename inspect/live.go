package inspect

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/internal/parallel"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// Live analysis: the brokers' answers joined with the volume. Kafka node
// ids are broker ordinals: broker "kaas-2" (any prefix: "skafka-2") is
// node 2, the text after the last '-'.

// BrokerOrdinal returns the node id of a broker id ("kaas-2" → 2).
func BrokerOrdinal(id string) (int32, bool) {
	i := strings.LastIndexByte(id, '-')
	n, err := strconv.ParseInt(id[i+1:], 10, 32)
	if err != nil || n < 0 {
		return -1, false
	}
	return int32(n), true
}

// NodeNamer names wire node ids the way the volume names brokers.
type NodeNamer struct {
	ids    map[int32]string
	prefix string
}

// NewNodeNamer learns broker ids from an assignment (nil: node ids are
// shown as "node N").
func NewNodeNamer(a *volume.Assignment) *NodeNamer {
	n := &NodeNamer{ids: map[int32]string{}}
	if a == nil {
		return n
	}
	prefixes := map[string]bool{}
	add := func(id string) {
		if o, ok := BrokerOrdinal(id); ok {
			n.ids[o] = id
			prefixes[id[:strings.LastIndexByte(id, '-')+1]] = true
		}
	}
	for _, b := range a.Brokers {
		add(b.ID)
	}
	for _, e := range a.ConsumerGroups {
		add(e.Broker)
	}
	if len(prefixes) == 1 {
		for p := range prefixes {
			n.prefix = p
		}
	}
	return n
}

// Name is the broker id of node (e.g. "kaas-1"), or "node N" when the
// volume does not say.
func (n *NodeNamer) Name(node int32) string {
	if node < 0 {
		return ""
	}
	if id, ok := n.ids[node]; ok {
		return id
	}
	if n.prefix != "" {
		return n.prefix + strconv.Itoa(int(node))
	}
	return "node " + strconv.Itoa(int(node))
}

// memo returns Name with each node's name made once (for one goroutine:
// a merge names every row's brokers).
func (n *NodeNamer) memo() func(int32) string {
	seen := map[int32]string{}
	return func(node int32) string {
		if s, ok := seen[node]; ok {
			return s
		}
		s := n.Name(node)
		seen[node] = s
		return s
	}
}

// liveOnlySources is the Sources of a row only the brokers know (shared:
// capped at its length, so an append copies).
var liveOnlySources = []string{SourceLive}

// SameBroker reports whether a wire node is the broker id computed from
// the volume (by ordinal, so prefixes never matter).
func SameBroker(id string, node int32) bool {
	o, ok := BrokerOrdinal(id)
	return ok && o == node
}

// GroupStates are the consumer group states brokers report.
var GroupStates = []string{"Stable", "Empty", "Dead", "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling", "Unknown"}

// ParseStates validates a comma list of states case-insensitively and
// returns their canonical spelling.
func ParseStates(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		i := slices.IndexFunc(GroupStates, func(st string) bool { return strings.EqualFold(st, p) })
		if i < 0 {
			return nil, fmt.Errorf("--state %q: unknown state (choose from %s)", p, strings.Join(GroupStates, ", "))
		}
		if !slices.Contains(out, GroupStates[i]) {
			out = append(out, GroupStates[i])
		}
	}
	return out, nil
}

// LiveAnswers is everything the brokers said for groups list: the
// gathering (its listings, and its lookups and descriptions in listing
// order and, built on first use, by name) and how to name the brokers.
type LiveAnswers struct {
	*wire.GatheredGroups
	// HasAssignment: the volume's assignment was readable, so computed
	// coordinators can be compared with the wire.
	HasAssignment bool
	Names         *NodeNamer

	// answered: the brokers whose ListGroups answered (mergeListings sets
	// it before the rows are merged in parallel).
	answered map[int32]bool
}

// listedGroupNames is every group some listing names, sorted, once each.
func listedGroupNames(ls []wire.BrokerGroups) []string {
	n := 0
	for _, a := range ls {
		n += len(a.Groups)
	}
	out := make([]string, 0, n)
	if len(ls) <= 16 && listingsSorted(ls) {
		return mergeListed(out, ls)
	}
	for _, a := range ls {
		for _, g := range a.Groups {
			out = append(out, g.Group)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// mergeListed appends the names of sorted listings to out, merged and
// without repeats.
func mergeListed(out []string, ls []wire.BrokerGroups) []string {
	walkSorted(ls, func(name string, first bool, _, _ int) {
		if first {
			out = append(out, name)
		}
	})
	return out
}

// mergeListedBy is listedGroupNames and listedBy at once, for rows that are
// the listed groups alone (BrokersOnlyRows of names): every listed group
// once, sorted, and the listings naming each, in broker order, all in one
// array. ok is false when the listings are not sorted, or too many to
// merge by scanning their heads.
func mergeListedBy(ls []wire.BrokerGroups) (names []string, listed [][]listing, total int, ok bool) {
	if len(ls) > 16 || !listingsSorted(ls) {
		return nil, nil, 0, false
	}
	n := 0
	for _, a := range ls {
		n += len(a.Groups)
	}
	names = make([]string, 0, n)
	flat := make([]listing, 0, n)
	starts := make([]int, 0, n+1) // flat[starts[r]:starts[r+1]] are row r's
	walkSorted(ls, func(name string, first bool, i, j int) {
		if first {
			names = append(names, name)
			starts = append(starts, len(flat))
		}
		flat = append(flat, listing{ls[i].Broker.NodeID, int32(i), int32(j)})
	})
	starts = append(starts, len(flat))
	listed = make([][]listing, len(names))
	for r := range listed {
		listed[r] = flat[starts[r]:starts[r+1]:starts[r+1]]
	}
	return names, listed, len(flat), true
}

// walkSorted visits every entry of sorted listings in merged order (a few
// brokers: the smallest head is found by a scan; equal names in listing
// order), telling fn its name, whether the name differs from the one
// before, and which listing and entry it is.
func walkSorted(ls []wire.BrokerGroups, fn func(name string, first bool, i, j int)) {
	at := make([]int, len(ls))
	last, started := "", false
	for {
		low, from := "", -1
		for i, a := range ls {
			if at[i] < len(a.Groups) && (from < 0 || a.Groups[at[i]].Group < low) {
				low, from = a.Groups[at[i]].Group, i
			}
		}
		if from < 0 {
			return
		}
		fn(low, !started || low != last, from, at[from])
		last, started = low, true
		at[from]++
	}
}

// MergeLive fills each row's live view and the live issue flags:
// staleOnNonCoordinator (a broker lists a group it does not coordinate),
// fileOnly (committed offsets on the volume, but the coordinator holds no
// such group), wireMismatch (FindCoordinator ≠ the volume's answer). Rows
// are modified in place; groups only the brokers know must already have a
// row (GroupsInput.Extra).
func MergeLive(rows []GroupRow, la *LiveAnswers) {
	mergeLiveOn(rows, la, mergeWorkers(len(rows)))
}

// mergeWorkers is how many goroutines merge n rows.
func mergeWorkers(n int) int { return min(runtime.GOMAXPROCS(0), n/mergeChunk) }

// mergeLiveOn is MergeLive on workers goroutines (one when workers <= 1).
func mergeLiveOn(rows []GroupRow, la *LiveAnswers, workers int) {
	listed, total := listedBy(rows, la.Listings)
	mergeListings(rows, la, listed, total, workers)
}

// mergeListings is mergeLiveOn with the listings of each row known
// (listedBy).
func mergeListings(rows []GroupRow, la *LiveAnswers, listed [][]listing, total, workers int) {
	la.answered = make(map[int32]bool, len(la.Listings))
	for _, b := range la.Listings {
		la.answered[b.Broker.NodeID] = b.Err == ""
	}
	names := la.Names
	if names == nil {
		names = NewNodeNamer(nil)
	}
	// One allocation each for every row's live view and ListedBy: row i's
	// names are listedNames[at[i]:at[i+1]] (capped, so an append elsewhere
	// copies), so rows can be merged in any order, and on every core.
	lives := make([]GroupLive, len(rows))
	listedNames := make([]string, total)
	at := make([]int, len(rows)+1)
	for i := range rows {
		at[i+1] = at[i] + len(listed[i])
	}
	parallel.ForRanges(len(rows), workers, func(_, lo, hi int) {
		name := names.memo() // one a worker
		for i := lo; i < hi; i++ {
			mergeRow(&rows[i], &lives[i], listed[i], listedNames[at[i]:at[i+1]:at[i+1]], la, name)
		}
	})
}

// mergeChunk is the fewest rows a merge worker takes: below two of them
// the merge runs on one core.
const mergeChunk = 4096

// mergeRow fills one row's live view lv from its listings ls; lb receives
// the names of the brokers listing it.
func mergeRow(r *GroupRow, lv *GroupLive, ls []listing, lb []string, la *LiveAnswers, name func(int32) string) {
	lv.StaleOn = []string{}
	r.Live = lv
	if len(ls) > 0 {
		if len(r.Sources) == 0 {
			r.Sources = liveOnlySources[:1:1]
		} else {
			addOnce(&r.Sources, SourceLive)
		}
	}
	co, hasCo := la.coordOf(r.Group, ls)
	owner := lv.coordinator(r, co, hasCo, name)
	ownerLists := false
	for k, l := range ls {
		lb[k] = name(l.node)
		if l.node == owner {
			ownerLists = true
			lg := la.listed(l)
			lv.State, lv.ProtocolType = lg.State, lg.ProtocolType
		} else if owner >= 0 {
			lv.StaleOn = append(lv.StaleOn, name(l.node))
		}
	}
	lv.ListedBy = lb
	if d, ok := la.describedOf(r.Group, ls, co, hasCo); ok && ownerLists {
		lv.described(&d)
	}
	if !ownerLists && owner < 0 && len(ls) > 0 {
		// Nobody coordinates it per either source: show what was listed.
		lg := la.listed(ls[0])
		lv.State, lv.ProtocolType = lg.State, lg.ProtocolType
	}
	if len(lv.StaleOn) > 0 {
		addOnce(&r.Issues, IssueStaleOnNonCoord)
	}
	lv.held(r, la, owner, ownerLists)
	if la.HasAssignment && hasCo {
		if WireDisagrees(r.Coordinator, co) {
			addOnce(&r.Issues, IssueWireMismatch)
		}
	}
	sortIssues(r.Issues)
}

// coordinator records FindCoordinator's answer for the row (co, when it
// was looked up) and returns the node that should hold the group: the
// wire's answer, else the volume's; -1 when neither names one.
func (lv *GroupLive) coordinator(r *GroupRow, co wire.Coordinator, hasCo bool, name func(int32) string) int32 {
	coordNode := int32(-1)
	switch {
	case !hasCo:
		lv.WireError = "not looked up"
	case co.Err != "":
		lv.WireError = "FindCoordinator: " + co.Err
	default:
		coordNode = co.NodeID
		lv.WireCoordinator = name(co.NodeID)
	}
	if coordNode < 0 && r.Coordinator != "" {
		if o, ok := BrokerOrdinal(r.Coordinator); ok {
			return o
		}
	}
	return coordNode
}

// described takes the state, protocol and members from the coordinator's
// DescribeGroups answer (or its error).
func (lv *GroupLive) described(d *wire.DescribedGroup) {
	if d.Err != "" {
		lv.WireError = joinErr(lv.WireError, "DescribeGroups: "+d.Err)
		return
	}
	if d.State != "" {
		lv.State = d.State
	}
	if d.ProtocolType != "" {
		lv.ProtocolType = d.ProtocolType
	}
	lv.Protocol = d.Protocol
	lv.Members = len(d.Members)
}

// held says whether the coordinator holds the group (it listed it; or
// not, when its listing answered without it), and flags a group on the
// volume its coordinator does not hold fileOnly, unless the coordinator's
// listing did not answer: a hung coordinator is not an empty one.
func (lv *GroupLive) held(r *GroupRow, la *LiveAnswers, owner int32, ownerLists bool) {
	switch {
	case ownerLists:
		lv.Held = HeldYes
	case owner >= 0 && la.answered[owner]:
		lv.Held = HeldNo
	}
	onVolume := slices.Contains(r.Sources, SourceFile) || slices.Contains(r.Sources, SourceLegacyFile) || slices.Contains(r.Sources, SourceOtherFile)
	switch {
	case !onVolume || ownerLists:
	case owner >= 0 && !la.answered[owner]:
		// Its coordinator did not answer ListGroups: whether it holds the
		// group cannot be told (a hung coordinator is not an empty one).
		lv.WireError = joinErr(lv.WireError, "ListGroups: its coordinator did not answer, so whether it holds the group is unknown")
	default:
		addOnce(&r.Issues, IssueFileOnly)
	}
}

// listing is one broker's listing of a group: Listings[i].Groups[j] (12
// bytes: a 100,000-group merge holds one a listing).
type listing struct {
	node int32
	i, j int32
}

// listed is the group as the listing names it.
func (la *LiveAnswers) listed(l listing) *wire.ListedGroup { return &la.Listings[l.i].Groups[l.j] }

// coordOf is FindCoordinator's answer for group, from the listing-ordered
// answers of a broker that listed it, else by name.
func (la *LiveAnswers) coordOf(group string, ls []listing) (wire.Coordinator, bool) {
	for _, l := range ls {
		if int(l.i) < len(la.ListedCoords) {
			if cs := la.ListedCoords[l.i]; int(l.j) < len(cs) && cs[l.j].Key == group {
				return cs[l.j], true
			}
		}
	}
	co, ok := la.Coords()[group]
	return co, ok
}

// describedOf is the group's description as Described holds it: the one
// its coordinator made when it listed the group (in listing order), else
// by name.
func (la *LiveAnswers) describedOf(group string, ls []listing, co wire.Coordinator, hasCo bool) (wire.DescribedGroup, bool) {
	if hasCo && co.Err == "" && co.NodeID >= 0 {
		for _, l := range ls {
			if l.node != co.NodeID {
				continue
			}
			if d, ok := la.ListedDescription(int(l.i), int(l.j)); ok && d.Group == group {
				return d, true
			}
		}
	}
	d, ok := la.Described()[group]
	return d, ok
}

// listedBy returns, for each row, the listings naming its group, and how
// many listings that is in all: a merge when rows and listings are sorted
// by group (as BuildGroupRows and ListGroupsEveryBroker give them), else
// through a map. Every row's listings share one array.
func listedBy(rows []GroupRow, ls []wire.BrokerGroups) ([][]listing, int) {
	// rowOf[i][k] is the row of ls[i].Groups[k] (-1: none).
	rowOf := make([][]int32, len(ls))
	for i, a := range ls {
		rowOf[i] = make([]int32, len(a.Groups))
	}
	if rowsAscending(rows) && listingsSorted(ls) {
		for i, a := range ls {
			j := 0
			for k, g := range a.Groups {
				for j < len(rows) && rows[j].Group < g.Group {
					j++
				}
				rowOf[i][k] = -1
				if j < len(rows) && rows[j].Group == g.Group {
					rowOf[i][k] = int32(j)
				}
			}
		}
		return groupListings(len(rows), ls, rowOf, nil)
	}
	at := make(map[string]int, len(rows))
	for i := range rows {
		if _, dup := at[rows[i].Group]; !dup {
			at[rows[i].Group] = i
		}
	}
	for i, a := range ls {
		for k, g := range a.Groups {
			rowOf[i][k] = -1
			if j, ok := at[g.Group]; ok {
				rowOf[i][k] = int32(j)
			}
		}
	}
	// A group on two rows gets its listings on both, as each row asks.
	first := make([]int, len(rows))
	for i := range rows {
		first[i] = at[rows[i].Group]
	}
	return groupListings(len(rows), ls, rowOf, first)
}

// groupListings gathers the listings by row (rowOf says whose each is) into
// one array, in broker order within a row; a row whose first[i] is another
// row shares that row's listings.
func groupListings(n int, ls []wire.BrokerGroups, rowOf [][]int32, first []int) ([][]listing, int) {
	end := make([]int, n+1) // listings per row, then where each row's end
	total := 0
	for _, rs := range rowOf {
		for _, r := range rs {
			if r >= 0 {
				end[r+1]++
				total++
			}
		}
	}
	for i := 1; i <= n; i++ {
		end[i] += end[i-1]
	}
	flat := make([]listing, total)
	next := slices.Clone(end[:n])
	for i, a := range ls {
		for k, r := range rowOf[i] {
			if r >= 0 {
				flat[next[r]] = listing{a.Broker.NodeID, int32(i), int32(k)}
				next[r]++
			}
		}
	}
	out := make([][]listing, n)
	for i := range out {
		if end[i] < end[i+1] {
			out[i] = flat[end[i]:end[i+1]:end[i+1]]
		}
	}
	if first != nil {
		for i := range out {
			if j := first[i]; j != i {
				out[i] = out[j]
				total += len(out[j])
			}
		}
	}
	return out, total
}

func rowsAscending(rows []GroupRow) bool {
	for i := 1; i < len(rows); i++ {
		if rows[i-1].Group >= rows[i].Group {
			return false
		}
	}
	return true
}

func listingsSorted(ls []wire.BrokerGroups) bool {
	for _, a := range ls {
		if !slices.IsSortedFunc(a.Groups, func(x, y wire.ListedGroup) int { return strings.Compare(x.Group, y.Group) }) {
			return false
		}
	}
	return true
}

// WireDisagrees reports whether FindCoordinator's answer differs from the
// coordinator computed from the volume ("" = none, which the wire shows as
// COORDINATOR_NOT_AVAILABLE).
func WireDisagrees(computed string, co wire.Coordinator) bool {
	if !co.Found() {
		// COORDINATOR_NOT_AVAILABLE agrees with "none"; any other failure
		// says nothing about routing.
		if co.Unassigned() {
			return computed != ""
		}
		return false
	}
	return !SameBroker(computed, co.NodeID)
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// BrokersOnlyRows builds rows from the wire alone (no volume): every
// listed group, source live, coordinator unknown from the volume.
func BrokersOnlyRows(groups []string) []GroupRow {
	out := make([]GroupRow, 0, len(groups))
	for _, g := range groups {
		out = append(out, GroupRow{Group: g, Sources: []string{}, Issues: []string{}, Files: []string{}})
	}
	return out
}

// StateMatch reports whether a row's live state is one of states (empty
// states: every row).
func StateMatch(r *GroupRow, states []string) bool {
	if len(states) == 0 {
		return true
	}
	return r.Live != nil && slices.Contains(states, r.Live.State)
}
