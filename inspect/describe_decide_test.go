package inspect

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// fileData is one current-layout offset file of a group with entries
// "topic/partition=offset".
func fileData(group string, entries map[string]int64) []GroupFileData {
	of := &volume.OffsetFile{Path: "c/" + group + ".json", Format: volume.FormatEnvelope}
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		topic, part, _ := strings.Cut(k, "/")
		of.Entries = append(of.Entries, volume.OffsetEntry{Topic: topic, Partition: int32(part[0] - '0'), Offset: entries[k]})
	}
	return []GroupFileData{{Path: of.Path, Layout: volume.OffsetsCurrent, File: of}}
}

// logsAt answers every partition with log start 0 and the given end.
// LogLookup returns a partition's log bounds with their provenance
// (volume.LogReader.Get): never nil.
type LogLookup func(topic string, partition int32) *volume.LogBounds

func logsAt(end int64) LogLookup {
	return func(string, int32) *volume.LogBounds {
		return &volume.LogBounds{Start: &volume.Fact{Value: 0, Source: volume.SourceSegments}, End: &volume.Fact{Value: end, Source: volume.SourceSegments}}
	}
}

func TestDescribeOffline(t *testing.T) {
	t.Parallel()
	files := map[string][]GroupFileData{
		"behind":  fileData("behind", map[string]int64{"orders/0": 10, "audit/0": 95}),
		"current": fileData("current", map[string]int64{"orders/0": 100}),
	}
	known := map[string]bool{"behind": true, "current": true, "entry-only": true}
	lag50, _ := ParseLagFilter(">50")
	for _, c := range []struct {
		name     string
		selected []string
		filter   DescribeFilter
		lag      *LagFilter
		groups   string
		notFound string
		leftOut  int
	}{
		{"named, one missing", []string{"behind", "ghost", "current"}, DescribeFilter{}, nil, "behind,current", "ghost", 0},
		{"an entry without a file is described", []string{"entry-only"}, DescribeFilter{}, nil, "entry-only", "", 0},
		{"lag filter drops, does not count as left out", []string{"behind", "current"}, DescribeFilter{}, lag50, "behind", "", 0},
		{"lagging-only leaves a caught-up group out", []string{"behind", "current"}, DescribeFilter{LaggingOnly: true}, nil, "behind", "", 1},
		{"topic leaves groups without it out", []string{"behind", "current", "entry-only"}, DescribeFilter{Topics: []string{"audit"}}, nil, "behind", "", 2},
		{"nothing selected", nil, DescribeFilter{}, nil, "", "", 0},
	} {
		r := DescribeOffline(OfflineDescribeInput{Selected: c.selected, Known: known, Files: files, State: statesOf(files, logsAt(100)), Filter: c.filter, Lag: c.lag})
		var got []string
		for _, d := range r.Groups {
			got = append(got, d.Group)
		}
		if strings.Join(got, ",") != c.groups || strings.Join(r.NotFound, ",") != c.notFound || r.LeftOut != c.leftOut || r.Failed != nil {
			t.Errorf("%s: groups %v notFound %v leftOut %d failed %v", c.name, got, r.NotFound, r.LeftOut, r.Failed)
		}
	}
	// --topic counts only what it keeps.
	r := DescribeOffline(OfflineDescribeInput{Selected: []string{"behind"}, Known: known, Files: files, State: statesOf(files, logsAt(100)), Filter: DescribeFilter{Topics: []string{"orders"}}})
	if len(r.Groups) != 1 || r.Groups[0].TotalLag != 90 || len(r.Groups[0].Partitions) != 1 {
		t.Errorf("topic orders: %+v", r.Groups)
	}
}

