package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/sandbox"
)

// The sandbox's broker logs are what `takeover trace` reads: every move the
// assignment versions show is confirmed by a "group coordinator change"
// line (evidence "both"), and versions get their controller lines.
func TestSandboxLogsFeedTakeoverTrace(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: []sandbox.Topic{{Name: "orders", Partitions: 1}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, g := range []string{"a1", "b2", "c3", "d4", "e5", "f6", "g7", "h8"} {
		if err := sb.Commit(ctx, g, map[string]map[int32]int64{"orders": {0: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	snaps := t.TempDir()
	copyFile := func(name string) {
		data, err := os.ReadFile(sb.Layout().AssignmentPath())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(snaps, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile("v1.json")
	if _, err := sb.StopBroker("kaas-1"); err != nil {
		t.Fatal(err)
	}
	copyFile("v2.json")
	if _, err := sb.StartBroker("kaas-1"); err != nil {
		t.Fatal(err)
	}

	var out, errb bytes.Buffer
	code := Main([]string{"kaasctl", "takeover", "trace", "--data-dir", sb.Layout().DataDir, "--assignments", snaps, "--logs", sb.LogDir(), "-o", "json"},
		&IOStreams{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	if code != 0 {
		t.Fatalf("takeover trace exit %d: %s", code, errb.String())
	}
	var tr struct {
		Versions []struct {
			AssignmentVersion int64 `json:"assignmentVersion"`
		} `json:"versions"`
		Events []struct {
			Group             string `json:"group"`
			From, To          string
			AssignmentVersion int64  `json:"assignmentVersion"`
			Evidence          string `json:"evidence"`
		} `json:"events"`
	}
	if err := json.Unmarshal(out.Bytes(), &tr); err != nil {
		t.Fatalf("trace json: %v\n%s", err, out.String())
	}
	if len(tr.Versions) != 3 {
		t.Fatalf("versions = %d, want 3", len(tr.Versions))
	}
	if len(tr.Events) == 0 {
		t.Fatal("no moves traced; the test proves nothing")
	}
	for _, e := range tr.Events {
		if e.Evidence != "both" {
			t.Errorf("move of %s %s→%s at v%d has evidence %q; the sandbox's log line should confirm it", e.Group, e.From, e.To, e.AssignmentVersion, e.Evidence)
		}
	}
}
