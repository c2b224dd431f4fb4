package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// direct sends one request to one broker, bypassing routing.
func direct(t *testing.T, sb *Sandbox, id string, req kmsg.Request, opts ...kgo.Opt) kmsg.Response {
	t.Helper()
	addr, ok := sb.Addr(id)
	if !ok {
		t.Fatalf("no broker %s", id)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RequestRetries(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		t.Fatalf("%s to %s: %v", kmsg.NameForKey(req.Key()), id, err)
	}
	return resp
}

// volumeRouter reads assignment.json off the sandbox's volume, as whois does.
func volumeRouter(t *testing.T, sb *Sandbox) (*volume.Assignment, *grouphash.Router) {
	t.Helper()
	a, _, err := volume.ReadAssignment(sb.Layout().AssignmentPath())
	if err != nil {
		t.Fatal(err)
	}
	return a, a.Router()
}

func nodeOf(t *testing.T, id string) int32 {
	t.Helper()
	n, err := strconv.Atoi(id[strings.LastIndexByte(id, '-')+1:])
	if err != nil {
		t.Fatalf("broker id %q: %v", id, err)
	}
	return int32(n)
}

func groupNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("group-%02d", i)
	}
	return out
}

func assertFindCoordinator(t *testing.T, sb *Sandbox, groups []string) {
	t.Helper()
	_, rt := volumeRouter(t, sb)
	for _, id := range sb.BrokerIDs() {
		if !sb.Running(id) {
			continue
		}
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKeys = groups
		resp := direct(t, sb, id, req).(*kmsg.FindCoordinatorResponse)
		if len(resp.Coordinators) != len(groups) {
			t.Fatalf("%s answered %d coordinators for %d keys", id, len(resp.Coordinators), len(groups))
		}
		for _, c := range resp.Coordinators {
			want := rt.Group(c.Key).Coordinator
			addr, _ := sb.Addr(want)
			if c.ErrorCode != 0 || c.NodeID != nodeOf(t, want) || net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))) != addr {
				t.Errorf("FindCoordinator(%s) from %s = node %d %s:%d err %d; the volume says %s (%s)", c.Key, id, c.NodeID, c.Host, c.Port, c.ErrorCode, want, addr)
			}
		}
	}
}

func TestFindCoordinatorFromEveryBrokerMatchesVolume(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 4})
	groups := append(groupNames(40), "", "a", "foobar", "g1", "billing", "ünïcode")
	assertFindCoordinator(t, sb, groups)

	// v3 (single key) and transactional ids (hash tier only).
	_, rt := volumeRouter(t, sb)
	for _, key := range []string{"g1", "tx-commit", "tx-ongoing"} {
		for typ := int8(0); typ <= 1; typ++ {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.Version = 3
			req.CoordinatorKey, req.CoordinatorType = key, typ
			resp := direct(t, sb, "kaas-3", req, kgo.MaxVersions(kversion.V2_8_0())).(*kmsg.FindCoordinatorResponse)
			want := rt.Group(key).Coordinator
			if typ == 1 {
				want = rt.Txn(key).Coordinator
			}
			if resp.ErrorCode != 0 || resp.NodeID != nodeOf(t, want) {
				t.Errorf("FindCoordinator v3 type %d %q = node %d err %d, want %s", typ, key, resp.NodeID, resp.ErrorCode, want)
			}
		}
	}
}

// commitGroups creates Empty groups with committed offsets through kadm,
// which follows FindCoordinator like any client.
func commitGroups(t *testing.T, sb *Sandbox, topic string, groups ...string) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, sb))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for i, g := range groups {
		os := kadm.Offsets{}
		os.AddOffset(topic, 0, int64(i+1), -1)
		if err := adm.CommitAllOffsets(ctx, g, os); err != nil {
			t.Fatalf("commit %s: %v", g, err)
		}
	}
}

