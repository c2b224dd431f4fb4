package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/views"
)

// checkRollups asserts that a description's totals, per-topic rollup and
// summary are the sums and maxima of the partitions it shows.
func checkRollups(t *testing.T, group string, lags map[string][]*int64, total int64, topics map[string][3]int64, sum inspect.GroupSummary, partitions int) {
	t.Helper()
	var want int64
	var names []string
	for topic, ls := range lags {
		var tl, ml, n int64
		for _, l := range ls {
			n++
			if l != nil {
				tl += *l
				ml = max(ml, *l)
			}
		}
		want += tl
		names = append(names, topic)
		if got := topics[topic]; got != [3]int64{n, tl, ml} {
			t.Errorf("%s topic %s: rollup (partitions, lag, max) %v, want %v", group, topic, got, [3]int64{n, tl, ml})
		}
	}
	if len(topics) != len(lags) {
		t.Errorf("%s: rollup topics %v, partitions on %v", group, topics, names)
	}
	slices.Sort(names)
	st := slices.Clone(sum.Topics)
	slices.Sort(st)
	if total != want || sum.TotalLag != want || sum.Partitions != partitions || !slices.Equal(st, names) {
		t.Errorf("%s: total %d summary %+v, want total %d partitions %d topics %v", group, total, sum, want, partitions, names)
	}
}

