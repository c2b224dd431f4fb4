package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/observe/watchrun"
)

// waitJournal waits until the group's timeline in the offsets journal
// under dir satisfies ok (a deadline only guards against a hang).
func waitJournal(t *testing.T, sb *sandbox.Sandbox, dir, group string, what string, ok func([]watch.HistoryPoint) bool) {
	t.Helper()
	sb.WaitFor(t, "journal: "+what, 20*time.Second, func() bool {
		jd, err := watch.ResolveOffsetJournal(dir)
		if err != nil {
			return false
		}
		jr, err := watch.ReadOffsetJournal(jd, watch.JournalReadOptions{Group: group})
		if err != nil {
			return false
		}
		pts := watch.ReplayGroup(jr.Records, group)
		return len(pts) > 0 && ok(pts)
	})
}

func lastPoint(pts []watch.HistoryPoint) watch.HistoryPoint { return pts[len(pts)-1] }

// TestSandboxOffsetsHistoryRestore is the incident end to end: a consumer
// commits; a zombie's stale commit (old generation, accepted as kaas
// accepts it) rewinds a partition; a commit to a coordinator that has not
// loaded the group wipes the others from the file. watch --offsets flags
// both as they happen, offsets history shows both, and a restore to the
// state before the first anomaly brings the group back, verified in the
// file and over the wire.
func TestSandboxOffsetsHistoryRestore(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: []sandbox.Topic{{Name: "orders", Partitions: 3}}})
	sb.AcceptStaleCommits(true)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := sb.Produce(ctx, "orders", 3, 20); err != nil {
		t.Fatal(err)
	}
	data, boot := sb.Layout().DataDir, strings.Join(sb.Bootstrap(), ",")
	journal := filepath.Join(t.TempDir(), "journal")

	// A consumer reads half and commits: the baseline.
	consumer, err := sb.Client(sandbox.ConsumerOpts("app", "orders")...)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	consume := func(n int) {
		for got := 0; got < n; {
			fs := consumer.PollRecords(ctx, n-got)
			if ctx.Err() != nil {
				t.Fatalf("consuming: %v", ctx.Err())
			}
			got += fs.NumRecords()
		}
		if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
			t.Fatal(err)
		}
	}
	consume(30)
	sb.WaitFor(t, "first commit on the volume", 20*time.Second, func() bool { _, ok := sb.CommittedOffsets("app"); return ok })

	// The watch: three changes, then it stops.
	var wout, werr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"kaasctl", "watch", "--offsets", "--data-dir", data, "--journal", journal, "--poll-interval", "50ms",
			"--count", "3", "--timeout", "60s", "-o", "jsonl"}, &IOStreams{In: strings.NewReader(""), Out: &wout, Err: &werr, Getenv: func(string) string { return "" }})
	}()
	waitJournal(t, sb, journal, "app", "baseline", func(pts []watch.HistoryPoint) bool { return true })

	// 1. The consumer reads the rest and commits: progress.
	consume(30)
	waitJournal(t, sb, journal, "app", "all partitions at 20", func(pts []watch.HistoryPoint) bool {
		o := lastPoint(pts).Offsets
		return o["orders/0"] == 20 && o["orders/1"] == 20 && o["orders/2"] == 20
	})
	member, gen := consumer.GroupMetadata()
	consumer.Close()
	adm := sb.Client
	acl, err := adm()
	if err != nil {
		t.Fatal(err)
	}
	defer acl.Close()
	ka := kadm.NewClient(acl)
	sb.WaitFor(t, "group app Empty", 20*time.Second, func() bool {
		ds, err := ka.DescribeGroups(ctx, "app")
		return err == nil && ds["app"].State == "Empty"
	})

	// 2. A zombie of the old generation commits a stale offset: kaas
	// accepts it (no fencing), and orders/1 goes back to 5.
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation, req.MemberID = "app", gen, member
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "orders"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = 1, 5, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, acl)
	if err != nil {
		t.Fatal(err)
	}
	if ec := resp.Topics[0].Partitions[0].ErrorCode; ec != 0 {
		t.Fatalf("stale commit rejected with error %d (kaas accepts it)", ec)
	}
	waitJournal(t, sb, journal, "app", "the rewind", func(pts []watch.HistoryPoint) bool { return lastPoint(pts).Offsets["orders/1"] == 5 })

	// 3. A commit to a coordinator that has not loaded the group rewrites
	// the file with only what it carries: orders/1 and orders/2 vanish.
	sb.ForgetOffsets("app")
	if err := sb.Commit(ctx, "app", map[string]map[int32]int64{"orders": {0: 20}}); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("watch exit %d: %s", code, werr.String())
		}
	case <-ctx.Done():
		t.Fatal("watch did not stop after three changes")
	}
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(wout.String()), "\n") {
		var ev watchrun.OffsetWatchEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("watch -o jsonl line %q: %v", line, err)
		}
		for _, a := range ev.Anomalies {
			kinds = append(kinds, a.Kind+":"+a.Partition)
		}
	}
	if got := strings.Join(kinds, ","); got != "REWIND:orders/1,VANISHED:orders/1,VANISHED:orders/2" {
		t.Errorf("watch flagged %q\n%s", got, wout.String())
	}

	// History shows both anomalies.
	r := runCLI(t, "", nil, "offsets", "history", "app", "--journal", journal, "--data-dir", data, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("history exit %d: %s", r.Code, r.Err)
	}
	var hv inspect.OffsetHistoryView
	if err := json.Unmarshal([]byte(r.Out), &hv); err != nil {
		t.Fatal(err)
	}
	var hk []string
	for _, a := range hv.Anomalies {
		hk = append(hk, a.Kind+":"+a.Partition)
	}
	if strings.Join(hk, ",") != "REWIND:orders/1,VANISHED:orders/1,VANISHED:orders/2" || len(hv.Partitions) != 3 {
		t.Errorf("history anomalies %v partitions %+v", hk, hv.Partitions)
	}
	for _, p := range hv.Partitions {
		if p.Max != 20 {
			t.Errorf("history %s/%d: max %d, want 20", p.Topic, p.Partition, p.Max)
		}
	}
	r = runCLI(t, "", nil, "offsets", "history", "app", "--journal", journal, "--partition", "orders/2", "-o", "csv")
	if r.Code != 0 || strings.Contains(r.Out, "orders/1") || !strings.Contains(r.Out, "VANISHED") {
		t.Errorf("history --partition orders/2 -o csv (exit %d):\n%s%s", r.Code, r.Out, r.Err)
	}

	// The restore command the table prints runs as printed: it carries
	// the volume and broker flags history was given.
	r = runCLI(t, "", nil, "offsets", "history", "app", "--journal", journal, "--data-dir", data, "-b", boot)
	printed := printedCommand(t, r.Out, "kaasctl offsets reset ")
	if r2 := runCLI(t, "", nil, printed[1:]...); r2.Code != 0 || !strings.Contains(r2.Out, "orders") {
		t.Errorf("the printed restore %q: exit %d\n%s%s", printed, r2.Code, r2.Out, r2.Err)
	}

	// Restore: dry-run plans the last good state; nothing written.
	before, _ := os.ReadFile(filepath.Join(sb.Layout().OffsetsPath(), "app.json"))
	r = runCLI(t, "", nil, "offsets", "reset", "--group", "app", "--to-history-before-anomaly", "--journal", journal, "-b", boot, "--data-dir", data, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("restore dry-run exit %d: %s", r.Code, r.Err)
	}
	var plan resetDoc
	if err := json.Unmarshal([]byte(r.Out), &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Groups) != 1 || len(plan.Groups[0].Rows) != 3 || plan.Mode != "dry-run" {
		t.Fatalf("plan %+v", plan)
	}
	for _, row := range plan.Groups[0].Rows {
		if row.New != 20 {
			t.Errorf("plan %s/%d → %d, want 20", row.Topic, row.Partition, row.New)
		}
	}
	if !strings.Contains(r.Err, "right before the latest incident: REWIND of orders/1") {
		t.Errorf("the restore does not say what it undoes: %s", r.Err)
	}
	if after, _ := os.ReadFile(filepath.Join(sb.Layout().OffsetsPath(), "app.json")); !bytes.Equal(before, after) {
		t.Error("a dry-run changed the file")
	}

	// Execute, with the rollback exported; verified in the file and over the wire.
	rollback := filepath.Join(t.TempDir(), "rollback.csv")
	r = runCLI(t, "", nil, "offsets", "reset", "--group", "app", "--to-history-before-anomaly", "--journal", journal, "-b", boot, "--data-dir", data,
		"--execute", "--export-rollback", rollback, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("restore exit %d: %s\n%s", r.Code, r.Err, r.Out)
	}
	var done2 resetDoc
	if err := json.Unmarshal([]byte(r.Out), &done2); err != nil {
		t.Fatal(err)
	}
	for _, row := range done2.Groups[0].Rows {
		if row.Result != "OK" || !strings.Contains(row.Detail, "OffsetFetch") {
			t.Errorf("restore %s/%d: %s %s", row.Topic, row.Partition, row.Result, row.Detail)
		}
	}
	want := map[string]int64{"orders/0": 20, "orders/1": 20, "orders/2": 20}
	lab := &resetLab{sb: sb, adm: ka}
	if got := lab.fileOffsets(t, "app"); !sameMap(got, want) {
		t.Errorf("file after restore %v, want %v", got, want)
	}
	resp2, err := ka.FetchOffsetsForTopics(ctx, "app", "orders")
	if err != nil {
		t.Fatal(err)
	}
	wire := map[string]int64{}
	resp2.Each(func(o kadm.OffsetResponse) { wire[o.Topic+"/"+itoa32(o.Partition)] = o.At })
	if !sameMap(wire, want) {
		t.Errorf("OffsetFetch after restore %v, want %v", wire, want)
	}
	// The rollback command the note prints runs as printed (here as a
	// dry-run: the restore stays).
	apply := printedCommand(t, strings.ReplaceAll(r.Err, "apply with: ", "\n"), "kaasctl offsets reset ")
	apply = slices.DeleteFunc(apply, func(a string) bool { return a == "--execute" || a == "--execute)" })
	if r2 := runCLI(t, "", nil, apply[1:]...); r2.Code != 0 || !strings.Contains(r2.Out, "orders") {
		t.Errorf("the printed rollback %q: exit %d\n%s%s", apply, r2.Code, r2.Out, r2.Err)
	}
	rb, _ := os.ReadFile(rollback)
	if !strings.Contains(string(rb), "orders,0,20\n") || !strings.Contains(string(rb), "orders/1 had no committed offset") {
		t.Errorf("rollback plan:\n%s", rb)
	}

	// --to-history at a moment: the baseline (30 records read: 10 each).
	r = runCLI(t, "", nil, "offsets", "reset", "--group", "app", "--to-history", hv.First.Format(time.RFC3339Nano), "--journal", journal, "-b", boot, "--data-dir", data, "-o", "json")
	var atFirst resetDoc
	if r.Code != 0 || json.Unmarshal([]byte(r.Out), &atFirst) != nil {
		t.Fatalf("--to-history exit %d: %s", r.Code, r.Err)
	}
	sum := int64(0)
	for _, row := range atFirst.Groups[0].Rows {
		sum += row.New
	}
	if sum != 30 {
		t.Errorf("--to-history %s plans %+v (want the 30 records of the baseline)", hv.First, atFirst.Groups[0].Rows)
	}
}

// printedCommand finds the first line of out that starts (after blanks)
// with prefix and splits it into words as a POSIX shell would (plain
// words and '...' quotes are all kaasctl prints).
func printedCommand(t *testing.T, out, prefix string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		var words []string
		var cur strings.Builder
		in, started := false, false
		for i := 0; i < len(line); i++ {
			ch := line[i]
			switch {
			case ch == '\'':
				in, started = !in, true
			case ch == ' ' && !in:
				if started {
					words = append(words, cur.String())
					cur.Reset()
					started = false
				}
			default:
				cur.WriteByte(ch)
				started = true
			}
		}
		if started {
			words = append(words, cur.String())
		}
		return words
	}
	t.Fatalf("no %q line in:\n%s", prefix, out)
	return nil
}