func TestNotCoordinatorFromNonCoordinators(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3, Topics: []Topic{{Name: "orders", Partitions: 2}}})
	const g = "orders-app"
	commitGroups(t, sb, "orders", g)
	coord := sb.Coordinator(g)
	if coord == "" {
		t.Fatal("no coordinator")
	}
	for _, id := range sb.BrokerIDs() {
		want := int16(0)
		if id != coord {
			want = errNotCoordinator
		}
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Version = 8
		oc.Group, oc.Generation = g, -1
		ot := kmsg.NewOffsetCommitRequestTopic()
		ot.Topic = "orders"
		op := kmsg.NewOffsetCommitRequestTopicPartition()
		op.Partition, op.Offset = 1, 7
		ot.Partitions = append(ot.Partitions, op)
		oc.Topics = append(oc.Topics, ot)
		ocr := direct(t, sb, id, oc).(*kmsg.OffsetCommitResponse)
		if got := ocr.Topics[0].Partitions[0].ErrorCode; got != want {
			t.Errorf("OffsetCommit to %s (coordinator %s): error %d, want %d", id, coord, got, want)
		}

		dg := kmsg.NewPtrDescribeGroupsRequest()
		dg.Groups = []string{g}
		if got := direct(t, sb, id, dg).(*kmsg.DescribeGroupsResponse).Groups[0].ErrorCode; got != want {
			t.Errorf("DescribeGroups to %s: error %d, want %d", id, got, want)
		}

		of := kmsg.NewPtrOffsetFetchRequest()
		of.Version = 8
		og := kmsg.NewOffsetFetchRequestGroup()
		og.Group = g
		of.Groups = append(of.Groups, og)
		if got := direct(t, sb, id, of).(*kmsg.OffsetFetchResponse).Groups[0].ErrorCode; got != want {
			t.Errorf("OffsetFetch v8 to %s: error %d, want %d", id, got, want)
		}

		if id == coord {
			continue
		}
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Group, hb.MemberID, hb.Generation = g, "m", 1
		if got := direct(t, sb, id, hb).(*kmsg.HeartbeatResponse).ErrorCode; got != errNotCoordinator {
			t.Errorf("Heartbeat to %s: error %d, want NOT_COORDINATOR", id, got)
		}
		jg := kmsg.NewPtrJoinGroupRequest()
		jg.Group, jg.ProtocolType, jg.SessionTimeoutMillis = g, "consumer", 6000
		jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
		if got := direct(t, sb, id, jg).(*kmsg.JoinGroupResponse).ErrorCode; got != errNotCoordinator {
			t.Errorf("JoinGroup to %s: error %d, want NOT_COORDINATOR", id, got)
		}
		sg := kmsg.NewPtrSyncGroupRequest()
		sg.Group, sg.MemberID, sg.Generation = g, "m", 1
		if got := direct(t, sb, id, sg).(*kmsg.SyncGroupResponse).ErrorCode; got != errNotCoordinator {
			t.Errorf("SyncGroup to %s: error %d, want NOT_COORDINATOR", id, got)
		}
		lg := kmsg.NewPtrLeaveGroupRequest()
		lg.Group, lg.MemberID = g, "m"
		if got := direct(t, sb, id, lg).(*kmsg.LeaveGroupResponse).ErrorCode; got != errNotCoordinator {
			t.Errorf("LeaveGroup to %s: error %d, want NOT_COORDINATOR", id, got)
		}
		dl := kmsg.NewPtrDeleteGroupsRequest()
		dl.Groups = []string{g}
		if got := direct(t, sb, id, dl).(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode; got != errNotCoordinator {
			t.Errorf("DeleteGroups to %s: error %d, want NOT_COORDINATOR", id, got)
		}
		od := kmsg.NewPtrOffsetDeleteRequest()
		od.Group = g
		if got := direct(t, sb, id, od).(*kmsg.OffsetDeleteResponse).ErrorCode; got != errNotCoordinator {
			t.Errorf("OffsetDelete to %s: error %d, want NOT_COORDINATOR", id, got)
		}
	}
	// The coordinator's admin commit reached the volume, merged with the
	// earlier commit of partition 0.
	f, ok := readOffsets(t, sb, g)
	if !ok || !mapsEqual(f.Offsets, map[string]int64{"orders/0": 1, "orders/1": 7}) {
		t.Fatalf("offsets file = %v (exists %v), want orders/0=1 orders/1=7", f.Offsets, ok)
	}

	// A multi-group request mixing owned and foreign groups: answered in
	// request order, foreign groups NOT_COORDINATOR.
	other := ""
	for _, c := range groupNames(40) {
		if sb.Coordinator(c) != coord {
			other = c
			break
		}
	}
	commitGroups(t, sb, "orders", other)
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{other, g}
	resp := direct(t, sb, coord, dg).(*kmsg.DescribeGroupsResponse)
	if len(resp.Groups) != 2 || resp.Groups[0].Group != other || resp.Groups[0].ErrorCode != errNotCoordinator ||
		resp.Groups[1].Group != g || resp.Groups[1].ErrorCode != 0 || resp.Groups[1].State != "Empty" {
		t.Fatalf("mixed DescribeGroups on %s = %+v", coord, resp.Groups)
	}
}

