package watch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// followWait polls cond until it holds or the deadline passes.
func followWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// next is the follower's next event, within a deadline.
func next(t *testing.T, f *Follower) Event {
	t.Helper()
	select {
	case e := <-f.Events:
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return Event{}
}

func versionOf(t *testing.T, e Event) int64 {
	t.Helper()
	if e.Version == nil {
		t.Fatalf("event without a version: %+v", e)
	}
	return e.Version.Assignment.AssignmentVersion
}

// A caller busy elsewhere loses no version: versions the controller
// writes meanwhile wait in the buffer, in order, while the file is still
// read; a problem arrives as an event too.
func TestFollowKeepsVersionsWhileTheCallerIsBusy(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "assignment.json")
	replace(t, path, asgJSON(1, 1, "kaas-0"))
	ctx, cancel := context.WithCancel(context.Background())
	f := Follow(ctx, Options{Path: path, PollInterval: 5 * time.Millisecond}, 8)
	defer func() {
		cancel()
		if err := f.Err(); err != nil {
			t.Error(err)
		}
	}()
	if v := versionOf(t, next(t, f)); v != 1 {
		t.Fatalf("first version %d", v)
	}
	// Not reading: each version must still be read before the next
	// replaces it.
	for v := 2; v <= 4; v++ {
		replace(t, path, asgJSON(1, v, "kaas-0"))
		followWait(t, "the version in the buffer", func() bool { return len(f.Events) == v-1 })
	}
	for want := int64(2); want <= 4; want++ {
		if v := versionOf(t, next(t, f)); v != want {
			t.Fatalf("version %d, want %d", v, want)
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if e := next(t, f); e.Version != nil || e.OK || e.Problem == "" {
		t.Fatalf("the missing file: %+v", e)
	}
	replace(t, path, asgJSON(1, 5, "kaas-0"))
	if e := next(t, f); e.Problem == "" || !e.OK {
		t.Fatalf("readable again: %+v", e)
	}
	if v := versionOf(t, next(t, f)); v != 5 {
		t.Fatalf("after the problem: version %d", v)
	}
}

// Cancelling ends the follow even while it waits for a full buffer to
// be read; a path that cannot be followed ends it with an error.
func TestFollowEnds(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "assignment.json")
	replace(t, path, asgJSON(1, 1, "kaas-0"))
	ctx, cancel := context.WithCancel(context.Background())
	f := Follow(ctx, Options{Path: path, PollInterval: 5 * time.Millisecond}, 1)
	followWait(t, "the first version", func() bool { return len(f.Events) == 1 })
	replace(t, path, asgJSON(1, 2, "kaas-0")) // blocks in send: the buffer is full
	cancel()
	select {
	case <-f.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the follow did not end after cancel")
	}
	if err := f.Err(); err != nil {
		t.Fatal(err)
	}
	if err := Follow(context.Background(), Options{}, 1).Err(); err == nil {
		t.Fatal("no path: no error")
	}
}
