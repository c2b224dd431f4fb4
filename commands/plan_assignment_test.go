package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/views"
)

// liveAssignments reads each member's assignment (by group.instance.id)
// once the group is Stable with want members and every partition assigned.
func liveAssignments(t *testing.T, sb *sandbox.Sandbox, group string, want, total int) map[string]map[string][]int32 {
	t.Helper()
	cl, err := sb.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var out map[string]map[string][]int32
	var last string
	err = sandbox.WaitUntil(60*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		ds, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			last = err.Error()
			return false
		}
		d := ds[group]
		if d.State != "Stable" || len(d.Members) != want {
			last = fmt.Sprintf("%s with %d members", d.State, len(d.Members))
			return false
		}
		out = map[string]map[string][]int32{}
		n := 0
		for _, m := range d.Members {
			ca, ok := m.Assigned.AsConsumer()
			if !ok || m.InstanceID == nil {
				last = "member without a consumer assignment or instance id"
				return false
			}
			got := map[string][]int32{}
			for _, tp := range ca.Topics {
				if len(tp.Partitions) > 0 {
					ps := slices.Clone(tp.Partitions)
					slices.Sort(ps)
					got[tp.Topic] = ps
					n += len(ps)
				}
			}
			out[*m.InstanceID] = got
		}
		last = fmt.Sprintf("%d of %d partitions assigned: %v", n, total, out)
		return n == total
	})
	if err != nil {
		t.Fatalf("group %s: %v (last: %s)", group, err, last)
	}
	return out
}

// The done-when of plan assignment: for each franz-go balancer, the plan
// for N → N+1 members equals what real franz-go consumers receive when the
// sandbox group actually scales.
func TestPlanAssignmentMatchesRealConsumers(t *testing.T) {
	t.Parallel()
	balancers := map[string]kgo.GroupBalancer{
		"range":              kgo.RangeBalancer(),
		"roundrobin":         kgo.RoundRobinBalancer(),
		"sticky":             kgo.StickyBalancer(),
		"cooperative-sticky": kgo.CooperativeStickyBalancer(),
	}
	sb := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: []sandbox.Topic{{Name: "orders", Partitions: 7}, {Name: "payments", Partitions: 4}}})
	boot := strings.Join(sb.Bootstrap(), ",")
	const total = 11
	for name, bal := range balancers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			group := "scale-" + name
			join := func(instance string) {
				cl, err := sb.Client(kgo.ConsumerGroup(group), kgo.ConsumeTopics("orders", "payments"), kgo.Balancers(bal),
					kgo.InstanceID(instance), kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(200*time.Millisecond),
					kgo.RebalanceTimeout(5*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(cl.Close)
				go func() {
					for {
						ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
						fs := cl.PollFetches(ctx)
						cancel()
						if fs.IsClientClosed() {
							return
						}
					}
				}()
			}
			join("m-1")
			join("m-2")
			before := liveAssignments(t, sb, group, 2, total)
			r := runCLI(t, "", nil, "plan", "assignment", group, "-b", boot, "--new-member", "m-3", "--assignor", name, "-o", "json")
			if r.Code != 0 {
				t.Fatalf("plan assignment: exit %d: %s", r.Code, r.Err)
			}
			var v views.PlanAssignmentView
			if err := json.Unmarshal([]byte(r.Out), &v); err != nil {
				t.Fatalf("%v\n%s", err, r.Out)
			}
			if !strings.HasPrefix(v.Sources.Members, "live") || !strings.HasPrefix(v.Sources.Subscriptions, "live") || !strings.HasPrefix(v.Sources.Now, "live") {
				t.Fatalf("sources %+v", v.Sources)
			}
			predicted := map[string]map[string][]int32{}
			for _, m := range v.Members {
				key := m.InstanceID
				if key == "" {
					key = m.MemberID
				}
				predicted[key] = m.After
				if m.Status == "stays" && fmt.Sprint(m.Now) != fmt.Sprint(before[key]) {
					t.Errorf("now of %s: %v, live %v", key, m.Now, before[key])
				}
			}
			// franz-go's sticky engine can break ties by map order: the
			// leader's answer must then be one of the answers the plan lists.
			possible := []string{fmt.Sprint(predicted)}
			for _, alt := range v.Alternatives {
				byInstance := map[string]map[string][]int32{}
				for _, m := range v.Members {
					key := m.InstanceID
					if key == "" {
						key = m.MemberID
					}
					if m.Status != "leaves" {
						byInstance[key] = alt.Assignment[m.MemberID]
					}
				}
				possible = append(possible, fmt.Sprint(byInstance))
			}
			if (name == "range" || name == "roundrobin") && len(v.Alternatives) > 0 {
				t.Errorf("%s is deterministic, yet alternatives were listed", name)
			}
			join("m-3")
			after := liveAssignments(t, sb, group, 3, total)
			if !slices.Contains(possible, fmt.Sprint(after)) {
				t.Fatalf("%s: consumers received %v; plan assignment predicted %v (before %v)", name, after, possible, before)
			}
			if len(v.Moves) == 0 {
				t.Fatal("no partition moved: the test proves nothing")
			}
			if (name == "cooperative-sticky") != (v.Rebalances == 2) {
				t.Errorf("%s: %d rebalances", name, v.Rebalances)
			}
		})
	}
}

