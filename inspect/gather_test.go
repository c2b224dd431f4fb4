package inspect

import (
	"slices"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// gatherFixture is a two-broker volume with a file group, a pinned entry,
// and a gathering in which broker 1 did not answer and broker 0 lists a
// group it does not coordinate.
func gatherFixture() (*volume.Assignment, []GroupFile, *wire.GatheredGroups) {
	a := &volume.Assignment{Brokers: []volume.BrokerEntry{{ID: "kaas-0", Health: "alive"}, {ID: "kaas-1", Health: "alive"}},
		ConsumerGroups: []volume.GroupEntry{{GroupID: "pinned", Broker: "kaas-1"}}}
	files := []GroupFile{{Group: "on-disk", Layout: volume.OffsetsCurrent, Format: volume.FormatEnvelope, Partitions: 1}}
	gg := wire.NewGatheredGroups(
		[]wire.BrokerGroups{
			{Broker: wire.Broker{NodeID: 0, Host: "h0", Port: 9092}, Groups: []wire.ListedGroup{{Group: "live-only", State: "Empty"}, {Group: "wanderer", State: "Empty"}}},
			{Broker: wire.Broker{NodeID: 1, Host: "h1", Port: 9092}, Groups: []wire.ListedGroup{}, Err: "broker node 1: connection refused"},
		},
		map[string]wire.Coordinator{
			"live-only": {Key: "live-only", NodeID: 0},
			"wanderer":  {Key: "wanderer", NodeID: 1},
			"on-disk":   {Key: "on-disk", NodeID: 0},
			"pinned":    {Key: "pinned", NodeID: 0}, // the volume says kaas-1
		},
		map[string]wire.DescribedGroup{"live-only": {Group: "live-only", Coordinator: 0, State: "Empty", Protocol: "range", Members: []wire.Member{}}},
	)
	return a, files, gg
}

func TestBrokerSourcesNameBrokersAsTheVolume(t *testing.T) {
	t.Parallel()
	a, _, gg := gatherFixture()
	src := BrokerSources(gg.Listings, NewNodeNamer(a))
	want := []BrokerSource{{Node: 0, Broker: "kaas-0", Addr: "h0:9092", Answered: true, Groups: 2},
		{Node: 1, Broker: "kaas-1", Addr: "h1:9092", Error: "broker node 1: connection refused"}}
	if !slices.Equal(src, want) {
		t.Fatalf("sources %+v, want %+v", src, want)
	}
	if src := BrokerSources(gg.Listings, NewNodeNamer(nil)); src[1].Broker != "node 1" {
		t.Errorf("without a volume: %q, want node 1", src[1].Broker)
	}
}

func TestVolumeGroupNames(t *testing.T) {
	t.Parallel()
	a, files, _ := gatherFixture()
	if got := VolumeGroupNames(files, a); !slices.Equal(got, []string{"on-disk", "pinned"}) {
		t.Errorf("got %v", got)
	}
	if got := VolumeGroupNames(nil, nil); len(got) != 0 {
		t.Errorf("no volume: %v", got)
	}
}

func TestLiveGroupRowsMergedAndBrokersOnly(t *testing.T) {
	t.Parallel()
	a, files, gg := gatherFixture()
	rows := LiveGroupRows(GroupsInput{Assignment: a, Files: files}, true, NewLiveAnswers(gg, a))
	by := map[string]GroupRow{}
	for _, r := range rows {
		by[r.Group] = r
	}
	if len(by) != 4 {
		t.Fatalf("rows %+v, want the volume's 2 and the listed 2", rows)
	}
	if r := by["wanderer"]; !r.HasIssue(IssueStaleOnNonCoord) || !slices.Equal(r.Live.StaleOn, []string{"kaas-0"}) {
		t.Errorf("wanderer: %v %+v", r.Issues, r.Live)
	}
	if r := by["on-disk"]; !r.HasIssue(IssueFileOnly) {
		t.Errorf("on-disk: %v", r.Issues)
	}
	if r := by["pinned"]; !r.HasIssue(IssueWireMismatch) {
		t.Errorf("pinned: %v", r.Issues)
	}
	if r := by["live-only"]; r.Live.Protocol != "range" || r.Live.State != "Empty" || len(r.Issues) != 0 {
		t.Errorf("live-only: %v %+v", r.Issues, r.Live)
	}
	c := CountLiveIssues(rows)
	if c != (LiveIssueCounts{StaleOnNonCoordinator: 1, FileOnly: 1, WireMismatch: 1}) {
		t.Errorf("counts %+v", c)
	}

	// Without a volume: the listed groups only, and no mismatch can be told.
	only := LiveGroupRows(GroupsInput{}, false, NewLiveAnswers(gg, nil))
	if len(only) != 2 || only[0].Group != "live-only" || only[1].Group != "wanderer" {
		t.Fatalf("brokers only: %+v", only)
	}
	if c := CountLiveIssues(only); c.WireMismatch != 0 || c.FileOnly != 0 || c.StaleOnNonCoordinator != 1 {
		t.Errorf("brokers only counts %+v", c)
	}
}

func TestListNotes(t *testing.T) {
	t.Parallel()
	a, _, gg := gatherFixture()
	src := BrokerSources(gg.Listings, NewNodeNamer(a))
	n := ListNotes(src, LiveIssueCounts{StaleOnNonCoordinator: 1, FileOnly: 2, WireMismatch: 3}, "assignment.json")
	if n.Failed != 1 {
		t.Errorf("failed %d", n.Failed)
	}
	want := []string{"broker node 1: connection refused", "1 of 2 brokers did not answer", "1 group listed by a broker that does not coordinate it ",
		"3 groups: FindCoordinator disagrees with the coordinator computed from assignment.json"}
	if len(n.Warnings) != len(want) {
		t.Fatalf("warnings %q", n.Warnings)
	}
	for i, w := range want {
		if !strings.HasPrefix(n.Warnings[i], w) {
			t.Errorf("warning %d: %q, want it to start %q", i, n.Warnings[i], w)
		}
	}
	if len(n.Notes) != 1 || !strings.HasPrefix(n.Notes[0], "2 groups are only on the volume") {
		t.Errorf("notes %q", n.Notes)
	}
	if n := ListNotes(src[:1], LiveIssueCounts{StaleOnNonCoordinator: 2}, ""); n.Failed != 0 || len(n.Warnings) != 1 || !strings.Contains(n.Warnings[0], "coordinate them") {
		t.Errorf("all answered: %+v", n)
	}
}

func TestUnionGroupNames(t *testing.T) {
	t.Parallel()
	_, _, gg := gatherFixture()
	got := UnionGroupNames([]string{"wanderer", "b", "a", "b"}, gg.Listings)
	if !slices.Equal(got, []string{"a", "b", "live-only", "wanderer"}) {
		t.Errorf("got %v", got)
	}
}

// listedBy merges sorted rows and listings, and falls back to a map when
// either is out of order: both give each row its listings in broker order.
func TestListedByMergeAndMap(t *testing.T) {
	t.Parallel()
	ls := []wire.BrokerGroups{
		{Broker: wire.Broker{NodeID: 0}, Groups: []wire.ListedGroup{{Group: "a"}, {Group: "c"}, {Group: "e"}}},
		{Broker: wire.Broker{NodeID: 2}, Groups: []wire.ListedGroup{{Group: "c"}, {Group: "d"}}},
	}
	want := map[string][]int32{"a": {0}, "b": nil, "c": {0, 2}, "d": {2}, "e": {0}}
	check := func(name string, rows []GroupRow, ls []wire.BrokerGroups) {
		t.Helper()
		got, total := listedBy(rows, ls)
		n := 0
		for i := range got {
			n += len(got[i])
		}
		if n != total {
			t.Errorf("%s: %d listings in all, counted %d", name, n, total)
		}
		for i, r := range rows {
			var nodes []int32
			for _, l := range got[i] {
				nodes = append(nodes, l.node)
			}
			if !slices.Equal(nodes, want[r.Group]) {
				t.Errorf("%s: %s listed by %v, want %v", name, r.Group, nodes, want[r.Group])
			}
		}
	}
	sorted := []GroupRow{{Group: "a"}, {Group: "b"}, {Group: "c"}, {Group: "d"}, {Group: "e"}}
	check("merge", sorted, ls)
	check("rows unsorted", []GroupRow{{Group: "d"}, {Group: "a"}, {Group: "e"}, {Group: "c"}, {Group: "b"}}, ls)
	check("repeated row", []GroupRow{{Group: "c"}, {Group: "c"}}, ls)
	unsorted := []wire.BrokerGroups{ls[0], {Broker: wire.Broker{NodeID: 2}, Groups: []wire.ListedGroup{{Group: "d"}, {Group: "c"}}}}
	check("listing unsorted", sorted, unsorted)
}

// LiveGroupRows is what a live groups list merges: one row per group the
// volume or a broker knows, each with its live view and live flags merged.
// Without a volume (hasVolume false) the rows are the listed groups alone.
func LiveGroupRows(in GroupsInput, hasVolume bool, la *LiveAnswers) []GroupRow {
	return MergeListedRows(PrepareListedRows(in, hasVolume, la.Listings), la)
}
