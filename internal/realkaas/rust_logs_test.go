//go:build realkaas && unix

package realkaas

import (
	"context"
	"crypto/rand"
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

// Offline log ends on the Rust broker: segments its graceful close left
// with recovery checkpoints, a crash mid-write (torn tail), and a stale
// checkpoint the broker trusts (a partition served below its segments).

// produceBig writes n records of size bytes to every partition of topic.
func produceBig(t *testing.T, c *Cluster, topic string, partitions int32, n, size int) {
	t.Helper()
	cl := newClient(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < n; i++ {
			val := make([]byte, size) // incompressible: the segment holds size bytes a record
			rand.Read(val)
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: val})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("producing to %s: %v", topic, err)
	}
}

type checkpoint struct {
	SegmentBase   int64 `json:"segmentBase"`
	BytePos       int64 `json:"bytePos"`
	HighWatermark int64 `json:"highWatermark"`
}

func readCheckpoint(t *testing.T, dir string) (checkpoint, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "recovery-checkpoint.json"))
	if err != nil {
		return checkpoint{}, false
	}
	var cp checkpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return cp, true
}

func termAll(t *testing.T, c *Cluster) {
	t.Helper()
	for i := range c.Brokers {
		if err := c.Term(i); err != nil {
			t.Fatal(err)
		}
	}
}

