//go:build realkaas && unix

package realkaas

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// storyMember is a member as the story names it.
type storyMember struct {
	ID       string `json:"memberId"`
	ClientID string `json:"clientId"`
}

// storyEvent is what the kill scenario reads of 'groups timeline -o json'.
type storyEvent struct {
	Time     time.Time `json:"time"`
	Kind     string    `json:"kind"`
	Summary  string    `json:"summary"`
	Evidence string    `json:"evidence"`
	Severity string    `json:"severity"`
	Change   *struct {
		Time               time.Time     `json:"time"`
		ObservedGeneration int64         `json:"observedGeneration"`
		Causes             []string      `json:"causes"`
		Joined             []storyMember `json:"joined"`
		Left               []storyMember `json:"left"`
		From               string        `json:"from"`
		To                 string        `json:"to"`
		Members            int           `json:"members"`
	} `json:"change"`
	Move *struct {
		From  string `json:"from"`
		To    string `json:"to"`
		Cause string `json:"cause"`
	} `json:"move"`
	Changed map[string]int64 `json:"changed"`
	Removed []string         `json:"removed"`
	Rewound []struct {
		Partition     string
		Before, After int64
	} `json:"rewound"`
	Attribution *struct {
		Author  string `json:"author"`
		Who     string `json:"who"`
		Certain bool   `json:"certain"`
	} `json:"attribution"`
}

type storyView struct {
	Events []storyEvent `json:"events"`
	Notes  []string     `json:"notes"`
}

// rustMemberID is how kaas 0.2.18 names a member without a client id
// (without SASL it reports none).
var rustMemberID = regexp.MustCompile(`^-[0-9a-f]{16}$`)

// killSession is the killed member's session timeout: the coordinator
// times it out that long after its last heartbeat.
const killSession = 6 * time.Second

// killStory is the state of the kill scenario.
type killStory struct {
	t       *testing.T
	c       *Cluster
	f       Flavour
	group   string
	journal string
	// aGens are the generations member a was assigned at, as the broker
	// told it (kgo's GroupMetadata at each assignment).
	mu    sync.Mutex
	aGens []memberLog
}

// TestRealGroupTimelineKill (issue 34): a group of two members, one in a
// process of its own that is killed (SIGKILL) and started again, then the
// group's coordinator broker is killed so the group moves, all while
// 'watch --offsets --journal' and 'watch --journal' record. The story is
// checked against what kaas wrote (its assignment versions, the offset
// file) and what the members logged: the killed member timed out (not
// before its session), the generation bumps the members were told of,
// the member back under a new id, the coordinator move with takeover
// trace's cause, and the commits on the new coordinator.
func TestRealGroupTimelineKill(t *testing.T) {
	t.Parallel()
	forFlavours(t, testRealGroupTimelineKill)
}

