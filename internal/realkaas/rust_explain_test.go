//go:build realkaas && unix

package realkaas

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// explainBlocker is what the scenario reads of a verdict's blocker.
type explainBlocker struct {
	Groups []struct {
		Group   string `json:"group"`
		Blocker *struct {
			Partition   string `json:"partition"`
			Offset      int64  `json:"offset"`
			Kind        string `json:"kind"`
			Transaction string `json:"transaction"`
			Command     string `json:"command"`
			Assumes     string `json:"assumes"`
		} `json:"blocker"`
		Next *struct {
			Command string `json:"command"`
		} `json:"next"`
	} `json:"groups"`
}

// TestRustExplainNamesTheBlocker (issues 33 and 36): on Rust 0.2.18 a
// transaction left open until kaas's reaper aborts it holds a
// read_committed consumer at its first record for good (no ABORT marker).
// groups explain's verdict names that blocker (the transaction, the
// generation assumed) and its next command is the fix as a dry run:
// with the group's consumer stopped, run as printed, it plans the reset
// past the transaction and writes nothing; with --execute it commits 7,
// and a consumer of the group resumes there and reads orders/0 on. (The
// consumer resuming is read_uncommitted: on 0.2.18 a read_committed one
// stays held even from 7, as the last stable offset stays at the
// transaction's first record: seen here, no record in a minute.)
func TestRustExplainNamesTheBlocker(t *testing.T) {
	t.Parallel()
	c := newRustCluster(t, "orders:2")
	brokers := strings.Join(c.Addrs(), ",")
	vflags := []string{"--data-dir", c.Data, "--kaas-version", "0.2.18"}
	produce(t, c, "orders", 2, 5) // 0-4 on both partitions
	open := txnProducer(t, c, "tx-explain", 10*time.Second)
	inTxn(t, open, []int32{0}, 2, "held", nil) // orders/0: 5-6, never ended
	produce(t, c, "orders", 2, 1)              // orders/0: 7; orders/1: 5
	rc := []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted())}
	cs := startConsumerOpts(t, c, "g-held", rc, "orders")
	waitPositions(t, map[tp]int64{{"orders", 0}: 5, {"orders", 1}: 6}, cs)
	waitFor(t, 120*time.Second, "the reaper to abort tx-explain", func() error {
		for _, r := range decode[txnListView](t, ok(t, append([]string{"txn", "list", "-o", "json"}, vflags...)...)).Transactions {
			if r.ID == "tx-explain" && r.State == "CompleteAbort" {
				return nil
			}
		}
		return fmt.Errorf("not aborted yet")
	})
	args := append([]string{"groups", "explain", "g-held", "-b", brokers, "--window", "3s", "--interval", "1s", "-o", "json"}, vflags...)
	r := kaasctl(t, args...)
	v := decode[explainBlocker](t, r)
	if r.code != 3 || len(v.Groups) != 1 || v.Groups[0].Blocker == nil || v.Groups[0].Next == nil {
		t.Fatalf("groups explain: %v", r)
	}
	b, next := v.Groups[0].Blocker, v.Groups[0].Next.Command
	t.Logf("blocker %+v; next %s", *b, next)
	if b.Partition != "orders/0" || b.Offset != 5 || b.Kind != "abortedWithoutMarkers" || b.Transaction != "tx-explain" || !strings.Contains(b.Assumes, "0.2.18") {
		t.Errorf("blocker %+v", *b)
	}
	if !strings.HasPrefix(next, "kaasctl offsets reset ") || !strings.Contains(next, "--topic orders:0 --to-offset 7") || strings.Contains(next, "--execute") || !strings.Contains(next, "--data-dir "+c.Data) {
		t.Fatalf("next command %q: the reset past the transaction as a dry run, with the flags given", next)
	}
	cs.stop()
	file := filepath.Join(layoutOf(t, c).OffsetsPath(), "g-held.json")
	before := readFileOr(file)
	waitFor(t, 60*time.Second, "the dry run to plan the reset (the group empty)", func() error {
		if r := kaasctl(t, strings.Fields(next)[1:]...); r.code != 0 {
			return fmt.Errorf("%v", r)
		}
		return nil
	})
	if after := readFileOr(file); after != before {
		t.Errorf("the dry run changed %s", file)
	}
	ok(t, append(strings.Fields(next)[1:], "--execute")...)
	if after := readFileOr(file); after == before {
		t.Errorf("--execute left %s as it was", file)
	}
	produce(t, c, "orders", 2, 1) // orders/0: 8; orders/1: 6
	cs2 := startConsumer(t, c, "g-held", "orders")
	waitPositions(t, map[tp]int64{{"orders", 0}: 9, {"orders", 1}: 7}, cs2)
	if first, _ := cs2.snapshot(); first[tp{"orders", 0}] != 7 {
		t.Errorf("the group resumed orders/0 at %d, want 7 (the offset the reset wrote)", first[tp{"orders", 0}])
	}
}

// readFileOr is the file's content ("" when it cannot be read).
func readFileOr(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
