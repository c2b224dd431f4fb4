package inspect

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/wire"
)

// liveAnswers is an n-group gathering as three brokers answer it:
// each lists the groups it coordinates (sorted), FindCoordinator agrees,
// and no group was described (none ever joined).
func liveAnswers(n int) *LiveAnswers {
	coords, desc := map[string]wire.Coordinator{}, map[string]wire.DescribedGroup{}
	la := &LiveAnswers{GatheredGroups: wire.NewGatheredGroups(make([]wire.BrokerGroups, 3), coords, desc)}
	la.ListedCoords = make([][]wire.Coordinator, 3)
	la.ListedDescribed = make([][]wire.DescribedGroup, 3)
	for b := range 3 {
		la.Listings[b].Broker = wire.Broker{NodeID: int32(b)}
	}
	for i := range n {
		g := fmt.Sprintf("bench-%06d", i)
		b := i % 3
		la.Listings[b].Groups = append(la.Listings[b].Groups, wire.ListedGroup{Group: g, State: "Empty"})
		co := wire.Coordinator{Key: g, NodeID: int32(b)}
		coords[g] = co
		la.ListedCoords[b] = append(la.ListedCoords[b], co)
		d := wire.DescribedGroup{Group: g, Coordinator: int32(b), State: "Empty", Members: []wire.Member{}}
		desc[g] = d
		la.ListedDescribed[b] = append(la.ListedDescribed[b], d)
	}
	la.Names = NewNodeNamer(nil)
	return la
}

// BenchmarkLiveGroupRows10k is the merge a live groups list makes of a
// 10,000-group gathering without a volume.
func BenchmarkLiveGroupRows10k(b *testing.B) {
	la := liveAnswers(10_000)
	b.ReportAllocs()
	for b.Loop() {
		rows := LiveGroupRows(GroupsInput{}, false, la)
		if len(rows) != 10_000 {
			b.Fatal(len(rows))
		}
	}
}

// The rows' ListedBy and Sources share backing arrays (one allocation for
// all rows): growing one row's must never change another's.
func TestMergeLiveRowsDoNotAlias(t *testing.T) {
	t.Parallel()
	la := liveAnswers(6)
	rows := LiveGroupRows(GroupsInput{}, false, la)
	if len(rows) != 6 {
		t.Fatalf("%d rows", len(rows))
	}
	before := make([][2]string, len(rows))
	for i, r := range rows {
		if len(r.Live.ListedBy) != 1 || len(r.Sources) != 1 {
			t.Fatalf("%s: listed by %v, sources %v", r.Group, r.Live.ListedBy, r.Sources)
		}
		before[i] = [2]string{r.Live.ListedBy[0], r.Sources[0]}
	}
	for i := range rows {
		rows[i].Live.ListedBy = append(rows[i].Live.ListedBy, "grown")
		rows[i].Sources = append(rows[i].Sources, "grown")
	}
	for i, r := range rows {
		if got := [2]string{r.Live.ListedBy[0], r.Sources[0]}; got != before[i] || len(r.Live.ListedBy) != 2 || len(r.Sources) != 2 {
			t.Errorf("%s: after every row grew, listed by %v, sources %v (was %v)", r.Group, r.Live.ListedBy, r.Sources, before[i])
		}
	}
	if liveOnlySources[0] != SourceLive {
		t.Errorf("the shared sources changed: %v", liveOnlySources)
	}
}

// LiveGroupNames merges sorted listings; the result is the sorted union
// without repeats, as sorting every name gives it.
func TestLiveGroupNamesMergeIsSortedUnion(t *testing.T) {
	t.Parallel()
	lg := func(names ...string) []wire.ListedGroup {
		out := []wire.ListedGroup{}
		for _, n := range names {
			out = append(out, wire.ListedGroup{Group: n})
		}
		return out
	}
	ls := []wire.BrokerGroups{{Groups: lg("a", "c", "stale", "z")}, {Groups: lg()}, {Groups: lg("b", "stale", "y")}, {Groups: lg("", "c")}}
	want := []string{"", "a", "b", "c", "stale", "y", "z"}
	if got := (&LiveAnswers{GatheredGroups: wire.NewGatheredGroups(ls, nil, nil)}).LiveGroupNames(); !slices.Equal(got, want) {
		t.Errorf("merged: %q, want %q", got, want)
	}
	ls[0].Groups[0], ls[0].Groups[3] = ls[0].Groups[3], ls[0].Groups[0] // unsorted: the sort path
	if got := (&LiveAnswers{GatheredGroups: wire.NewGatheredGroups(ls, nil, nil)}).LiveGroupNames(); !slices.Equal(got, want) {
		t.Errorf("sorted: %q, want %q", got, want)
	}
}