func startAll(t *testing.T, c *Cluster) {
	t.Helper()
	for i := range c.Brokers {
		if err := c.StartBroker(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.SettleStarted(context.Background(), 90*time.Second, t.Logf); err != nil {
		t.Fatal(err)
	}
}

// offlineEnds is the log end of every partition of orders as groups
// describe reads it offline (the segments) for a group committed on each.
func offlineEnds(t *testing.T, c *Cluster, group string) map[tp]int64 {
	t.Helper()
	od := decode[offlineDescribe](t, ok(t, "groups", "describe", group, "--data-dir", c.Data, "--kaas-version", "0.2.18", "-o", "json"))
	out := map[tp]int64{}
	for _, g := range od.Groups {
		for _, p := range g.Partitions {
			if p.HighWatermark != nil {
				out[tp{p.Topic, p.Partition}] = *p.HighWatermark
			}
		}
	}
	return out
}

// A graceful stop of every broker leaves each partition a recovery
// checkpoint at the end of its active segment; kaasctl's offline log end
// hops from it (segments above 64 KiB), equals what the brokers served,
// and a consumer resumes where an offline reset put it.
func TestRustCheckpointLogEnds(t *testing.T) {
	t.Parallel()
	c := newRustCluster(t, "orders:3")
	produceBig(t, c, "orders", 3, 300, 400) // about 130 KiB a partition
	cs := startConsumer(t, c, "g-cp", "orders")
	served := logEnds(t, c, "orders")
	waitPositions(t, served, cs)
	cs.stop()
	termAll(t, c)
	l := layoutOf(t, c)
	for k, end := range served {
		dir := l.PartitionDir(k.Topic, k.Partition)
		cp, found := readCheckpoint(t, dir)
		pl, _, err := volume.ReadPartitionLog(dir)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		t.Logf("%s: served %d; checkpoint %+v (found %v); kaasctl: end %d by %s, active segment %d bytes", k, end, cp, found, pl.LogEnd, pl.Method, pl.ActiveSize)
		if !found || cp.BytePos != pl.ActiveSize || cp.HighWatermark != end {
			t.Errorf("%s: a graceful close should leave a checkpoint at the segment's end with the served end %d: %+v (found %v)", k, end, cp, found)
		}
		if pl.LogEnd != end || pl.Method != volume.LogEndCheckpoint {
			t.Errorf("%s: kaasctl's offline log end %d by %s; kaas served %d and left a checkpoint", k, pl.LogEnd, pl.Method, end)
		}
	}
	if got := offlineEnds(t, c, "g-cp"); fmtOffsets(got) != fmtOffsets(served) {
		t.Errorf("groups describe offline: log ends %s, kaas served %s", fmtOffsets(got), fmtOffsets(served))
	}
	r := kaasctl(t, "offsets", "reset", "--data-dir", c.Data, "--kaas-version", "0.2.18", "--group", "g-cp", "--topic", "orders",
		"--shift-by", "-100", "--offline", "--execute", "-o", "json")
	if v := decode[resetView](t, r); r.code != 0 || v.Summary.Changed != 3 {
		t.Fatalf("offline reset on the checkpointed volume: %v", r)
	}
	startAll(t, c)
	want := map[tp]int64{}
	for k, end := range served {
		want[k] = end - 100
	}
	resumeAt(t, c, "offline reset over checkpointed segments", "g-cp", want, "orders")
}

// A crash mid-write: bytes of a batch cut off after the last complete one
// (written here with every broker down, as a kill during an append leaves
// them). kaasctl's offline end ignores them and says how many there are;
// the broker, restarted, serves the same end and appends after it.
func TestRustTornTail(t *testing.T) {
	t.Parallel()
	c := newRustCluster(t, "orders:3")
	produce(t, c, "orders", 3, 40)
	served := logEnds(t, c, "orders")
	for i := range c.Brokers {
		if err := c.Kill(i); err != nil {
			t.Fatal(err)
		}
	}
	l := layoutOf(t, c)
	k := tp{"orders", 1}
	dir := l.PartitionDir(k.Topic, k.Partition)
	before, _, err := volume.ReadPartitionLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	torn := make([]byte, 37) // a batch header's start: base offset, a length past the end
	copy(torn, []byte{0, 0, 0, 0, 0, 0, 0, byte(served[k]), 0, 0, 0x10, 0})
	f, err := os.OpenFile(before.Active, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(torn)
	f.Close()
	pl, finds, err := volume.ReadPartitionLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if pl.LogEnd != served[k] || pl.TornBytes != int64(len(torn)) {
		t.Errorf("after a torn write kaasctl reads end %d with %d torn bytes; kaas served %d, %d bytes were cut off", pl.LogEnd, pl.TornBytes, served[k], len(torn))
	}
	vc := decode[checkView](t, kaasctl(t, "volume", "check", "--data-dir", c.Data, "--kaas-version", "0.2.18", "-o", "json"))
	named := false
	for _, f := range vc.Findings {
		if f.Code == volume.CodeSegmentTorn && strings.Contains(f.Path, filepath.Join("orders", "1")) {
			named = true
			t.Logf("volume check: %s %s: %s", f.Severity, f.Code, f.Message)
		}
	}
	if !named {
		t.Errorf("volume check does not name the torn tail of %s (reader findings %+v): %+v", k, finds, vc.Findings)
	}
	startAll(t, c)
	if got := logEnds(t, c, "orders"); got[k] != served[k] {
		t.Errorf("after the torn write the broker serves %s at %d; before the crash %d (kaasctl said %d)", k, got[k], served[k], pl.LogEnd)
	}
	// What Rust 0.2.18 does next (the torn-tail finding says it): the
	// append goes after the torn bytes, the broker serves its end, and a
	// consumer fetching at the old end stops at the torn bytes.
	produce(t, c, "orders", 3, 1)
	if got := logEnds(t, c, "orders"); got[k] != served[k]+1 {
		t.Errorf("one more record after the torn write: %s ends at %d, want %d", k, got[k], served[k]+1)
	}
	after, _, _ := volume.ReadPartitionLog(dir)
	t.Logf("after one more record: the segment is %d bytes (the torn bytes end at %d); kaasctl reads end %d with %d torn bytes", after.ActiveSize, before.ActiveSize+int64(len(torn)), after.LogEnd, after.TornBytes)
	if after.ActiveSize <= before.ActiveSize+int64(len(torn)) {
		t.Errorf("the broker truncated the torn bytes (segment %d bytes): the Rust torn-tail finding says it does not", after.ActiveSize)
	}
	cs := startConsumer(t, c, "g-torn", "orders")
	other := tp{"orders", 0}
	waitPositions(t, map[tp]int64{other: served[other] + 1}, cs)
	if _, pos := cs.snapshot(); pos[k] > served[k] {
		t.Errorf("a consumer read past the torn bytes of %s (position %d): the Rust finding says it stops there", k, pos[k])
	}
	cs.stop()
	// The fix the finding gives: with every broker stopped, cut the
	// segment at the last complete batch; the record appended after the
	// torn bytes is lost with them (it was acknowledged: kaas's loss).
	termAll(t, c)
	if err := os.Truncate(before.Active, before.ActiveSize); err != nil {
		t.Fatal(err)
	}
	startAll(t, c)
	produce(t, c, "orders", 3, 1)
	resumeAt(t, c, "after cutting the torn bytes", "g-torn", map[tp]int64{k: served[k]}, "orders")
}

// A recovery checkpoint whose high watermark trails the segment (the
// incident of the README: 429 served over 574 records, the checkpoint
// rewritten with 429) is trusted by the Rust broker: it serves the stale
// end. doctor names the partition with the Rust fix, not the Go one (a
// restart of its leader, a takeover at a new epoch, changes nothing here);
// what brings it back is the fix doctor gives: every broker stopped, the
// checkpoint removed.
func TestRustStaleCheckpoint(t *testing.T) {
	t.Parallel()
	c := newRustCluster(t, "orders:3")
	produce(t, c, "orders", 3, 30)
	cs := startConsumer(t, c, "g-sb", "orders")
	waitPositions(t, all("orders", 3, 30), cs)
	cs.stop()
	termAll(t, c)
	k := tp{"orders", 0}
	dir := layoutOf(t, c).PartitionDir(k.Topic, k.Partition)
	cp, found := readCheckpoint(t, dir)
	if !found || cp.HighWatermark != 30 {
		t.Fatalf("a graceful close should leave %s a checkpoint at 30: %+v (found %v)", k, cp, found)
	}
	cp.HighWatermark = 20
	b, _ := json.Marshal(cp)
	if err := os.WriteFile(filepath.Join(dir, "recovery-checkpoint.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	startAll(t, c)
	waitFor(t, 30*time.Second, k.String()+" served at the checkpoint's 20", func() error {
		if got := logEnds(t, c, "orders"); got[k] != 20 {
			return fmt.Errorf("served %d", got[k])
		}
		return nil
	})
	behind := map[tp]int64{k: 20}
	doctorNamesStale(t, c, behind)
	refusedStale(t, c, "g-sb", "orders", behind)
	r := kaasctl(t, "doctor", "--data-dir", c.Data, "--kaas-version", "0.2.18", "--brokers", strings.Join(c.Addrs(), ","), "-o", "json")
	d := decode[struct {
		Findings []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Fix     string `json:"fix"`
		} `json:"findings"`
	}](t, r)
	for _, f := range d.Findings {
		if f.Code != "live.servedBehindLog" {
			continue
		}
		t.Logf("doctor's fix on Rust: %s", f.Fix)
		if strings.HasPrefix(f.Fix, "restart") || strings.Contains(f.Fix, "re-scans the segments") || !strings.Contains(f.Fix, "remove recovery-checkpoint.json") {
			t.Errorf("doctor's fix for a Rust partition served short of its segments: %s", f.Fix)
		}
		if !strings.Contains(f.Message, "recovery-checkpoint.json") {
			t.Errorf("doctor's cause is not the Rust broker's: %s", f.Message)
		}
	}
	// The Go fix: restart the leader so a takeover at a new epoch re-scans.
	e := partitionEntries(t, c)[k]
	leader := indexOf(c, e.Broker)
	if err := c.Term(leader); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, k.String()+" taken over at a new epoch", func() error {
		if now := partitionEntries(t, c)[k]; now.Epoch <= e.Epoch || now.Broker == e.Broker {
			return fmt.Errorf("%s at epoch %d", now.Broker, now.Epoch)
		}
		return nil
	})
	if err := c.StartBroker(leader); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitSettled(context.Background(), 60*time.Second); err != nil {
		t.Fatal(err)
	}
	now := partitionEntries(t, c)[k]
	if got := logEnds(t, c, "orders"); got[k] != 20 {
		t.Logf("a restart of the leader %s fixed %s (served %d now, by %s at epoch %d): the Rust fix doctor gives is wrong", e.Broker, k, got[k], now.Broker, now.Epoch)
		t.Errorf("%s served %d after a takeover at a new epoch; the README saw the stale end survive that", k, got[k])
	} else {
		t.Logf("a restart of the leader %s and a takeover by %s at epoch %d left %s at 20", e.Broker, now.Broker, now.Epoch, k)
	}
	// The fix doctor gives on Rust: every broker stopped, the checkpoint
	// removed, then started.
	termAll(t, c)
	if cp, _ := readCheckpoint(t, dir); cp.HighWatermark != 20 {
		t.Errorf("the close after the takeover wrote the checkpoint with %d", cp.HighWatermark)
	}
	if err := os.Remove(filepath.Join(dir, "recovery-checkpoint.json")); err != nil {
		t.Fatal(err)
	}
	startAll(t, c)
	eventually(t, 30*time.Second, k.String()+" served at its segments' 30 after the checkpoint was removed", func() error {
		if got := logEnds(t, c, "orders"); got[k] != 30 {
			return fmt.Errorf("served %d", got[k])
		}
		return nil
	})
}