// Each broker lists the groups it coordinates, sorted by id as kaas's Go
// broker sorts them.
func TestListGroupsFilteredPerBroker(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3, Topics: []Topic{{Name: "orders", Partitions: 1}}})
	groups := groupNames(15)
	commitGroups(t, sb, "orders", groups...)
	_, rt := volumeRouter(t, sb)
	var union []string
	for _, id := range sb.BrokerIDs() {
		resp := direct(t, sb, id, kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse)
		var got, want []string
		for _, g := range resp.Groups {
			got = append(got, g.Group)
		}
		for _, g := range groups {
			if rt.Group(g).Coordinator == id {
				want = append(want, g)
			}
		}
		if !slices.IsSorted(got) {
			t.Errorf("ListGroups on %s is not sorted by group id, as kaas answers: %v", id, got)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("ListGroups on %s = %v, want %v", id, got, want)
		}
		union = append(union, got...)
	}
	slices.Sort(union)
	if !slices.Equal(union, groups) {
		t.Fatalf("union of ListGroups = %v, want every group", union)
	}
}

func TestStopBrokerRewritesAssignmentAndMovesGroups(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3, Topics: []Topic{{Name: "orders", Partitions: 4}}})
	groups := groupNames(20)
	commitGroups(t, sb, "orders", groups...)

	// A live consumer group keeps working across the stop.
	prod := newClient(t, sb, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce(t, prod, "orders", 4, 3)
	var klog lockedBuffer
	cons := newClient(t, sb, append(fastGroup("live", "orders"), kgo.WithLogger(kgo.BasicLogger(&klog, kgo.LogLevelDebug, nil)))...)
	consume(t, cons, 12)

	a0, rt0 := volumeRouter(t, sb)
	if len(a0.ConsumerGroups) != 0 {
		t.Fatalf("no recompute since the groups formed, yet entries exist: %v", a0.ConsumerGroups)
	}
	if _, err := sb.StopBroker("kaas-1"); err != nil {
		t.Fatal(err)
	}
	a1, rt1 := volumeRouter(t, sb)
	if a1.AssignmentVersion != a0.AssignmentVersion+1 {
		t.Fatalf("version %d after stop, want %d", a1.AssignmentVersion, a0.AssignmentVersion+1)
	}
	var ids []string
	for _, b := range a1.Brokers {
		ids = append(ids, b.ID)
		if b.Health != "alive" || b.LastSeen != a1.GeneratedAt {
			t.Errorf("broker entry %+v: want alive with lastSeen == generatedAt", b)
		}
	}
	if !slices.Equal(ids, []string{"kaas-0", "kaas-2"}) {
		t.Fatalf("brokers after stopping kaas-1 = %v", ids)
	}
	for _, p := range a1.Partitions {
		if p.Broker == "kaas-1" {
			t.Errorf("partition %s/%d still led by the stopped broker", p.Topic, p.Partition)
		}
	}
	// Entries: exactly the groups whose coordinator survived, placed by
	// rendezvous; the stopped broker's groups fall back to the hash tier.
	alive := []string{"kaas-0", "kaas-2"}
	entries := map[string]string{}
	for _, e := range a1.ConsumerGroups {
		entries[e.GroupID] = e.Broker
		if e.Epoch != 1 {
			t.Errorf("entry %+v: first placement has epoch 1", e)
		}
	}
	for _, g := range append(groups, "live") {
		old := rt0.Group(g).Coordinator
		e, has := entries[g]
		if old == "kaas-1" && has {
			t.Errorf("group %s was on the stopped broker but got an entry", g)
		}
		if old != "kaas-1" {
			if !has || e != grouphash.Rendezvous(g, alive) {
				t.Errorf("group %s: entry %q (present %v), want rendezvous %s", g, e, has, grouphash.Rendezvous(g, alive))
			}
		}
		if rt1.Group(g).Coordinator != sb.Coordinator(g) {
			t.Errorf("group %s: sandbox routes to %s, the file says %s", g, sb.Coordinator(g), rt1.Group(g).Coordinator)
		}
	}
	assertFindCoordinator(t, sb, append(groups, "live"))

	// The stopped broker is unreachable.
	addr, _ := sb.Addr("kaas-1")
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("kaas-1 (%s) still accepts connections after stop", addr)
	}

	// The live group follows its coordinator: if it moved, its member was
	// evicted and rejoined (a new generation, as on kaas); either way it
	// keeps consuming and committing.
	liveMoved := rt0.Group("live").Coordinator != rt1.Group("live").Coordinator
	produce(t, prod, "orders", 4, 2)
	want := map[string]int64{"orders/0": 5, "orders/1": 5, "orders/2": 5, "orders/3": 5}
	deadline := time.Now().Add(20 * time.Second)
	for {
		pctx, pcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		cons.PollFetches(pctx)
		pcancel()
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = cons.CommitUncommittedOffsets(cctx) // fails while the group rebalances
		ccancel()
		if f, _ := readOffsets(t, sb, "live"); mapsEqual(f.Offsets, want) {
			break
		}
		if time.Now().After(deadline) {
			f, _ := readOffsets(t, sb, "live")
			t.Logf("consumer log:\n%s", klog.String())
			t.Fatalf("live offsets after stop = %v, want %v", f.Offsets, want)
		}
	}
	if gi := sb.kf.GroupInfo("live"); liveMoved && (gi == nil || gi.Epoch < 2) {
		t.Fatalf("live moved coordinator but was not rebalanced: %+v", gi)
	}

	// Logs: the controller saw the set change; each moved group has a
	// gained line on its new coordinator's log.
	ctl := readLog(t, sb, "kaas-0")
	if !strings.Contains(ctl, `"message":"controller: broker set changed","prev":"{\"kaas-0\", \"kaas-1\", \"kaas-2\"}","cur":"{\"kaas-0\", \"kaas-2\"}"`) {
		t.Errorf("kaas-0 log lacks the broker-set line:\n%s", ctl)
	}
	moved := 0
	for _, g := range append(groups, "live") {
		from, to := rt0.Group(g).Coordinator, rt1.Group(g).Coordinator
		if from == to {
			continue
		}
		moved++
		want := fmt.Sprintf(`"message":"group coordinator change","group":%q,"from":%q,"to":%q,"assignment_version":%d,"side":"gained"`, g, from, to, a1.AssignmentVersion)
		if !strings.Contains(readLog(t, sb, to), want) {
			t.Errorf("%s log lacks %s", to, want)
		}
		if from != "kaas-1" {
			lost := strings.Replace(want, `"gained"`, `"lost"`, 1)
			if !strings.Contains(readLog(t, sb, from), lost) {
				t.Errorf("%s log lacks %s", from, lost)
			}
		}
	}
	if moved == 0 {
		t.Fatal("no group moved; the test proves nothing")
	}

	// Start it again: a new version with all three brokers; entries of
	// groups on alive brokers are kept with their epoch.
	if _, err := sb.StartBroker("kaas-1"); err != nil {
		t.Fatal(err)
	}
	a2, _ := volumeRouter(t, sb)
	if a2.AssignmentVersion != a1.AssignmentVersion+1 || len(a2.Brokers) != 3 {
		t.Fatalf("after start: version %d brokers %d", a2.AssignmentVersion, len(a2.Brokers))
	}
	for _, e := range a2.ConsumerGroups {
		if prev, ok := entries[e.GroupID]; ok && (prev != e.Broker || e.Epoch != 1) {
			t.Errorf("entry %s moved from %s to %s (epoch %d) although its broker stayed alive", e.GroupID, prev, e.Broker, e.Epoch)
		}
	}
	assertFindCoordinator(t, sb, append(groups, "live"))
	if c, err := net.DialTimeout("tcp", addr, time.Second); err != nil {
		t.Fatalf("kaas-1 not reachable after start: %v", err)
	} else {
		c.Close()
	}
}