// The merge on several workers gives the rows the merge on one gives:
// stale listings, failed lookups and answers found only by name included.
func TestMergeLiveWorkersAgree(t *testing.T) {
	t.Parallel()
	build := func() ([]GroupRow, *LiveAnswers) {
		la := liveAnswers(3000)
		// A stale listing: broker 0 also lists every seventh group of
		// broker 1 (no aligned answer: looked up by name).
		for j, g := range la.Listings[1].Groups {
			if j%7 == 0 {
				la.Listings[0].Groups = append(la.Listings[0].Groups, g)
			}
		}
		slices.SortFunc(la.Listings[0].Groups, func(a, b wire.ListedGroup) int { return strings.Compare(a.Group, b.Group) })
		la.ListedCoords[0], la.ListedDescribed[0] = nil, nil
		for k, g := range la.Listings[2].Groups {
			if k%11 == 0 { // a failed lookup
				co := wire.Coordinator{Key: g.Group, NodeID: -1, Err: "COORDINATOR_NOT_AVAILABLE", Code: 15}
				la.Coords()[g.Group], la.ListedCoords[2][k] = co, co
			}
		}
		return BrokersOnlyRows(la.LiveGroupNames()), la
	}
	one, la1 := build()
	mergeLiveOn(one, la1, 1)
	many, la4 := build()
	mergeLiveOn(many, la4, 4)
	if len(one) != 3000 {
		t.Fatalf("%d rows", len(one))
	}
	stale := 0
	for i := range one {
		if !reflect.DeepEqual(one[i], many[i]) {
			t.Fatalf("row %d: one worker %+v %+v, four %+v %+v", i, one[i], *one[i].Live, many[i], *many[i].Live)
		}
		if one[i].HasIssue(IssueStaleOnNonCoord) {
			stale++
		}
	}
	if stale == 0 {
		t.Error("no stale listing merged: the fixture lost them")
	}
}

// Rows prepared from the listings alone (while the lookups are in flight)
// and merged once they are in are the rows a merge of the whole gathering
// gives (BrokersOnlyRows of its names, then MergeLive, which matches rows
// to listings by itself), and the gathering's LiveGroupNames are the
// prepared ones.
func TestPreparedRowsMatchLiveGroupRows(t *testing.T) {
	t.Parallel()
	for _, sorted := range []bool{true, false} {
		build := func() *LiveAnswers {
			la := liveAnswers(500)
			for j, g := range la.Listings[1].Groups {
				if j%5 == 0 { // stale on broker 0, answered by name
					la.Listings[0].Groups = append(la.Listings[0].Groups, g)
				}
			}
			la.ListedCoords[0], la.ListedDescribed[0] = nil, nil
			if sorted { // as brokers answer: the one-pass merge
				slices.SortFunc(la.Listings[0].Groups, func(a, b wire.ListedGroup) int { return strings.Compare(a.Group, b.Group) })
			} else { // the general path
				slices.Reverse(la.Listings[2].Groups)
				la.ListedCoords[2], la.ListedDescribed[2] = nil, nil
			}
			return la
		}
		whole := build()
		want := BrokersOnlyRows(listedGroupNames(whole.Listings))
		MergeLive(want, whole)
		la := build()
		got := MergeListedRows(PrepareListedRows(GroupsInput{}, false, la.Listings), la)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("sorted %v: prepared rows differ from MergeLive's", sorted)
		}
		if names := la.LiveGroupNames(); len(names) != 500 || !slices.IsSorted(names) {
			t.Errorf("sorted %v: %d live names after the merge, want 500 sorted", sorted, len(names))
		}
		if n := CountLiveIssues(got).StaleOnNonCoordinator; n != 34 {
			t.Errorf("sorted %v: %d stale listings flagged, want 34", sorted, n)
		}
	}
}

// One merge of sorted listings names the groups and says who listed each
// as listedGroupNames and listedBy over the brokers-only rows do: groups
// on several brokers, twice on one, and an empty listing included.
func TestMergeListedByMatchesListedBy(t *testing.T) {
	t.Parallel()
	lg := func(node int32, names ...string) wire.BrokerGroups {
		b := wire.BrokerGroups{Broker: wire.Broker{NodeID: node}, Groups: []wire.ListedGroup{}}
		for _, n := range names {
			b.Groups = append(b.Groups, wire.ListedGroup{Group: n})
		}
		return b
	}
	ls := []wire.BrokerGroups{lg(0, "a", "c", "c", "stale", "z"), lg(1), lg(2, "", "b", "stale", "y"), lg(5, "c", "stale")}
	names, listed, total, ok := mergeListedBy(ls)
	if !ok {
		t.Fatal("sorted listings were not merged")
	}
	want := listedGroupNames(ls)
	wantListed, wantTotal := listedBy(BrokersOnlyRows(want), ls)
	if !slices.Equal(names, want) || !reflect.DeepEqual(listed, wantListed) || total != wantTotal {
		t.Fatalf("merged %q %v (%d), want %q %v (%d)", names, listed, total, want, wantListed, wantTotal)
	}
	if got := listed[slices.Index(names, "stale")]; len(got) != 3 || got[0].node != 0 || got[1].node != 2 || got[2].node != 5 {
		t.Errorf("stale listed by %v, want nodes 0, 2, 5 in broker order", got)
	}
	ls[0].Groups[0], ls[0].Groups[4] = ls[0].Groups[4], ls[0].Groups[0]
	if _, _, _, ok := mergeListedBy(ls); ok {
		t.Error("unsorted listings were merged")
	}
}

// LiveGroupNames lists every group some broker listed, sorted.
func (la *LiveAnswers) LiveGroupNames() []string { return listedGroupNames(la.Listings) }
