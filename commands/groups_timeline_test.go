package commands

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/watch"
)

// writeTestEvents records the membership of writeTestJournal's group "app"
// beside its offsets journal: two members at 10:00, one of them gone at
// 10:02:30 (before the 10:03 rewind of orders/1, which is at or below
// what the partition held before that change), a REWIND condition, and
// an alive record every 30 s so that the story knows it was observed.
func writeTestEvents(t *testing.T, root string) {
	t.Helper()
	j := &watch.EventJournal{Dir: filepath.Join(root, watch.EventJournalSubdir), Observer: "exporter", Interval: 15 * time.Second}
	base := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return base.Add(time.Duration(sec) * time.Second) }
	a := watch.EventMember{ID: "app-1-aaaa", ClientID: "app-1", Host: "/10.0.0.1"}
	b := watch.EventMember{ID: "app-2-bbbb", ClientID: "app-2", Host: "/10.0.0.2"}
	steps := []struct {
		at   int
		recs []watch.EventRecord
	}{
		{1, []watch.EventRecord{{Kind: watch.EvMembers, Time: at(1), Group: "app", State: "Stable", Coordinator: "kaas-0", HostsReported: true, Members: []watch.EventMember{a, b}}}},
		{150, []watch.EventRecord{{Kind: watch.EvMembers, Time: at(150), Group: "app", State: "Stable", Coordinator: "kaas-0", HostsReported: true, Members: []watch.EventMember{a},
			Change: &watch.EventChange{Since: at(140), ObservedGeneration: 1, Causes: []string{inspect.CauseMemberLeft}, Left: []string{b.ID}}}}},
		{185, []watch.EventRecord{{Kind: watch.EvCondition, Time: at(185), Group: "app", Condition: inspect.HealthRewind, Entered: true, Detail: "orders/1 moved back from 30 to 4"}}},
	}
	next := 0
	for s := 0; s <= 330; s += 30 {
		for next < len(steps) && steps[next].at <= s {
			if err := j.Append(at(steps[next].at), steps[next].recs); err != nil {
				t.Fatal(err)
			}
			next++
		}
		if err := j.Append(at(s), []watch.EventRecord{{Kind: watch.EvAlive, Time: at(s)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

// groups timeline over an offsets journal and an events journal: the
// story in order, the rewind attributed to the member that left, and
// the notes saying what the record cannot tell.
func TestGroupsTimeline(t *testing.T) {
	t.Parallel()
	root := writeTestJournal(t)
	writeTestEvents(t, root)
	r := runCLI(t, "", nil, "groups", "timeline", "app", "--journal", root)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	golden(t, "groups-timeline.txt", strings.ReplaceAll(r.Out, root, "JOURNAL"))

	r = runCLI(t, "", nil, "groups", "timeline", "app", "--journal", root, "-o", "json")
	var tl inspect.Timeline
	if err := json.Unmarshal([]byte(r.Out), &tl); err != nil || r.Code != 0 {
		t.Fatalf("%v %d %s", err, r.Code, r.Err)
	}
	kinds := map[string]int{}
	var rewind *inspect.TimelineEvent
	for i, e := range tl.Events {
		kinds[e.Kind]++
		if e.Kind == inspect.TLRewind && rewind == nil {
			rewind = &tl.Events[i]
		}
		if i > 0 && e.Time.Before(tl.Events[i-1].Time) {
			t.Fatalf("event %d out of order", i)
		}
	}
	for k, n := range map[string]int{inspect.TLState: 1, inspect.TLMembersSeen: 1, inspect.TLGeneration: 1, inspect.TLCondition: 1} {
		if kinds[k] != n {
			t.Errorf("%d %s events, want %d: %v", kinds[k], k, n, kinds)
		}
	}
	if rewind == nil || rewind.Attribution == nil || rewind.Attribution.Author != inspect.AuthorZombie || rewind.Severity != "page" {
		t.Fatalf("rewind: %+v", rewind)
	}

	// --source keeps one source; --until cuts the story.
	r = runCLI(t, "", nil, "groups", "timeline", "app", "--journal", root, "--source", "members", "--until", "2026-11-30T10:02:00Z", "-o", "json")
	tl = inspect.Timeline{}
	if err := json.Unmarshal([]byte(r.Out), &tl); err != nil || r.Code != 0 {
		t.Fatalf("%v %d %s", err, r.Code, r.Err)
	}
	if len(tl.Events) != 1 || tl.Events[0].Kind != inspect.TLMembersSeen || len(tl.Events[0].Members) != 2 {
		t.Errorf("--source members --until: %+v", tl.Events)
	}
}

func TestGroupsTimelineUsage(t *testing.T) {
	t.Parallel()
	root := writeTestJournal(t)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"groups", "timeline"}, 2, "one GROUP"},
		{[]string{"groups", "timeline", "app"}, 2, "nothing to read"},
		{[]string{"groups", "timeline", "app", "--journal", root, "--source", "gossip"}, 2, "--source"},
		{[]string{"groups", "timeline", "app", "--journal", root, "--rewind-page-records", "0"}, 2, "--rewind-page-records"},
		{[]string{"groups", "timeline", "app", "--journal", root, "--since", "yesterday"}, 2, "--since"},
	} {
		r := runCLI(t, "", nil, tc.args...)
		if r.Code != tc.code || !strings.Contains(r.Err, tc.msg) {
			t.Errorf("%v: exit %d %q (want %d, %q)", tc.args, r.Code, r.Err, tc.code, tc.msg)
		}
	}
	// Without an events journal the story still has the commits, and
	// says the membership was not recorded.
	r := runCLI(t, "", nil, "groups", "timeline", "app", "--journal", root, "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Err, "no events journal") || !strings.Contains(r.Out, `"author": "unknown"`) {
		t.Errorf("no events: %d %s %s", r.Code, r.Err, r.Out)
	}
}
