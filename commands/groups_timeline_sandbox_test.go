package commands

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/watch"
)

// startWatch runs 'kaasctl watch --offsets --journal DIR' against the
// sandbox as a real process (it ends at SIGINT, as an operator ends it);
// stop interrupts it and waits for it.
func startWatch(t *testing.T, sb *sandbox.Sandbox, journal string, extra ...string) (stop func()) {
	t.Helper()
	args := append([]string{"watch", "--offsets", "--data-dir", sb.Layout().DataDir, "--journal", journal, "--members-interval", "100ms", "--anomalies-only", "-o", "jsonl"}, extra...)
	return startKaasctl(t, sb, args...)
}

// startKaasctl runs kaasctl with args against the sandbox as a real
// process that ends at SIGINT; stop interrupts it and waits for it.
func startKaasctl(t *testing.T, sb *sandbox.Sandbox, args ...string) (stop func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KAASCTL_TEST_MAIN="+strings.Join(args, "\x1f"), "KAASCTL_BROKERS="+strings.Join(sb.Bootstrap(), ","), "KAASCTL_TIMEOUT=3s")
	var errb strings.Builder
	cmd.Stdout, cmd.Stderr = &strings.Builder{}, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	return func() {
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("kaasctl %s did not end at SIGINT:\n%s", args[0], errb.String())
		}
	}
}

// waitEvents waits until the events journal holds a record of group
// that ok accepts.
func waitEvents(t *testing.T, journal, group, what string, ok func(watch.EventRecord) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if dir := watch.ResolveEventJournal(journal); dir != "" {
			if res, err := watch.ReadEventJournal(dir, watch.EventReadOptions{Group: group}); err == nil && slices.ContainsFunc(res.Records, ok) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the events journal never recorded %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func memberCount(n int) func(watch.EventRecord) bool {
	return func(r watch.EventRecord) bool { return r.Kind == watch.EvMembers && len(r.Members) == n }
}

// pollUntil polls a consumer until it has read n records.
func pollUntil(t *testing.T, cl *kgo.Client, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for got := 0; got < n; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records", got, n)
		}
		got += fs.NumRecords()
	}
}

// A group's story told by 'groups timeline' from what 'watch --offsets
// --journal' recorded on the sandbox: a member joins and commits, a
// second joins and leaves, the first leaves, and with the group Empty an
// admin tool rewinds it. The timeline has each membership change with its
// cause, the members' commits as the group's own, and the admin commit as
// an admin's rewind that pages.
func TestGroupsTimelineSandboxStory(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 10)
	commitAdmin(t, sb, "story", map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0})
	journal := filepath.Join(t.TempDir(), "journal")
	stop := startWatch(t, sb, journal)
	waitEvents(t, journal, "story", "the empty group", memberCount(0))

	a := sbClient(t, sb, append(sandbox.ConsumerOpts("story", "orders"), kgo.ClientID("story-a"))...)
	pollUntil(t, a, 40)
	// a commits once the watch has seen it a member: a commit made before
	// the first look that shows its author is not that member's (under a
	// loaded make test, a's commit came first and was the admin's).
	waitEvents(t, journal, "story", "member a", memberCount(1))
	if err := a.CommitUncommittedOffsets(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := sbClient(t, sb, append(sandbox.ConsumerOpts("story", "orders"), kgo.ClientID("story-b"))...)
	// b joins; nothing is left for it to read, so its polls end empty.
	bctx, bcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer bcancel()
	go func() {
		for bctx.Err() == nil {
			b.PollFetches(bctx)
		}
	}()
	waitEvents(t, journal, "story", "members a and b", memberCount(2))
	bcancel()
	b.Close()
	a.Close()
	waitEvents(t, journal, "story", "the group empty again", func(r watch.EventRecord) bool {
		return r.Kind == watch.EvMembers && len(r.Members) == 0 && r.Change != nil
	})
	commitAdmin(t, sb, "story", map[int32]int64{0: 2, 1: 2, 2: 2, 3: 2})
	// The follower records the admin's commit in the offsets journal.
	var tl inspect.Timeline
	var r cliResult
	deadline := time.Now().Add(60 * time.Second)
	for !slices.ContainsFunc(tl.Events, func(e inspect.TimelineEvent) bool { return e.Kind == inspect.TLRewind }) {
		if time.Now().After(deadline) {
			t.Fatalf("no rewind in the story:\n%s\n%s", r.Out, r.Err)
		}
		time.Sleep(50 * time.Millisecond)
		r = runCLI(t, "", nil, "groups", "timeline", "story", "--journal", journal, "--data-dir", sb.Layout().DataDir, "-o", "json")
		tl = inspect.Timeline{}
		if r.Code != 0 || json.Unmarshal([]byte(r.Out), &tl) != nil {
			t.Fatalf("exit %d: %s", r.Code, r.Err)
		}
	}
	stop()
	var causes []string
	authors := map[string]int{}
	var rewind *inspect.TimelineEvent
	for i, e := range tl.Events {
		if e.Kind == inspect.TLGeneration && e.Change != nil {
			causes = append(causes, strings.Join(e.Change.Causes, "+"))
		}
		if e.Attribution != nil {
			authors[e.Attribution.Author]++
		}
		if e.Kind == inspect.TLRewind {
			rewind = &tl.Events[i]
		}
	}
	// a joins; b joins; b and a leave (seen in one or two looks).
	joined, left := 0, 0
	for _, c := range causes {
		joined += strings.Count(c, inspect.CauseMemberJoined)
		left += strings.Count(c, inspect.CauseMemberLeft)
	}
	if joined < 2 || left < 1 {
		t.Errorf("generation changes' causes %v", causes)
	}
	if authors[inspect.AuthorOwn] < 1 {
		t.Errorf("the members' commits: %v", authors)
	}
	if rewind == nil || rewind.Attribution.Author != inspect.AuthorAdmin || rewind.Severity != "page" || len(rewind.Rewound) != 4 {
		t.Fatalf("the admin rewind: %+v\n%s", rewind, r.Out)
	}
	if testing.Verbose() {
		t.Log(runCLI(t, "", nil, "groups", "timeline", "story", "--journal", journal, "--data-dir", sb.Layout().DataDir).Out)
	}
}
