package commands

import (
	"bytes"
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
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/views"
)

// Live commands against the in-process sandbox (internal/sandbox).

// liveSB starts a 3-broker sandbox with topic "orders" (4 partitions).
func liveSB(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	return sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: []sandbox.Topic{{Name: "orders", Partitions: 4}}})
}

func sbClient(t *testing.T, sb *sandbox.Sandbox, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(sb.Bootstrap()...), kgo.MetadataMinAge(50 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond })}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// commitAdmin commits offsets for a group as an admin (generation -1).
func commitAdmin(t *testing.T, sb *sandbox.Sandbox, group string, offs map[int32]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	os := kadm.Offsets{}
	for p, o := range offs {
		os.AddOffset("orders", p, o, -1)
	}
	if err := kadm.NewClient(sbClient(t, sb)).CommitAllOffsets(ctx, group, os); err != nil {
		t.Fatalf("commit %s: %v", group, err)
	}
}

// produceOrders writes n records to each partition of "orders".
func produceOrders(t *testing.T, sb *sandbox.Sandbox, n int) {
	t.Helper()
	cl := sbClient(t, sb, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for p := range int32(4) {
		for i := range n {
			rs = append(rs, &kgo.Record{Topic: "orders", Partition: p, Value: []byte(fmt.Sprint(i))})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// live runs kaasctl with the sandbox's brokers in KAASCTL_BROKERS.
func live(t *testing.T, sb *sandbox.Sandbox, args ...string) cliResult {
	t.Helper()
	return runCLI(t, "", map[string]string{"KAASCTL_BROKERS": strings.Join(sb.Bootstrap(), ","), "KAASCTL_TIMEOUT": "3s"}, args...)
}

func decodeJSON[T any](t *testing.T, r cliResult) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.Out), &v); err != nil {
		t.Fatalf("not JSON (%v): exit %d\nstdout: %s\nstderr: %s", err, r.Code, r.Out, r.Err)
	}
	return v
}

func rowOf(t *testing.T, v views.GroupsListView, group string) inspect.GroupRow {
	t.Helper()
	for _, r := range v.Groups {
		if r.Group == group {
			return r
		}
	}
	t.Fatalf("group %s not listed; have %d rows", group, len(v.Groups))
	return inspect.GroupRow{}
}

// groupsMovedBetweenRunning returns groups whose coordinator changed
// between two running brokers when broker stop is stopped.
func stopAndFindStale(t *testing.T, sb *sandbox.Sandbox, groups []string, stop string) map[string]string {
	t.Helper()
	before := map[string]string{}
	for _, g := range groups {
		before[g] = sb.Coordinator(g)
	}
	if _, err := sb.StopBroker(stop); err != nil {
		t.Fatal(err)
	}
	stale := map[string]string{}
	for _, g := range groups {
		if from := before[g]; from != stop && from != sb.Coordinator(g) {
			stale[g] = from
		}
	}
	if len(stale) == 0 {
		t.Fatal("no group moved between running brokers")
	}
	return stale
}

// groups list, merged: a stale group on a non-coordinator (made by moving
// groups with stale emulation on), a file-only group (an offset file
// written on the volume), live state and members, sources and --state.
func TestLiveGroupsListMerged(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	sb.EmulateStaleGroups(true)
	var groups []string
	for i := range 10 {
		g := fmt.Sprintf("app-%d", i)
		groups = append(groups, g)
		commitAdmin(t, sb, g, map[int32]int64{0: 1})
	}
	stale := stopAndFindStale(t, sb, groups, "kaas-2")
	l := sb.Layout()
	writeFile(t, l.OffsetsPath(), "only-on-disk.json", `{"offsets":{"orders/0":7,"orders/1":9}}`)

	r := live(t, sb, "groups", "list", "--data-dir", l.DataDir, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Err)
	}
	// kaas-2 is stopped: its seed address is refused (it is no longer in
	// the cluster metadata, so ListGroups goes to the two others).
	if !strings.Contains(r.Err, "connection refused") {
		t.Errorf("stderr does not name the refused seed:\n%s", r.Err)
	}
	v := decodeJSON[views.GroupsListView](t, r)
	// Three brokers were given: the stopped one is a source that is down.
	if v.Sources.Mode != "merged" || !v.Sources.Live || len(v.Sources.Brokers) != 3 || !v.Sources.Brokers[2].Down || v.Sources.OffsetFiles == 0 {
		t.Errorf("sources = %+v", v.Sources)
	}
	for g, from := range stale {
		row := rowOf(t, v, g)
		if !row.HasIssue(inspect.IssueStaleOnNonCoord) || !slices.Contains(row.Live.StaleOn, from) {
			t.Errorf("%s (moved from %s to %s): issues %v staleOn %v", g, from, sb.Coordinator(g), row.Issues, row.Live.StaleOn)
		}
		if row.Live.WireCoordinator != sb.Coordinator(g) || row.Coordinator != sb.Coordinator(g) {
			t.Errorf("%s: wire %s computed %s, sandbox routes to %s", g, row.Live.WireCoordinator, row.Coordinator, sb.Coordinator(g))
		}
	}
	fo := rowOf(t, v, "only-on-disk")
	if !fo.HasIssue(inspect.IssueFileOnly) || fo.CommittedPartitions != 2 || fo.Live.State != "" {
		t.Errorf("file-only row = %+v live %+v", fo, fo.Live)
	}
	for _, g := range groups {
		row := rowOf(t, v, g)
		if row.HasIssue(inspect.IssueWireMismatch) {
			t.Errorf("%s: wireMismatch with an untouched volume", g)
		}
		if _, isStale := stale[g]; !isStale && row.HasIssue(inspect.IssueStaleOnNonCoord) {
			t.Errorf("%s: staleOnNonCoordinator but it did not move", g)
		}
		// An Empty group that moved is in no broker's memory (unloaded,
		// as on kaas): no broker lists it, the file alone has it.
		if (!sb.Unloaded(g) && !slices.Contains(row.Sources, inspect.SourceLive)) || !slices.Contains(row.Sources, inspect.SourceFile) {
			t.Errorf("%s: sources %v (unloaded %v)", g, row.Sources, sb.Unloaded(g))
		}
	}

	// "A deleted group reappears": delete a stale group on its coordinator;
	// its old broker still lists it.
	var deleted string
	for g := range stale {
		deleted = g
		break
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var running []string
	for _, id := range sb.BrokerIDs() {
		if a, _ := sb.Addr(id); sb.Running(id) {
			running = append(running, a)
		}
	}
	if _, err := kadm.NewClient(sbClient(t, sb, kgo.SeedBrokers(running...))).DeleteGroups(ctx, deleted); err != nil {
		t.Fatal(err)
	}
	v = decodeJSON[views.GroupsListView](t, live(t, sb, "groups", "list", "--data-dir", l.DataDir, "-o", "json"))
	row := rowOf(t, v, deleted)
	if slices.Contains(row.Sources, inspect.SourceFile) || !slices.Contains(row.Sources, inspect.SourceLive) || !row.HasIssue(inspect.IssueStaleOnNonCoord) || row.Live.State != "" ||
		!slices.Equal(row.Live.ListedBy, []string{stale[deleted]}) {
		t.Errorf("deleted %s: sources %v issues %v live %+v", deleted, row.Sources, row.Issues, row.Live)
	}

	// The table says which sources were used and shows the flags.
	r = live(t, sb, "groups", "list", "--data-dir", l.DataDir, "--issue", "staleOnNonCoordinator")
	if !strings.HasPrefix(r.Out, "sources: volume ") || !strings.Contains(r.Out, "brokers kaas-0,kaas-1 (2 of 3 answered); unreachable: ") {
		t.Errorf("table header:\n%s", r.Out)
	}
	for g := range stale {
		if !strings.Contains(r.Out, g) {
			t.Errorf("table misses stale group %s:\n%s", g, r.Out)
		}
	}
	if !strings.Contains(r.Err, "restart the listing broker") {
		t.Errorf("no stale warning on stderr:\n%s", r.Err)
	}

	// --state is case-insensitive; file-only groups have no live state.
	v = decodeJSON[views.GroupsListView](t, live(t, sb, "groups", "list", "--data-dir", l.DataDir, "--state", "EMPTY,stable", "-o", "json"))
	if v.Shown == 0 || v.Shown == v.Total {
		t.Errorf("--state EMPTY,stable: shown %d of %d", v.Shown, v.Total)
	}
	for _, row := range v.Groups {
		if row.Live == nil || (row.Live.State != "Empty" && row.Live.State != "Stable") {
			t.Errorf("--state kept %s in state %+v", row.Group, row.Live)
		}
	}
	if r := live(t, sb, "groups", "list", "--state", "sleepy"); r.Code != 2 || !strings.Contains(r.Err, "unknown state") {
		t.Errorf("--state sleepy: exit %d %s", r.Code, r.Err)
	}
	if r := runCLI(t, "", nil, "groups", "list", "--data-dir", l.DataDir, "--state", "empty"); r.Code != 2 || !strings.Contains(r.Err, "needs live state") {
		t.Errorf("--state offline: exit %d %s", r.Code, r.Err)
	}
}

// groups list with brokers only: live columns, and says there is no volume.
func TestLiveGroupsListBrokersOnly(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	commitAdmin(t, sb, "solo", map[int32]int64{0: 3})
	r := live(t, sb, "groups", "list")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	if !strings.Contains(r.Out, "no volume: live state only") || !strings.Contains(r.Out, "LISTED-BY") || strings.Contains(r.Out, "TIER") {
		t.Errorf("brokers-only table:\n%s", r.Out)
	}
	v := decodeJSON[views.GroupsListView](t, live(t, sb, "groups", "list", "-o", "json"))
	row := rowOf(t, v, "solo")
	// Without a volume brokers are named by node id.
	want := "node " + strings.TrimPrefix(sb.Coordinator("solo"), "kaas-")
	if v.Sources.Mode != "live" || row.Live.WireCoordinator != want || !slices.Equal(row.Live.ListedBy, []string{want}) || row.Live.State != "Empty" {
		t.Errorf("sources %+v row %+v live %+v", v.Sources, row, row.Live)
	}
}

// A wrong explicit entry on the volume that the brokers did not take (a
// file from a stale controller epoch, which kaas rejects): the row shows
// entryUnknownBroker from the volume and wireMismatch against FindCoordinator.
func TestLiveGroupsListWrongEntry(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	commitAdmin(t, sb, "billing", map[int32]int64{0: 1})
	writeStaleEpochAssignment(t, sb, "billing", "kaas-7")
	v := decodeJSON[views.GroupsListView](t, live(t, sb, "groups", "list", "--data-dir", sb.Layout().DataDir, "-o", "json"))
	row := rowOf(t, v, "billing")
	if !row.HasIssue(inspect.IssueEntryUnknownBroker) || !row.HasIssue(inspect.IssueWireMismatch) {
		t.Errorf("billing issues %v (computed %s, wire %s)", row.Issues, row.Coordinator, row.Live.WireCoordinator)
	}
	if row.Live.WireCoordinator != sb.Coordinator("billing") {
		t.Errorf("wire says %s, sandbox routes to %s", row.Live.WireCoordinator, sb.Coordinator("billing"))
	}
}

// consumeAndCommit joins group with a kgo consumer, reads every record of
// "orders" and commits offs; the member stays in the group (Stable) until
// the test ends.
func consumeAndCommit(t *testing.T, sb *sandbox.Sandbox, group string, total int, offs map[int32]int64) *kgo.Client {
	t.Helper()
	cl := sbClient(t, sb, kgo.ConsumerGroup(group), kgo.ConsumeTopics("orders"), kgo.ClientID("lag-test-client"),
		kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(100*time.Millisecond), kgo.RebalanceTimeout(6*time.Second),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	got := 0
	for got < total {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", got, total, err)
		}
		got += fs.NumRecords()
	}
	m := map[string]map[int32]kgo.EpochOffset{"orders": {}}
	for p, o := range offs {
		m["orders"][p] = kgo.EpochOffset{Epoch: -1, Offset: o}
	}
	var cerr error
	done := make(chan struct{})
	cl.CommitOffsetsSync(ctx, m, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, _ *kmsg.OffsetCommitResponse, err error) {
		cerr = err
		close(done)
	})
	<-done
	if cerr != nil {
		t.Fatalf("commit: %v", cerr)
	}
	return cl
}

