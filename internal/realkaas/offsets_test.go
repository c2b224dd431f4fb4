//go:build realkaas && unix

package realkaas

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// produceAt writes n records to every partition of topic with record
// timestamps base, base+1s, ...
func produceAt(t *testing.T, c *Cluster, topic string, partitions int32, n int, base time.Time) {
	t.Helper()
	cl := newClient(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < n; i++ {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Timestamp: base.Add(time.Duration(i) * time.Second),
				Value: []byte(fmt.Sprintf("%s-%d-%d", topic, p, i))})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("producing to %s: %v", topic, err)
	}
}

// committed asks the group's coordinator (OffsetFetch, naming the
// partitions: kaas answers a fetch of all topics from memory only) what it
// serves for orders/0-2.
func committed(t *testing.T, c *Cluster, group string) map[tp]int64 {
	t.Helper()
	out, err := committedErr(t, c, group)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// committedErr is committed with the coordinator's error returned (as
// right after a restart, while none is available).
func committedErr(t *testing.T, c *Cluster, group string) (map[tp]int64, error) {
	t.Helper()
	cl := newClient(t, c)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req := kmsg.NewPtrOffsetFetchRequest()
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	rt := kmsg.NewOffsetFetchRequestGroupTopic()
	rt.Topic = "orders"
	rt.Partitions = []int32{0, 1, 2}
	rg.Topics = append(rg.Topics, rt)
	req.Groups = append(req.Groups, rg)
	req.Group = group
	ot := kmsg.NewOffsetFetchRequestTopic()
	ot.Topic = "orders"
	ot.Partitions = []int32{0, 1, 2}
	req.Topics = append(req.Topics, ot)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("OffsetFetch %s: %w", group, err)
	}
	out := map[tp]int64{}
	add := func(topic string, p int32, off int64, code int16) {
		if code == 0 && off >= 0 {
			out[tp{topic, p}] = off
		}
	}
	for _, g := range resp.Groups {
		for _, tt := range g.Topics {
			for _, p := range tt.Partitions {
				add(tt.Topic, p.Partition, p.Offset, p.ErrorCode)
			}
		}
	}
	for _, tt := range resp.Topics {
		for _, p := range tt.Partitions {
			add(tt.Topic, p.Partition, p.Offset, p.ErrorCode)
		}
	}
	return out, nil
}

// logEnds asks the leaders for the log end offsets of topic.
func logEnds(t *testing.T, c *Cluster, topic string) map[tp]int64 {
	t.Helper()
	adm := kadm.NewClient(newClient(t, c))
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out := map[tp]int64{}
	waitFor(t, 30*time.Second, "ListOffsets of "+topic, func() error {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return err
		}
		var errs []string
		ends.Each(func(o kadm.ListedOffset) {
			if o.Err != nil {
				errs = append(errs, fmt.Sprintf("%s/%d: %v", o.Topic, o.Partition, o.Err))
				return
			}
			out[tp{o.Topic, o.Partition}] = o.Offset
		})
		if len(errs) > 0 {
			return fmt.Errorf("%s", strings.Join(errs, "; "))
		}
		return nil
	})
	return out
}

// waitGroupState waits until live describe reports the group in state.
func waitGroupState(t *testing.T, c *Cluster, group, state string) {
	t.Helper()
	waitFor(t, 30*time.Second, group+" "+state, func() error {
		d := decode[liveDescribe](t, kaasctl(t, "groups", "describe", group, "--data-dir", c.Data, "--brokers", strings.Join(c.Addrs(), ","), "-o", "json"))
		if len(d.Groups) != 1 || d.Groups[0].State != state {
			return fmt.Errorf("state %+v", d.Groups)
		}
		return nil
	})
}

