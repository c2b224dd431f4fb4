package commands

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/views"
)

// The sandbox keeps its partitions as kaas does, without any quirk: real
// segment files (<epoch:08x>-<base:020>.log and .index, holding the
// produced record batches with their timestamps) and a manifest.json that
// trails the log; so offline describe takes the segments path, as on a
// real volume, and says nothing about unreadable segment files.
func TestSandboxWritesKaasSegments(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 2, Topics: []sandbox.Topic{{Name: "orders", Partitions: 1}}, PollInterval: 50 * time.Millisecond})
	cl, err := sb.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stamp := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	produce := func(n int) {
		recs := make([]*kgo.Record, n)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: "orders", Value: []byte("v"), Timestamp: stamp}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	dir := sb.Layout().PartitionDir("orders", 0)
	waitEnd := func(want int64) *volume.PartitionLog {
		for {
			if pl, _, err := volume.ReadPartitionLog(dir); err == nil && pl.LogEnd == want {
				return pl
			}
			if ctx.Err() != nil {
				ents, _ := os.ReadDir(dir)
				t.Fatalf("the segments never ended at %d: %v", want, ents)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	produce(5)
	waitEnd(5)
	produce(200)
	pl := waitEnd(205)
	if !strings.HasSuffix(pl.Active, volume.SegmentLogName(pl.ActiveBase, 0)[8:]) {
		t.Errorf("active segment %s", pl.Active)
	}
	if _, err := os.Stat(strings.TrimSuffix(pl.Active, ".log") + ".index"); err != nil {
		t.Errorf("no index beside %s: %v", pl.Active, err)
	}
	// The batches are the produced ones: their max timestamp is the
	// records'.
	raw, _ := os.ReadFile(pl.Active)
	if len(raw) < 61 || int64(binary.BigEndian.Uint64(raw[35:43])) != stamp.UnixMilli() {
		t.Errorf("the first batch is not the produced one (%d bytes)", len(raw))
	}
	// The manifest trails the log, as kaas's does.
	m, _, err := (&volume.ManifestReader{L: sb.Layout()}).Get("orders", 0)
	if err != nil || m.HighWatermark >= 205 {
		t.Errorf("manifest %+v %v: it follows the log", m, err)
	}
	os.WriteFile(filepath.Join(sb.Layout().OffsetsPath(), "offline.json"), []byte(`{"offsets":{"orders/0":100}}`), 0o644)
	r := runCLI(t, "", nil, "groups", "describe", "offline", "--data-dir", sb.Layout().DataDir, "-o", "json")
	d := mustJSON[views.GroupsDescribeView](t, r.Out).Groups[0]
	if len(d.Partitions) != 1 || d.Partitions[0].LogEndSource != volume.SourceSegments || d.Partitions[0].Lag == nil || *d.Partitions[0].Lag != 105 {
		t.Errorf("offline describe: %+v\n%s", d.Partitions, r.Err)
	}
	if strings.Contains(r.Err, "could not be read") {
		t.Errorf("offline describe warns about the segment files:\n%s", r.Err)
	}
}

// The demo's describe, as the tour runs it (volume and brokers), reads
// its log ends from the segment files: no word about unreadable segments.
func TestDemoDescribeReadsSegments(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: sandbox.DemoTopics, PollInterval: 50 * time.Millisecond})
	if err := sb.StartDemo(); err != nil {
		t.Fatal(err)
	}
	waitGroupsStable(t, sb, []string{"orders-app"})
	data, boot := sb.Layout().DataDir, strings.Join(sb.Bootstrap(), ",")
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := runCLI(t, "", nil, "groups", "describe", "orders-app", "--data-dir", data, "-b", boot)
		if r.Code == 0 && strings.Contains(r.Out, "log ends from the segment files") {
			if strings.Contains(r.Out+r.Err, "could not be read") {
				t.Errorf("the demo's describe warns about the segments:\n%s\n%s", r.Out, r.Err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("describe never read the segments: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Live, a partition whose segments hold a bound kaas could never have
// written is refused too (a broker recovering them would serve it): the
// reset exits 4 and writes nothing, whatever the broker answers now.
func TestLiveResetRefusesImpossibleSegments(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 1, Topics: []sandbox.Topic{{Name: "orders", Partitions: 1}}, PollInterval: 50 * time.Millisecond})
	cl, err := sb.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("v")}, &kgo.Record{Topic: "orders", Value: []byte("w")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := sb.Commit(ctx, "g", map[string]map[int32]int64{"orders": {0: 1}}); err != nil {
		t.Fatal(err)
	}
	dir := sb.Layout().PartitionDir("orders", 0)
	var pl *volume.PartitionLog
	for pl == nil || pl.LogEnd != 2 {
		if ctx.Err() != nil {
			t.Fatal("the segments never held the records")
		}
		time.Sleep(20 * time.Millisecond)
		pl, _, _ = volume.ReadPartitionLog(dir)
	}
	f, err := os.OpenFile(pl.Active, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(volume.EncodeBatch(-1<<63+2, 3, 1, nil)) // bit 63 of the next batch's base
	f.Close()
	data := sb.Layout().DataDir
	gf := filepath.Join(sb.Layout().OffsetsPath(), "g.json")
	before, _ := os.ReadFile(gf)
	r := runCLI(t, "", nil, "offsets", "reset", "--data-dir", data, "-b", strings.Join(sb.Bootstrap(), ","), "-g", "g", "--topic", "orders", "--to-latest", "--execute")
	if r.Code != 4 || !strings.Contains(r.Out+r.Err, "could never have written") {
		t.Errorf("live reset: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	if after, _ := os.ReadFile(gf); string(after) != string(before) {
		t.Errorf("the refused reset wrote %s (was %s)", after, before)
	}
}