func testRealGroupTimelineKill(t *testing.T, f Flavour) {
	c := newFlavourCluster(t, f, "orders:3")
	s := &killStory{t: t, c: c, f: f, journal: filepath.Join(t.TempDir(), "journal")}
	s.group = groupOffController(t, c, "g-kill")
	rec := recordAssignments(t, c)
	produce(t, c, "orders", 3, 40)
	brokers := strings.Join(c.Addrs(), ",")
	watch := startBG(t, "watch", "--offsets", "--journal", s.journal, "--data-dir", c.Data, "--kaas-version", f.KaasVersion(), "--brokers", brokers,
		"--poll-interval", "100ms", "--members-interval", "500ms", "-o", "jsonl")
	versions := startBG(t, "watch", "--journal", s.journal, "--data-dir", c.Data, "--kaas-version", f.KaasVersion(), "--poll-interval", "100ms", "-o", "jsonl")
	a := startConsumerOpts(t, c, s.group, []kgo.Opt{kgo.ClientID("story-a"), kgo.OnPartitionsAssigned(s.aAssigned)}, "orders")
	waitPositions(t, all("orders", 3, 40), a)
	k := startConsumerProc(t, c, s.group, "orders", "story-k", killSession)
	s.waitStable(2)
	killed, genBefore := k.member(), s.aGen()
	at := k.kill(t)
	t.Logf("%s: killed story-k (%s) at generation %d", f.Name(), killed, genBefore.gen)
	s.waitStory("the killed member timed out", func(v storyView) bool { return changeWhere(v, leftID(killed)) != nil })
	s.waitStable(1)
	genTimeout := s.aGen()
	k2 := startConsumerProc(t, c, s.group, "orders", "story-k", killSession)
	back := k2.member()
	s.waitStory("the member back", func(v storyView) bool { return changeWhere(v, joinedID(back)) != nil })
	s.waitStable(2)
	genBack := s.aGen()
	produce(t, c, "orders", 3, 30)
	s.waitFile(70)

	move := s.killCoordinator(rec)
	s.waitStable(2)
	produceAtLeast(t, c, "orders", 3, 20)
	final := s.waitFileAtLeast(90)
	v := s.waitStory("the commits on the new coordinator", func(v storyView) bool { return fmtOffsets(storyOffsets(v)) == fmtOffsets(final) })
	watch.stop()
	versions.stop()

	s.assertTimeout(v, killed, at, k.log())
	s.assertGenerations(genBefore, genTimeout, genBack, move)
	s.assertRejoin(v, killed, back)
	s.assertMove(v, move)
	s.assertCommits(v, final)
}

// groupOffController is a group name (prefix-N) whose coordinator, by
// whois on the volume, is not the controller: killing its coordinator
// moves the group without a controller failover.
func groupOffController(t *testing.T, c *Cluster, prefix string) string {
	t.Helper()
	ctrl, err := c.Controller(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("%s-%d", prefix, i))
	}
	rows := whoisOffline(t, c, false, nil, names...)
	for _, n := range names {
		if rows[n].Coordinator != "" && rows[n].Coordinator != c.Brokers[ctrl].ID {
			return n
		}
	}
	t.Fatalf("every group of %v is coordinated by the controller %s", names, c.Brokers[ctrl].ID)
	return ""
}

func (s *killStory) aAssigned(_ context.Context, cl *kgo.Client, _ map[string][]int32) {
	id, gen := cl.GroupMetadata()
	s.mu.Lock()
	s.aGens = append(s.aGens, memberLog{at: time.Now(), what: "assigned", member: id, gen: gen})
	s.mu.Unlock()
}

// aGen is the generation of a's last assignment.
func (s *killStory) aGen() memberLog {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.aGens[len(s.aGens)-1]
}

// story is 'groups timeline' of the group over the journal, with the
// brokers' logs.
func (s *killStory) story() storyView {
	args := []string{"groups", "timeline", s.group, "--journal", s.journal, "--data-dir", s.c.Data, "--kaas-version", s.f.KaasVersion(), "-o", "json"}
	r := kaasctl(s.t, args...)
	if r.code != 0 {
		s.t.Fatalf("groups timeline: %v", r)
	}
	var v storyView
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		s.t.Fatalf("groups timeline: %v\n%s", err, r.stdout)
	}
	return v
}

// waitStory waits until the story satisfies ok and returns it.
func (s *killStory) waitStory(what string, ok func(storyView) bool) storyView {
	s.t.Helper()
	var v storyView
	waitFor(s.t, 90*time.Second, what+" in the story", func() error {
		if v = s.story(); !ok(v) {
			return fmt.Errorf("%d events, not yet", len(v.Events))
		}
		return nil
	})
	return v
}

// waitStable waits until the group is Stable with n members (by groups
// describe over the brokers).
func (s *killStory) waitStable(n int) {
	s.t.Helper()
	waitFor(s.t, 90*time.Second, fmt.Sprintf("%s Stable with %d members", s.group, n), func() error {
		d := decode[liveDescribe](s.t, kaasctl(s.t, "groups", "describe", s.group, "--data-dir", s.c.Data, "--brokers", strings.Join(s.c.Addrs(), ","), "-o", "json"))
		if len(d.Groups) != 1 || d.Groups[0].State != "Stable" || len(d.Groups[0].Members) != n {
			return fmt.Errorf("groups %+v", d.Groups)
		}
		return nil
	})
}

