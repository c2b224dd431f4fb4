package inspect

import (
	"slices"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

func committed(offs map[string]map[int32]int64) map[string]map[int32]wire.Committed {
	out := map[string]map[int32]wire.Committed{}
	for t, ps := range offs {
		out[t] = map[int32]wire.Committed{}
		for p, o := range ps {
			out[t][p] = wire.Committed{Offset: o}
		}
	}
	return out
}

// The topics asked per group come from its file and its members'
// subscriptions; every partition of each (per metadata) is asked.
func TestServedTopicsAndWant(t *testing.T) {
	t.Parallel()
	files := map[string]*volume.OffsetFile{"app": {Entries: []volume.OffsetEntry{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}}}}
	described := map[string]wire.DescribedGroup{"app": {Members: []wire.Member{{Subscription: []string{"payments", "orders"}}}}}
	topics := ServedTopics(files, described)
	if !slices.Equal(topics["app"], []string{"orders", "payments"}) {
		t.Fatalf("topics %v", topics)
	}
	meta := map[string]*wire.TopicMeta{"orders": {Partitions: map[int32]int32{0: 0, 1: 1, 2: 2}}, "payments": {Err: "UNKNOWN_TOPIC_OR_PARTITION"}}
	want := ServedWant(topics, meta)
	if len(want) != 1 || !slices.Equal(want["app"]["orders"], []int32{0, 1, 2}) || want["app"]["payments"] != nil {
		t.Errorf("want %v", want)
	}
}

// A partition the coordinator serves that the file lacks is reported; one
// the coordinator has no offset for, a failed answer, an unknown group or
// a group without a file are not.
func TestFindServedNotFiled(t *testing.T) {
	t.Parallel()
	files := map[string]*volume.OffsetFile{
		"lost": {Path: "/cd/__consumer_offsets/lost.json", Entries: []volume.OffsetEntry{{Topic: "orders", Partition: 0, Offset: 5}}},
		"ok":   {Entries: []volume.OffsetEntry{{Topic: "orders", Partition: 0, Offset: 5}, {Topic: "orders", Partition: 1, Offset: 6}}},
		"err":  {Entries: []volume.OffsetEntry{}},
		"gone": {Entries: []volume.OffsetEntry{}},
	}
	live := map[string]wire.GroupOffsets{
		"lost":   {Group: "lost", Offsets: committed(map[string]map[int32]int64{"orders": {0: 5, 1: 9, 3: 2, 2: -1}, "payments": {0: 1}})},
		"ok":     {Group: "ok", Offsets: committed(map[string]map[int32]int64{"orders": {0: 5, 1: 6, 2: -1}})},
		"err":    {Group: "err", Err: "NOT_COORDINATOR", Offsets: committed(map[string]map[int32]int64{"orders": {0: 1}})},
		"gone":   {Group: "gone", NotFound: true},
		"nofile": {Group: "nofile", Offsets: committed(map[string]map[int32]int64{"orders": {0: 1}})},
	}
	got := FindServedNotFiled(live, files)
	if len(got) != 1 || got[0].Group != "lost" || got[0].Path != files["lost"].Path || !slices.Equal(got[0].Missing, []string{"orders/1", "orders/3", "payments/0"}) {
		t.Fatalf("got %+v", got)
	}
}

// The finding names the generation it assumes and that generation's cause.
func TestAddServedNotFiledNamesTheGeneration(t *testing.T) {
	t.Parallel()
	lost := []ServedNotFiled{{Group: "app", Missing: []string{"orders/1", "orders/2"}}, {Group: "b", Missing: []string{"t/0"}}}
	for _, c := range []struct {
		gen  volume.Generation
		want string
	}{
		{volume.GenGo, "<group>.tmp"},
		{volume.Gen018, "swallows a failed write"},
		{volume.GenUnknown, "cause not established"},
	} {
		var r DoctorReport
		r.AddServedNotFiled(lost, c.gen, " --data-dir /d", " --brokers k:9092")
		r.AddServedNotFiled(nil, c.gen, "", "")
		if len(r.Findings) != 1 {
			t.Fatalf("%s: %d findings", c.gen, len(r.Findings))
		}
		f := r.Findings[0]
		if f.Code != DocServedNotFiled || f.Severity != volume.SevError || f.BlastRadius != 2 || !slices.Equal(f.Subjects, []string{"app", "b"}) {
			t.Errorf("%s: %+v", c.gen, f)
		}
		for _, w := range []string{c.want, "generation " + c.gen.Label(), "3 partitions", "app lacks orders/1, orders/2"} {
			if !strings.Contains(f.Message, w) {
				t.Errorf("%s: message lacks %q: %s", c.gen, w, f.Message)
			}
		}
	}
}