func TestStoppingTheControllerElectsANewOne(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3})
	a0, _ := volumeRouter(t, sb)
	if a0.Controller != "kaas-0" || a0.ControllerEpoch != 1 {
		t.Fatalf("initial controller %s epoch %d", a0.Controller, a0.ControllerEpoch)
	}
	if _, err := sb.StopBroker("kaas-0"); err != nil {
		t.Fatal(err)
	}
	a1, _ := volumeRouter(t, sb)
	if a1.Controller != "kaas-1" || a1.ControllerEpoch != 2 || a1.AssignmentVersion != a0.AssignmentVersion+1 {
		t.Fatalf("after stopping the controller: %s epoch %d version %d", a1.Controller, a1.ControllerEpoch, a1.AssignmentVersion)
	}
	l := readLog(t, sb, "kaas-1")
	for _, want := range []string{
		`"message":"controller lease acquired","epoch":2,"identity":"kaas-1"`,
		fmt.Sprintf(`"message":"controller active: assignment published","epoch":2,"version":%d`, a1.AssignmentVersion),
	} {
		if !strings.Contains(l, want) {
			t.Errorf("kaas-1 log lacks %s:\n%s", want, l)
		}
	}
	if changed, err := sb.StopBroker("kaas-0"); changed || err != nil {
		t.Fatalf("stopping a stopped broker: changed %v err %v", changed, err)
	}
	if _, err := sb.StopBroker("kaas-9"); err == nil || !strings.Contains(err.Error(), "unknown broker") {
		t.Fatalf("unknown broker: %v", err)
	}
}