// fileOffsets is the group's offset file as kaas wrote it.
func (s *killStory) fileOffsets() (map[tp]int64, error) {
	f, _, err := volume.ReadOffsetFile(filepath.Join(liveOffsetsDir(s.t, s.c), s.group+".json"))
	if err != nil {
		return nil, err
	}
	out := map[tp]int64{}
	for _, e := range f.Entries {
		out[tp{e.Topic, e.Partition}] = e.Offset
	}
	return out, nil
}

// waitFile waits until the offset file holds off on every partition.
func (s *killStory) waitFile(off int64) {
	s.t.Helper()
	waitFor(s.t, 90*time.Second, fmt.Sprintf("the offset file at %d", off), func() error {
		got, err := s.fileOffsets()
		if err != nil || fmtOffsets(got) != fmtOffsets(all("orders", 3, off)) {
			return fmt.Errorf("file %s (%v)", fmtOffsets(got), err)
		}
		return nil
	})
}

// waitFileAtLeast waits until the offset file holds off or more on every
// partition, the same two reads in a row (the members caught up), and
// returns it.
func (s *killStory) waitFileAtLeast(off int64) map[tp]int64 {
	s.t.Helper()
	var last map[tp]int64
	waitFor(s.t, 90*time.Second, fmt.Sprintf("the offset file at %d or more, settled", off), func() error {
		got, err := s.fileOffsets()
		if err != nil || len(got) != 3 {
			return fmt.Errorf("file %s (%v)", fmtOffsets(got), err)
		}
		for _, v := range got {
			if v < off {
				return fmt.Errorf("file %s", fmtOffsets(got))
			}
		}
		same := fmtOffsets(got) == fmtOffsets(last)
		last = got
		if !same {
			return fmt.Errorf("file %s, moving", fmtOffsets(got))
		}
		return nil
	})
	return last
}

// storyOffsets are the offsets the story's commits leave the group at.
func storyOffsets(v storyView) map[tp]int64 {
	out := map[tp]int64{}
	for _, e := range v.Events {
		for k, off := range e.Changed {
			topic, p, _ := strings.Cut(k, "/")
			var n int32
			fmt.Sscan(p, &n)
			out[tp{topic, n}] = off
		}
	}
	return out
}

func changeWhere(v storyView, ok func(e storyEvent) bool) *storyEvent {
	for i, e := range v.Events {
		if e.Kind == "generation" && e.Change != nil && ok(e) {
			return &v.Events[i]
		}
	}
	return nil
}

func leftID(id string) func(storyEvent) bool {
	return func(e storyEvent) bool {
		return slices.ContainsFunc(e.Change.Left, func(m storyMember) bool { return m.ID == id })
	}
}

func joinedID(id string) func(storyEvent) bool {
	return func(e storyEvent) bool {
		return slices.ContainsFunc(e.Change.Joined, func(m storyMember) bool { return m.ID == id })
	}
}

// coordMove is the group's coordinator killed: which broker, when, the
// first version kaas wrote without it, and a's generations before and
// after (as the brokers told it).
type coordMove struct {
	victim        string
	at            time.Time
	version       int64
	before, after memberLog
}

// killCoordinator kills the group's coordinator (whois on the volume)
// and waits for the story to see the group answered by another broker.
func (s *killStory) killCoordinator(rec *assignmentRecorder) coordMove {
	t := s.t
	t.Helper()
	m := coordMove{victim: whoisOffline(t, s.c, false, nil, s.group)[s.group].Coordinator, before: s.aGen()}
	vBefore, _ := rec.latest()
	m.at = time.Now()
	if err := s.c.Kill(brokerIndex(t, s.c, m.victim)); err != nil {
		t.Fatal(err)
	}
	m.version = waitVersion(t, rec, vBefore, func(a assignmentFile) bool { return !slices.Contains(aliveIDs(a), m.victim) })
	t.Logf("%s: killed the coordinator %s (kill -9); v%d is the first version without it", s.f.Name(), m.victim, m.version)
	s.waitStory("the group answered by another coordinator", func(v storyView) bool { return changeWhere(v, movedFrom(m.victim)) != nil })
	s.waitStable(2)
	m.after = s.aGen()
	return m
}

