//go:build realkaas && unix

package realkaas

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// pruneView is what the scenario reads of 'groups prune -o json'.
type pruneView struct {
	Summary struct {
		Selected, Remove, Rewrite, Refused, Written, Cached int
	}
	Groups []struct {
		Group, Action, Selector, Reason, AgeSource, Refused, Outcome, Backup string
		Kept                                                                 int
		Rows                                                                 []struct {
			Topic                                     string
			Partition                                 int32
			Offset                                    int64
			Selector, Reason, Refused, Result, Detail string
		}
	}
}

// TestRealPrune: on a running cluster of each generation, groups prune
// removes an empty group's file (no member, no commit for 30 days by the
// file's modification time) and a deleted topic's offsets from another
// group's file, after a restart unloaded both groups (a loaded group is
// refused: its coordinator's memory would write the offsets back). Then a
// consumer of the pruned empty group starts per auto.offset.reset (the
// log start), and one of the other group resumes from the offsets the
// prune kept.
func TestRealPrune(t *testing.T) {
	t.Parallel()
	forFlavours(t, testRealPrune)
}

func testRealPrune(t *testing.T, f Flavour) {
	c := newFlavourCluster(t, f, "orders:2")
	brokers := strings.Join(c.Addrs(), ",")
	produce(t, c, "orders", 2, 20)
	cs := startConsumer(t, c, "g-empty", "orders")
	waitPositions(t, all("orders", 2, 20), cs)
	cs.stop()
	adm := kadm.NewClient(newClient(t, c))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	offs := kadm.Offsets{}
	offs.AddOffset("orders", 0, 7, -1)
	offs.AddOffset("orders", 1, 9, -1)
	if err := adm.CommitAllOffsets(ctx, "g-deleted", offs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "both groups' offsets served", func() error {
		if got := committed(t, c, "g-empty"); fmtOffsets(got) != fmtOffsets(all("orders", 2, 20)) {
			return fmt.Errorf("g-empty committed %s", fmtOffsets(got))
		}
		if got := committed(t, c, "g-deleted"); fmtOffsets(got) != "orders/0=7 orders/1=9" {
			return fmt.Errorf("g-deleted committed %s", fmtOffsets(got))
		}
		return nil
	})
	pruneArgs := []string{"groups", "prune", "--data-dir", c.Data, "--brokers", brokers, "--kaas-version", f.KaasVersion(), "--empty-for", "30d", "--deleted-topics", "-o", "json"}

	// Loaded by their coordinators (kaas keeps an Empty group in memory):
	// refused, nothing written.
	dir := liveOffsetsDir(t, c)
	emptyFile, deletedFile := filepath.Join(dir, "g-empty.json"), filepath.Join(dir, "g-deleted.json")
	old := time.Now().Add(-40 * 24 * time.Hour)
	if err := os.Chtimes(emptyFile, old, old); err != nil {
		t.Fatal(err)
	}
	r := kaasctl(t, append(pruneArgs, "--execute")...)
	if v := decode[pruneView](t, r); r.code != 4 || len(v.Groups) != 1 || v.Groups[0].Group != "g-empty" || !strings.Contains(v.Groups[0].Refused, "loaded by") || v.Summary.Written != 0 {
		t.Errorf("a prune of the loaded g-empty: want exit 4 and the group refused as loaded, got %v", r)
	}
	if _, err := os.Stat(emptyFile); err != nil {
		t.Fatalf("the refused group's file is gone: %v", err)
	}

	// Every broker down: g-deleted's file also holds offsets of a topic
	// the cluster does not have (as a deleted topic leaves them); the
	// restart unloads both groups.
	for i := range c.Brokers {
		if err := c.Term(i); err != nil {
			t.Fatal(err)
		}
	}
	addOffsets(t, deletedFile, map[string]int64{"gone/0": 5, "gone/1": 3})
	if err := os.Chtimes(emptyFile, old, old); err != nil {
		t.Fatal(err)
	}
	for i := range c.Brokers {
		if err := c.StartBroker(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.SettleStarted(context.Background(), 60*time.Second, t.Logf); err != nil {
		t.Fatal(err)
	}
	// Right after a full restart a leader can serve a stale high watermark
	// (below the segments): the group's offsets then look past the log
	// end, as a recreated topic's do. Whatever is served, no offset of
	// orders is ever pruned as a recreated topic's.
	rec := kaasctl(t, "groups", "prune", "--data-dir", c.Data, "--brokers", brokers, "--kaas-version", f.KaasVersion(), "--recreated-topics", "-o", "json")
	for _, g := range decode[pruneView](t, rec).Groups {
		for _, row := range g.Rows {
			if row.Selector == "recreatedTopic" && row.Refused == "" {
				t.Errorf("right after the restart, %s %s/%d is selected as a recreated topic's: %v", g.Group, row.Topic, row.Partition, rec)
			}
			if row.Refused != "" {
				t.Logf("right after the restart, %s %s/%d refused: %s", g.Group, row.Topic, row.Partition, row.Refused)
			}
		}
	}
	logEndsBack(t, c, all("orders", 2, 20), "orders", "g-deleted")
	// Until the controller's assignment routes the groups again, their
	// coordinator is not available (or its listing not yet had), and the
	// prune refuses them for that.
	var r2 result
	waitFor(t, 30*time.Second, "both groups coordinated again", func() error {
		r2 = kaasctl(t, pruneArgs...)
		if strings.Contains(r2.stdout, "cannot tell whether") {
			return fmt.Errorf("%s", r2.stdout)
		}
		return nil
	})
	r = r2
	v := decode[pruneView](t, r)
	if r.code != 0 || v.Summary.Remove != 1 || v.Summary.Rewrite != 1 {
		t.Fatalf("the dry run: want exit 0, g-empty's file removed and g-deleted's rewritten, got %v", r)
	}
	for _, g := range v.Groups {
		switch g.Group {
		case "g-empty":
			if g.Action != "remove" || g.Selector != "emptyGroup" || g.AgeSource != "mtime" || !strings.Contains(g.Reason, "no member and no commit for 40d") {
				t.Errorf("g-empty planned %+v", g)
			}
		case "g-deleted":
			if g.Action != "rewrite" || g.Kept != 2 || len(g.Rows) != 2 {
				t.Errorf("g-deleted planned %+v", g)
			}
			for _, row := range g.Rows {
				if row.Topic != "gone" || row.Selector != "deletedTopic" || !strings.Contains(row.Reason, "the brokers do not know it") {
					t.Errorf("g-deleted row %+v", row)
				}
			}
		}
	}

	rollback := filepath.Join(t.TempDir(), "rollback.jsonl")
	// The execute asks the brokers again: one that has not answered
	// ListGroups since its restart is refused as the dry run was (nothing
	// written), and run again as an operator would.
	waitFor(t, 30*time.Second, "the prune executed", func() error {
		r = kaasctl(t, append(pruneArgs, "--execute", "--export-rollback", rollback)...)
		if r.code == 4 && strings.Contains(r.stdout, "cannot tell whether") {
			return fmt.Errorf("%s", r.stdout)
		}
		return nil
	})
	v = decode[pruneView](t, r)
	if r.code != 0 || v.Summary.Written != 2 || v.Summary.Cached != 0 {
		t.Errorf("the prune: want exit 0, 2 groups written and no offset served from a broker's memory, got %v", r)
	}
	if _, err := os.Stat(emptyFile); !os.IsNotExist(err) {
		t.Errorf("g-empty's file is still there after the prune: %v", err)
	}
	if got := fileOffsets(t, deletedFile); fmt.Sprint(got) != "map[orders/0:7 orders/1:9]" {
		t.Errorf("g-deleted's file after the prune holds %v, want orders/0=7 orders/1=9 only", got)
	}

	// What consumers of the pruned groups resume from: the empty group
	// has no offset, so auto.offset.reset (the log start); the other one
	// the offsets the prune kept.
	resumeAt(t, c, "the pruned empty group", "g-empty", all("orders", 2, 0), "orders")
	resumeAt(t, c, "the group whose deleted topic's offsets were pruned", "g-deleted", map[tp]int64{{"orders", 0}: 7, {"orders", 1}: 9}, "orders")

	// The rollback holds the removed file byte for byte; the restore is
	// refused now that a consumer committed to the group again.
	r = kaasctl(t, "groups", "prune", "--restore", rollback, "--data-dir", c.Data, "--brokers", brokers, "--kaas-version", f.KaasVersion(), "-o", "json")
	if r.code != 4 || !strings.Contains(r.stdout, "changed since the prune") {
		t.Errorf("restore after the groups committed again: want exit 4 and the files refused as changed, got %v", r)
	}
	if rb, err := os.ReadFile(rollback); err != nil || !bytes.Contains(rb, []byte(`"group":"g-empty"`)) {
		t.Errorf("the rollback file does not hold g-empty: %v", err)
	}
}

// addOffsets adds entries to an offset file (written as kaas would find
// it after a topic was deleted).
func addOffsets(t *testing.T, path string, add map[string]int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil || doc["offsets"] == nil {
		t.Fatalf("%s is not an offsets envelope (%v): %s", path, err, b)
	}
	offs := map[string]int64{}
	if err := json.Unmarshal(doc["offsets"], &offs); err != nil {
		t.Fatal(err)
	}
	for k, v := range add {
		offs[k] = v
	}
	doc["offsets"], _ = json.Marshal(offs)
	out, _ := json.Marshal(doc)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fileOffsets reads an offset file's "topic/partition" → offset.
func fileOffsets(t *testing.T, path string) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Offsets map[string]int64 `json:"offsets"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc.Offsets
}
