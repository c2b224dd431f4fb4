package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/sandbox"
)

// Issue 7's end-to-end check: stop and start brokers while 'watch --journal'
// runs; 'takeover trace' over the journal and the sandbox's broker logs
// reproduces every move the sandbox reported, with a cause, confirmed by
// the logs.
func TestTakeoverTraceReproducesSandboxMoves(t *testing.T) {
	t.Parallel()
	s := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: []sandbox.Topic{{Name: "orders", Partitions: 2}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 10; i++ {
		if err := s.Commit(ctx, fmt.Sprintf("svc-%d", i), map[string]map[int32]int64{"orders": {0: 1, 1: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	data := s.Layout().DataDir
	journal := filepath.Join(t.TempDir(), "journal")
	var wout, werr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"kaasctl", "watch", "--data-dir", data, "--journal", journal, "--poll-interval", "50ms", "--count", "5", "--timeout", "60s", "-o", "jsonl"},
			&IOStreams{In: strings.NewReader(""), Out: &wout, Err: &werr, Getenv: func(string) string { return "" }})
	}()
	trWaitFile(t, filepath.Join(journal, "assignment-e1-v1.json"))

	type move struct{ group, from, to string }
	var reported []move
	for _, step := range []struct{ action, broker string }{{"stop", "kaas-1"}, {"stop", "kaas-2"}, {"start", "kaas-2"}, {"start", "kaas-1"}} {
		res, err := s.Change(step.action, step.broker)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Moved {
			reported = append(reported, move{m.Group, m.From, m.To})
		}
		trWaitFile(t, filepath.Join(journal, fmt.Sprintf("assignment-e1-v%d.json", res.AssignmentVersion)))
	}
	if code := <-done; code != 0 {
		t.Fatalf("watch exit %d: %s", code, werr.String())
	}
	if len(reported) == 0 {
		t.Fatal("the sandbox reported no moves")
	}

	r := runCLI(t, "", nil, "takeover", "trace", "--journal", journal, "--no-live", "--logs", s.LogDir(), "-o", "json")
	if r.Code != 0 {
		t.Fatalf("trace exit %d: %s", r.Code, r.Err)
	}
	var tr struct {
		Events []struct {
			Group, From, To, Cause, Evidence string
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(r.Out), &tr); err != nil {
		t.Fatal(err)
	}
	var traced []move
	for _, e := range tr.Events {
		traced = append(traced, move{e.Group, e.From, e.To})
		if e.Cause == "" {
			t.Errorf("%s %s→%s has no cause", e.Group, e.From, e.To)
		}
		if e.Evidence != "both" {
			t.Errorf("%s %s→%s: evidence %q, want both (journal and broker log)", e.Group, e.From, e.To, e.Evidence)
		}
	}
	if fmt.Sprint(traced) != fmt.Sprint(reported) {
		t.Errorf("trace and sandbox disagree:\ntrace   %v\nsandbox %v", traced, reported)
	}
	// watch streamed the same moves while it ran.
	if n := strings.Count(wout.String(), "\n"); n != len(reported) {
		t.Errorf("watch streamed %d events, the sandbox reported %d moves:\n%s", n, len(reported), wout.String())
	}
}