// Offline, on the damaged test volume: --topic keeps that topic's
// partitions, --lagging-only those behind, and every total, rollup and the
// summary count only what is kept; --lag compares the narrowed total.
func TestDescribeTopicAndLaggingOffline(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	out, errOut, code := runVol(t, "groups", "describe", "--all", "--topic", "orders", "--lagging-only", "--data-dir", vol, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v views.GroupsDescribeView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	var groups []string
	for _, d := range v.Groups {
		groups = append(groups, d.Group)
		lags := map[string][]*int64{}
		for _, p := range d.Partitions {
			if p.Topic != "orders" || p.Lag == nil || *p.Lag <= 0 {
				t.Errorf("%s: partition %+v kept", d.Group, p)
			}
			lags[p.Topic] = append(lags[p.Topic], p.Lag)
		}
		topics := map[string][3]int64{}
		for _, tl := range d.Topics {
			topics[tl.Topic] = [3]int64{int64(tl.Partitions), tl.Lag, tl.MaxLag}
		}
		checkRollups(t, d.Group, lags, d.TotalLag, topics, *d.Summary, len(d.Partitions))
		if d.Summary.Members != nil || d.Summary.State != "" {
			t.Errorf("%s: offline summary claims live state %+v", d.Group, d.Summary)
		}
	}
	// good has audit (lag 2) and orders 0 (20) and 1 (unknown): only orders 0 stays.
	for _, g := range []string{"e-disagree", "good", "lagging", "legacy-only", "team/a"} {
		if !slices.Contains(groups, g) {
			t.Errorf("%s left out: %v", g, groups)
		}
	}
	// plain is a plain map on a volume whose generation is undetermined
	// (0.2.18 reads it as empty, older brokers as offsets): its lag is
	// unknown, so it is not lagging.
	for _, g := range []string{"truncated", "e-dead", "badvals", "plain"} {
		if slices.Contains(groups, g) {
			t.Errorf("%s kept (no lag on orders): %v", g, groups)
		}
	}
	if !strings.Contains(errOut, "groups left out (no partition on orders or no lag)") {
		t.Errorf("no note on the groups left out: %s", errOut)
	}
	// --lag counts only the asked topic: good is 22 in all, 2 on audit.
	out, _, _ = runVol(t, "groups", "describe", "good", "--topic", "audit", "--lag", "<5", "--data-dir", vol, "-o", "json")
	v = views.GroupsDescribeView{}
	json.Unmarshal([]byte(out), &v)
	if len(v.Groups) != 1 || v.Groups[0].TotalLag != 2 || len(v.Groups[0].Partitions) != 1 || v.Groups[0].Topics[0].MaxLag != 2 {
		t.Errorf("--topic audit --lag <5: %s", out)
	}
	// --summary: one line per group, csv too.
	out, _, code = runVol(t, "groups", "describe", "--regex", "^(good|plain)$", "--summary", "--data-dir", vol, "-o", "csv")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || lines[0] != "GROUP,STATE,MEMBERS,COORDINATOR,TOTAL-LAG,PARTITIONS,TOPICS" || !strings.HasPrefix(lines[1], "good,-,-,kaas-0,22 (+3 partitions unknown),5,") {
		t.Errorf("summary csv:\n%s", out)
	}
	// Usage: repeated and comma-listed topics are one set.
	out, _, _ = runVol(t, "groups", "describe", "good", "--topic", "audit,orders", "--topic", "audit", "--data-dir", vol, "-o", "json")
	v = views.GroupsDescribeView{}
	json.Unmarshal([]byte(out), &v)
	if len(v.Groups) != 1 || len(v.Groups[0].Partitions) != 5 {
		t.Errorf("--topic audit,orders --topic audit: %s", out)
	}
}

// groups list --topic offline: groups whose offset file has a committed
// offset on the topic, with the count.
func TestListTopicOffline(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	out, errOut, code := runVol(t, "groups", "list", "--topic", "audit", "--data-dir", vol, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v views.GroupsListView
	json.Unmarshal([]byte(out), &v)
	if v.Shown != 1 || v.Groups[0].Group != "good" || len(v.Groups[0].TopicOffsets) != 1 || v.Groups[0].TopicOffsets[0].File != 1 || v.Groups[0].TopicOffsets[0].Live != nil {
		t.Errorf("%s", out)
	}
	out, _, _ = runVol(t, "groups", "list", "--topic", "no-such-topic", "--data-dir", vol)
	if !strings.Contains(out, "no groups match") {
		t.Errorf("%q", out)
	}
}

// produceTo writes n records to each of partitions of topic.
func produceTo(t *testing.T, sb *sandbox.Sandbox, topic string, partitions int32, n int) {
	t.Helper()
	cl := sbClient(t, sb, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for p := range partitions {
		for i := range n {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprint(i))})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

func commitTo(t *testing.T, sb *sandbox.Sandbox, group string, offs map[string]map[int32]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	os := kadm.Offsets{}
	for topic, ps := range offs {
		for p, o := range ps {
			os.AddOffset(topic, p, o, -1)
		}
	}
	if err := kadm.NewClient(sbClient(t, sb)).CommitAllOffsets(ctx, group, os); err != nil {
		t.Fatalf("commit %s: %v", group, err)
	}
}

// Live and merged against the sandbox: --topic/--lagging-only narrow the
// partitions and every figure; the summary and rollup are in the JSON and
// the table; groups list --topic finds the groups from the files and the
// coordinators.
func TestLiveDescribeTopicLaggingSummary(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: []sandbox.Topic{{Name: "orders", Partitions: 4}, {Name: "payments", Partitions: 2}}})
	sb.EmulateEmptyOffsetFetchAll(true) // as kaas answers: only named partitions
	produceTo(t, sb, "orders", 4, 10)
	produceTo(t, sb, "payments", 2, 10)
	commitTo(t, sb, "multi", map[string]map[int32]int64{"orders": {0: 2, 1: 10, 2: 7, 3: 10}, "payments": {0: 1, 1: 10}})
	commitTo(t, sb, "caught-up", map[string]map[int32]int64{"orders": {0: 10, 1: 10, 2: 10, 3: 10}})
	commitTo(t, sb, "pay-only", map[string]map[int32]int64{"payments": {0: 4}})
	dd := sb.Layout().DataDir
	for _, mode := range []string{"live", "merged"} {
		t.Run(mode, func(t *testing.T) {
			args := []string{"groups", "describe", "--all", "--topic", "orders", "--lagging-only", "-o", "json"}
			if mode == "merged" {
				args = append(args, "--data-dir", dd)
			}
			r := live(t, sb, args...)
			v := decodeJSON[views.GroupsDescribeLiveView](t, r)
			if mode == "live" {
				// Memberless groups: kaas answers OffsetFetch-all with
				// nothing (so does the sandbox), so without the volume no
				// partition of theirs is known, and kaasctl says so.
				if r.Code == 0 || len(v.Groups) != 0 || !strings.Contains(r.Err, "kaas answers nothing to OffsetFetch-all") || !strings.Contains(r.Err, "pass --data-dir") {
					t.Errorf("live only, memberless groups: exit %d, %d groups\n%s", r.Code, len(v.Groups), r.Err)
				}
				return
			}
			if r.Code != 0 || v.Sources.Mode != mode || len(v.Groups) != 1 || v.Groups[0].Group != "multi" {
				t.Fatalf("exit %d mode %s groups %d\n%s", r.Code, v.Sources.Mode, len(v.Groups), r.Err)
			}
			d := v.Groups[0]
			lags := map[string][]*int64{}
			for _, p := range d.Partitions {
				if p.Topic != "orders" || p.Lag == nil || *p.Lag <= 0 {
					t.Errorf("partition %+v kept", p)
				}
				lags[p.Topic] = append(lags[p.Topic], p.Lag)
			}
			topics := map[string][3]int64{}
			for _, tl := range d.Topics {
				topics[tl.Topic] = [3]int64{int64(tl.Partitions), tl.Lag, tl.MaxLag}
			}
			checkRollups(t, d.Group, lags, d.TotalLag, topics, d.Summary, len(d.Partitions))
			coord := sb.Coordinator("multi")
			if d.TotalLag != 11 || topics["orders"] != [3]int64{2, 11, 8} || d.Summary.State != "Empty" || d.Summary.Members == nil || *d.Summary.Members != 0 ||
				d.Summary.Coordinator != coord {
				t.Errorf("multi: total %d rollup %v summary %+v (coordinator %s)", d.TotalLag, topics, d.Summary, coord)
			}
			if mode == "merged" && (d.File == nil || len(d.File.Partitions) != 4 || d.File.Topics[0].Topic != "orders" || d.File.Summary != nil) {
				t.Errorf("the file's description is not narrowed to orders: %+v", d.File)
			}
			// The table: summary section first, the rollup with MAX-LAG.
			targs := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "-o" || a == "json" })
			tr := live(t, sb, targs...)
			head := strings.SplitN(tr.Out, "\n", 3)
			if len(head) < 3 || !strings.HasPrefix(head[0], "GROUP  STATE  MEMBERS  COORDINATOR  TOTAL-LAG  PARTITIONS  TOPICS") ||
				strings.Join(strings.Fields(head[1]), " ") != "multi Empty 0 "+coord+" 11 2 orders" ||
				!strings.Contains(tr.Out, "TOPIC   PARTITIONS  LAG  MAX-LAG  UNKNOWN\norders  2           11   8        0\n") {
				t.Errorf("table:\n%s", tr.Out)
			}
		})
	}
	// Without a filter the summary covers both topics.
	v := decodeJSON[views.GroupsDescribeLiveView](t, live(t, sb, "groups", "describe", "multi", "--data-dir", dd, "-o", "json"))
	if len(v.Groups) != 1 || v.Groups[0].Summary.TotalLag != 20 || !slices.Equal(v.Groups[0].Summary.Topics, []string{"orders", "payments"}) || v.Groups[0].Summary.Partitions != 6 {
		t.Errorf("unfiltered summary %+v", v.Groups[0].Summary)
	}
	// groups list --topic, live only and merged.
	for _, mode := range []string{"live", "merged"} {
		args := []string{"groups", "list", "--topic", "payments", "-o", "json"}
		if mode == "merged" {
			args = append(args, "--data-dir", dd)
		}
		r := live(t, sb, args...)
		lv := decodeJSON[views.GroupsListView](t, r)
		got := map[string]inspect.TopicCommits{}
		for _, row := range lv.Groups {
			got[row.Group] = row.TopicOffsets[0]
		}
		if r.Code != 0 || len(got) != 2 || got["multi"].Live == nil || *got["multi"].Live != 2 || *got["pay-only"].Live != 1 {
			t.Errorf("%s: exit %d %+v\n%s", mode, r.Code, got, r.Err)
		}
		if mode == "merged" && (got["multi"].File != 2 || got["pay-only"].File != 1) {
			t.Errorf("merged: file counts %+v", got)
		}
	}
}