// timeAnswer asks every partition of orders for the offset at time at
// (ListOffsets, raw: no client turns -1 into the log end) and checks the
// broker answers want everywhere, as kaasctl's refusal says.
func timeAnswer(t *testing.T, c *Cluster, at time.Time, want int64) {
	t.Helper()
	cl := newClient(t, c)
	defer cl.Close()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "orders"
	for p := int32(0); p < 3; p++ {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, at.UnixMilli()
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	shards := cl.RequestSharded(ctx, req)
	for _, sh := range shards {
		if sh.Err != nil {
			t.Errorf("ListOffsets by time: %v", sh.Err)
			continue
		}
		for _, tt := range sh.Resp.(*kmsg.ListOffsetsResponse).Topics {
			for _, p := range tt.Partitions {
				if p.ErrorCode != 0 || p.Offset != want {
					t.Errorf("ListOffsets orders/%d at %s: offset %d timestamp %d error %d; kaasctl says this broker answers %d", p.Partition, at.Format(time.RFC3339), p.Offset, p.Timestamp, p.ErrorCode, want)
				}
			}
		}
	}
}

// resumeAt starts a consumer of group and checks that the first record it
// fetched on every partition of want is at the offset in want.
func resumeAt(t *testing.T, c *Cluster, what, group string, want map[tp]int64, topics ...string) {
	t.Helper()
	answersCommitted(t, c, group, want)
	cs := startConsumer(t, c, group, topics...)
	eventually(t, 45*time.Second, what+": the consumer resumes at "+fmtOffsets(want), func() error {
		first, _ := cs.snapshot()
		for k, v := range want {
			got, ok := first[k]
			if !ok {
				return fmt.Errorf("nothing fetched yet on %s (first: %s)", k, fmtOffsets(first))
			}
			if got != v {
				cs.mu.Lock()
				errs := fmt.Sprint(cs.errs)
				cs.mu.Unlock()
				return fmt.Errorf("%s resumed at %d (first: %s; fetch errors: %s)", k, got, fmtOffsets(first), errs)
			}
		}
		return nil
	})
	cs.stop()
}

// liveOffsetsDir is the offsets dir the brokers of the volume's
// generation read and write (DATA/__consumer_offsets on the Go flavour).
func liveOffsetsDir(t *testing.T, c *Cluster) string {
	t.Helper()
	d, err := layoutOf(t, c).LiveOffsetsDir()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func liveDirFiles(t *testing.T, c *Cluster) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	dir := liveOffsetsDir(t, c)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			out[p] = b
		}
		return nil
	})
	return out
}