func describeOf(t *testing.T, v views.GroupsDescribeLiveView, group string) inspect.LiveDescription {
	t.Helper()
	for _, d := range v.Groups {
		if d.Group == group {
			return d
		}
	}
	t.Fatalf("group %s not described (notFound %v)", group, v.NotFound)
	return inspect.LiveDescription{}
}

// groups describe, live: lag numbers against a kgo consumer's commits,
// members and client ids, file vs live side by side, a file-only group
// (lag from the file), a disagreement, --lag, Kafka-style state lines.
func TestLiveGroupsDescribe(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 10)
	consumeAndCommit(t, sb, "lagging", 40, map[int32]int64{0: 3, 1: 5, 2: 10, 3: 0})
	commitAdmin(t, sb, "idle", map[int32]int64{0: 2, 1: 2})
	l := sb.Layout()
	// The file of "idle" no longer matches the coordinator's memory (a hand
	// edit, or an admin commit to a coordinator that did not load the group).
	writeFile(t, l.OffsetsPath(), "idle.json", `{"offsets":{"orders/0":2,"orders/1":8}}`)
	writeFile(t, l.OffsetsPath(), "ghost.json", `{"offsets":{"orders/0":4}}`)

	r := live(t, sb, "groups", "describe", "lagging", "idle", "ghost", "--data-dir", l.DataDir, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Err)
	}
	v := decodeJSON[views.GroupsDescribeLiveView](t, r)
	if v.Sources.Mode != "merged" {
		t.Errorf("mode %q", v.Sources.Mode)
	}
	lag := describeOf(t, v, "lagging")
	if lag.State != "Stable" || len(lag.Members) != 1 || lag.Members[0].ClientID != "lag-test-client" {
		t.Errorf("lagging: state %s members %+v", lag.State, lag.Members)
	}
	wantLag := map[int32]int64{0: 7, 1: 5, 2: 0, 3: 10}
	wantCommitted := map[int32]int64{0: 3, 1: 5, 2: 10, 3: 0}
	for _, p := range lag.Partitions {
		if p.Lag == nil || *p.Lag != wantLag[p.Partition] || p.Committed != wantCommitted[p.Partition] || p.LogEnd != 10 || p.LagFrom != "live" {
			t.Errorf("lagging %s/%d: committed %d logEnd %d lag %v from %s", p.Topic, p.Partition, p.Committed, p.LogEnd, p.Lag, p.LagFrom)
		}
		if p.FileCommitted == nil || *p.FileCommitted != p.Committed || p.Disagree {
			t.Errorf("lagging %d: file %v vs live %d", p.Partition, p.FileCommitted, p.Committed)
		}
		if p.Member == "" {
			t.Errorf("lagging %d: no member", p.Partition)
		}
	}
	if len(lag.Partitions) != 4 || lag.TotalLag != 22 || len(lag.Topics) != 1 || lag.Topics[0].Lag != 22 || lag.CoordinatorAgrees == nil || !*lag.CoordinatorAgrees {
		t.Errorf("lagging: %d partitions, total %d, topics %+v, agrees %v", len(lag.Partitions), lag.TotalLag, lag.Topics, lag.CoordinatorAgrees)
	}
	// The file side's label depends on what the sandbox has written by now:
	// segments, a manifest (written on its own schedule), or neither.
	if ff := lag.File; lag.LagSource != inspect.LagSourceLive || ff == nil ||
		(ff.LagSource != inspect.LagSourceSegments && ff.LagSource != inspect.LagSourceNone && ff.LagSource != inspect.LagSourceManifest) {
		t.Errorf("lag labels: live %q file %+v", lag.LagSource, lag.File)
	}
	idle := describeOf(t, v, "idle")
	if idle.OffsetsDisagree != 1 {
		t.Errorf("idle: %d disagreements, want 1 (partition 1: file 8, live 2)", idle.OffsetsDisagree)
	}
	ghost := describeOf(t, v, "ghost")
	if len(ghost.Partitions) == 0 || ghost.Partitions[0].LagFrom != "file" || ghost.Partitions[0].Lag == nil || *ghost.Partitions[0].Lag != 6 {
		t.Errorf("ghost (file only): %+v", ghost.Partitions)
	}
	if !slices.Contains(idle.Notes, "Consumer group 'idle' has no active members.") || strings.Contains(r.Err, "has no active members") {
		t.Errorf("the Kafka-style Empty line is not a note of the group in the output (and only there): notes %q\n%s", idle.Notes, r.Err)
	}
	if !strings.Contains(r.Err, "group idle: the offset file and the coordinator disagree on 1 partition") {
		t.Errorf("no disagreement warning:\n%s", r.Err)
	}

	// --lag keeps groups by live total lag.
	v = decodeJSON[views.GroupsDescribeLiveView](t, live(t, sb, "groups", "describe", "--all", "--lag", ">20", "--data-dir", l.DataDir, "-o", "json"))
	if len(v.Groups) != 1 || v.Groups[0].Group != "lagging" {
		var gs []string
		for _, d := range v.Groups {
			gs = append(gs, fmt.Sprintf("%s=%d", d.Group, d.TotalLag))
		}
		t.Errorf("--lag >20: %v", gs)
	}
	// The table: live lag labelled live, members with their client id.
	r = live(t, sb, "groups", "describe", "lagging", "--data-dir", l.DataDir)
	for _, want := range []string{"live (ListOffsets now)", "offset file vs log ends", "lag-test-client", "FILE-COMMITTED", "agrees with"} {
		if !strings.Contains(r.Out, want) {
			t.Errorf("table lacks %q:\n%s", want, r.Out)
		}
	}
	// Brokers only, and an unknown group.
	r = live(t, sb, "groups", "describe", "lagging", "nobody-here")
	if r.Code != 1 || !strings.Contains(r.Err, `"nobody-here"`) || strings.Contains(r.Out, "FILE-COMMITTED") || !strings.Contains(r.Out, "no volume") {
		t.Errorf("brokers only: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
}

// writeStaleEpochAssignment writes an assignment.json the brokers reject
// (a lower controller epoch) with an explicit entry for group on broker.
func writeStaleEpochAssignment(t *testing.T, sb *sandbox.Sandbox, group, broker string) {
	t.Helper()
	a := sb.Assignment()
	a.ControllerEpoch--
	a.AssignmentVersion += 10
	a.ConsumerGroups = append([]volume.GroupEntry{{GroupID: group, Broker: broker, Epoch: 1}}, a.ConsumerGroups...)
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	before := staleEpochRejections(t, sb)
	if err := os.WriteFile(filepath.Join(sb.Layout().ClusterDir, "assignment.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	sb.WaitFor(t, "the brokers to reject the stale assignment.json", 20*time.Second, func() bool {
		return staleEpochRejections(t, sb) > before
	})
}

// staleEpochRejections counts the brokers' log lines rejecting an
// assignment.json for its stale controller epoch.
func staleEpochRejections(t *testing.T, sb *sandbox.Sandbox) int {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(sb.LogDir(), "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range logs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte("assignment.json rejected"))
	}
	return n
}

// whois --live: every broker's FindCoordinator agrees with the volume;
// --stdin in chunks; a disagreement is flagged and --exit-code exits 3.
func TestLiveWhois(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	keys := []string{"orders-app", "billing", "payments", "x"}
	dd := sb.Layout().DataDir
	for _, id := range sb.BrokerIDs() {
		addr, _ := sb.Addr(id)
		r := runCLI(t, "", nil, "whois", "--live", "--exit-code", "--brokers", addr, "--data-dir", dd, "-o", "json", keys[0], keys[1], keys[2], keys[3])
		if r.Code != 0 {
			t.Fatalf("asking %s: exit %d\n%s", id, r.Code, r.Err)
		}
		rs := decodeJSON[[]views.WhoisLiveResult](t, r)
		for _, x := range rs {
			if !x.Agrees || !x.Compared || x.WireCoordinator != x.Coordinator || x.Coordinator != sb.Coordinator(x.Key) {
				t.Errorf("asking %s: %s wire %s computed %s agrees %v", id, x.Key, x.WireCoordinator, x.Coordinator, x.Agrees)
			}
		}
	}
	// Transactional ids go through FindCoordinator type 1 (hash tier).
	if rs := decodeJSON[[]views.WhoisLiveResult](t, live(t, sb, "whois", "--live", "--txn", "--exit-code", "--data-dir", dd, "-o", "json", "tx-1", "payments-tx-0")); len(rs) != 2 || !rs[0].Agrees || !rs[1].Agrees || rs[0].Kind != "txn" {
		t.Errorf("--txn --live: %+v", rs)
	}
	// The table has WIRE and AGREES.
	r := live(t, sb, "whois", "--live", "--data-dir", dd, "orders-app")
	if !strings.Contains(r.Out, "WIRE") || !strings.Contains(r.Out, "AGREES") || !strings.Contains(r.Out, "yes") {
		t.Errorf("table:\n%s", r.Out)
	}
	// --stdin: 2,500 keys in chunks of 1,000.
	var in strings.Builder
	for i := range 2500 {
		fmt.Fprintf(&in, "g-%d\n", i)
	}
	r = runCLI(t, in.String(), map[string]string{"KAASCTL_BROKERS": strings.Join(sb.Bootstrap(), ",")}, "whois", "--live", "--stdin", "--data-dir", dd, "-o", "jsonl")
	if r.Code != 0 {
		t.Fatalf("--stdin: exit %d %s", r.Code, r.Err)
	}
	lines := strings.Split(strings.TrimSpace(r.Out), "\n")
	if len(lines) != 2500 {
		t.Fatalf("--stdin: %d lines", len(lines))
	}
	for _, ln := range lines {
		var x views.WhoisLiveResult
		if err := json.Unmarshal([]byte(ln), &x); err != nil || !x.Agrees {
			t.Fatalf("--stdin line %s: %v", ln, err)
		}
	}
	// A disagreement: the volume names kaas-2 for "billing", the brokers
	// rejected that file.
	other := "kaas-2"
	if sb.Coordinator("billing") == other {
		other = "kaas-0"
	}
	writeStaleEpochAssignment(t, sb, "billing", other)
	r = live(t, sb, "whois", "--live", "--data-dir", dd, "billing", "payments")
	if r.Code != 0 || !strings.Contains(r.Out, "NO") || !strings.Contains(r.Err, "1 key of 2: FindCoordinator disagrees") {
		t.Errorf("disagreement without --exit-code: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	r = live(t, sb, "whois", "--live", "--exit-code", "--data-dir", dd, "billing", "-o", "json")
	rs := decodeJSON[[]views.WhoisLiveResult](t, r)
	if r.Code != 3 || rs[0].Agrees || rs[0].Coordinator != other || !strings.Contains(strings.Join(rs[0].Warnings, ";"), "DISAGREES") {
		t.Errorf("--exit-code: exit %d %+v", r.Code, rs)
	}
	r = runCLI(t, "billing\n", map[string]string{"KAASCTL_BROKERS": strings.Join(sb.Bootstrap(), ",")}, "whois", "--live", "--exit-code", "--stdin", "--data-dir", dd)
	if r.Code != 3 || !strings.Contains(r.Out, "NO") {
		t.Errorf("--stdin --exit-code: exit %d\n%s", r.Code, r.Out)
	}
	// Usage errors.
	if r := runCLI(t, "", nil, "whois", "--live", "--data-dir", dd, "x"); r.Code != 2 || !strings.Contains(r.Err, "needs brokers") {
		t.Errorf("--live without brokers: exit %d %s", r.Code, r.Err)
	}
	if r := live(t, sb, "whois", "--exit-code", "--data-dir", dd, "x"); r.Code != 2 {
		t.Errorf("--exit-code without --live: exit %d", r.Code)
	}
}

type doctorJSON struct {
	Mode     string                  `json:"mode"`
	Checks   []inspect.CheckRun      `json:"checks"`
	Summary  inspect.CheckSummary    `json:"summary"`
	Findings []inspect.DoctorFinding `json:"findings"`
	Sources  views.GroupsSourcesView `json:"sources"`
}

func findingOf(t *testing.T, d doctorJSON, code string) inspect.DoctorFinding {
	t.Helper()
	for _, f := range d.Findings {
		if f.Code == code {
			return f
		}
	}
	var codes []string
	for _, f := range d.Findings {
		codes = append(codes, f.Code)
	}
	t.Fatalf("no %s finding; have %v", code, codes)
	return inspect.DoctorFinding{}
}

// doctor against the sandbox: healthy first (exit 0), then stale groups,
// a file-only group and a wrong explicit entry the brokers rejected: ranked
// findings with fixes, exit 3.
func TestLiveDoctor(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	sb.EmulateStaleGroups(true)
	dd := sb.Layout().DataDir
	produceOrders(t, sb, 5)
	var groups []string
	for i := range 10 {
		g := fmt.Sprintf("doc-%d", i)
		groups = append(groups, g)
		commitAdmin(t, sb, g, map[int32]int64{0: 1, 1: 1, 2: 1, 3: 1})
	}
	r := live(t, sb, "doctor", "--data-dir", dd)
	if r.Code != 0 || !strings.Contains(r.Out, "kaasctl doctor: merged; checks run: volume, entries, txn, live") {
		t.Fatalf("healthy sandbox: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	stale := stopAndFindStale(t, sb, groups, "kaas-2")
	writeFile(t, sb.Layout().OffsetsPath(), "forgotten.json", `{"offsets":{"orders/0":1}}`)
	writeStaleEpochAssignment(t, sb, "doc-0", "kaas-7")

	r = live(t, sb, "doctor", "--data-dir", dd, "-o", "json")
	if r.Code != 3 {
		t.Fatalf("exit %d, want 3\n%s", r.Code, r.Err)
	}
	d := decodeJSON[doctorJSON](t, r)
	if d.Mode != "merged" || d.Summary.Errors == 0 {
		t.Errorf("mode %s summary %+v", d.Mode, d.Summary)
	}
	// Ranked: errors first, then warnings, then info; within a severity by blast radius.
	for i := 1; i < len(d.Findings); i++ {
		a, b := d.Findings[i-1], d.Findings[i]
		ra, rb := inspect.SeverityRank(a.Severity), inspect.SeverityRank(b.Severity)
		if ra > rb || (ra == rb && a.BlastRadius < b.BlastRadius) {
			t.Errorf("not ranked: %s(%s,%d) before %s(%s,%d)", a.Code, a.Severity, a.BlastRadius, b.Code, b.Severity, b.BlastRadius)
		}
	}
	staleBrokers := map[string]bool{}
	for _, from := range stale {
		staleBrokers[from] = true
	}
	for _, f := range d.Findings {
		if f.Code == inspect.DocStaleGroups {
			b := strings.Fields(f.Message)[1]
			if !staleBrokers[b] || !strings.Contains(f.Fix, "restart broker "+b+" to drop its stale cache") {
				t.Errorf("stale finding %+v (stale on %v)", f, staleBrokers)
			}
			delete(staleBrokers, b)
		}
	}
	if len(staleBrokers) > 0 {
		t.Errorf("no stale finding for %v", staleBrokers)
	}
	wm := findingOf(t, d, inspect.DocWireMismatch)
	if wm.Severity != volume.SevError || !slices.Contains(wm.Subjects, "doc-0") || len(wm.Commands) == 0 || !strings.Contains(wm.Commands[0], "whois --live") {
		t.Errorf("wireMismatch finding %+v", wm)
	}
	eu := findingOf(t, d, inspect.DocEntryUnknownBroker)
	if eu.Severity != volume.SevError || !strings.Contains(eu.Message, "kaas-7") {
		t.Errorf("entry finding %+v", eu)
	}
	fo := findingOf(t, d, inspect.DocFileOnly)
	if fo.Severity != volume.SevInfo || !slices.Contains(fo.Subjects, "forgotten") || !strings.Contains(strings.Join(fo.Commands, " "), "kaasctl offsets reset") {
		t.Errorf("file-only finding %+v", fo)
	}
	// Its fix line runs as printed, with no environment: it carries the
	// brokers (given here through KAASCTL_BROKERS) and the volume.
	for _, line := range fo.Commands {
		line = strings.TrimSpace(strings.SplitN(line, "#", 2)[0])
		if !strings.HasPrefix(line, "kaasctl offsets reset") {
			continue
		}
		if rr := runCLI(t, "", nil, strings.Fields(line)[1:]...); rr.Code != 0 || !strings.Contains(line, "--brokers "+strings.Join(sb.Bootstrap(), ",")) {
			t.Errorf("fix line %q: exit %d\n%s", line, rr.Code, rr.Err)
		}
	}
	// The table groups by severity and prints the fixes.
	r = live(t, sb, "doctor", "--data-dir", dd)
	for _, want := range []string{"ERRORS (", "WARNINGS (", "INFO (", "fix: restart broker", "$ kaasctl whois --live", "PROBLEMS FOUND"} {
		if !strings.Contains(r.Out, want) {
			t.Errorf("doctor table lacks %q:\n%s", want, r.Out)
		}
	}
	// --severity error hides the rest, but the exit code stays 3.
	d = decodeJSON[doctorJSON](t, live(t, sb, "doctor", "--data-dir", dd, "-s", "error", "-o", "json"))
	for _, f := range d.Findings {
		if f.Severity != volume.SevError {
			t.Errorf("-s error shows %s %s", f.Severity, f.Code)
		}
	}
}

// doctor when no broker answers: the offline checks run and it says so;
// offline without brokers says so too.
func TestDoctorOfflineOnly(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	dd := sb.Layout().DataDir
	addr, _ := sb.Addr("kaas-1")
	sb.Close()
	r := runCLI(t, "", map[string]string{"KAASCTL_TIMEOUT": "1s"}, "doctor", "--data-dir", dd, "--brokers", addr, "-o", "json")
	if r.Code != 3 || !strings.Contains(r.Err, "no broker answered") {
		t.Fatalf("exit %d\n%s", r.Code, r.Err)
	}
	d := decodeJSON[doctorJSON](t, r)
	if d.Mode != "offline" || findingOf(t, d, inspect.DocNoBrokerAnswers).Severity != volume.SevError {
		t.Errorf("mode %s findings %+v", d.Mode, d.Findings)
	}
	r = runCLI(t, "", nil, "doctor", "--data-dir", dd)
	if r.Code != 0 || !strings.Contains(r.Err, "offline only") || !strings.Contains(r.Out, "not run: live (no brokers given") {
		t.Errorf("offline: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	if r := runCLI(t, "", nil, "doctor"); r.Code != 2 {
		t.Errorf("nothing to check: exit %d %s", r.Code, r.Err)
	}
}

// groups describe --regex with brokers selects from the volume and every
// broker's ListGroups; doctor --offline skips the live checks.
func TestLiveDescribeRegexAndDoctorOffline(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	for _, g := range []string{"team-a", "team-b", "other"} {
		commitAdmin(t, sb, g, map[int32]int64{0: 1})
	}
	dd := sb.Layout().DataDir
	v := decodeJSON[views.GroupsDescribeLiveView](t, live(t, sb, "groups", "describe", "--regex", "^team-", "-o", "json"))
	var got []string
	for _, d := range v.Groups {
		got = append(got, d.Group)
	}
	if !slices.Equal(got, []string{"team-a", "team-b"}) || v.Sources.Mode != "live" {
		t.Errorf("--regex ^team- (brokers only): %v mode %s", got, v.Sources.Mode)
	}
	// Requests per broker are reported and bounded by the brokers, not the groups.
	var total int64
	for _, bc := range v.Requests {
		total += bc.Requests
	}
	if len(v.Requests) == 0 || total > 40 {
		t.Errorf("requests %+v", v.Requests)
	}
	r := live(t, sb, "doctor", "--offline", "--data-dir", dd, "-o", "json")
	d := decodeJSON[doctorJSON](t, r)
	if r.Code != 0 || d.Mode != "offline" || len(d.Sources.Brokers) != 0 {
		t.Errorf("--offline: exit %d mode %s", r.Code, d.Mode)
	}
	for _, c := range d.Checks {
		if c.Name == inspect.CheckLive && (c.Ran || !strings.Contains(c.Note, "--offline")) {
			t.Errorf("live check with --offline: %+v", c)
		}
	}
}
