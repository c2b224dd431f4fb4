package commands

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/internal/sandbox"
)

// The cases of Apache Kafka's ResetConsumerGroupOffsetTest (the test suite
// of kafka-consumer-groups.sh --reset-offsets), ported onto the sandbox:
// the same setup, the same command line (Kafka's spelling: --bootstrap-server,
// --timeout in milliseconds) and the same expected offsets. Each case runs
// on its own sandbox, as each Kafka case runs on its own cluster. A group
// that "consumed everything and shut down" is an Empty group whose
// committed offsets are the log end, which is what kaas holds afterwards.
// Where kaas and Kafka differ by design, the case says so.

// kafkaCase is one case's cluster.
type kafkaCase struct {
	sb   *sandbox.Sandbox
	adm  *kadm.Client
	prod *kgo.Client
	boot string
	data string
}

func newKafkaCase(t *testing.T, brokers int, topics ...sandbox.Topic) *kafkaCase {
	t.Helper()
	sb := sandbox.Start(t, sandbox.Options{Brokers: brokers, Topics: topics})
	k := &kafkaCase{sb: sb, boot: strings.Join(sb.Bootstrap(), ","), data: sb.Layout().DataDir}
	k.adm = kadm.NewClient(sbClient(t, sb))
	k.prod = sbClient(t, sb, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	return k
}

// produce writes n records to each partition of topic, stamped ts.
func (k *kafkaCase) produce(t *testing.T, topic string, parts int32, n int, ts time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for p := range parts {
		for range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Timestamp: ts, Value: []byte("x")})
		}
	}
	if err := k.prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// consumed leaves group as a consumer that read every record of the topics
// and shut down: Empty, committed at the log end.
func (k *kafkaCase) consumed(t *testing.T, group string, topics ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := k.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		t.Fatal(err)
	}
	os := kadm.Offsets{}
	ends.Each(func(lo kadm.ListedOffset) { os.AddOffset(lo.Topic, lo.Partition, lo.Offset, -1) })
	if err := k.adm.CommitAllOffsets(ctx, group, os); err != nil {
		t.Fatal(err)
	}
}

// committed is what the coordinator answers for group on topic
// ("topic/partition" → offset), as Kafka's test reads it.
func (k *kafkaCase) committed(t *testing.T, group, topic string) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := map[string]int64{}
	resp, err := k.adm.FetchOffsetsForTopics(ctx, group, topic)
	if err != nil {
		if strings.Contains(err.Error(), "GROUP_ID_NOT_FOUND") {
			return out
		}
		t.Fatal(err)
	}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 && o.Topic == topic {
			out[o.Topic+"/"+itoa32(o.Partition)] = o.At
		}
	})
	return out
}