// Offline: hypothetical members on the committed topics, minikafka's
// textbook answer.
func TestPlanAssignmentOfflineMinikafka(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "__cluster/assignment.json", `{"controllerEpoch":1,"assignmentVersion":3,"generatedAt":"2026-12-01T00:00:00Z","controller":"kaas-0",`+
		`"brokers":[{"id":"kaas-0","health":"alive","lastSeen":"2026-12-01T00:00:00Z"}],`+
		`"partitions":[{"topic":"t","partition":0,"broker":"kaas-0","epoch":1,"role":"leader"},{"topic":"t","partition":1,"broker":"kaas-0","epoch":1,"role":"leader"},`+
		`{"topic":"t","partition":2,"broker":"kaas-0","epoch":1,"role":"leader"},{"topic":"t","partition":3,"broker":"kaas-0","epoch":1,"role":"leader"}]}`)
	writeFile(t, dir, "__cluster/__consumer_offsets/g.json", `{"offsets":{"t/0":1,"t/1":1,"t/2":1,"t/3":1}}`)
	r := runCLI(t, "", nil, "plan", "assignment", "g", "--data-dir", dir, "--kaas-version", "0.2.18", "--members", "2", "--add", "1", "--assignor", "minikafka", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	var v views.PlanAssignmentView
	if err := json.Unmarshal([]byte(r.Out), &v); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range v.Members {
		got[m.MemberID] = fmt.Sprint(m.Now) + " → " + fmt.Sprint(m.After)
	}
	want := map[string]string{"member-1": "map[t:[0 2]] → map[t:[0 3]]", "member-2": "map[t:[1 3]] → map[t:[1]]", "new-1": "map[] → map[t:[2]]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if v.Sources.Partitions != "assignment.json partitions[]" || !strings.Contains(v.Sources.Subscriptions, "committed") {
		t.Fatalf("sources %+v", v.Sources)
	}
	r = runCLI(t, "", nil, "plan", "assignment", "g", "--data-dir", dir, "--kaas-version", "0.2.18", "--members", "3", "--remove", "member-2", "--add", "1", "--assignor", "range")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	golden(t, "plan-assignment-range.txt", r.Out)
	r = runCLI(t, "", nil, "plan", "assignment", "g", "--data-dir", dir, "--members", "2", "--assignor", "bogus")
	if r.Code != 2 || !strings.Contains(r.Err, "minikafka") {
		t.Fatalf("bad assignor: exit %d %s", r.Code, r.Err)
	}
	r = runCLI(t, "", nil, "plan", "assignment", "g", "--data-dir", dir)
	if r.Code != 2 || !strings.Contains(r.Err, "--members") {
		t.Fatalf("nothing to plan: exit %d %s", r.Code, r.Err)
	}
}

// plan assignment refuses at once a count no group could have (it used to
// grow past 1 GB), bounds the rest, refuses --members alone offline (NOW
// equalled AFTER) and a --topic that does not exist (planned in silence).
func TestPlanAssignmentRefusesWhatNoGroupHas(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "__cluster/assignment.json", `{"controllerEpoch":1,"assignmentVersion":3,"controller":"kaas-0",`+
		`"brokers":[{"id":"kaas-0","health":"alive"}],"partitions":[{"topic":"t","partition":0,"broker":"kaas-0","epoch":1,"role":"leader"}]}`)
	writeFile(t, dir, "__cluster/__consumer_offsets/g.json", `{"offsets":{"t/0":1}}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--members", "2", "--add", "99999999999999"}, "--add 99999999999999: no group has that many members"},
		{[]string{"--members", "1000000", "--add", "1"}, "balances at most 10000"},
		{[]string{"--members", "4"}, "--members 4 alone changes nothing"},
		{[]string{"--members", "2", "--add", "1", "--topic", "nosuch"}, "--topic nosuch: no such topic"},
	} {
		r := runCLI(t, "", nil, append([]string{"plan", "assignment", "g", "--data-dir", dir}, c.args...)...)
		if r.Code != 2 || !strings.Contains(r.Err, c.want) {
			t.Errorf("%v: exit %d %q, want 2 and %q", c.args, r.Code, r.Err, c.want)
		}
	}
}

// --members N alone scales the live group: NOW is what its members own,
// AFTER what N members would.
func TestPlanAssignmentMembersScalesTheLiveGroup(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 1, Topics: []sandbox.Topic{{Name: "orders", Partitions: 4}}})
	cl, err := sb.Client(kgo.ConsumerGroup("scaled"), kgo.ConsumeTopics("orders"), kgo.InstanceID("m-1"), kgo.Balancers(kgo.RangeBalancer()),
		kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	go func() {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			fs := cl.PollFetches(ctx)
			cancel()
			if fs.IsClientClosed() {
				return
			}
		}
	}()
	liveAssignments(t, sb, "scaled", 1, 4)
	r := runCLI(t, "", nil, "plan", "assignment", "scaled", "-b", strings.Join(sb.Bootstrap(), ","), "--members", "2", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	var v views.PlanAssignmentView
	if err := json.Unmarshal([]byte(r.Out), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Members) != 2 || len(v.Moves) != 2 || !strings.HasPrefix(v.Sources.Now, "live") || !slices.ContainsFunc(v.Notes, func(n string) bool { return strings.Contains(n, "scaled from 1 to 2") }) {
		t.Fatalf("%+v", v)
	}
}
