package commands

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
)

// The story elements of a group's timeline that need the coordinator to
// act on its own: a member timed out, the coordinator moving, a zombie's
// commit (issue 34).

// envTestConsumer, when set to "GROUP\x1fCLIENT-ID", makes this test
// binary a consumer of "orders" in GROUP on KAASCTL_BROKERS (the
// sandbox's quick timeouts) that commits what it reads and prints
// "member ID GENERATION" at each assignment, until it is killed.
const envTestConsumer = "KAASCTL_TEST_CONSUMER"

func runTestConsumer(spec string) int {
	group, client, _ := strings.Cut(spec, "\x1f")
	opts := append(sandbox.ConsumerOpts(group, "orders"), kgo.ClientID(client), kgo.SeedBrokers(strings.Split(os.Getenv("KAASCTL_BROKERS"), ",")...),
		kgo.MetadataMinAge(50*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, _ map[string][]int32) {
			id, gen := cl.GroupMetadata()
			fmt.Printf("member %s %d\n", id, gen)
		}))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	for {
		if cl.PollFetches(ctx).NumRecords() > 0 {
			cl.CommitUncommittedOffsets(ctx)
		}
	}
}

// consumerProc is a consumer in a process of its own: one a test can
// SIGKILL, so it neither leaves the group nor heartbeats again.
type consumerProc struct {
	cmd    *exec.Cmd
	member chan string
}

// startConsumerProc starts a consumer of group with client id client and
// returns once it has its first assignment (its member id in memberID).
func startConsumerProc(t *testing.T, sb *sandbox.Sandbox, group, client string) (p *consumerProc, memberID string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envTestConsumer+"="+group+"\x1f"+client, "KAASCTL_BROKERS="+strings.Join(sb.Bootstrap(), ","))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p = &consumerProc{cmd: cmd, member: make(chan string, 16)}
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "member" {
				p.member <- f[1]
			}
		}
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	select {
	case memberID = <-p.member:
	case <-done:
		t.Fatalf("the consumer process ended: %s", errb.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("the consumer process was never assigned partitions: %s", errb.String())
	}
	return p, memberID
}

// kill SIGKILLs the consumer and returns when it was killed.
func (p *consumerProc) kill(t *testing.T) time.Time {
	t.Helper()
	at := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	return at
}

// pollIn keeps cl polling until the test ends (a member that stays).
func pollIn(t *testing.T, cl *kgo.Client) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	}()
	t.Cleanup(cancel)
}

