package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// fastGroup are kgo settings that keep group tests quick.
func fastGroup(group string, topics ...string) []kgo.Opt {
	return []kgo.Opt{
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...),
		kgo.SessionTimeout(3 * time.Second), kgo.HeartbeatInterval(100 * time.Millisecond),
		kgo.RebalanceTimeout(3 * time.Second), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
	}
}

func newClient(t *testing.T, sb *Sandbox, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(sb.Bootstrap()...), kgo.MetadataMinAge(50 * time.Millisecond)}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func produce(t *testing.T, cl *kgo.Client, topic string, parts, perPart int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for p := 0; p < parts; p++ {
		for i := 0; i < perPart; i++ {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte(fmt.Sprintf("v%d-%d", p, i))})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

func readOffsets(t *testing.T, sb *Sandbox, group string) (offsetFile, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sb.Layout().OffsetsPath(), group+".json"))
	if err != nil {
		return offsetFile{}, false
	}
	var f offsetFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("offsets file of %s: %v (%q)", group, err, data)
	}
	return f, true
}

func TestConsumerGroupCommitsThroughSandbox(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3, Topics: []Topic{{Name: "orders", Partitions: 4}}})
	prod := newClient(t, sb, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce(t, prod, "orders", 4, 5)

	cons := newClient(t, sb, fastGroup("g1", "orders")...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := 0
	for got < 20 {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of 20 records before timeout", got)
		}
		fs.EachError(func(tp string, p int32, err error) { t.Logf("fetch error %s/%d: %v", tp, p, err) })
		got += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	f, ok := readOffsets(t, sb, "g1")
	if !ok {
		t.Fatalf("no offsets file for g1 in %s", sb.Layout().OffsetsPath())
	}
	want := map[string]int64{"orders/0": 5, "orders/1": 5, "orders/2": 5, "orders/3": 5}
	if !mapsEqual(f.Offsets, want) {
		t.Fatalf("offsets file = %v, want %v", f.Offsets, want)
	}
	raw, _ := os.ReadFile(filepath.Join(sb.Layout().OffsetsPath(), "g1.json"))
	if !strings.HasPrefix(string(raw), `{"offsets":{`) {
		t.Fatalf("offsets file is not kaas's v2 envelope: %s", raw)
	}
	// The committing coordinator is the one the volume's routing names.
	a, _, err := volume.ReadAssignment(sb.Layout().AssignmentPath())
	if err != nil {
		t.Fatal(err)
	}
	if c := a.Router().Group("g1").Coordinator; c != sb.Coordinator("g1") {
		t.Fatalf("sandbox coordinator %s, file says %s", sb.Coordinator("g1"), c)
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// The sandbox emulates the generation its options name, from its row of
// the volume model: the Go flavour's offsets live in DATA/__consumer_offsets
// and its controller drops the explicit entries on failover; 0.2.18's in
// the cluster dir, reloaded.
func TestSandboxEmulatesAGeneration(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		gen      volume.Generation
		dir      func(l volume.Layout) string
		failover Failover
	}{
		{volume.GenGo, func(l volume.Layout) string { return filepath.Join(l.DataDir, volume.OffsetsDir) }, FailoverDrop},
		{volume.Gen018, func(l volume.Layout) string { return l.OffsetsPath() }, FailoverReload},
	} {
		sb := Start(t, Options{Brokers: 1, Generation: c.gen, Topics: []Topic{{Name: "orders", Partitions: 1}}})
		if err := sb.Commit(context.Background(), "app", map[string]map[int32]int64{"orders": {0: 0}}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(c.dir(sb.Layout()), "app.json")); err != nil {
			t.Errorf("%s: the group's file is not where its brokers keep it: %v", c.gen, err)
		}
		if sb.opts.Failover != c.failover {
			t.Errorf("%s: failover %s, want %s", c.gen, sb.opts.Failover, c.failover)
		}
	}
}
