package observe

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// fileData is one current-layout offset file of a group with entries
// "topic/partition=offset".
func fileData(group string, entries map[string]int64) []inspect.GroupFileData {
	of := &volume.OffsetFile{Path: "c/" + group + ".json", Format: volume.FormatEnvelope}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range entries {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		topic, part, _ := strings.Cut(k, "/")
		of.Entries = append(of.Entries, volume.OffsetEntry{Topic: topic, Partition: int32(part[0] - '0'), Offset: entries[k]})
	}
	return []inspect.GroupFileData{{Path: of.Path, Layout: volume.OffsetsCurrent, File: of}}
}

// testVolume is a volume read with these files whose every partition ends
// at end (segments), starting at 0; its generation is Rust 0.2.18.
func testVolume(files map[string][]inspect.GroupFileData, end int64) *testVol {
	v := &VolumeRead{Files: files, Known: map[string]bool{}, Layout: volume.Layout{Gen: volume.GenerationInfo{Gen: volume.Gen018, Name: "0.2.18", Label: "Rust 0.2.18", Source: volume.GenSourcePinned}}}
	for g := range files {
		v.Known[g] = true
	}
	return &testVol{VolumeRead: v, end: end}
}

type testVol struct {
	*VolumeRead
	end int64
}

// State is the offline state with every partition at [0, end).
func (v *testVol) State(group string) *inspect.GroupState {
	gs := BuildState(GroupInput{Group: group, Volume: true, Files: v.Files[group], Gen: v.Gen(), Logs: nil})
	for i := range gs.Partitions {
		p := &gs.Partitions[i]
		*p = inspect.BuildPartition(&gs.Facts, &inspect.PartitionFacts{Topic: p.Topic, Partition: p.Partition, File: factOrNil(p.File), Segments: segBounds(0, v.end)})
	}
	gs.Totals = inspect.SumLag(gs.Partitions)
	return &gs
}

// states are the live states of the described groups.
func (v *testVol) states(all []wire.GroupDescription, held map[string]bool) func(string) *inspect.GroupState {
	by := map[string]*wire.GroupDescription{}
	for i := range all {
		by[all[i].Group] = &all[i]
	}
	return func(g string) *inspect.GroupState {
		return v.LiveState(by[g], HeldOf(held, g), time.Unix(1, 0))
	}
}

func factOrNil(f volume.Fact) *volume.Fact {
	if f.Source == "" {
		return nil
	}
	return &f
}

func segBounds(start, end int64) *volume.LogBounds {
	return &volume.LogBounds{Start: &volume.Fact{Value: start, Source: volume.SourceSegments}, End: &volume.Fact{Value: end, Source: volume.SourceSegments}}
}

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

func TestDescribeLive(t *testing.T) {
	t.Parallel()
	failed := described("failed", 2, "", 0, nil)
	failed.Err = "COORDINATOR_LOAD_IN_PROGRESS"
	all := []wire.GroupDescription{
		described("stable", 0, "Stable", 2, map[string]int64{"orders/0": 5, "orders/1": 9}),
		described("ghost", 1, "Empty", 0, nil),
		described("dead-ghost", 1, "Dead", 0, nil),
		described("file-only", 1, "Empty", 0, nil),
		described("committed-no-file", 0, "Empty", 0, map[string]int64{"orders/0": 3}),
		failed,
	}
	// The brokers are asked for the log ends of the topics a group's
	// members, committed offsets or offset file name (wire.DescribeMany).
	for _, i := range []int{0, 3, 4} {
		all[i].Partitions = wire.JoinOffsets(all[i].Committed.Offsets, map[string]map[int32]wire.LogOffsets{"orders": {0: {End: 10}, 1: {End: 10}}}, nil)
	}
	vol := testVolume(map[string][]inspect.GroupFileData{"file-only": fileData("file-only", map[string]int64{"orders/0": 1})}, 10)
	fo := inspect.DescribeGroup("file-only", nil, vol.Files["file-only"], vol.State("file-only"))
	files := map[string]*inspect.GroupDescription{"file-only": &fo}
	lag6, _ := inspect.ParseLagFilter(">6") // stable 6, file-only 9 (from the file), committed-no-file 7
	for _, c := range []struct {
		name                     string
		held                     map[string]bool
		filter                   inspect.DescribeFilter
		lag                      *inspect.LagFilter
		groups, notFound, failed string
		leftOut                  int
	}{
		{"every kind", nil, inspect.DescribeFilter{}, nil, "stable,file-only,committed-no-file,failed", "ghost,dead-ghost", "failed", 0},
		{"lag filter keeps a failure failed", nil, inspect.DescribeFilter{}, lag6, "file-only,committed-no-file", "ghost,dead-ghost", "failed", 0},
		{"topic filter leaves the partition-less out", map[string]bool{"file-only": false}, inspect.DescribeFilter{Topics: []string{"orders"}}, nil,
			"stable,file-only,committed-no-file", "ghost,dead-ghost", "failed", 1},
	} {
		r := inspect.DescribeLive(inspect.LiveDescribeInput{Described: all, Files: files, Held: c.held, Filter: c.filter, Lag: c.lag, State: vol.states(all, c.held)})
		var got []string
		for _, d := range r.Groups {
			got = append(got, d.Group)
		}
		if strings.Join(got, ",") != c.groups || strings.Join(r.NotFound, ",") != c.notFound || strings.Join(r.Failed, ",") != c.failed || r.LeftOut != c.leftOut {
			t.Errorf("%s: groups %v notFound %v failed %v leftOut %d", c.name, got, r.NotFound, r.Failed, r.LeftOut)
		}
	}
	// A group its coordinator does not list is fileOnly, without live state;
	// one it lists (or one not asked about) keeps the wire's state.
	for held, want := range map[bool]bool{true: false, false: true} {
		r := inspect.DescribeLive(inspect.LiveDescribeInput{Described: all[3:4], Files: files, Held: map[string]bool{"file-only": held}, State: vol.states(all, map[string]bool{"file-only": held})})
		if len(r.Groups) != 1 || slices.Contains(r.Groups[0].Issues, inspect.IssueFileOnly) != want {
			t.Errorf("held %v: %+v", held, r.Groups)
		}
	}
	r := inspect.DescribeLive(inspect.LiveDescribeInput{})
	if r.Groups == nil || r.NotFound == nil || len(r.Groups) != 0 {
		t.Errorf("nothing described: lists must be empty, not null: %+v", r)
	}
}