// A group with an offset file its coordinator does not hold is shown the
// same way by groups list and groups describe: no state (kaas answers
// DescribeGroups with Empty for any group id it owns), no member count,
// source file only, issue fileOnly; "-" in both tables.
func TestFileOnlyGroupSameInListAndDescribe(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 5)
	commitAdmin(t, sb, "live-app", map[int32]int64{0: 1, 1: 2})
	if err := os.WriteFile(filepath.Join(sb.Layout().OffsetsPath(), "retired-app.json"), []byte(`{"offsets":{"orders/0":3}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dd := sb.Layout().DataDir
	lv := decodeJSON[views.GroupsListView](t, live(t, sb, "groups", "list", "--data-dir", dd, "-o", "json"))
	for _, named := range [][]string{{"retired-app", "live-app"}, {"--all"}} {
		dv := decodeJSON[views.GroupsDescribeLiveView](t, live(t, sb, append([]string{"groups", "describe", "--data-dir", dd, "-o", "json"}, named...)...))
		for _, g := range []string{"retired-app", "live-app"} {
			row := rowOf(t, lv, g)
			d := describeOf(t, dv, g)
			if row.Live.State != d.State || row.Live.State != d.Summary.State || !slices.Equal(row.Sources, d.Sources) ||
				row.HasIssue(inspect.IssueFileOnly) != slices.Contains(d.Issues, inspect.IssueFileOnly) {
				t.Errorf("%v %s: list state %q sources %v issues %v; describe state %q/%q sources %v issues %v",
					named, g, row.Live.State, row.Sources, row.Issues, d.State, d.Summary.State, d.Sources, d.Issues)
			}
			if fileOnly := g == "retired-app"; fileOnly != row.HasIssue(inspect.IssueFileOnly) || fileOnly != (d.Summary.Members == nil) {
				t.Errorf("%s: fileOnly %v, list issues %v, describe members %v", g, fileOnly, row.Issues, d.Summary.Members)
			}
		}
	}
	// The tables say it the same way.
	lt := live(t, sb, "groups", "list", "--data-dir", dd, "--regex", "^retired-app$")
	dt := live(t, sb, "groups", "describe", "--data-dir", dd, "retired-app")
	if !strings.Contains(lt.Out, "retired-app  -      -        ") || !strings.Contains(dt.Out, "retired-app  -      -        ") ||
		!strings.Contains(dt.Out, "state        -  (fileOnly:") || strings.Contains(dt.Err, "retired-app' has no active members") {
		t.Errorf("list:\n%s\ndescribe:\n%s%s", lt.Out, dt.Out, dt.Err)
	}
}