func movedFrom(b string) func(storyEvent) bool {
	return func(e storyEvent) bool {
		return slices.Contains(e.Change.Causes, "coordinator_moved") && e.Change.From == b
	}
}

// assertTimeout: the killed member's departure is a member leaving, seen
// no sooner than its session after the kill, a generation after its join.
func (s *killStory) assertTimeout(v storyView, killed string, at time.Time, logged []memberLog) {
	t := s.t
	t.Helper()
	dep, join := changeWhere(v, leftID(killed)), changeWhere(v, joinedID(killed))
	if dep == nil || join == nil {
		t.Fatalf("the killed member's join (%v) or departure (%v) is not in the story", join, dep)
	}
	if !slices.Contains(dep.Change.Causes, "member_left") || !strings.Contains(dep.Summary, "left or timed out") {
		t.Errorf("the departure: %+v %s", dep.Change, dep.Summary)
	}
	if d := dep.Change.Time.Sub(at); d < killSession-time.Second {
		t.Errorf("the killed member was seen gone %s after the kill, sooner than its session (%s)", d, killSession)
	}
	if dep.Change.ObservedGeneration <= join.Change.ObservedGeneration {
		t.Errorf("the departure's generation %d is not after the join's %d", dep.Change.ObservedGeneration, join.Change.ObservedGeneration)
	}
	for _, l := range logged {
		if l.member != killed {
			t.Errorf("the killed member logged %s as %s, the story names it %s", l.what, l.member, killed)
		}
	}
	t.Logf("%s: story-k timed out %s after the kill (the story: %s)", s.f.Name(), dep.Change.Time.Sub(at).Round(100*time.Millisecond), dep.Summary)
}

// assertGenerations: the generation kaas gave member a grew when the
// killed member timed out and again when it came back.
func (s *killStory) assertGenerations(before, timeout, back memberLog, m coordMove) {
	t := s.t
	t.Helper()
	if timeout.gen <= before.gen || back.gen <= timeout.gen {
		t.Errorf("a's generations: %d before the kill, %d after the timeout, %d after the rejoin", before.gen, timeout.gen, back.gen)
	}
	// Generations are a coordinator's memory of the group: the new one
	// starts them again (seen on both flavours: 6 before the move, 1
	// after), so kaas's generation ids do not grow across a move.
	if m.after.gen >= m.before.gen {
		t.Errorf("a's generation on the new coordinator is %d, %d before the move", m.after.gen, m.before.gen)
	}
	switch s.f {
	case FlavourGo:
		// The Go coordinator takes a JoinGroup's member id it does not
		// know as it is ("Upsert member", kaas-go coordinator/group.go):
		// a keeps its id on the new coordinator.
		if m.after.member != m.before.member {
			t.Errorf("a was %s before the move and %s after it; the Go coordinator keeps a member's id", m.before.member, m.after.member)
		}
	default:
		// 0.2.18 answers an id it does not know with UNKNOWN_MEMBER_ID and
		// names members by a counter of its own process ("-" and the
		// counter's 8 bytes in hex, generate_member_id in group.rs): after
		// a move ids start again from the new broker's counter, so one can
		// repeat an id the old coordinator gave another member.
		if !rustMemberID.MatchString(m.after.member) {
			t.Errorf("a's id on the new coordinator: %q", m.after.member)
		}
	}
	t.Logf("%s: a's generations: %d with both, %d after the timeout, %d after the rejoin, %d before the move, %d on the new coordinator (member %s → %s)",
		s.f.Name(), before.gen, timeout.gen, back.gen, m.before.gen, m.after.gen, m.before.member, m.after.member)
}