func TestOfflineNotFoundError(t *testing.T) {
	t.Parallel()
	fifo := volume.Finding{Code: volume.CodeNotRegular, Path: "/v/cd/__consumer_offsets/pipe.json", Message: "a FIFO", Fix: "remove it"}
	other := volume.Finding{Code: volume.CodeOffsetsCorrupt, Path: "/v/cd/__consumer_offsets/gone.json", Message: "truncated"}
	for _, c := range []struct {
		notFound []string
		findings []volume.Finding
		want     string
	}{
		{nil, []volume.Finding{fifo}, ""},
		{[]string{"gone"}, []volume.Finding{other}, `no offset file and no explicit entry for "gone" on this volume`},
		{[]string{"gone", "pipe"}, []volume.Finding{other, fifo},
			`no readable offset file and no explicit entry for "gone", "pipe" on this volume; /v/cd/__consumer_offsets/pipe.json: a FIFO (remove it)`},
		// A group whose name only ends like the file is not that file.
		{[]string{"ipe"}, []volume.Finding{fifo}, `no offset file and no explicit entry for "ipe" on this volume`},
	} {
		err := OfflineNotFoundError(c.notFound, c.findings)
		if (err == nil) != (c.want == "") || (err != nil && err.Error() != c.want) {
			t.Errorf("%v: got %v, want %q", c.notFound, err, c.want)
		}
	}
}

func TestDescribeKnownAndKnownPartitions(t *testing.T) {
	t.Parallel()
	files := map[string][]GroupFileData{"g": fileData("g", map[string]int64{"b/1": 4, "a/0": 1, "a/2": 3})}
	known := map[string]bool{"g": true, "entry-only": true}
	d := DescribeKnown([]string{"g", "entry-only", "ghost"}, known, files, nil, statesOf(files, nil))
	if len(d) != 2 || d["g"] == nil || d["entry-only"] == nil || d["ghost"] != nil {
		t.Fatalf("described %v", d)
	}
	tp := KnownPartitions(d)
	if len(tp) != 1 || !slices.Equal(tp["g"]["a"], []int32{0, 2}) || !slices.Equal(tp["g"]["b"], []int32{1}) {
		t.Errorf("known partitions %v", tp)
	}
	if got := KnownPartitions(nil); got == nil || len(got) != 0 {
		t.Errorf("no volume: %v", got)
	}
}

// described is a wire answer for group on node with members and committed
// offsets "topic/partition=offset".
func described(group string, node int32, state string, members int, committed map[string]int64) wire.GroupDescription {
	w := wire.GroupDescription{DescribedGroup: wire.DescribedGroup{Group: group, Coordinator: node, State: state, Members: []wire.Member{}},
		Committed: wire.GroupOffsets{Group: group, Coordinator: node, Offsets: map[string]map[int32]wire.Committed{}}}
	for i := range members {
		w.Members = append(w.Members, wire.Member{MemberID: group + "-m" + string(rune('0'+i)), ClientID: "c", ClientHost: "/10.0.0.1", HostReported: true,
			Assignment: []wire.AssignedTopic{{Topic: "orders", Partitions: []int32{int32(i)}}}})
	}
	for k, off := range committed {
		topic, part, _ := strings.Cut(k, "/")
		p := int32(part[0] - '0')
		if w.Committed.Offsets[topic] == nil {
			w.Committed.Offsets[topic] = map[int32]wire.Committed{}
		}
		w.Committed.Offsets[topic][p] = wire.Committed{Offset: off}
	}
	return w
}

func TestFetchAllCandidates(t *testing.T) {
	t.Parallel()
	failed := described("failed", 0, "", 0, nil)
	failed.Err = "NOT_COORDINATOR"
	noCoord := described("no-coord", -1, "", 0, nil)
	all := []wire.GroupDescription{
		described("bare", 1, "Empty", 0, nil),
		described("members", 0, "Stable", 1, nil),
		described("has-file", 2, "Empty", 0, nil),
		described("answered", 0, "Empty", 0, map[string]int64{"orders/0": 5}),
		failed, noCoord,
		described("bare-2", 2, "Empty", 0, nil),
	}
	known := map[string]wire.TopicPartitions{"has-file": {"orders": {0}}}
	groups, coords := FetchAllCandidates(all, known)
	if !slices.Equal(groups, []string{"bare", "bare-2"}) || coords["bare"].NodeID != 1 || coords["bare-2"].NodeID != 2 || coords["bare"].Key != "bare" || len(coords) != 2 {
		t.Errorf("candidates %v %v", groups, coords)
	}
}

