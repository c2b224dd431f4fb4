//go:build realkaas && unix

package realkaas

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A broker frozen by SIGSTOP (a hung process: its sockets stay open, it
// answers nothing). The Go flavour's controller never removed one from
// assignment.json (2 m 44 s seen); the Rust 0.2.18 controller does not
// either: 40 s frozen (past the 30 s the readiness probe takes to give up)
// and no version drops it. After SIGCONT it serves again.
func TestRustFrozenBroker(t *testing.T) {
	t.Parallel()
	c := newRustCluster(t, "orders:3")
	rec := recordAssignments(t, c)
	ctrl := controllerOf(t, c)
	victim := (ctrl + 1) % len(c.Brokers)
	v0, _ := rec.latest()
	if err := c.Freeze(victim); err != nil {
		t.Fatal(err)
	}
	thawed := false
	defer func() {
		if !thawed {
			c.Thaw(victim)
		}
	}()
	deadline := time.Now().Add(40 * time.Second)
	for time.Now().Before(deadline) {
		if v, p := rec.latest(); v != v0 {
			a := readAssignment(t, p)
			t.Logf("%s frozen: v%d lists alive %v", c.Brokers[victim].ID, v, aliveIDs(a))
			if !slices.Contains(aliveIDs(a), c.Brokers[victim].ID) {
				t.Errorf("the Rust controller dropped the frozen %s at v%d", c.Brokers[victim].ID, v)
			}
			v0 = v
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%s frozen (SIGSTOP) for 40 s: assignment.json still lists it alive (v%d)", c.Brokers[victim].ID, v0)
	if err := c.Thaw(victim); err != nil {
		t.Fatal(err)
	}
	thawed = true
	if err := c.WaitSettled(context.Background(), 60*time.Second); err != nil {
		t.Errorf("after SIGCONT: %v", err)
	}
	produce(t, c, "orders", 3, 1)
}