func TestPlacementHashAgreesWithRouting(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3, Placement: PlacementHash, Topics: []Topic{{Name: "orders", Partitions: 1}}})
	groups := groupNames(20)
	commitGroups(t, sb, "orders", groups...)
	if _, err := sb.StopBroker("kaas-2"); err != nil {
		t.Fatal(err)
	}
	a, rt := volumeRouter(t, sb)
	if len(a.ConsumerGroups) == 0 {
		t.Fatal("no entries placed")
	}
	ring := grouphash.NewRing(a.GrouphashBrokers())
	for _, e := range a.ConsumerGroups {
		if h := ring.Pick(e.GroupID).Coordinator; h != e.Broker {
			t.Errorf("hash placement put %s on %s; the hash tier says %s", e.GroupID, e.Broker, h)
		}
		if rt.Group(e.GroupID).Tier != grouphash.TierExplicit {
			t.Errorf("%s not explicit", e.GroupID)
		}
	}
}

func TestDeleteGroupsRemovesOffsetsFile(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 2, Topics: []Topic{{Name: "orders", Partitions: 1}}})
	commitGroups(t, sb, "orders", "doomed", "kept")
	if _, ok := readOffsets(t, sb, "doomed"); !ok {
		t.Fatal("no offsets file after commit")
	}
	adm := kadm.NewClient(newClient(t, sb))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := adm.DeleteGroup(ctx, "doomed")
	if err != nil || r.Err != nil {
		t.Fatalf("delete: %v %v", err, r.Err)
	}
	if _, ok := readOffsets(t, sb, "doomed"); ok {
		t.Fatal("offsets file of a deleted group still exists")
	}
	if _, ok := readOffsets(t, sb, "kept"); !ok {
		t.Fatal("another group's file vanished")
	}
	// An unknown group: GROUP_ID_NOT_FOUND, no file touched.
	r, _ = adm.DeleteGroup(ctx, "never-existed")
	if r.Err == nil || !strings.Contains(r.Err.Error(), kerr.GroupIDNotFound.Message) {
		t.Fatalf("deleting an unknown group: %v", r.Err)
	}
}