func TestMergeFetchAll(t *testing.T) {
	t.Parallel()
	all := []wire.GroupDescription{described("found", 0, "Empty", 0, nil), described("nothing", 1, "Empty", 0, nil), described("untouched", 0, "Stable", 1, nil)}
	ans := wire.FetchAllAnswers{
		Committed: map[string]wire.GroupOffsets{
			"found":   {Group: "found", Offsets: map[string]map[int32]wire.Committed{"orders": {0: {Offset: 40}, 1: {Offset: 7}}}},
			"nothing": {Group: "nothing", Offsets: map[string]map[int32]wire.Committed{}},
		},
		Logs: map[string]map[int32]wire.LogOffsets{"orders": {0: {Start: 0, End: 100}, 1: {Start: 0, End: 7}}},
	}
	empty := MergeFetchAll(all, []string{"found", "nothing"}, ans)
	if !slices.Equal(empty, []string{"nothing"}) {
		t.Errorf("empty %v", empty)
	}
	want := []wire.PartitionOffsets{{Topic: "orders", Partition: 0, Committed: 40, Start: 0, End: 100}, {Topic: "orders", Partition: 1, Committed: 7, Start: 0, End: 7}}
	if len(all[0].Committed.Offsets["orders"]) != 2 || !slices.Equal(all[0].Partitions, want) {
		t.Errorf("found: committed %v partitions %+v", all[0].Committed.Offsets, all[0].Partitions)
	}
	if len(all[1].Committed.Offsets) != 0 || len(all[2].Committed.Offsets) != 0 {
		t.Errorf("others changed: %+v %+v", all[1].Committed, all[2].Committed)
	}
	// The log round failed: offsets kept, log ends unknown.
	all = []wire.GroupDescription{described("found", 0, "Empty", 0, nil)}
	ans.Logs, ans.LogsErr = nil, errors.New("metadata: timeout")
	if empty := MergeFetchAll(all, []string{"found"}, ans); empty != nil || len(all[0].Partitions) != 2 || all[0].Partitions[0].End != -1 || all[0].Partitions[1].Committed != 7 {
		t.Errorf("no logs: empty %v partitions %+v", empty, all[0].Partitions)
	}
	// Nothing asked: nothing to do.
	if empty := MergeFetchAll(all, nil, wire.FetchAllAnswers{}); empty != nil {
		t.Errorf("nothing asked: %v", empty)
	}
}

func TestNoPartitionsWarning(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		empty     []string
		hasVolume bool
		want      string
	}{
		{nil, true, ""},
		{[]string{"a"}, false, `no partitions known for "a" (no members, and kaas answers nothing to OffsetFetch-all): pass --data-dir to read their offset files`},
		{[]string{"a", "b"}, true, `no partitions known for "a", "b" (no members, and kaas answers nothing to OffsetFetch-all): and no offset file on the volume`},
	} {
		if got := NoPartitionsWarning(c.empty, c.hasVolume); got != c.want {
			t.Errorf("%v %v: %q", c.empty, c.hasVolume, got)
		}
	}
}

func TestHoldCandidates(t *testing.T) {
	t.Parallel()
	failed := described("failed", 0, "", 0, nil)
	failed.Err = "COORDINATOR_NOT_AVAILABLE"
	all := []wire.GroupDescription{
		described("a", 0, "Empty", 0, nil), described("b", 1, "Empty", 0, nil), described("c", 0, "Empty", 0, nil),
		described("members", 0, "Stable", 2, nil), described("no-file", 0, "Empty", 0, nil), described("no-coord", -1, "", 0, nil), failed,
	}
	files := map[string]*GroupDescription{"a": {}, "b": {}, "c": {}, "members": {}, "no-coord": {}, "failed": {}}
	want := HoldCandidates(all, files)
	if len(want) != 2 || !slices.Equal(want[0], []string{"a", "c"}) || !slices.Equal(want[1], []string{"b"}) {
		t.Errorf("candidates %v", want)
	}
	if HoldCandidates(all, nil) != nil {
		t.Error("no volume: no candidates")
	}
}

func TestLiveDescribeError(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		r    DescribeResult[LiveDescription]
		want string
	}{
		{DescribeResult[LiveDescription]{}, ""},
		{DescribeResult[LiveDescription]{NotFound: []string{"x"}, Failed: []string{"y"}}, `no such group on the brokers or the volume: "x"`},
		{DescribeResult[LiveDescription]{Failed: []string{"y"}}, `1 group could not be described: "y"`},
		{DescribeResult[LiveDescription]{Failed: []string{"y", "z"}}, `2 groups could not be described: "y", "z"`},
	} {
		err := LiveDescribeError(c.r)
		if (err == nil) != (c.want == "") || (err != nil && err.Error() != c.want) {
			t.Errorf("%+v: %v, want %q", c.r, err, c.want)
		}
	}
}