// reset runs kaasctl offsets reset with Kafka's connection flags and
// returns the result (Kafka's resetOffsets() map: group → "topic/p" →
// new offset, for the groups it would write).
func (k *kafkaCase) reset(t *testing.T, args ...string) (cliResult, map[string]map[string]int64) {
	t.Helper()
	r := runCLI(t, "", nil, append([]string{"offsets", "reset", "--bootstrap-server", k.boot, "--timeout", "30000", "--data-dir", k.data, "-o", "json"}, args...)...)
	var doc struct {
		Groups []struct {
			Group, Outcome string
			Rows           []struct {
				Topic     string
				Partition int32
				New       int64
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
		return r, nil
	}
	res := map[string]map[string]int64{}
	for _, g := range doc.Groups {
		if g.Outcome != "planned" && g.Outcome != "written" && g.Outcome != "unchanged" {
			continue
		}
		res[g.Group] = map[string]int64{}
		for _, row := range g.Rows {
			res[g.Group][row.Topic+"/"+itoa32(row.Partition)] = row.New
		}
	}
	return r, res
}

// resetAndAssert is Kafka's resetAndAssertOffsets: every group in the
// result has expected on partition 0 of each topic, and the committed
// offsets are those (or unchanged in a dry-run).
func (k *kafkaCase) resetAndAssert(t *testing.T, args []string, expected int64, dryRun bool, topics ...string) {
	t.Helper()
	prior := map[string]map[string]int64{}
	r, res := k.reset(t, args...)
	if r.Code != 0 || res == nil {
		t.Fatalf("%v: exit %d\n%s\n%s", args, r.Code, r.Out, r.Err)
	}
	if len(res) == 0 {
		t.Fatalf("%v: no group in the result\n%s", args, r.Err)
	}
	for g := range res {
		for _, tp := range topics {
			prior[g+"|"+tp] = k.committed(t, g, tp)
		}
	}
	for g, offs := range res {
		for _, tp := range topics {
			want := map[string]int64{tp + "/0": expected}
			got := map[string]int64{}
			for key, o := range offs {
				if strings.HasPrefix(key, tp+"/") {
					got[key] = o
				}
			}
			if !sameMap(got, want) {
				t.Errorf("%v: group %s planned %v, want %v", args, g, got, want)
			}
			c := k.committed(t, g, tp)
			if dryRun {
				want = prior[g+"|"+tp]
			}
			if !sameMap(c, want) {
				t.Errorf("%v: group %s committed %v, want %v", args, g, c, want)
			}
		}
	}
}

func with(args []string, extra ...string) []string {
	return append(append([]string{}, args...), extra...)
}

func TestKafkaResetOffsetsCases(t *testing.T) {
	t.Parallel()
	now := time.Now()
	one := func(name string) sandbox.Topic { return sandbox.Topic{Name: name, Partitions: 1} }

	t.Run("NotExistingGroup", func(t *testing.T) {
		k := newKafkaCase(t, 1, one("foo-t"))
		r, res := k.reset(t, "--group", "missing.group", "--all-topics", "--to-current", "--execute")
		if r.Code != 0 || len(res["missing.group"]) != 0 || len(k.committed(t, "missing.group", "foo-t")) != 0 {
			t.Errorf("exit %d %v\n%s", r.Code, res, r.Err)
		}
	})

	t.Run("WithOfflinePartitionNotInResetTarget", func(t *testing.T) {
		k := newKafkaCase(t, 3, sandbox.Topic{Name: "foo-t", Partitions: 2})
		if _, err := k.sb.StopBroker("kaas-1"); err != nil {
			t.Fatal(err)
		}
		r, res := k.reset(t, "--group", "new.group", "--to-earliest", "--execute", "--topic", "foo-t:0")
		if r.Code != 0 || !sameMap(res["new.group"], map[string]int64{"foo-t/0": 0}) {
			t.Errorf("exit %d %v\n%s", r.Code, res, r.Err)
		}
	})

	t.Run("ExistingTopic", func(t *testing.T) {
		k := newKafkaCase(t, 1, one("foo-t"))
		k.produce(t, "foo-t", 1, 100, now)
		args := []string{"--group", "new.group", "--topic", "foo-t", "--to-offset", "50"}
		k.resetAndAssert(t, args, 50, true, "foo-t")
		k.resetAndAssert(t, with(args, "--dry-run"), 50, true, "foo-t")
		k.resetAndAssert(t, with(args, "--execute"), 50, false, "foo-t")
	})

	t.Run("ExistingTopicSelectedGroups", func(t *testing.T) {
		k := newKafkaCase(t, 1, one("foo-t"))
		k.produce(t, "foo-t", 1, 100, now)
		k.consumed(t, "foo-t1", "foo-t")
		k.consumed(t, "foo-t2", "foo-t")
		args := []string{"--group", "foo-t1", "--group", "foo-t2", "--topic", "foo-t", "--to-offset", "50"}
		k.resetAndAssert(t, args, 50, true, "foo-t")
		k.resetAndAssert(t, with(args, "--dry-run"), 50, true, "foo-t")
		k.resetAndAssert(t, with(args, "--execute"), 50, false, "foo-t")
	})

	t.Run("ExistingTopicAllGroups", func(t *testing.T) {
		k := newKafkaCase(t, 1, one("foo-t"))
		k.produce(t, "foo-t", 1, 100, now)
		for _, g := range []string{"test.group-a", "test.group-b", "test.group-c"} {
			k.consumed(t, g, "foo-t")
		}
		args := []string{"--all-groups", "--topic", "foo-t", "--to-offset", "50"}
		k.resetAndAssert(t, args, 50, true, "foo-t")
		k.resetAndAssert(t, with(args, "--dry-run"), 50, true, "foo-t")
		k.resetAndAssert(t, with(args, "--execute"), 50, false, "foo-t")
	})

	t.Run("AllTopicsAllGroups", func(t *testing.T) {
		k := newKafkaCase(t, 1, one("foo-t1"), one("foo-t2"))
		for _, tp := range []string{"foo-t1", "foo-t2"} {
			k.produce(t, tp, 1, 100, now)
		}
		for _, g := range []string{"test.group-1", "test.group-2"} {
			k.consumed(t, g, "foo-t1", "foo-t2")
		}
		args := []string{"--all-groups", "--all-topics", "--to-offset", "50"}
		k.resetAndAssert(t, args, 50, true, "foo-t1", "foo-t2")
		k.resetAndAssert(t, with(args, "--dry-run"), 50, true, "foo-t1", "foo-t2")
		k.resetAndAssert(t, with(args, "--execute"), 50, false, "foo-t1", "foo-t2")
	})

	t.Run("ToLocalDateTime", func(t *testing.T) {
		k := newKafkaCase(t, 1, one("foo-t"))
		k.produce(t, "foo-t", 1, 100, now)
		k.consumed(t, "g", "foo-t")
		// No zone: Kafka reads it as UTC; a day back is before every record.
		k.resetAndAssert(t, []string{"--group", "g", "--all-topics", "--to-datetime", now.AddDate(0, 0, -1).Format("2006-01-02T15:04:05.000"), "--execute"}, 0, false, "foo-t")
	})

	t.Run("ToZonedDateTime", func(t *testing.T) {
		k := newKafkaCase(t, 1, one("foo-t"))
		k.produce(t, "foo-t", 1, 50, now.Add(-2*time.Hour))
		checkpoint := now.Add(-time.Hour).In(time.FixedZone("", 5*3600+1800))
		k.produce(t, "foo-t", 1, 50, now)
		k.consumed(t, "g", "foo-t")
		k.resetAndAssert(t, []string{"--group", "g", "--all-topics", "--to-datetime", checkpoint.Format("2006-01-02T15:04:05.000Z07:00"), "--execute"}, 50, false, "foo-t")
	})

	t.Run("ByDuration", func(t *testing.T) {
		k := newKafkaCase(t, 1, one("foo-t"))
		k.produce(t, "foo-t", 1, 100, time.Now())
		k.consumed(t, "g", "foo-t")
		k.resetAndAssert(t, []string{"--group", "g", "--all-topics", "--by-duration", "PT1M", "--execute"}, 0, false, "foo-t")
	})

	t.Run("BeforeTheFirstRecordIsTheLogStart", func(t *testing.T) {
		// Before 1970 (a negative epoch time, which ListOffsets would read
		// as "the log end" or "the log start" codes) and durations reaching
		// back that far: Kafka's tool resolves a time before the first
		// record to the log start, never the end. The log starts at 10.
		k := newKafkaCase(t, 1, one("foo-t"))
		k.produce(t, "foo-t", 1, 100, now)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		del := kadm.Offsets{}
		del.AddOffset("foo-t", 0, 10, -1)
		if _, err := k.adm.DeleteRecords(ctx, del); err != nil {
			t.Fatal(err)
		}
		for _, spec := range [][]string{
			{"--to-datetime", "1900-01-01T00:00:00Z"},
			{"--to-datetime", "0001-01-01T00:00:00Z"},
			{"--to-datetime", "1969-12-31T23:59:59Z"},
			{"--to-datetime", "1969-12-31T23:59:59.999Z"},
			{"--by-duration", "P36000D"},
			{"--by-duration", "P3650000D"},
		} {
			k.consumed(t, "g", "foo-t")
			k.resetAndAssert(t, with([]string{"--group", "g", "--all-topics", "--execute"}, spec...), 10, false, "foo-t")
		}
	})

	t.Run("ByDurationToEarliest", func(t *testing.T) {
		k := newKafkaCase(t, 1, one("foo-t"))
		// Older than 0.1 s when the reset runs: nothing that recent, so
		// the log end.
		k.produce(t, "foo-t", 1, 100, time.Now().Add(-time.Second))
		k.consumed(t, "g", "foo-t")
		k.resetAndAssert(t, []string{"--group", "g", "--all-topics", "--by-duration", "PT0.1S", "--execute"}, 100, false, "foo-t")
	})

	t.Run("ByDurationFallbackToLatestWhenNoRecords", func(t *testing.T) {
		k := newKafkaCase(t, 1, one("foo-t"))
		k.resetAndAssert(t, []string{"--group", "g", "--topic", "foo-t", "--by-duration", "PT1M", "--execute"}, 0, false, "foo-t")
	})

	// The one-topic scenarios: produce 100, consume, shut down (and, for
	// some, produce 100 more), then reset --all-topics.
	for _, c := range []struct {
		name   string
		spec   []string
		more   bool
		expect int64
	}{
		{"ToEarliest", []string{"--to-earliest"}, false, 0},
		{"ToLatest", []string{"--to-latest"}, true, 200},
		{"ToCurrentOffset", []string{"--to-current"}, true, 100},
		{"ToSpecificOffset", []string{"--to-offset", "1"}, false, 1},
		{"ShiftPlus", []string{"--shift-by", "50"}, true, 150},
		{"ShiftMinus", []string{"--shift-by", "-50"}, true, 50},
		{"ShiftByLowerThanEarliest", []string{"--shift-by", "-150"}, true, 0},
		{"ShiftByHigherThanLatest", []string{"--shift-by", "150"}, true, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := newKafkaCase(t, 1, one("foo-t"))
			k.produce(t, "foo-t", 1, 100, now)
			k.consumed(t, "g", "foo-t")
			if c.more {
				k.produce(t, "foo-t", 1, 100, now)
			}
			k.resetAndAssert(t, with([]string{"--group", "g", "--all-topics", "--execute"}, c.spec...), c.expect, false, "foo-t")
		})
	}

	t.Run("ToCurrentWithoutCommittedOffset", func(t *testing.T) {
		// Kafka's resetToCurrent: a partition with a committed offset keeps
		// it; one without gets the log end (getLogEndOffsets).
		k := newKafkaCase(t, 1, sandbox.Topic{Name: "foo-t", Partitions: 2})
		k.produce(t, "foo-t", 2, 100, now)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		os := kadm.Offsets{}
		os.AddOffset("foo-t", 0, 40, -1)
		if err := k.adm.CommitAllOffsets(ctx, "g", os); err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{"foo-t/0": 40, "foo-t/1": 100}
		r, res := k.reset(t, "--group", "g", "--topic", "foo-t", "--to-current", "--execute")
		if r.Code != 0 || !sameMap(res["g"], want) || !sameMap(k.committed(t, "g", "foo-t"), want) {
			t.Errorf("exit %d planned %v committed %v, want %v\n%s", r.Code, res["g"], k.committed(t, "g", "foo-t"), want, r.Err)
		}
	})

	t.Run("ToEarliestOnOneTopic", func(t *testing.T) {
		k := newKafkaCase(t, 1, one("foo-t"))
		k.produce(t, "foo-t", 1, 100, now)
		k.consumed(t, "g", "foo-t")
		k.resetAndAssert(t, []string{"--group", "g", "--topic", "foo-t", "--to-earliest", "--execute"}, 0, false, "foo-t")
	})

	t.Run("ToEarliestOnOneTopicAndPartition", func(t *testing.T) {
		k := newKafkaCase(t, 1, sandbox.Topic{Name: "foo-t", Partitions: 2})
		k.produce(t, "foo-t", 2, 50, now)
		k.consumed(t, "g", "foo-t")
		prior := k.committed(t, "g", "foo-t")
		r, res := k.reset(t, "--group", "g", "--topic", "foo-t:1", "--to-earliest", "--execute")
		want := map[string]int64{"foo-t/0": prior["foo-t/0"], "foo-t/1": 0}
		if r.Code != 0 || !sameMap(res["g"], map[string]int64{"foo-t/1": 0}) || !sameMap(k.committed(t, "g", "foo-t"), want) {
			t.Errorf("exit %d %v %v\n%s", r.Code, res, k.committed(t, "g", "foo-t"), r.Err)
		}
	})

	t.Run("ToEarliestOnTopics", func(t *testing.T) {
		k := newKafkaCase(t, 1, one("foo-t1"), one("foo-t2"))
		for _, tp := range []string{"foo-t1", "foo-t2"} {
			k.produce(t, tp, 1, 100, now)
		}
		k.consumed(t, "g", "foo-t1", "foo-t2")
		r, res := k.reset(t, "--group", "g", "--topic", "foo-t1", "--topic", "foo-t2", "--to-earliest", "--execute")
		if r.Code != 0 || !sameMap(res["g"], map[string]int64{"foo-t1/0": 0, "foo-t2/0": 0}) ||
			!sameMap(k.committed(t, "g", "foo-t1"), map[string]int64{"foo-t1/0": 0}) || !sameMap(k.committed(t, "g", "foo-t2"), map[string]int64{"foo-t2/0": 0}) {
			t.Errorf("exit %d %v\n%s", r.Code, res, r.Err)
		}
	})

	t.Run("ToEarliestOnTopicsAndPartitions", func(t *testing.T) {
		k := newKafkaCase(t, 1, sandbox.Topic{Name: "foo-t1", Partitions: 2}, sandbox.Topic{Name: "foo-t2", Partitions: 2})
		for _, tp := range []string{"foo-t1", "foo-t2"} {
			k.produce(t, tp, 2, 50, now)
		}
		k.consumed(t, "g", "foo-t1", "foo-t2")
		p1, p2 := k.committed(t, "g", "foo-t1"), k.committed(t, "g", "foo-t2")
		r, res := k.reset(t, "--group", "g", "--topic", "foo-t1:1", "--topic", "foo-t2:1", "--to-earliest", "--execute")
		p1["foo-t1/1"], p2["foo-t2/1"] = 0, 0
		if r.Code != 0 || !sameMap(res["g"], map[string]int64{"foo-t1/1": 0, "foo-t2/1": 0}) ||
			!sameMap(k.committed(t, "g", "foo-t1"), p1) || !sameMap(k.committed(t, "g", "foo-t2"), p2) {
			t.Errorf("exit %d %v\n%s", r.Code, res, r.Err)
		}
	})

	t.Run("ExportImportPlanSingleGroupArg", func(t *testing.T) {
		k := newKafkaCase(t, 1, sandbox.Topic{Name: "foo-t", Partitions: 2})
		k.produce(t, "foo-t", 2, 50, now)
		k.consumed(t, "g", "foo-t")
		r := runCLI(t, "", nil, "offsets", "reset", "--bootstrap-server", k.boot, "--data-dir", k.data, "--group", "g", "--all-topics", "--to-offset", "2", "--export")
		if r.Code != 0 || r.Out != "foo-t,0,2\nfoo-t,1,2\n" {
			t.Fatalf("export: exit %d %q\n%s", r.Code, r.Out, r.Err)
		}
		plan := filepath.Join(t.TempDir(), "reset.csv")
		os.WriteFile(plan, []byte(r.Out), 0o644)
		r, res := k.reset(t, "--group", "g", "--all-topics", "--from-file", plan, "--dry-run")
		if r.Code != 0 || !sameMap(res["g"], map[string]int64{"foo-t/0": 2, "foo-t/1": 2}) {
			t.Errorf("import: exit %d %v\n%s", r.Code, res, r.Err)
		}
	})

	t.Run("ExportImportPlan", func(t *testing.T) {
		k := newKafkaCase(t, 1, sandbox.Topic{Name: "foo-t1", Partitions: 2}, sandbox.Topic{Name: "foo-t2", Partitions: 2})
		k.produce(t, "foo-t1", 2, 50, now)
		k.produce(t, "foo-t2", 2, 50, now)
		k.consumed(t, "g1", "foo-t1")
		k.consumed(t, "g2", "foo-t2")
		r := runCLI(t, "", nil, "offsets", "reset", "--bootstrap-server", k.boot, "--data-dir", k.data, "--group", "g1", "--group", "g2", "--all-topics", "--to-offset", "2", "--export")
		if r.Code != 0 || r.Out != "g1,foo-t1,0,2\ng1,foo-t1,1,2\ng2,foo-t2,0,2\ng2,foo-t2,1,2\n" {
			t.Fatalf("export: exit %d %q\n%s", r.Code, r.Out, r.Err)
		}
		plan := filepath.Join(t.TempDir(), "reset.csv")
		os.WriteFile(plan, []byte(r.Out), 0o644)
		exp1, exp2 := map[string]int64{"foo-t1/0": 2, "foo-t1/1": 2}, map[string]int64{"foo-t2/0": 2, "foo-t2/1": 2}
		r, res := k.reset(t, "--group", "g1", "--group", "g2", "--all-topics", "--from-file", plan, "--dry-run")
		if r.Code != 0 || !sameMap(res["g1"], exp1) || !sameMap(res["g2"], exp2) {
			t.Errorf("import of both: exit %d %v\n%s", r.Code, res, r.Err)
		}
		r, res = k.reset(t, "--group", "g1", "--all-topics", "--from-file", plan, "--dry-run")
		if r.Code != 0 || len(res) != 1 || !sameMap(res["g1"], exp1) {
			t.Errorf("import of one: exit %d %v\n%s", r.Code, res, r.Err)
		}
	})

	t.Run("WithUnrecognizedNewConsumerOption", func(t *testing.T) {
		r := runCLI(t, "", nil, "offsets", "reset", "--new-consumer", "--bootstrap-server", "127.0.0.1:1", "--group", "g", "--all-topics", "--to-offset", "2", "--export")
		if r.Code != 2 {
			t.Errorf("exit %d %s", r.Code, r.Err)
		}
	})

	t.Run("WithPartitionNoneLeader", func(t *testing.T) {
		// Kafka fails with LEADER_NOT_AVAILABLE once a partition's only
		// replica is down. kaas keeps every partition on the shared volume
		// and moves a stopped broker's partitions to the live ones, so the
		// same reset still works there (a deliberate difference).
		k := newKafkaCase(t, 3, sandbox.Topic{Name: "foo-t", Partitions: 3})
		k.produce(t, "foo-t", 3, 10, now)
		k.consumed(t, "g", "foo-t")
		args := []string{"--group", "g", "--topic", "foo-t:0,1,2", "--to-earliest", "--execute"}
		if r, _ := k.reset(t, args...); r.Code != 0 {
			t.Fatalf("exit %d\n%s", r.Code, r.Err)
		}
		if _, err := k.sb.StopBroker("kaas-0"); err != nil {
			t.Fatal(err)
		}
		r, res := k.reset(t, args...)
		if r.Code != 0 || len(res["g"]) != 3 {
			t.Errorf("after a broker stopped: exit %d %v\n%s", r.Code, res, r.Err)
		}
	})

	t.Run("WithPartitionNotExist", func(t *testing.T) {
		k := newKafkaCase(t, 1, one("foo-t"))
		k.produce(t, "foo-t", 1, 10, now)
		k.consumed(t, "g", "foo-t")
		before := k.committed(t, "g", "foo-t")
		r, _ := k.reset(t, "--group", "g", "--topic", "foo-t:2,3", "--to-earliest", "--execute")
		if r.Code != 1 || !strings.Contains(r.Out, "partition not in the cluster metadata") || !sameMap(k.committed(t, "g", "foo-t"), before) {
			t.Errorf("exit %d\n%s\n%s", r.Code, r.Out, r.Err)
		}
	})
}