// A live group's partitions: lag from the coordinator while it holds the
// group, from the file a joining consumer loads when it does not, and
// unknown where nothing a consumer would get is committed.
func TestLiveState(t *testing.T) {
	t.Parallel()
	w := wire.GroupDescription{DescribedGroup: wire.DescribedGroup{Group: "g", Coordinator: 1, State: "Empty", Members: []wire.Member{}},
		Committed: wire.GroupOffsets{Offsets: map[string]map[int32]wire.Committed{"t": {0: {Offset: 5}, 1: {Offset: -1}, 2: {Offset: 9}}}}}
	w.Partitions = wire.JoinOffsets(w.Committed.Offsets, map[string]map[int32]wire.LogOffsets{"t": {0: {Start: 0, End: 10}, 1: {Start: 0, End: 10}, 2: {Start: 0, End: 10}, 3: {Start: 4, End: 10}}}, nil)
	vol := testVolume(map[string][]inspect.GroupFileData{"g": fileData("g", map[string]int64{"t/0": 5, "t/1": 3, "t/2": 7})}, 10)
	// Not held: a consumer that joins loads the file (7 on t/2, not the
	// coordinator's 9), so the lag counts from the file everywhere.
	gs := vol.LiveState(&w, inspect.HeldNo, time.Unix(1, 0))
	if len(gs.Partitions) != 4 || gs.Totals.Lag != 5+7+3 || gs.Totals.Unknown != 1 {
		t.Fatalf("not held: %+v", gs.Totals)
	}
	if p := gs.Partitions[2]; p.ResumeRule != inspect.ResumeJoinLoads || p.Resume.Value != 7 || !p.Has(inspect.IncDisagree) {
		t.Errorf("t/2 not held: %+v", p)
	}
	if p := gs.Partitions[3]; p.LagKnown || p.ResumeRule != inspect.ResumeNone || !strings.Contains(p.Note(), "auto.offset.reset") {
		t.Errorf("t/3 nothing committed: %+v", p)
	}
	// Held: the coordinator's memory counts (9 on t/2); t/1 has nothing
	// there, so a consumer starts it per auto.offset.reset.
	gs = vol.LiveState(&w, inspect.HeldYes, time.Unix(1, 0))
	if gs.Totals.Lag != 5+1 || gs.Totals.Unknown != 2 || gs.Partitions[1].LagKnown {
		t.Errorf("held: %+v", gs.Totals)
	}
	if len(gs.Incidents) != 1 || gs.Incidents[0].Code != inspect.IncUncommittedPartitions {
		t.Errorf("held: the uncommitted partitions of t are an incident: %+v", gs.Incidents)
	}
	if p := gs.Partitions[1]; !p.Has(inspect.IncNotInFile) && p.Coordinator.Source != "" {
		t.Errorf("t/1: %+v", p)
	}
	// Without a volume the coordinator's answer is all there is.
	gs = (*VolumeRead)(nil).LiveState(&w, inspect.HeldUnknown, time.Unix(1, 0))
	if gs.Totals.Lag != 5+1 || gs.Partitions[0].ResumeRule != inspect.ResumeCoordinator {
		t.Errorf("no volume: %+v %+v", gs.Totals, gs.Partitions[0])
	}
}
