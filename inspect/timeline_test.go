package inspect

import (
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/watch"
)

// A group's story built from journal records: every kind of commit is
// attributed from the membership, moves and writes around it, and what
// the record cannot tell is said.
func TestBuildTimelineAttributes(t *testing.T) {
	t.Parallel()
	at := func(sec int) time.Time { return m0.Add(time.Duration(sec) * time.Second) }
	ptr := func(t time.Time) *time.Time { return &t }
	offs := []watch.JournalRecord{
		{Kind: watch.RecSegment, Time: at(0), Dir: "/data/__cluster/__consumer_offsets", Version: 1},
		{Kind: watch.RecSnapshot, Time: at(0), Group: "g", Offsets: map[string]int64{"t/0": 100, "t/1": 100}},
		{Kind: watch.RecChange, Time: at(20), Group: "g", Changed: map[string]int64{"t/0": 150, "t/1": 160}},  // own
		{Kind: watch.RecChange, Time: at(30), Group: "g", Changed: map[string]int64{"t/0": 147}},              // own, 3 back
		{Kind: watch.RecChange, Time: at(70), Group: "g", Changed: map[string]int64{"t/0": 200}},              // own
		{Kind: watch.RecChange, Time: at(110), Group: "g", Changed: map[string]int64{"t/1": 120}},             // zombie: below 160 at the change
		{Kind: watch.RecChange, Time: at(205), Group: "g", Changed: map[string]int64{"t/0": 150, "t/1": 300}}, // cache rewrite after the move
		{Kind: watch.RecChange, Time: at(310), Group: "g", Changed: map[string]int64{"t/0": 90, "t/1": 90}},   // admin: no member
		{Kind: watch.RecChange, Time: at(401), Group: "g", Changed: map[string]int64{"t/0": 0, "t/1": 0}},     // kaasctl
		{Kind: watch.RecChange, Time: at(550), Group: "g", Changed: map[string]int64{"t/0": 10}},              // unobserved
	}
	hist := watch.ReplayGroup(offs, "g")
	a, b := watch.EventMember{ID: "m-a", ClientID: "app"}, watch.EventMember{ID: "m-b", ClientID: "app"}
	evs := []watch.EventRecord{{Kind: watch.EvSegment, Time: at(0), Version: 1, Interval: "5s"}}
	for s := 0; s <= 700; s += 30 {
		evs = append(evs, watch.EventRecord{Kind: watch.EvAlive, Time: at(s)})
	}
	evs = append(evs,
		watch.EventRecord{Kind: watch.EvMembers, Time: at(1), Group: "g", State: "Stable", Coordinator: "kaas-1", Members: []watch.EventMember{a, b}},
		watch.EventRecord{Kind: watch.EvMembers, Time: at(100), Group: "g", State: "Stable", Coordinator: "kaas-1", Members: []watch.EventMember{a},
			Change: &watch.EventChange{Since: at(95), ObservedGeneration: 1, Causes: []string{CauseMemberLeft}, Left: []string{"m-b"}}},
		watch.EventRecord{Kind: watch.EvMembers, Time: at(300), Group: "g", State: "Empty", Coordinator: "kaas-0",
			Change: &watch.EventChange{Since: at(295), ObservedGeneration: 2, Causes: []string{CauseMemberLeft}, Left: []string{"m-a"}}},
		watch.EventRecord{Kind: watch.EvUnobserved, Time: at(600), Since: ptr(at(500)), Problem: "brokers: connection refused"},
		watch.EventRecord{Kind: watch.EvCondition, Time: at(320), Group: "g", Condition: HealthRewind, Entered: true, Detail: "moved back"},
	)
	sortEvents(evs)
	in := TimelineInput{Group: "g", History: hist, Journal: "/j/offsets", Events: evs, EventsDir: "/j/events", Versions: 3,
		Moves:  []TraceEvent{{Time: at(200), Group: "g", From: "kaas-1", To: "kaas-0", Cause: CauseBrokerLeft, Evidence: EvidenceAssignment, ControllerEpoch: 1, AssignmentVersion: 7}},
		Writes: []KaasctlWrite{{Time: at(400), Command: "offsets reset --to-earliest", By: "ops@bastion", Method: "commit", Partitions: []Rewound{{"t/0", 90, 0}, {"t/1", 90, 0}}}}}
	tl := BuildTimeline(in)
	want := map[int]string{20: AuthorOwn, 30: AuthorOwn, 70: AuthorOwn, 110: AuthorZombie, 205: AuthorCacheRewrite, 310: AuthorAdmin, 401: AuthorKaasctl, 550: AuthorUnknown}
	got := map[int]string{}
	for _, e := range tl.Events {
		if e.Attribution != nil {
			got[int(e.Time.Sub(m0)/time.Second)] = e.Attribution.Author
		}
	}
	for s, w := range want {
		if got[s] != w {
			t.Errorf("commit at +%ds: %q, want %q", s, got[s], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("attributed commits: %v", got)
	}
	kinds := map[string]int{}
	for _, e := range tl.Events {
		kinds[e.Kind]++
	}
	for k, n := range map[string]int{TLState: 1, TLMembersSeen: 1, TLGeneration: 2, TLMove: 1, TLWrite: 1, TLCondition: 1, TLUnobserved: 1, TLRewind: 5} {
		if kinds[k] != n {
			t.Errorf("%d %s events, want %d (%v)", kinds[k], k, n, kinds)
		}
	}
	for i := 1; i < len(tl.Events); i++ {
		if tl.Events[i].Time.Before(tl.Events[i-1].Time) {
			t.Fatalf("events out of order at %d", i)
		}
	}
	notes := strings.Join(tl.Notes, "\n")
	for _, w := range []string{"no client hosts", "not reported by this broker", "kaasctl's count"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	sev := map[int]string{}
	for _, e := range tl.Events {
		if e.Kind == TLRewind {
			sev[int(e.Time.Sub(m0)/time.Second)] = e.Severity
		}
	}
	if sev[30] != "warning" || sev[110] != "page" || sev[205] != "page" {
		t.Errorf("severities: %v", sev)
	}
}

// Without an events journal nothing is attributed to members, and the
// story says why.
func TestBuildTimelineWithoutMembership(t *testing.T) {
	t.Parallel()
	offs := []watch.JournalRecord{
		{Kind: watch.RecSnapshot, Time: m0, Group: "g", Offsets: map[string]int64{"t/0": 100}},
		{Kind: watch.RecChange, Time: m0.Add(time.Second), Group: "g", Changed: map[string]int64{"t/0": 90}},
		{Kind: watch.RecGap, Time: m0.Add(2 * time.Second), Since: &m0, Problem: "disk full"},
	}
	tl := BuildTimeline(TimelineInput{Group: "g", History: watch.ReplayGroup(offs, "g"), Journal: "/j"})
	var rewind *TimelineEvent
	for i := range tl.Events {
		if tl.Events[i].Kind == TLRewind {
			rewind = &tl.Events[i]
		}
	}
	if rewind == nil || rewind.Attribution.Author != AuthorUnknown || rewind.Severity != "page" {
		t.Fatalf("rewind: %+v", rewind)
	}
	notes := strings.Join(tl.Notes, "\n")
	if !strings.Contains(notes, "no events journal") || !strings.Contains(notes, "1 gap") {
		t.Errorf("notes:\n%s", notes)
	}
}

// sortEvents orders records by time as a journal holds them.
func sortEvents(evs []watch.EventRecord) {
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && evs[j].Time.Before(evs[j-1].Time); j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
}