// waitStory runs 'groups timeline GROUP -o json' over the journal (and
// extra arguments) until ok accepts the story, and returns it.
func waitStory(t *testing.T, sb *sandbox.Sandbox, journal, group, what string, ok func(*inspect.Timeline) bool, extra ...string) *inspect.Timeline {
	t.Helper()
	args := append([]string{"groups", "timeline", group, "--journal", journal, "--data-dir", sb.Layout().DataDir, "-o", "json"}, extra...)
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := runCLI(t, "", nil, args...)
		tl := &inspect.Timeline{}
		if r.Code != 0 || json.Unmarshal([]byte(r.Out), tl) != nil {
			t.Fatalf("groups timeline: exit %d: %s", r.Code, r.Err)
		}
		if ok(tl) {
			return tl
		}
		if time.Now().After(deadline) {
			t.Fatalf("the story never showed %s:\n%s", what, r.Out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// generationWhere is the story's first generation change that ok accepts
// (nil: none).
func generationWhere(tl *inspect.Timeline, ok func(*inspect.MembershipChange) bool) *inspect.TimelineEvent {
	for i, e := range tl.Events {
		if e.Kind == inspect.TLGeneration && e.Change != nil && ok(e.Change) {
			return &tl.Events[i]
		}
	}
	return nil
}

func leftMember(id string) func(*inspect.MembershipChange) bool {
	return func(c *inspect.MembershipChange) bool {
		return slices.ContainsFunc(c.Left, func(m inspect.MemberInfo) bool { return m.ID == id })
	}
}

// churnExporter is an exporter over the sandbox, refreshed by the test,
// that raises CHURN past one generation change in its minute.
func churnExporter(t *testing.T, sb *sandbox.Sandbox) *exporter.Exporter {
	t.Helper()
	l := sb.Layout()
	cl, err := wire.NewClient(&wire.Settings{Brokers: sb.Bootstrap(), Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return exporter.New(exporter.Options{Source: &observe.Source{Layout: &l, Client: cl}, Window: time.Minute, Members: exporter.MembersOptions{Rebalances: 1}})
}

// refreshUntil refreshes e until group's health satisfies ok, and returns
// it.
func refreshUntil(t *testing.T, e *exporter.Exporter, group, what string, ok func(inspect.GroupHealth) bool) inspect.GroupHealth {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last inspect.GroupHealth
	for {
		e.Refresh(context.Background())
		for _, h := range e.Health() {
			if h.Group == group {
				if last = h; ok(h) {
					return h
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter never saw %s: %+v", what, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitStable waits until the group is Stable with n members, each
// assigned partitions (a cooperative rebalance's second round done).
func waitStable(t *testing.T, sb *sandbox.Sandbox, group string, n int) {
	t.Helper()
	adm := kadm.NewClient(sbClient(t, sb))
	sb.WaitFor(t, fmt.Sprintf("%s Stable with %d members", group, n), 60*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		ds, err := adm.DescribeGroups(ctx, group)
		d := ds[group]
		if err != nil || d.Err != nil || d.State != "Stable" || len(d.Members) != n {
			return false
		}
		for _, m := range d.Members {
			if c, ok := m.Assigned.AsConsumer(); !ok || len(c.Topics) == 0 {
				return false
			}
		}
		return true
	})
}

func churnMembers(n int) func(inspect.GroupHealth) bool {
	return func(h inspect.GroupHealth) bool { return h.Churn != nil && h.Churn.Members == n }
}

// A session timeout: of a group's two members, one (its own process) is
// SIGKILLed, so it neither leaves nor heartbeats again, and the
// coordinator times it out after its session (3 s). The story has its
// departure as a generation change caused by a member leaving ("left or
// timed out": DescribeGroups cannot tell them apart), seen no sooner than
// the session after the kill, with the next observed generation; the
// exporter's CHURN (past one change in its window) counts it among its
// causes.
func TestGroupsTimelineSandboxSessionTimeout(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 10)
	commitAdmin(t, sb, "timeout", map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0})
	journal := filepath.Join(t.TempDir(), "journal")
	stop := startWatch(t, sb, journal)
	waitEvents(t, journal, "timeout", "the empty group", memberCount(0))
	e := churnExporter(t, sb)
	refreshUntil(t, e, "timeout", "the empty group", churnMembers(0))

	a := sbClient(t, sb, append(sandbox.ConsumerOpts("timeout", "orders"), kgo.ClientID("timeout-a"))...)
	pollIn(t, a)
	waitEvents(t, journal, "timeout", "member a", memberCount(1))
	k, killed := startConsumerProc(t, sb, "timeout", "timeout-killed")
	waitEvents(t, journal, "timeout", "members a and killed", memberCount(2))
	// Killed once the rebalance is over: the coordinator then waits out
	// its session alone (not a rebalance's join timeout).
	waitStable(t, sb, "timeout", 2)
	refreshUntil(t, e, "timeout", "two members", churnMembers(2))
	at := k.kill(t)
	waitEvents(t, journal, "timeout", "the killed member timed out", func(r watch.EventRecord) bool {
		return r.Kind == watch.EvMembers && r.Change != nil && slices.Contains(r.Change.Left, killed)
	})
	h := refreshUntil(t, e, "timeout", "the timeout", churnMembers(1))
	tl := waitStory(t, sb, journal, "timeout", "the killed member's departure", func(tl *inspect.Timeline) bool {
		return generationWhere(tl, leftMember(killed)) != nil
	})
	stop()

	dep := generationWhere(tl, leftMember(killed))
	c := dep.Change
	if !slices.Equal(c.Causes, []string{inspect.CauseMemberLeft}) || len(c.Left) != 1 || c.Left[0].ClientID != "timeout-killed" || c.Members != 1 {
		t.Errorf("the departure: %+v", c)
	}
	if !strings.Contains(dep.Summary, killed+" (client timeout-killed, host ") || !strings.HasSuffix(dep.Summary, ") left or timed out; 1 member after it") {
		t.Errorf("the departure in words: %s", dep.Summary)
	}
	// A member that left would be gone at once; one that timed out stays
	// for its session (3 s) after its last heartbeat.
	if d := c.Time.Sub(at); d < 2500*time.Millisecond {
		t.Errorf("the member was seen gone %s after the kill: sooner than its session timeout", d)
	}
	join := generationWhere(tl, func(c *inspect.MembershipChange) bool {
		return slices.ContainsFunc(c.Joined, func(m inspect.MemberInfo) bool { return m.ID == killed })
	})
	if join == nil || c.ObservedGeneration <= join.Change.ObservedGeneration {
		t.Errorf("the generation after the timeout (%d) does not follow the join's: %+v", c.ObservedGeneration, join)
	}
	assertChurnLeft(t, h)
	if t.Failed() || testing.Verbose() {
		t.Log(runCLI(t, "", nil, "groups", "timeline", "timeout", "--journal", journal, "--data-dir", sb.Layout().DataDir).Out)
	}
}

// assertChurnLeft checks that a group's CHURN counts a member leaving
// among its causes, in its figures and in its evidence.
func assertChurnLeft(t *testing.T, h inspect.GroupHealth) {
	t.Helper()
	if !h.Has(inspect.HealthChurn) {
		t.Fatalf("no CHURN past one change: %+v %+v", h.Conditions, *h.Churn)
	}
	if !slices.Contains(h.Churn.ByCause, inspect.ChurnCauseCount{Cause: inspect.CauseMemberLeft, Count: 1}) || h.Churn.Changes < 2 {
		t.Errorf("CHURN's changes: %d, by cause %+v", h.Churn.Changes, h.Churn.ByCause)
	}
	for _, ev := range h.Evidence {
		if ev.State == inspect.HealthChurn && !strings.Contains(ev.Detail, "member left or timed out 1") {
			t.Errorf("CHURN's evidence: %s", ev.Detail)
		}
	}
}

// zombieCommit sends what a member fenced off by a rebalance would: an
// OffsetCommit with its member id and its old generation, and fails
// unless the coordinator takes it (kaas fences no commit; the sandbox
// accepts it as kaas does with AcceptStaleCommits).
func zombieCommit(t *testing.T, sb *sandbox.Sandbox, group, member string, gen int32, partition int32, offset int64) {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation, req.MemberID = group, gen, member
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "orders"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = partition, offset, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, sbClient(t, sb))
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("the stale commit was refused: %v", kerr.ErrorForCode(code))
	}
}

// A commit from an old generation: member a reads and commits every
// partition at 10; b joins (a new generation) and a leaves. a's zombie
// then commits orders/1 at 5 with its member id and first generation,
// which kaas accepts (it never fences OffsetCommit). The story has the
// rewind of 5 records by a zombie of the generation before a left,
// certain (5 is not above the 10 committed before the change), paging;
// the exporter's REWIND carries the same author and severity.
func TestGroupsTimelineSandboxZombieCommit(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	sb.AcceptStaleCommits(true)
	produceOrders(t, sb, 10)
	commitAdmin(t, sb, "zombie", map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0})
	journal := filepath.Join(t.TempDir(), "journal")
	stop := startWatch(t, sb, journal)
	waitEvents(t, journal, "zombie", "the empty group", memberCount(0))
	e := churnExporter(t, sb)
	refreshUntil(t, e, "zombie", "the empty group", churnMembers(0))

	a := sbClient(t, sb, append(sandbox.ConsumerOpts("zombie", "orders"), kgo.ClientID("zombie-a"))...)
	pollUntil(t, a, 40)
	if err := a.CommitUncommittedOffsets(context.Background()); err != nil {
		t.Fatal(err)
	}
	member, gen := a.GroupMetadata()
	waitEvents(t, journal, "zombie", "member a", memberCount(1))
	refreshUntil(t, e, "zombie", "member a", churnMembers(1))
	b := sbClient(t, sb, append(sandbox.ConsumerOpts("zombie", "orders"), kgo.ClientID("zombie-b"))...)
	pollIn(t, b)
	waitEvents(t, journal, "zombie", "members a and b", memberCount(2))
	refreshUntil(t, e, "zombie", "members a and b", churnMembers(2))
	a.Close()
	waitStable(t, sb, "zombie", 1)
	waitEvents(t, journal, "zombie", "a gone", func(r watch.EventRecord) bool {
		return r.Kind == watch.EvMembers && r.Change != nil && slices.Contains(r.Change.Left, member)
	})
	refreshUntil(t, e, "zombie", "a gone", churnMembers(1))

	zombieCommit(t, sb, "zombie", member, gen, 1, 5)
	tl := waitStory(t, sb, journal, "zombie", "the zombie's rewind", func(tl *inspect.Timeline) bool { return tl.Rewinds > 0 })
	h := refreshUntil(t, e, "zombie", "the zombie's rewind", func(h inspect.GroupHealth) bool { return len(h.Rewinds) > 0 })
	stop()
	assertZombieRewind(t, tl, h, member)
	if t.Failed() || testing.Verbose() {
		t.Log(runCLI(t, "", nil, "groups", "timeline", "zombie", "--journal", journal, "--data-dir", sb.Layout().DataDir).Out)
	}
}

// assertZombieRewind checks the story's one rewind (and the exporter's):
// orders/1 10→5 by a zombie of the generation a left, certain, paging.
func assertZombieRewind(t *testing.T, tl *inspect.Timeline, h inspect.GroupHealth, member string) {
	t.Helper()
	i := slices.IndexFunc(tl.Events, func(e inspect.TimelineEvent) bool { return e.Kind == inspect.TLRewind })
	rw := tl.Events[i]
	if tl.Rewinds != 1 || !slices.Equal(rw.Rewound, []inspect.Rewound{{Partition: "orders/1", Before: 10, After: 5}}) {
		t.Fatalf("the rewinds: %d, %+v", tl.Rewinds, rw.Rewound)
	}
	// Certain when a's commit at 10 came before the last look ahead of
	// the change; one the watch saw between the looks that saw the change
	// may be either generation's.
	commit := slices.IndexFunc(tl.Events, func(e inspect.TimelineEvent) bool { return e.Kind == inspect.TLCommit && e.Changed["orders/1"] == 10 })
	change := generationWhere(tl, leftMember(member))
	if commit < 0 || change == nil {
		t.Fatalf("a's commit (%d) or its departure (%v) is not in the story", commit, change)
	}
	certain, why := true, "orders/1 at 5, not above its 10 before the change"
	if tl.Events[commit].Time.After(change.Change.Since) {
		certain, why = false, "orders/1 at 5, not above the 10 committed while the group changed"
	}
	at := rw.Attribution
	if at.Author != inspect.AuthorZombie || at.Certain != certain || at.Records != 5 || rw.Severity != "page" {
		t.Errorf("the zombie's rewind: %+v, severity %q; want certain=%v", at, rw.Severity, certain)
	}
	if !strings.Contains(at.Who, "(left since: "+member+" (client zombie-a") || !strings.Contains(at.Why, why) {
		t.Errorf("who and why: %s; %s", at.Who, at.Why)
	}
	if len(h.Rewinds) != 1 || h.Rewinds[0].Author != inspect.AuthorZombie || h.Rewinds[0].Severity != "page" || h.Rewinds[0].Partition != "orders/1" {
		t.Errorf("the exporter's rewind: %+v", h.Rewinds)
	}
	if !h.Has(inspect.HealthRewind) {
		t.Errorf("no REWIND: %v", h.Conditions)
	}
}

// A coordinator move: with 'watch --journal' recording assignment.json's
// versions beside 'watch --offsets --journal', the group's coordinator
// is stopped. The group moves (the sandbox evicts its member, as kaas
// does); the member rejoins on the new coordinator and commits there. The
// story has the move with takeover trace's cause (the broker left),
// confirmed by the broker logs, the generation change it caused, and the
// member's commit on the new coordinator as the group's own: the
// sandbox's coordinators share one memory of the group (sandbox.Limits),
// so the new coordinator writes no stale cache over the file, and nothing
// goes back.
func TestGroupsTimelineSandboxCoordinatorMove(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 10)
	commitAdmin(t, sb, "move", map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0})
	journal := filepath.Join(t.TempDir(), "journal")
	stopVersions := startKaasctl(t, sb, "watch", "--data-dir", sb.Layout().DataDir, "--journal", journal, "--poll-interval", "50ms", "-o", "jsonl")
	stop := startWatch(t, sb, journal)
	waitEvents(t, journal, "move", "the empty group", memberCount(0))
	trWaitFile(t, filepath.Join(journal, fmt.Sprintf("assignment-e1-v%d.json", sb.Assignment().AssignmentVersion)))

	a := sbClient(t, sb, append(sandbox.ConsumerOpts("move", "orders"), kgo.ClientID("move-a"))...)
	pollUntil(t, a, 40)
	if err := a.CommitUncommittedOffsets(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitEvents(t, journal, "move", "member a", memberCount(1))
	waitStable(t, sb, "move", 1)
	from := sb.Coordinator("move")
	res, err := sb.Change("stop", from)
	if err != nil {
		t.Fatal(err)
	}
	to := sb.Coordinator("move")
	if to == from || !slices.Contains(res.Moved, sandbox.Move{Group: "move", From: from, To: to}) {
		t.Fatalf("the group did not move off %s: %+v", from, res)
	}
	trWaitFile(t, filepath.Join(journal, fmt.Sprintf("assignment-e1-v%d.json", res.AssignmentVersion)))
	waitEvents(t, journal, "move", "a on the new coordinator", func(r watch.EventRecord) bool {
		return r.Kind == watch.EvMembers && r.Coordinator == to && len(r.Members) == 1 && r.Change != nil
	})
	waitStable(t, sb, "move", 1)
	produceOrders(t, sb, 5)
	pollUntil(t, a, 20)
	if err := a.CommitUncommittedOffsets(context.Background()); err != nil {
		t.Fatal(err)
	}
	tl := waitStory(t, sb, journal, "move", "the move and the commit after it", func(tl *inspect.Timeline) bool {
		return slices.ContainsFunc(tl.Events, func(e inspect.TimelineEvent) bool { return e.Kind == inspect.TLMove }) &&
			slices.ContainsFunc(tl.Events, func(e inspect.TimelineEvent) bool { return e.Kind == inspect.TLCommit && e.Changed["orders/0"] == 15 })
	}, "--logs", sb.LogDir())
	stop()
	stopVersions()
	assertMoveStory(t, tl, from, to)
	if t.Failed() || testing.Verbose() {
		t.Log(runCLI(t, "", nil, "groups", "timeline", "move", "--journal", journal, "--data-dir", sb.Layout().DataDir, "--logs", sb.LogDir()).Out)
	}
}

// assertMoveStory checks the story of a group moved from one coordinator
// to another by the first one stopping.
func assertMoveStory(t *testing.T, tl *inspect.Timeline, from, to string) {
	t.Helper()
	i := slices.IndexFunc(tl.Events, func(e inspect.TimelineEvent) bool { return e.Kind == inspect.TLMove })
	mv := tl.Events[i]
	if *mv.Move != (inspect.CoordinatorMove{Time: mv.Time, From: from, To: to, Cause: string(inspect.CauseBrokerLeft)}) || !strings.HasPrefix(mv.Evidence, string(inspect.EvidenceBoth)) {
		t.Errorf("the move: %+v, evidence %s", mv.Move, mv.Evidence)
	}
	moved := generationWhere(tl, func(c *inspect.MembershipChange) bool { return c.Has(inspect.CauseCoordinatorMoved) })
	if moved == nil || moved.Change.From != from || moved.Change.To != to || moved.Time.Before(mv.Time) {
		t.Fatalf("no generation change moved from %s to %s after the move at %s: %+v", from, to, mv.Time, moved)
	}
	// The member was evicted by the move and rejoined under a new id (in
	// the same look, or the next).
	if !moved.Change.Has(inspect.CauseMemberLeft) || len(moved.Change.Left) != 1 {
		t.Fatalf("the move's generation change: %+v", moved.Change)
	}
	old := moved.Change.Left[0]
	back := generationWhere(tl, func(c *inspect.MembershipChange) bool {
		return !c.Time.Before(moved.Time) && slices.ContainsFunc(c.Joined, func(m inspect.MemberInfo) bool { return m.ClientID == old.ClientID && m.ID != old.ID })
	})
	if back == nil || back.Change.Members != 1 {
		t.Errorf("%s never rejoined under a new id after the move: %+v", old.ClientID, back)
	}
	j := slices.IndexFunc(tl.Events, func(e inspect.TimelineEvent) bool { return e.Kind == inspect.TLCommit && e.Changed["orders/0"] == 15 })
	if at := tl.Events[j].Attribution; j < i || at.Author != inspect.AuthorOwn || !at.Certain {
		t.Errorf("the commit on the new coordinator: %+v", at)
	}
	if tl.Rewinds != 0 {
		t.Errorf("%d rewinds: the new coordinator wrote no stale cache", tl.Rewinds)
	}
}