func TestHostileGroupIDsStayInsideTheOffsetsDir(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 1, Topics: []Topic{{Name: "orders", Partitions: 1}}})
	commitGroups(t, sb, "orders", "../assignment", "a/b", strings.Repeat("x", 300))
	a, _ := volumeRouter(t, sb)
	if a.AssignmentVersion == 0 {
		t.Fatal("assignment.json was clobbered")
	}
	ents, _ := os.ReadDir(sb.Layout().OffsetsPath())
	if len(ents) != 0 {
		t.Fatalf("files written for hostile group ids: %v", ents)
	}
	if !strings.Contains(readLog(t, sb, "kaas-0"), "sandbox: offsets file not written") {
		t.Fatal("no log line about the refused write")
	}
}

func TestHandEditedAssignmentTakesEffect(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3, PollInterval: 20 * time.Millisecond})
	a, rt := volumeRouter(t, sb)
	target := "kaas-0"
	if rt.Group("edited").Coordinator == target {
		target = "kaas-2"
	}
	a.AssignmentVersion++
	a.ConsumerGroups = append(a.ConsumerGroups, volume.GroupEntry{GroupID: "edited", Broker: target, Epoch: 9})
	writeAssignment(t, sb, a)
	sb.WaitFor(t, "the edited entry to route", 30*time.Second, func() bool { return sb.Coordinator("edited") == target })
	assertFindCoordinator(t, sb, []string{"edited"})

	// A stale controller epoch is rejected, as kaas does.
	a.ControllerEpoch = 0
	a.AssignmentVersion += 5
	a.ConsumerGroups = nil
	writeAssignment(t, sb, a)
	sb.WaitFor(t, "the stale-epoch warning", 30*time.Second, func() bool {
		return strings.Contains(readLog(t, sb, "kaas-1"), "assignment.json rejected — stale controller epoch")
	})
	if sb.Coordinator("edited") != target {
		t.Fatal("a stale-epoch file was applied")
	}
}

func writeAssignment(t *testing.T, sb *Sandbox, a *volume.Assignment) {
	t.Helper()
	data, err := jsonMarshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(sb.Layout().AssignmentPath(), data); err != nil {
		t.Fatal(err)
	}
}

func readLog(t *testing.T, sb *Sandbox, id string) string {
	t.Helper()
	data, err := os.ReadFile(sb.LogDir() + "/" + id + ".log")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func consume(t *testing.T, cl *kgo.Client, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records before the timeout", got, n)
		}
		got += fs.NumRecords()
	}
}

func TestOffsetFetchOfUnknownGroupIsEmptyLikeKaas(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 2, Topics: []Topic{{Name: "orders", Partitions: 2}}})
	const g = "nobody-here"
	coord := sb.Coordinator(g)
	for _, v := range []int16{7, 8} {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = v
		if v < 8 {
			req.Group = g
			req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "orders", Partitions: []int32{0, 1}}}
		} else {
			req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: g, Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "orders", Partitions: []int32{0, 1}}}}}
		}
		vs := kversion.V3_0_0()
		if v < 8 {
			vs = kversion.V2_8_0()
		}
		resp := direct(t, sb, coord, req, kgo.MaxVersions(vs)).(*kmsg.OffsetFetchResponse)
		if resp.Version != v {
			t.Fatalf("sent v%d, want v%d", resp.Version, v)
		}
		if v < 8 {
			if resp.ErrorCode != 0 || len(resp.Topics) != 1 || resp.Topics[0].Partitions[1].Offset != -1 {
				t.Errorf("v%d: %+v", resp.Version, resp)
			}
		} else if len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 || resp.Groups[0].Topics[0].Partitions[0].Offset != -1 {
			t.Errorf("v%d: %+v", resp.Version, resp)
		}
	}
	adm := kadm.NewClient(newClient(t, sb))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fo, err := adm.FetchOffsets(ctx, g)
	if err != nil {
		t.Fatalf("kadm FetchOffsets of an unknown group: %v (kaas answers empty)", err)
	}
	if len(fo) != 0 {
		t.Fatalf("offsets of an unknown group: %v", fo)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestDescribeUnknownGroupIsEmptyLikeKaas(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 2})
	const g = "never-seen"
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{g}
	resp := direct(t, sb, sb.Coordinator(g), dg).(*kmsg.DescribeGroupsResponse)
	if len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 || resp.Groups[0].State != "Empty" || len(resp.Groups[0].Members) != 0 {
		t.Fatalf("describe of an unknown group = %+v, want Empty with no members (kaas)", resp.Groups)
	}
}