// assertRejoin: the member started again joined under a new id.
func (s *killStory) assertRejoin(v storyView, killed, back string) {
	t := s.t
	t.Helper()
	if back == killed {
		t.Fatalf("the restarted member came back as %s, the killed one's id", back)
	}
	j := changeWhere(v, joinedID(back))
	i := slices.IndexFunc(j.Change.Joined, func(m storyMember) bool { return m.ID == back })
	if j.Change.Joined[i].ClientID != "story-k" && !slices.ContainsFunc(v.Notes, func(n string) bool { return strings.Contains(n, "no client ids") }) {
		t.Errorf("the member back: client id %q, and the notes do not say client ids are not reported", j.Change.Joined[i].ClientID)
	}
}

// assertMove: the move in the story is takeover trace's (from, to, cause,
// version), at the first version kaas wrote without the killed broker,
// and the membership seen from the new coordinator.
func (s *killStory) assertMove(v storyView, m coordMove) {
	t := s.t
	t.Helper()
	tr := decode[traceView](t, ok(t, "takeover", "trace", "--journal", s.journal, "--no-live", "-g", s.group, "-o", "json"))
	ti := slices.IndexFunc(tr.Events, func(e struct {
		Group             string `json:"group"`
		From              string `json:"from"`
		To                string `json:"to"`
		AssignmentVersion int64  `json:"assignmentVersion"`
		Cause             string `json:"cause"`
	}) bool {
		return e.From == m.victim
	})
	mi := slices.IndexFunc(v.Events, func(e storyEvent) bool {
		return e.Kind == "coordinatorMove" && e.Move != nil && e.Move.From == m.victim
	})
	if ti < 0 || mi < 0 {
		t.Fatalf("the move off %s: trace %+v, story has it %v", m.victim, tr.Events, mi >= 0)
	}
	te, mv := tr.Events[ti], v.Events[mi]
	if mv.Move.To != te.To || mv.Move.Cause != te.Cause || te.Cause == "" || te.Cause == "unknown" || !strings.Contains(mv.Summary, fmt.Sprintf(" v%d)", te.AssignmentVersion)) {
		t.Errorf("the story's move %+v (%s), takeover trace's %+v", *mv.Move, mv.Summary, te)
	}
	if te.AssignmentVersion != m.version {
		t.Errorf("the move at v%d, the first version kaas wrote without %s is v%d", te.AssignmentVersion, m.victim, m.version)
	}
	ch := changeWhere(v, movedFrom(m.victim))
	if ch.Change.To != te.To || ch.Change.Time.Before(m.at) {
		t.Errorf("the generation change of the move: %+v", ch.Change)
	}
	t.Logf("%s: the move %s → %s (%s, v%d); the generation change: %s", s.f.Name(), m.victim, te.To, te.Cause, te.AssignmentVersion, ch.Summary)
}

// assertCommits: the story's commits leave the group where kaas's file
// is; none is an admin's (no admin committed); a rewind by anyone but the
// members pages.
func (s *killStory) assertCommits(v storyView, final map[tp]int64) {
	t := s.t
	t.Helper()
	if got := storyOffsets(v); fmtOffsets(got) != fmtOffsets(final) {
		t.Errorf("the story ends at %s, the file at %s", fmtOffsets(got), fmtOffsets(final))
	}
	authors := map[string]int{}
	for _, e := range v.Events {
		if e.Attribution == nil {
			continue
		}
		authors[e.Attribution.Author]++
		if e.Attribution.Author == "admin" {
			t.Errorf("a commit classed as an admin's: %s (%s)", e.Summary, e.Attribution.Who)
		}
		if e.Kind == "rewind" {
			t.Logf("%s: rewind %s: %s (%s), %s", s.f.Name(), e.Summary, e.Attribution.Author, e.Attribution.Who, e.Severity)
			if e.Attribution.Author != "own" && e.Severity != "page" {
				t.Errorf("a rewind by %s graded %q", e.Attribution.Author, e.Severity)
			}
		}
	}
	t.Logf("%s: commits by author %v", s.f.Name(), authors)
}