// layoutOf is the cluster's volume as kaasctl resolves it.
func layoutOf(t *testing.T, c *Cluster) volume.Layout {
	t.Helper()
	l, err := volume.Resolve(volume.ResolveInput{DataDirFlag: c.Data})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// partitionEntries are assignment.json's partition entries.
func partitionEntries(t *testing.T, c *Cluster) map[tp]volume.PartitionEntry {
	t.Helper()
	l := layoutOf(t, c)
	a, _, err := volume.ReadAssignment(l.AssignmentPath())
	if err != nil {
		t.Fatal(err)
	}
	out := map[tp]volume.PartitionEntry{}
	for _, e := range a.Partitions {
		out[tp{e.Topic, e.Partition}] = e
	}
	return out
}

// behindOf lists the partitions whose served log end is below before.
func behindOf(before, now map[tp]int64) map[tp]int64 {
	out := map[tp]int64{}
	for k, v := range before {
		if now[k] < v {
			out[k] = now[k]
		}
	}
	return out
}

// logEndsBack checks that after a full restart every partition of topic
// serves at least the log end it served before. Right after a restart
// kaas answers log end 0 until each new leader has taken over, so it waits.
// The Go flavour can also come back serving a manifest's stale high
// watermark for good: a broker that takes a partition over at the epoch
// its manifest already holds does not re-scan the segments (storage
// takeoverInternal), and a broker's shutdown flush can leave a manifest
// behind the log. When a partition stays behind, the test checks that
// kaasctl reads the real end from the segments (volume check names the
// manifest trailing by the right amount), logs the evidence, and does what
// an operator would: restarts the serving broker, so the partition's next
// takeover is at a new epoch and re-scans.
func logEndsBack(t *testing.T, c *Cluster, before map[tp]int64, topic, group string) {
	t.Helper()
	var behind map[tp]int64
	deadline := time.Now().Add(10 * time.Second)
	for {
		if behind = behindOf(before, logEnds(t, c, topic)); len(behind) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	l := layoutOf(t, c)
	entries := partitionEntries(t, c)
	vc := decode[struct {
		Findings []struct {
			Code    string `json:"code"`
			Path    string `json:"path"`
			Message string `json:"message"`
		} `json:"findings"`
	}](t, kaasctl(t, "volume", "check", "--data-dir", c.Data, "-o", "json"))
	restart := map[string]bool{}
	for k, served := range behind {
		e := entries[k]
		mp := l.ManifestPath(k.Topic, k.Partition)
		raw, _ := os.ReadFile(mp)
		t.Logf("kaas serves log end %d on %s after the full restart, %d before: leader %s at epoch %d, manifest %s",
			served, k, before[k], e.Broker, e.Epoch, bytes.TrimSpace(raw))
		if m, _, err := volume.ParseManifest(mp, k.Topic, k.Partition, raw); err != nil || m.HighWatermark != served {
			// Not (yet) a manifest's value: a takeover still to come.
			continue
		}
		want := fmt.Sprintf("segments end at %d", before[k])
		found := false
		for _, f := range vc.Findings {
			if f.Code == "manifest.trailsLog" && filepath.Clean(f.Path) == filepath.Clean(mp) && strings.Contains(f.Message, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("kaas serves %s at %d, below its log; kaasctl volume check does not say the %s (findings %+v)", k, served, want, vc.Findings)
		}
		restart[e.Broker] = true
	}
	if len(restart) > 0 {
		refusedStale(t, c, group, topic, behind)
		doctorNamesStale(t, c, behind)
		describeMarksStale(t, c, group, behind)
		exporterFlagsStale(t, c, behind)
	}
	for i, b := range c.Brokers {
		if !restart[b.ID] {
			continue
		}
		// Stopped and started at once, the broker is back before the
		// controller notices and takes its partitions over at the same
		// epoch again: wait until they have moved.
		t.Logf("restarting %s so its partitions are taken over at a new epoch", b.ID)
		if err := c.Term(i); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 60*time.Second, "the partitions of "+b.ID+" taken over by another broker", func() error {
			now := partitionEntries(t, c)
			for k := range behind {
				if entries[k].Broker == b.ID && now[k].Epoch <= entries[k].Epoch {
					return fmt.Errorf("%s still at epoch %d on %s", k, now[k].Epoch, now[k].Broker)
				}
			}
			return nil
		})
		if err := c.StartBroker(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitSettled(context.Background(), 60*time.Second); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "every partition's log end back where it was after restarting its leader", func() error {
		if b := behindOf(before, logEnds(t, c, topic)); len(b) > 0 {
			return fmt.Errorf("still behind: %s (before: %s)", fmtOffsets(b), fmtOffsets(before))
		}
		return nil
	})
}

// staleManifest writes k's manifest.json with a high watermark of 0 at the
// epoch the assignment gives the partition (every broker must be down).
func staleManifest(t *testing.T, c *Cluster, k tp) {
	t.Helper()
	e := partitionEntries(t, c)[k]
	p := layoutOf(t, c).ManifestPath(k.Topic, k.Partition)
	if err := os.WriteFile(p, fmt.Appendf(nil, `{"epoch":%d,"highWatermark":0,"logStartOffset":0}`, e.Epoch), 0o644); err != nil {
		t.Fatal(err)
	}
}

// refusedStale: a live offsets reset --to-latest of group (a dry run)
// refuses every partition served behind its log, naming both ends, and
// plans no partition below its log end.
func refusedStale(t *testing.T, c *Cluster, group, topic string, behind map[tp]int64) {
	t.Helper()
	r := kaasctl(t, "offsets", "reset", "--data-dir", c.Data, "--brokers", strings.Join(c.Addrs(), ","), "--group", group,
		"--topic", topic, "--to-latest", "-o", "json")
	v := decode[resetView](t, r)
	seen := 0
	for _, g := range v.Groups {
		for _, row := range g.Rows {
			k := tp{row.Topic, row.Partition}
			served, stale := behind[k]
			if stale {
				seen++
			}
			switch {
			case stale && !servedEndNamed(row.Error, served):
				t.Errorf("live offsets reset --to-latest on %s, served at %d below its segments: want the row refused naming both ends, got %+v", k, served, row)
			case stale:
				t.Logf("live reset refused %s: %s", k, row.Error)
			}
		}
	}
	if seen != len(behind) {
		t.Errorf("live offsets reset --to-latest planned %d of the %d partitions served behind their log: %v", seen, len(behind), r)
	}
}

// liveDescribeView is the part of groups describe -o json (with the volume
// and the brokers) the scenarios read.
type liveDescribeView struct {
	Groups []struct {
		Issues     []string `json:"issues"`
		Partitions []struct {
			Topic           string `json:"topic"`
			Partition       int32  `json:"partition"`
			LogEnd          int64  `json:"logEnd"`
			SegmentsLogEnd  *int64 `json:"segmentsLogEnd"`
			ServedBehindLog bool   `json:"servedBehindLog"`
			Incidents       []struct {
				Code   string `json:"code"`
				Detail string `json:"detail"`
			} `json:"incidents"`
		} `json:"partitions"`
	} `json:"groups"`
}

// describeLive runs groups describe -o json of group with the volume and
// the brokers.
func describeLive(t *testing.T, c *Cluster, group string) liveDescribeView {
	t.Helper()
	return decode[liveDescribeView](t, kaasctl(t, "groups", "describe", "--data-dir", c.Data, "--brokers", strings.Join(c.Addrs(), ","), "-o", "json", group))
}

// describeMarksStale: groups describe of group, with the volume and the
// brokers, marks every partition served behind its log that its offset
// file names (servedBehindLog, the served end beside the segments').
func describeMarksStale(t *testing.T, c *Cluster, group string, behind map[tp]int64) {
	t.Helper()
	v := describeLive(t, c, group)
	for _, g := range v.Groups {
		for _, p := range g.Partitions {
			k := tp{p.Topic, p.Partition}
			served, stale := behind[k]
			switch {
			case !stale:
			case p.SegmentsLogEnd == nil:
				t.Logf("groups describe: %s has no entry in %s's offset file, so its segments were not compared", k, group)
			case !p.ServedBehindLog || p.LogEnd < served || !slices.Contains(g.Issues, "servedBehindLog"):
				// A producer still running appends at the stale end:
				// the served end may have moved on since it was seen.
				t.Errorf("groups describe does not mark %s, served at %d below its segments' %d: %+v (issues %v)", k, served, *p.SegmentsLogEnd, p, g.Issues)
			default:
				t.Logf("groups describe marks %s: served %d, segments %d", k, p.LogEnd, *p.SegmentsLogEnd)
			}
		}
	}
}

// exporterFlagsStale: one exporter refresh with the volume and the brokers
// exports every partition served behind its log (the offset files name
// them: the group committed on each) with the records it is short.
func exporterFlagsStale(t *testing.T, c *Cluster, behind map[tp]int64) {
	t.Helper()
	r := kaasctl(t, "exporter", "--once", "--data-dir", c.Data, "--brokers", strings.Join(c.Addrs(), ","))
	if r.code != 0 {
		t.Errorf("exporter --once: exit %d\n%s", r.code, r.stderr)
		return
	}
	for k, served := range behind {
		prefix := fmt.Sprintf("kaas_partition_served_behind_log_records{topic=%q,partition=\"%d\"} ", k.Topic, k.Partition)
		found := false
		for _, line := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(line, prefix) {
				found = true
				t.Logf("exporter: %s (served %d)", line, served)
			}
		}
		if !found {
			t.Errorf("exporter --once does not export %s, served at %d below its segments (%s...)", k, served, prefix)
		}
	}
	if !strings.Contains(r.stderr, "served below the log end") {
		t.Errorf("exporter --once does not log the partitions served behind their log:\n%s", r.stderr)
	}
}

// doctorNamesStale: doctor with the brokers names every partition served
// behind its segments (live.servedBehindLog).
func doctorNamesStale(t *testing.T, c *Cluster, behind map[tp]int64) {
	t.Helper()
	r := kaasctl(t, "doctor", "--data-dir", c.Data, "--brokers", strings.Join(c.Addrs(), ","), "-o", "json")
	d := decode[struct {
		Findings []struct {
			Code     string   `json:"code"`
			Message  string   `json:"message"`
			Subjects []string `json:"subjects"`
		} `json:"findings"`
	}](t, r)
	named := map[string]bool{}
	for _, f := range d.Findings {
		if f.Code == "live.servedBehindLog" {
			t.Logf("doctor: %s", f.Message)
			for _, s := range f.Subjects {
				named[s] = true
			}
		}
	}
	for k := range behind {
		if !named[k.String()] {
			t.Errorf("doctor does not name %s, served behind its log (live.servedBehindLog): %v", k, r)
		}
	}
}

// TestRealOffsets: offsets reset refused while consumers run; an online
// reset and the consumer resumes there; --to-datetime refused with the
// broker's zero answer as evidence; offsets delete reports the offset the
// broker still serves; volume repair leaves the live dir alone; an offline
// reset with every broker down, and after the restart the consumer resumes
// exactly there and no partition moved backwards.
func TestRealOffsets(t *testing.T) {
	t.Parallel()
	forFlavours(t, testRealOffsets)
}

func testRealOffsets(t *testing.T, f Flavour) {
	c := newFlavourCluster(t, f, "orders:3")
	brokers := strings.Join(c.Addrs(), ",")
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	produceAt(t, c, "orders", 3, 30, t0)
	at30 := all("orders", 3, 30)

	cs := startConsumer(t, c, "g-reset", "orders")
	del := startConsumer(t, c, "g-del", "orders")
	waitPositions(t, at30, cs)
	waitPositions(t, at30, del)
	waitFor(t, 30*time.Second, "g-reset's commits", func() error {
		if got := committed(t, c, "g-reset"); fmtOffsets(got) != fmtOffsets(at30) {
			return fmt.Errorf("committed %s", fmtOffsets(got))
		}
		return nil
	})

	// Refused while the consumer runs; nothing moves.
	r := kaasctl(t, "offsets", "reset", "--data-dir", c.Data, "--brokers", brokers, "--group", "g-reset", "--topic", "orders",
		"--to-offset", "10", "--execute", "-o", "json")
	if rv := decode[resetView](t, r); r.code != 4 || len(rv.Groups) != 1 || rv.Groups[0].Refused == "" || rv.Groups[0].Executed {
		t.Errorf("offsets reset while g-reset's consumer runs: want exit 4 and the group refused, got %v", r)
	}
	if got := committed(t, c, "g-reset"); fmtOffsets(got) != fmtOffsets(at30) {
		t.Errorf("after the refused reset the broker serves %s, want %s", fmtOffsets(got), fmtOffsets(at30))
	}

	// Online reset of the Empty group, then the consumer resumes exactly there.
	cs.stop()
	del.stop()
	waitGroupState(t, c, "g-reset", "Empty")
	r = kaasctl(t, "offsets", "reset", "--data-dir", c.Data, "--brokers", brokers, "--group", "g-reset", "--topic", "orders",
		"--to-offset", "10", "--execute", "-o", "json")
	if rv := decode[resetView](t, r); r.code != 0 || rv.Summary.Changed != 3 || rv.Summary.Failed != 0 {
		t.Errorf("online offsets reset: %v", r)
	}
	at10 := all("orders", 3, 10)
	if got := committed(t, c, "g-reset"); fmtOffsets(got) != fmtOffsets(at10) {
		t.Errorf("after the online reset the broker serves %s, want %s", fmtOffsets(got), fmtOffsets(at10))
	}
	resumeAt(t, c, "online reset", "g-reset", at10, "orders")
	waitFor(t, 30*time.Second, "g-reset back at 30", func() error {
		if got := committed(t, c, "g-reset"); fmtOffsets(got) != fmtOffsets(at30) {
			return fmt.Errorf("committed %s", fmtOffsets(got))
		}
		return nil
	})
	waitGroupState(t, c, "g-reset", "Empty")

	// --to-datetime: the Go flavour answers ListOffsets by timestamp with
	// offset 0, the Rust broker with -1/-1 (kadm turns it into the log end);
	// the true answer for t0+15s is 15. kaasctl refuses, with the evidence
	// and the generation's own answer.
	at := t0.Add(15 * time.Second).UTC().Format(time.RFC3339)
	r = kaasctl(t, "offsets", "reset", "--data-dir", c.Data, "--brokers", brokers, "--group", "g-reset", "--topic", "orders",
		"--to-datetime", at, "--execute", "-o", "json")
	rv := decode[resetView](t, r)
	if r.code != 4 || len(rv.Groups) != 1 || !rv.Groups[0].TimeRefused || rv.Groups[0].Executed {
		t.Errorf("offsets reset --to-datetime %s: want exit 4 with timeRefused, got %v", at, r)
	} else if ev := rv.Groups[0].Refused + rv.Groups[0].Error + r.stderr + fmt.Sprint(rv.Groups[0].Rows); !strings.Contains(ev, "0") {
		t.Errorf("--to-datetime refusal names no evidence: %v", r)
	} else if want := map[Flavour]string{FlavourGo: "offset 0 for every timestamp", FlavourRust: "offset -1, timestamp -1 for every timestamp"}[f]; !strings.Contains(rv.Groups[0].Error, want) {
		t.Errorf("--to-datetime refusal on %s does not state what this broker answers (%q): %s", f.Name(), want, rv.Groups[0].Error)
	}
	timeAnswer(t, c, t0.Add(15*time.Second), map[Flavour]int64{FlavourGo: 0, FlavourRust: -1}[f])
	if got := committed(t, c, "g-reset"); fmtOffsets(got) != fmtOffsets(at30) {
		t.Errorf("after the refused --to-datetime the broker serves %s, want %s", fmtOffsets(got), fmtOffsets(at30))
	}

	// offsets delete: the broker still serves the deleted offset from its
	// cache, and kaasctl says so with that offset.
	waitGroupState(t, c, "g-del", "Empty")
	r = kaasctl(t, "offsets", "delete", "--data-dir", c.Data, "--brokers", brokers, "--group", "g-del", "--topic", "orders:0",
		"--execute", "-o", "json")
	dv := decode[resetView](t, r)
	served := committed(t, c, "g-del")
	if v, ok := served[tp{"orders", 0}]; ok {
		found := false
		for _, g := range dv.Groups {
			for _, row := range g.Rows {
				if row.Partition == 0 && (strings.Contains(row.Detail, fmt.Sprint(v)) || strings.Contains(strings.Join(row.Warnings, " "), fmt.Sprint(v))) {
					found = true
				}
			}
		}
		if dv.Summary.Cached == 0 || !found {
			t.Errorf("offsets delete: the broker still serves orders/0 at %d, kaasctl reports cached=%d and no row naming it: %v", v, dv.Summary.Cached, r)
		}
	} else if dv.Summary.Cached != 0 {
		t.Errorf("offsets delete reports %d cached offsets; the broker serves none for orders/0 (%s)", dv.Summary.Cached, fmtOffsets(served))
	}

	// volume repair on the live volume: the live dir is left alone.
	before := liveDirFiles(t, c)
	if len(before) == 0 {
		t.Errorf("no offset file in the live dir %s: the repair check below would check nothing", liveOffsetsDir(t, c))
	}
	r = kaasctl(t, "volume", "repair", "--data-dir", c.Data, "--execute", "-o", "json")
	rp := decode[repairView](t, r)
	liveDir := liveOffsetsDir(t, c) + string(filepath.Separator)
	for _, a := range rp.Actions {
		if a.Change && strings.HasPrefix(a.Path, liveDir) {
			t.Errorf("volume repair on the live volume changes %s (%s: %s)", a.Path, a.Action, a.Detail)
		}
	}
	after := liveDirFiles(t, c)
	for p, b := range before {
		if !bytes.Equal(after[p], b) {
			t.Errorf("volume repair changed the live offset file %s", p)
		}
	}

	// Offline reset with every broker down.
	endsBefore := logEnds(t, c, "orders")
	for i := range c.Brokers {
		if err := c.Term(i); err != nil {
			t.Fatal(err)
		}
	}
	// A stale manifest at the partition's own epoch, as a broker's
	// shutdown flush leaves it: every broker flushes the (epoch, high
	// watermark) it holds in memory for every partition it has open, led or
	// not, so the last one to stop can write a value behind the log (a CI
	// run of this test ended with orders/0 at {"epoch":1,"highWatermark":0}
	// over 30 records). The offline reset must read the segments, not it
	// (a reset clamped to the manifest would write 0), and after the
	// restart kaas may serve it (logEndsBack).
	staleManifest(t, c, tp{"orders", 0})
	r = kaasctl(t, "offsets", "reset", "--data-dir", c.Data, "--group", "g-reset", "--topic", "orders",
		"--to-offset", "20", "--offline", "--execute", "-o", "json")
	ov := decode[resetView](t, r)
	if r.code != 0 || ov.Summary.Changed != 3 {
		t.Errorf("offline offsets reset with every broker down: %v", r)
	}
	for _, g := range ov.Groups {
		for _, row := range g.Rows {
			if row.New != 20 {
				t.Errorf("offline offsets reset --to-offset 20 wrote %s/%d = %d (log end as kaasctl read it offline: %v; warnings %v)", row.Topic, row.Partition, row.New, row.Detail, row.Warnings)
			}
		}
	}
	for i := range c.Brokers {
		if err := c.StartBroker(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.SettleStarted(context.Background(), 60*time.Second, t.Logf); err != nil {
		t.Fatal(err)
	}
	logEndsBack(t, c, endsBefore, "orders", "g-reset")
	resumeAt(t, c, "offline reset, brokers restarted", "g-reset", all("orders", 3, 20), "orders")
}

// TestRealRewind: a group's offsets really rewound by a commit; watch
// --offsets --journal records it, group health shows REWIND, and offsets
// reset --to-history-before-anomaly restores the offsets the consumer then
// resumes at.
func TestRealRewind(t *testing.T) {
	t.Parallel()
	forFlavours(t, testRealRewind)
}

func testRealRewind(t *testing.T, f Flavour) {
	c := newFlavourCluster(t, f, "orders:3")
	brokers := strings.Join(c.Addrs(), ",")
	journal := filepath.Join(t.TempDir(), "journal")
	// Pinned: started before any group has committed, the volume tells no
	// generation yet.
	startBG(t, "watch", "--offsets", "--journal", journal, "--data-dir", c.Data, "--kaas-version", f.KaasVersion(), "--poll-interval", "100ms", "-o", "jsonl")
	// And not pinned (issue 32): it watches every dir the generation could
	// use and settles on the one the first group file appears in.
	unpinned := filepath.Join(t.TempDir(), "journal-unpinned")
	follower := startBG(t, "watch", "--offsets", "--journal", unpinned, "--data-dir", c.Data, "--poll-interval", "100ms", "-o", "jsonl")
	expAddr := freePort(t)
	startBG(t, "exporter", "--data-dir", c.Data, "--kaas-version", f.KaasVersion(), "--brokers", brokers, "--listen", expAddr,
		"--interval", "1s", "--poll-interval", "100ms", "--lag-seconds=false", "--window", "1m", "--stop-after", "5s")
	produce(t, c, "orders", 3, 40)
	at40 := all("orders", 3, 40)
	cs := startConsumer(t, c, "g-rw", "orders")
	waitPositions(t, at40, cs)
	cs.stop()
	waitFor(t, 30*time.Second, "g-rw's commits", func() error {
		if got := committed(t, c, "g-rw"); fmtOffsets(got) != fmtOffsets(at40) {
			return fmt.Errorf("committed %s", fmtOffsets(got))
		}
		return nil
	})
	waitGroupState(t, c, "g-rw", "Empty")
	// Let both watches record the good state before the rewind (the
	// unpinned one settles on a dir once the first group file is there).
	for _, j := range []string{journal, unpinned} {
		waitFor(t, 30*time.Second, "the journal "+filepath.Base(j)+" to hold g-rw at 40", func() error {
			r := kaasctl(t, "offsets", "history", "g-rw", "--journal", j, "--data-dir", c.Data, "-o", "json")
			if r.code != 0 || !strings.Contains(r.stdout, `"orders/2": 40`) {
				return fmt.Errorf("%v", r)
			}
			return nil
		})
	}

	// The rewind: an application commits 5 on every partition.
	adm := kadm.NewClient(newClient(t, c))
	off := kadm.Offsets{}
	for p := int32(0); p < 3; p++ {
		off.Add(kadm.Offset{Topic: "orders", Partition: p, At: 5, LeaderEpoch: -1})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := adm.CommitAllOffsets(ctx, "g-rw", off); err != nil {
		t.Fatalf("committing the rewind: %v", err)
	}
	waitFor(t, 30*time.Second, "the rewind in the offset file", func() error {
		if got := committed(t, c, "g-rw"); fmtOffsets(got) != fmtOffsets(all("orders", 3, 5)) {
			return fmt.Errorf("committed %s", fmtOffsets(got))
		}
		return nil
	})

	// Group health shows the rewind.
	eventually(t, 30*time.Second, "group health shows REWIND for g-rw", func() error {
		r := kaasctl(t, "groups", "health", "--exporter", "http://"+expAddr, "-o", "json")
		if r.code != 0 && r.code != 3 {
			return fmt.Errorf("%v", r)
		}
		h := decode[healthView](t, r)
		for _, g := range h.Groups {
			if g.Group == "g-rw" {
				if g.State == "REWIND" {
					return nil
				}
				return fmt.Errorf("g-rw is %s (%+v)", g.State, g.Evidence)
			}
		}
		return fmt.Errorf("g-rw not in %s", r.stdout)
	})

	// Restore from the journal; the consumer resumes at 40.
	waitFor(t, 30*time.Second, "the journal to hold the rewind", func() error {
		r := kaasctl(t, "offsets", "history", "g-rw", "--journal", journal, "--data-dir", c.Data, "-o", "json")
		if r.code != 0 && r.code != 3 || !strings.Contains(r.stdout, "REWIND") {
			return fmt.Errorf("%v", r)
		}
		return nil
	})
	waitFor(t, 30*time.Second, "the unpinned watch's journal to hold the rewind", func() error {
		r := kaasctl(t, "offsets", "history", "g-rw", "--journal", unpinned, "--data-dir", c.Data, "-o", "json")
		if r.code != 0 && r.code != 3 || !strings.Contains(r.stdout, "REWIND") {
			return fmt.Errorf("%v\nwatch output:\n%s", r, follower.output())
		}
		return nil
	})
	if out := follower.output(); !strings.Contains(out, liveOffsetsDir(t, c)) {
		t.Errorf("the unpinned watch does not say which offsets dir it settled on (%s):\n%s", liveOffsetsDir(t, c), out)
	}
	r := kaasctl(t, "offsets", "reset", "--data-dir", c.Data, "--brokers", brokers, "--group", "g-rw", "--all-topics",
		"--to-history-before-anomaly", "--journal", journal, "--execute", "-o", "json")
	rv := decode[resetView](t, r)
	if r.code != 0 || rv.Summary.Changed != 3 {
		t.Errorf("offsets reset --to-history-before-anomaly: %v", r)
	}
	if got := committed(t, c, "g-rw"); fmtOffsets(got) != fmtOffsets(at40) {
		t.Errorf("after the restore the broker serves %s, want %s", fmtOffsets(got), fmtOffsets(at40))
	}
	produce(t, c, "orders", 3, 2)
	resumeAt(t, c, "restored from the journal", "g-rw", at40, "orders")
}

// servedEndNamed: msg refuses for a served end below what the segments
// hold. The end it names may differ from the one seen: a producer still
// running appends at the stale end, and a leader still opening the
// partition answers 0 for a moment; either is the same refusal.
func servedEndNamed(msg string, served int64) bool {
	m := regexp.MustCompile(`serves log end (\d+) but the partition's segments `).FindStringSubmatch(msg)
	if m == nil {
		return false
	}
	_, err := strconv.ParseInt(m[1], 10, 64)
	return err == nil && served >= 0
}

// answersCommitted waits, for a while, until the group's coordinator
// answers OffsetFetch with a committed offset on every partition of want
// orders holds: right after a restart a loaded machine can start a
// consumer before the coordinator has read the group's file, and the
// consumer then resumes by auto.offset.reset instead (what it does before
// it answers is not the claim under test). A group that has none stays
// so: the wait ends and the consumer starts anyway.
func answersCommitted(t *testing.T, c *Cluster, group string, want map[tp]int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		got, err := committedErr(t, c, group)
		missing := err != nil
		for k := range want {
			if _, ok := got[k]; !ok && k.Topic == "orders" {
				missing = true
			}
		}
		if !missing {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