func TestAnnotateLive(t *testing.T) {
	t.Parallel()
	no := false
	groups := []LiveDescription{
		{Group: "empty", State: "Empty", OffsetsDisagree: 2},
		{Group: "rebalancing", State: "PreparingRebalance", CoordinatorAgrees: &no, WireCoordinator: "kaas-1", Coordinator: &CoordinatorView{}},
		{Group: "stable", State: "Stable", Errors: []string{"OffsetFetch: timeout"}},
		{Group: "stable-2", State: "Stable", Errors: []string{"DescribeGroups: x", "OffsetFetch: y"}},
	}
	warns := AnnotateLive(groups, volume.GenerationInfo{})
	want := []string{
		"group empty: the offset file and the coordinator disagree on 2 partitions",
		"group rebalancing: FindCoordinator says kaas-1, the volume's assignment says none",
		"3 errors describing groups (see each group's errors); the first: group stable: OffsetFetch: timeout",
	}
	if !slices.Equal(warns, want) {
		t.Errorf("warnings:\n%s\nwant\n%s", strings.Join(warns, "\n"), strings.Join(want, "\n"))
	}
	if !slices.Equal(groups[0].Notes, []string{"Consumer group 'empty' has no active members."}) ||
		!slices.Equal(groups[1].Notes, []string{"Warning: Consumer group 'rebalancing' is rebalancing."}) || groups[2].Notes != nil {
		t.Errorf("notes: %q %q %q", groups[0].Notes, groups[1].Notes, groups[2].Notes)
	}
	if AnnotateLive(nil, volume.GenerationInfo{}) != nil {
		t.Error("no groups, no warnings")
	}
}

func TestLivePartitionCells(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p          LivePartition
		qual, host string
	}{
		{LivePartition{LagFrom: "live", Member: "m", Host: "h"}, "", "h"},
		{LivePartition{LagFrom: "file", Host: "h"}, "file", ""},
		{LivePartition{LagFrom: "logStart"}, "from start", ""},
		{LivePartition{}, "", ""},
	} {
		if q, h := c.p.LagQualifier(), c.p.AssignedHost(); q != c.qual || h != c.host {
			t.Errorf("%+v: %q %q", c.p, q, h)
		}
	}
}

func TestUnlistedWarnings(t *testing.T) {
	t.Parallel()
	ls := []wire.BrokerGroups{{Broker: wire.Broker{NodeID: 0}}, {Broker: wire.Broker{NodeID: 1}, Err: "broker kaas-1: ListGroups: COORDINATOR_LOAD_IN_PROGRESS"}}
	got := UnlistedWarnings(ls)
	if !slices.Equal(got, []string{"broker kaas-1: ListGroups: COORDINATOR_LOAD_IN_PROGRESS: groups only it holds are not described"}) {
		t.Errorf("warnings %q", got)
	}
	if UnlistedWarnings(ls[:1]) != nil {
		t.Error("every broker answered: no warning")
	}
}

// statesOf builds each group's offline state from its test files and a log
// lookup, as observe.BuildState does for a volume: the counted file's
// entries with the partitions' bounds.
func statesOf(files map[string][]GroupFileData, logs LogLookup) func(string) *GroupState {
	return func(group string) *GroupState {
		gs := stateOf(group, files[group], logs)
		return &gs
	}
}

func stateOf(group string, files []GroupFileData, logs LogLookup) GroupState {
	g := GroupFacts{Volume: true, File: FileAbsent}
	var parts []PartitionFacts
	if i := PickFile(len(files), func(i int) string { return files[i].Layout }); i >= 0 && files[i].File != nil {
		g.File = FileOffsets
		for _, e := range files[i].File.Entries {
			pf := PartitionFacts{Topic: e.Topic, Partition: e.Partition, File: &volume.Fact{Value: e.Offset, Source: volume.SourceFile}}
			if logs != nil {
				pf.Segments = logs(e.Topic, e.Partition)
			}
			parts = append(parts, pf)
		}
	}
	return BuildGroup(group, g, parts, nil)
}
