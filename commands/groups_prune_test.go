package commands

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/views"
)

// pruneLab is a running sandbox whose volume tests write group files on.
type pruneLab struct {
	sb   *sandbox.Sandbox
	data string
	dir  string // the live offsets dir
}

func newPruneLab(t *testing.T, topics ...sandbox.Topic) *pruneLab {
	t.Helper()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: append([]sandbox.Topic{{Name: "orders", Partitions: 4}}, topics...)})
	produceOrders(t, sb, 10)
	return &pruneLab{sb: sb, data: sb.Layout().DataDir, dir: sb.Layout().OffsetsPath()}
}

// file writes a group's offset file last written age ago (a file-only
// group: no broker has it in memory).
func (lab *pruneLab) file(t *testing.T, group, content string, age time.Duration) string {
	t.Helper()
	p := writeFile(t, lab.dir, group+".json", content)
	at := time.Now().Add(-age)
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
	return p
}

func (lab *pruneLab) prune(t *testing.T, args ...string) cliResult {
	t.Helper()
	return live(t, lab.sb, append([]string{"groups", "prune", "--data-dir", lab.data}, args...)...)
}

// pruneDoc decodes a prune's -o json.
func pruneDoc(t *testing.T, r cliResult) (views.GroupsPruneView, map[string]*inspect.PruneGroup) {
	t.Helper()
	v := decodeJSON[views.GroupsPruneView](t, r)
	by := map[string]*inspect.PruneGroup{}
	for _, pg := range v.Groups {
		by[pg.Group] = pg
	}
	return v, by
}

func rowOfPrune(pg *inspect.PruneGroup, topic string, p int32) *inspect.PruneRow {
	for i := range pg.Rows {
		if pg.Rows[i].Topic == topic && pg.Rows[i].Partition == p {
			return &pg.Rows[i]
		}
	}
	return nil
}