func TestApiVersionsAdvertiseKaasCaps(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 1})
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kaasctl-test", "1"
	resp := direct(t, sb, "kaas-0", req).(*kmsg.ApiVersionsResponse)
	got := map[int16]int16{}
	for _, k := range resp.ApiKeys {
		got[k.ApiKey] = k.MaxVersion
	}
	for key, max := range kaasMaxVersions {
		v, listed := got[key]
		if max < 0 && listed {
			t.Errorf("%s is advertised; kaas does not serve it", kmsg.NameForKey(key))
		}
		if max >= 0 && (!listed || v > max) {
			t.Errorf("%s: advertised max v%d (listed %v), kaas serves up to v%d", kmsg.NameForKey(key), v, listed, max)
		}
	}
	if _, ok := got[int16(kmsg.Produce)]; !ok {
		t.Fatal("Produce vanished from ApiVersions")
	}
}

func TestElevenBrokersSortLexicographically(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 11})
	a, rt := volumeRouter(t, sb)
	if a.Brokers[2].ID != "kaas-10" {
		t.Fatalf("brokers[] not in kaas's lexicographic order: %v", a.Brokers)
	}
	// g1 hashes to slot 10 of 11: kaas-9 (lexicographic), billing to slot 2: kaas-10.
	if c := rt.Group("g1").Coordinator; c != "kaas-9" {
		t.Fatalf("g1 -> %s, want kaas-9", c)
	}
	if c := rt.Group("billing").Coordinator; c != "kaas-10" {
		t.Fatalf("billing -> %s, want kaas-10", c)
	}
	assertFindCoordinator(t, sb, append(groupNames(30), "g1", "billing"))
}

func TestHandWrittenVersionMakesBrokersSkipTheController(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3, PollInterval: 20 * time.Millisecond})
	a, _ := volumeRouter(t, sb)
	a.AssignmentVersion += 2 // the controller is at 1; this file says 3
	a.ConsumerGroups = []volume.GroupEntry{{GroupID: "pinned", Broker: "kaas-2", Epoch: 1}}
	writeAssignment(t, sb, a)
	sb.WaitFor(t, "the hand-written v3 to apply", 30*time.Second, func() bool { return sb.Coordinator("pinned") == "kaas-2" })

	// The controller writes v2 and v3: both skipped by the brokers, as on kaas.
	for i := 0; i < 2; i++ {
		if _, err := sb.Change("stop", "kaas-1"); err != nil {
			t.Fatal(err)
		}
		if _, err := sb.Change("start", "kaas-1"); err != nil {
			t.Fatal(err)
		}
		if i == 0 && sb.Coordinator("pinned") != "kaas-2" {
			t.Fatal("a controller write at or below the hand-written version was applied")
		}
	}
	// By now the controller has written v5: applied, and the entry is gone.
	if v := sb.Assignment().AssignmentVersion; v != 5 || sb.Coordinator("pinned") == "" {
		t.Fatalf("applied version %d after the controller passed the hand-written one", v)
	}
	if !strings.Contains(readLog(t, sb, "kaas-0"), "sandbox: assignment.json skipped") {
		t.Fatal("no log line about the skipped writes")
	}
}