// Empty groups past the age and offsets on deleted topics: planned (each
// row explained, the age's source named), written through the write path
// (backups, the rollback file), and put back byte-identical by --restore.
func TestSandboxPruneEmptyAndDeleted(t *testing.T) {
	t.Parallel()
	lab := newPruneLab(t)
	oldEmpty := lab.file(t, "old-empty", `{"offsets":{"orders/0":5}}`, 40*24*time.Hour)
	lab.file(t, "young", `{"offsets":{"orders/0":5}}`, time.Hour)
	mixed := lab.file(t, "mixed", `{"offsets":{"orders/0":3,"gone/0":7,"gone/1":2}}`, time.Hour)
	onlyGone := lab.file(t, "only-gone", `{"offsets":{"gone/0":1}}`, time.Hour)
	before := map[string][]byte{}
	for _, p := range []string{oldEmpty, mixed, onlyGone} {
		before[p], _ = os.ReadFile(p)
	}

	r := lab.prune(t, "--empty-for", "30d", "--deleted-topics", "-o", "json")
	v, by := pruneDoc(t, r)
	if r.Code != 0 || !strings.Contains(r.Err, "nothing was written") {
		t.Fatalf("dry run: exit %d\n%s", r.Code, r.Err)
	}
	if _, ok := by["young"]; ok || len(v.Groups) != 3 || v.Summary.Remove != 2 || v.Summary.Rewrite != 1 {
		t.Fatalf("plan %+v", v.Summary)
	}
	e := by["old-empty"]
	if e.Action != inspect.PruneRemove || e.Selector != inspect.PruneEmpty || e.AgeSource != inspect.AgeMtime || !strings.Contains(e.Reason, "no member and no commit for 40d") || !strings.Contains(e.Reason, "offset file was last written") {
		t.Errorf("old-empty: %+v", e)
	}
	m := by["mixed"]
	if m.Action != inspect.PruneRewrite || m.Kept != 1 || len(m.Rows) != 2 || rowOfPrune(m, "gone", 0) == nil || rowOfPrune(m, "orders", 0) != nil {
		t.Fatalf("mixed: %+v", m)
	}
	if row := rowOfPrune(m, "gone", 1); row.Selector != inspect.PruneDeleted || !strings.Contains(row.Reason, "the brokers do not know it") || !strings.Contains(row.Reason, "holds no partition dir") {
		t.Errorf("mixed gone/1: %+v", row)
	}
	if g := by["only-gone"]; g.Action != inspect.PruneRemove || !strings.Contains(g.Reason, "every partition") {
		t.Errorf("only-gone: %+v", g)
	}
	for p, b := range before {
		if now, _ := os.ReadFile(p); !bytes.Equal(now, b) {
			t.Fatalf("the dry run changed %s", p)
		}
	}

	rollback := filepath.Join(t.TempDir(), "rollback.jsonl")
	r = lab.prune(t, "--empty-for", "30d", "--deleted-topics", "--execute", "--export-rollback", rollback, "-o", "json")
	v, by = pruneDoc(t, r)
	if r.Code != 0 || v.Summary.Written != 3 {
		t.Fatalf("execute: exit %d %+v\n%s", r.Code, v.Summary, r.Err)
	}
	for _, g := range []string{"old-empty", "only-gone"} {
		if _, err := os.Lstat(filepath.Join(lab.dir, g+".json")); !os.IsNotExist(err) || by[g].Backup == "" {
			t.Errorf("%s: file still there (%v) or no backup %q", g, err, by[g].Backup)
		}
		for _, row := range by[g].Rows {
			if row.Result != "OK" {
				t.Errorf("%s row %+v", g, row)
			}
		}
	}
	if got, _ := os.ReadFile(mixed); string(got) != `{"offsets":{"orders/0":3}}` {
		t.Errorf("mixed after the prune: %s", got)
	}
	if b, _ := os.ReadFile(by["old-empty"].Backup); !bytes.Equal(b, before[oldEmpty]) {
		t.Errorf("backup %s: %q", by["old-empty"].Backup, b)
	}

	// The rollback puts every file back byte for byte; a second restore
	// finds them as before.
	r = lab.prune(t, "--restore", rollback)
	if r.Code != 0 || strings.Count(r.Out, "planned") != 3 {
		t.Fatalf("restore dry run: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	r = lab.prune(t, "--restore", rollback, "--execute", "-o", "json")
	rv := decodeJSON[views.PruneRestoreView](t, r)
	if r.Code != 0 || rv.Summary.Restored != 3 {
		t.Fatalf("restore: exit %d %+v\n%s", r.Code, rv.Summary, r.Err)
	}
	for p, b := range before {
		if now, err := os.ReadFile(p); err != nil || !bytes.Equal(now, b) {
			t.Errorf("%s after the restore: %q (%v), want %q", p, now, err, b)
		}
	}
	if r = lab.prune(t, "--restore", rollback, "--execute", "-o", "json"); decodeJSON[views.PruneRestoreView](t, r).Summary.Unchanged != 3 {
		t.Errorf("second restore: %s", r.Out)
	}
}

// A recreated topic (the committed offset past the new log, committed
// before its first record) is pruned; the stale high watermark after a
// takeover (the leader serves less than its segments hold), which looks
// the same from the offsets, is refused with the reason, and so is a row
// whose evidence cannot tell (the file written after the log began).
func TestSandboxPruneRecreatedNotStale(t *testing.T) {
	t.Parallel()
	lab := newPruneLab(t, sandbox.Topic{Name: "reborn", Partitions: 1})
	produceTo(t, lab.sb, "reborn", 1, 5)
	lab.sb.WaitFor(t, "reborn's segments", 10*time.Second, func() bool {
		h, err := volume.FirstBatch(filepath.Join(lab.data, "reborn", "0"))
		return err == nil && h.BaseOffset == 0
	})
	// Committed at 40 two hours ago: the topic's log now ends at 5 and
	// began after that commit.
	lab.file(t, "old-reader", `{"offsets":{"reborn/0":40,"orders/0":4}}`, 2*time.Hour)
	// The same offsets in a file written after the log began: cannot tell.
	lab.file(t, "recent", `{"offsets":{"reborn/0":40}}`, 0)
	// orders/1 is served at 10, but its segments hold 25 records: a stale
	// high watermark; the group committed 20 before the takeover. (The
	// sandbox writes the partition's segment as records arrive: it is
	// replaced once the sandbox wrote all 10.)
	lab.sb.WaitFor(t, "orders/1's segments at 10", 10*time.Second, func() bool {
		pl, _, err := volume.ReadPartitionLog(filepath.Join(lab.data, "orders", "1"))
		return err == nil && pl.LogEnd == 10
	})
	writePartitionLog(t, lab.data, "orders/1", 0, 25)
	lab.file(t, "stale", `{"offsets":{"orders/1":20,"orders/0":4}}`, 2*time.Hour)
	before, _ := os.ReadFile(filepath.Join(lab.dir, "stale.json"))

	r := lab.prune(t, "--recreated-topics", "--execute", "-o", "json")
	v, by := pruneDoc(t, r)
	if r.Code != 4 {
		t.Errorf("refused rows: exit %d, want 4\n%s", r.Code, r.Err)
	}
	old := by["old-reader"]
	if old == nil || old.Action != inspect.PruneRewrite || old.Outcome != "written" {
		t.Fatalf("old-reader: %+v\n%s", old, r.Err)
	}
	if row := rowOfPrune(old, "reborn", 0); row == nil || row.Selector != inspect.PruneRecreated || row.Result != "OK" ||
		!strings.Contains(row.Reason, "committed 40 is beyond the log end 5") || !strings.Contains(row.Reason, "after the commit") || !strings.Contains(row.Reason, "deleted and recreated") {
		t.Errorf("old-reader reborn/0: %+v", row)
	}
	if got, _ := os.ReadFile(filepath.Join(lab.dir, "old-reader.json")); string(got) != `{"offsets":{"orders/0":4}}` {
		t.Errorf("old-reader after the prune: %s", got)
	}
	st := by["stale"]
	if st == nil || st.Action != inspect.PruneNone || st.Outcome != "refused" {
		t.Fatalf("stale: %+v", st)
	}
	if row := rowOfPrune(st, "orders", 1); row == nil || !strings.Contains(row.Refused, "a stale takeover, not a recreated topic") || !strings.Contains(row.Refused, "stale high watermark") || !strings.Contains(row.Refused, "never pruned") {
		t.Errorf("stale orders/1: %+v", row)
	}
	if after, _ := os.ReadFile(filepath.Join(lab.dir, "stale.json")); !bytes.Equal(after, before) {
		t.Errorf("the stale partition's file was written: %s", after)
	}
	if row := rowOfPrune(by["recent"], "reborn", 0); row == nil || !strings.Contains(row.Refused, "not after the commit") || !strings.Contains(row.Refused, "--journal") {
		t.Errorf("recent reborn/0: %+v", row)
	}
	if v.Summary.Refused != 2 || v.Summary.Written != 1 {
		t.Errorf("summary %+v", v.Summary)
	}
}

// Offline (every broker down), a partition whose segments hold an offset
// range twice (a leader took it over at a stale end and appended there)
// is a stale takeover: its committed offset past the log end is refused,
// never pruned; a deleted topic's row says the brokers were not asked.
func TestPruneOfflineWrittenTwice(t *testing.T) {
	t.Parallel()
	dd := t.TempDir()
	od := filepath.Join(dd, "__cluster", "__consumer_offsets")
	writeFile(t, od, "twice.json", `{"offsets":{"orders/0":20}}`)
	writeFile(t, od, "gone.json", `{"offsets":{"orders/0":3,"gone/0":3}}`)
	pd := filepath.Join(dd, "orders", "0")
	os.MkdirAll(pd, 0o755)
	ts := time.Now().Add(-time.Hour).UnixMilli()
	if err := os.WriteFile(filepath.Join(pd, volume.SegmentLogName(0, 1)), append(volume.EncodeBatch(0, 15, ts, nil), volume.EncodeBatch(10, 5, ts, nil)...), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", nil, "groups", "prune", "--data-dir", dd, "--kaas-version", "0.2.18", "--offline", "--recreated-topics", "--deleted-topics", "-o", "json")
	_, by := pruneDoc(t, r)
	if r.Code != 4 {
		t.Errorf("exit %d, want 4 (a refused row)\n%s", r.Code, r.Err)
	}
	if row := rowOfPrune(by["twice"], "orders", 0); row == nil || !strings.Contains(row.Refused, "a stale takeover") || !strings.Contains(row.Refused, "offset range twice") || by["twice"].Action != inspect.PruneNone {
		t.Errorf("twice: %+v", by["twice"])
	}
	if row := rowOfPrune(by["gone"], "gone", 0); row == nil || row.Refused != "" || !strings.Contains(row.Reason, "the brokers were not asked (offline") {
		t.Errorf("gone: %+v", by["gone"])
	}
	if by["gone"].State != "unknown" || by["gone"].Refused != "" {
		t.Errorf("offline gone: %+v", by["gone"])
	}
	// --export: the plan as CSV (one row a partition, refusals included)
	// or, for .json, the document.
	dir := t.TempDir()
	for _, name := range []string{"plan.csv", "plan.json"} {
		r = runCLI(t, "", nil, "groups", "prune", "--data-dir", dd, "--kaas-version", "0.2.18", "--offline", "--recreated-topics", "--deleted-topics", "--export", filepath.Join(dir, name))
		b, err := os.ReadFile(filepath.Join(dir, name))
		if r.Code != 4 || err != nil {
			t.Fatalf("--export %s: exit %d %v\n%s", name, r.Code, err, r.Err)
		}
		if name == "plan.json" {
			var v views.GroupsPruneView
			if err := json.Unmarshal(b, &v); err != nil || len(v.Groups) != 2 {
				t.Errorf("plan.json: %v %s", err, b)
			}
			continue
		}
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil || len(recs) != 3 || strings.Join(recs[0], ",") != "group,action,topic,partition,offset,selector,refused,reason,result" {
			t.Fatalf("plan.csv: %v\n%s", err, b)
		}
		for _, rec := range recs[1:] {
			switch rec[0] {
			case "gone":
				if rec[2] != "gone" || rec[5] != inspect.PruneDeleted || rec[6] != "" {
					t.Errorf("gone row %q", rec)
				}
			case "twice":
				if rec[6] == "" || !strings.Contains(rec[6], "stale takeover") {
					t.Errorf("twice row %q", rec)
				}
			}
		}
	}
}

// A live group is refused whatever a selector picks: with members (an
// unsubscribed topic is listed with the command to run once it is
// inactive), then, its consumer gone, while its coordinator still holds
// it in memory (named); nothing of it is written.
func TestSandboxPruneLiveRefused(t *testing.T) {
	t.Parallel()
	lab := newPruneLab(t, sandbox.Topic{Name: "audit", Partitions: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// audit/0, a topic the consumer does not read, is committed before
	// the consumer joins.
	if err := lab.sb.Commit(ctx, "app", map[string]map[int32]int64{"audit": {0: 2}}); err != nil {
		t.Fatal(err)
	}
	cl, err := lab.sb.Client(sandbox.ConsumerOpts("app", "orders")...)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 40; {
		n += cl.PollFetches(ctx).NumRecords()
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	// A lost topic's offsets in its file too (as a deleted topic leaves them).
	file := filepath.Join(lab.dir, "app.json")
	lab.sb.WaitFor(t, "app's commit in its file", 10*time.Second, func() bool {
		b, _ := os.ReadFile(file)
		return bytes.Contains(b, []byte(`"orders/3":10`))
	})
	b, _ := os.ReadFile(file)
	before := bytes.Replace(b, []byte(`{"offsets":{`), []byte(`{"offsets":{"gone/0":4,`), 1)
	if err := os.WriteFile(file, before, 0o644); err != nil {
		t.Fatal(err)
	}

	rollback := filepath.Join(t.TempDir(), "rollback.jsonl")
	r := lab.prune(t, "--deleted-topics", "--unsubscribed", "--execute", "--export-rollback", rollback, "-o", "json")
	_, by := pruneDoc(t, r)
	app := by["app"]
	if r.Code != 4 || app == nil || app.Outcome != "refused" || app.Members != 1 || !strings.Contains(app.Refused, "the group is live: 1 member") {
		t.Fatalf("live group: exit %d %+v\n%s", r.Code, app, r.Err)
	}
	// Nothing was written: the rollback file, which would restore nothing,
	// is gone, and the same command runs again as it was (below).
	if _, err := os.Stat(rollback); !os.IsNotExist(err) || !strings.Contains(r.Err, "nothing was written, so "+rollback) {
		t.Errorf("after a prune that wrote nothing, the rollback file: %v\n%s", err, r.Err)
	}
	if row := rowOfPrune(app, "gone", 0); row == nil || row.Selector != inspect.PruneDeleted {
		t.Errorf("gone/0: %+v", row)
	}
	if row := rowOfPrune(app, "audit", 0); row == nil || row.Selector != inspect.PruneUnsubscribed || !strings.Contains(row.Reason, "no live member subscribes to or is assigned topic audit") ||
		!strings.Contains(row.Reason, "kaasctl offsets delete --group app --topic audit --execute") {
		t.Errorf("audit/0: %+v", row)
	}
	if rowOfPrune(app, "orders", 0) != nil {
		t.Errorf("a subscribed topic's row: %+v", app.Rows)
	}

	// The consumer leaves: the group is Empty but its coordinator lists it.
	cl.Close()
	lab.sb.WaitFor(t, "app Empty", 20*time.Second, func() bool {
		r := live(t, lab.sb, "groups", "describe", "app", "-o", "json")
		return strings.Contains(r.Out, `"state": "Empty"`)
	})
	coord := lab.sb.Coordinator("app")
	r = lab.prune(t, "--deleted-topics", "--execute", "--export-rollback", rollback, "-o", "json")
	_, by = pruneDoc(t, r)
	if app = by["app"]; r.Code != 4 || app == nil || !strings.Contains(app.Refused, "loaded by "+coord) || !strings.Contains(app.Refused, "Restart "+coord) {
		t.Fatalf("held group: exit %d %+v\n%s", r.Code, app, r.Err)
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(after, before) {
		t.Errorf("a refused group's file changed:\n%s\n%s", before, after)
	}
}

// A coordinator that no longer holds the group (it moved while Empty) can
// still serve its offsets from its cache after the file is gone (kaas's
// cache outlives the file): the prune removes the file, then asks, marks
// the partitions CACHED, names the broker to restart, and exits 3.
func TestSandboxPruneCachedNamesBroker(t *testing.T) {
	t.Parallel()
	lab := newPruneLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := lab.sb.Commit(ctx, "cached", map[string]map[int32]int64{"orders": {0: 6, 1: 7}}); err != nil {
		t.Fatal(err)
	}
	old := lab.sb.Coordinator("cached")
	lab.sb.WaitFor(t, "cached seen Empty", 10*time.Second, func() bool {
		r := live(t, lab.sb, "groups", "describe", "cached", "-o", "json")
		return strings.Contains(r.Out, `"state": "Empty"`)
	})
	if _, err := lab.sb.StopBroker(old); err != nil {
		t.Fatal(err)
	}
	lab.sb.WaitFor(t, "cached unloaded", 10*time.Second, func() bool { return lab.sb.Unloaded("cached") })
	now := lab.sb.Coordinator("cached")
	file := filepath.Join(lab.dir, "cached.json")
	at := time.Now().Add(-72 * time.Hour)
	os.Chtimes(file, at, at)

	r := lab.prune(t, "--empty-for", "2d", "--execute", "-o", "json")
	_, by := pruneDoc(t, r)
	pg := by["cached"]
	if r.Code != 3 || pg == nil || pg.Outcome != "written" {
		t.Fatalf("exit %d, want 3: %+v\n%s", r.Code, pg, r.Err)
	}
	if _, err := os.Lstat(file); !os.IsNotExist(err) {
		t.Errorf("the file is still there: %v", err)
	}
	for _, row := range pg.Rows {
		if row.Result != "CACHED" || !strings.Contains(row.Detail, "still serves offset") {
			t.Errorf("row %+v", row)
		}
	}
	if !strings.Contains(r.Err, "broker "+now) || !strings.Contains(r.Err, "restart that broker") {
		t.Errorf("the broker to restart (%s) is not named:\n%s", now, r.Err)
	}
}

// A broker that is not the group's coordinator but still lists it (a
// stale in-memory group) is named after the prune, and the run exits 3.
func TestSandboxPruneStillListed(t *testing.T) {
	t.Parallel()
	lab := newPruneLab(t)
	lab.file(t, "leftover", `{"offsets":{"orders/0":1}}`, 10*24*time.Hour)
	coord, other := lab.sb.Coordinator("leftover"), ""
	for _, id := range lab.sb.BrokerIDs() {
		if id != coord {
			other = id
		}
	}
	if err := lab.sb.MakeStale(other, "leftover", "Empty"); err != nil {
		t.Fatal(err)
	}
	r := lab.prune(t, "--empty-for", "7d", "--execute", "-o", "json")
	v, by := pruneDoc(t, r)
	if r.Code != 3 || by["leftover"] == nil || by["leftover"].Outcome != "written" || v.Summary.StillListed != 1 {
		t.Fatalf("exit %d, want 3: %+v\n%s", r.Code, v.Summary, r.Err)
	}
	if !strings.Contains(r.Err, "broker "+other+" still list(s) the group") || !strings.Contains(r.Err, "restart broker "+other) {
		t.Errorf("the broker still listing the group (%s) is not named:\n%s", other, r.Err)
	}
}

// More groups selected than --max-groups: nothing is written, exit 4,
// and the cap to raise is named; raised, the prune goes through.
func TestSandboxPruneMaxGroups(t *testing.T) {
	t.Parallel()
	lab := newPruneLab(t)
	for _, g := range []string{"tmp-1", "tmp-2", "tmp-3", "keep-1"} {
		lab.file(t, g, `{"offsets":{"orders/0":1}}`, 10*24*time.Hour)
	}
	r := lab.prune(t, "--empty-for", "7d", "--group-regex", "^tmp-", "--exclude", "-3$", "--max-groups", "1", "--execute")
	if r.Code != 4 || !strings.Contains(r.Err, "selects 2 groups to write, more than --max-groups 1: nothing was written") || !strings.Contains(r.Err, "--max-groups 2") {
		t.Fatalf("over the cap: exit %d\n%s", r.Code, r.Err)
	}
	for _, g := range []string{"tmp-1", "tmp-2"} {
		if _, err := os.Lstat(filepath.Join(lab.dir, g+".json")); err != nil {
			t.Errorf("%s written over the cap: %v", g, err)
		}
	}
	r = lab.prune(t, "--empty-for", "7d", "--group-regex", "^tmp-", "--exclude", "-3$", "--max-groups", "2", "--execute", "-o", "json")
	if v, _ := pruneDoc(t, r); r.Code != 0 || v.Summary.Written != 2 {
		t.Fatalf("within the cap: exit %d %+v\n%s", r.Code, v.Summary, r.Err)
	}
	for g, gone := range map[string]bool{"tmp-1": true, "tmp-2": true, "tmp-3": false, "keep-1": false} {
		if _, err := os.Lstat(filepath.Join(lab.dir, g+".json")); os.IsNotExist(err) != gone {
			t.Errorf("%s: removed %v, want %v", g, os.IsNotExist(err), gone)
		}
	}
}

// The probe's canaries: one of a broker gone from assignment.json goes;
// the one the probe uses now stays, also when it is a broker's second id
// because its first is a group kaasctl did not create (refused, not
// kaasctl's); one holding offsets the probe did not commit is refused.
func TestSandboxPruneCanaries(t *testing.T) {
	t.Parallel()
	lab := newPruneLab(t)
	a := lab.sb.Assignment()
	first := inspect.CanaryGroups(a, nil)[0]
	probe := `{"offsets":{"orders/0":1},"metadata":{"orders/0":"kaasctl probe 1700000000000"}}`
	lab.file(t, first.Group, `{"offsets":{"orders/0":1}}`, time.Hour) // somebody else's group
	second := inspect.CanaryGroups(a, func(g string) (bool, string) { return g != first.Group, "" })[0]
	if second.Group == first.Group || second.Broker != first.Broker {
		t.Fatalf("canaries %+v %+v", first, second)
	}
	lab.file(t, second.Group, probe, time.Hour)
	lab.file(t, inspect.CanaryPrefix+"kaas-9-0", probe, time.Hour)
	r := lab.prune(t, "--canaries", "-o", "json")
	_, by := pruneDoc(t, r)
	if r.Code != 4 {
		t.Errorf("exit %d, want 4 (a refused canary)\n%s", r.Code, r.Err)
	}
	if _, ok := by[second.Group]; ok {
		t.Errorf("the canary in use (%s, after the foreign %s) is selected", second.Group, first.Group)
	}
	if g := by[inspect.CanaryPrefix+"kaas-9-0"]; g == nil || g.Action != inspect.PruneRemove || g.Refused != "" || !strings.Contains(g.Reason, "broker kaas-9, which is not in assignment.json") {
		t.Errorf("kaas-9's canary: %+v", g)
	}
	if g := by[first.Group]; g == nil || !strings.Contains(g.Refused, "which the probe did not commit") {
		t.Errorf("the foreign group under a canary's name: %+v", g)
	}
}

// --age-from: the journal's last commit, the file's modification time, or
// the later of both; each selected group names where its age came from.
func TestSandboxPruneAgeFromJournal(t *testing.T) {
	t.Parallel()
	lab := newPruneLab(t)
	for _, g := range []string{"j-quiet", "j-busy", "j-unknown"} {
		lab.file(t, g, `{"offsets":{"orders/0":1}}`, 40*24*time.Hour)
	}
	jdir := filepath.Join(t.TempDir(), "offsets")
	os.MkdirAll(jdir, 0o755)
	t0, busy := time.Now().Add(-35*24*time.Hour).UTC(), time.Now().Add(-48*time.Hour).UTC()
	lines := []watch.JournalRecord{
		{Kind: watch.RecSegment, Time: t0, Version: watch.JournalFormatVersion, Seq: 1, Dir: lab.dir},
		{Kind: watch.RecSnapshot, Time: t0, Group: "j-quiet", Offsets: map[string]int64{"orders/0": 1}},
		{Kind: watch.RecSnapshot, Time: t0, Group: "j-busy", Offsets: map[string]int64{"orders/0": 0}},
		{Time: busy, Group: "j-busy", Changed: map[string]int64{"orders/0": 1}},
	}
	var b bytes.Buffer
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(append(j, '\n'))
	}
	os.WriteFile(filepath.Join(jdir, watch.JournalSegmentName(t0)), b.Bytes(), 0o644)

	selected := func(args ...string) map[string]*inspect.PruneGroup {
		r := lab.prune(t, append([]string{"--empty-for", "30d", "-o", "json"}, args...)...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.Code, r.Err)
		}
		_, by := pruneDoc(t, r)
		return by
	}
	by := selected("--journal", jdir) // both, by default with a journal
	if g := by["j-quiet"]; g == nil || g.AgeSource != inspect.AgeBoth || !strings.Contains(g.Reason, "no commit recorded since the journal first saw the group") {
		t.Errorf("both, j-quiet: %+v", g)
	}
	if by["j-busy"] != nil || by["j-unknown"] != nil {
		t.Errorf("both: a group the journal saw commit 2 days ago, or never saw, is selected: %v", by)
	}
	if by = selected("--age-from", "mtime"); by["j-busy"] == nil || by["j-busy"].AgeSource != inspect.AgeMtime {
		t.Errorf("mtime: j-busy %+v", by["j-busy"])
	}
	if by = selected("--journal", jdir, "--age-from", "journal"); by["j-quiet"] == nil || by["j-quiet"].AgeSource != inspect.AgeJournal || by["j-unknown"] != nil {
		t.Errorf("journal: %v", by)
	}
	// Another volume's journal dates nothing here.
	other := filepath.Join(t.TempDir(), "offsets")
	os.MkdirAll(other, 0o755)
	j, _ := json.Marshal(watch.JournalRecord{Kind: watch.RecSegment, Time: t0, Version: watch.JournalFormatVersion, Seq: 1, Dir: "/elsewhere/__consumer_offsets"})
	os.WriteFile(filepath.Join(other, watch.JournalSegmentName(t0)), append(j, '\n'), 0o644)
	if r := lab.prune(t, "--empty-for", "30d", "--journal", other); r.Code != 4 || !strings.Contains(r.Err, "not an offsets dir of this volume") {
		t.Errorf("another volume's journal: exit %d\n%s", r.Code, r.Err)
	}
}

// Usage errors: no selector, selectors with --restore, --age-from without
// its journal, a cap below 1.
func TestPruneUsage(t *testing.T) {
	t.Parallel()
	dd := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "selects nothing without a selector"},
		{[]string{"--restore", "x", "--empty-for", "1d"}, "--empty-for does not go with it"},
		{[]string{"--empty-for", "1d", "--age-from", "journal"}, "give it with --journal DIR"},
		{[]string{"--deleted-topics", "--age-from", "mtime"}, "--age-from goes with --empty-for"},
		{[]string{"--empty-for", "soon"}, "an age such as 30d"},
		{[]string{"--canaries", "--max-groups", "0"}, "at least 1"},
		{[]string{"--canaries", "--exclude", "("}, "--exclude"},
		{[]string{"--canaries", "extra"}, "takes no arguments"},
	} {
		r := runCLI(t, "", nil, append([]string{"groups", "prune", "--data-dir", dd}, c.args...)...)
		if r.Code != 2 || !strings.Contains(r.Err, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", c.args, r.Code, c.want, r.Err)
		}
	}
}
