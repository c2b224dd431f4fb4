package commands

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/views"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// whyVolume is a Rust 0.2.18 volume whose partitions of "orders" each
// hold a blocker at the committed offset of its group: orders/0 a
// transaction the reaper aborted without markers (group g-reaped),
// orders/1 one whose COMMIT marker waits in the queue (g-marker),
// orders/2 one open within its timeout (g-open), orders/3 a corrupt
// batch (g-corrupt); g-fine is caught up on orders/4.
type whyVolume struct {
	dir string
	l   volume.Layout
	now time.Time
}

func plantWhyVolume(t *testing.T) *whyVolume {
	t.Helper()
	dir := t.TempDir()
	now := time.Date(2026, 7, 23, 12, 0, 0, 0, time.UTC)
	v := &whyVolume{dir: dir, now: now, l: volume.Layout{DataDir: dir, ClusterDir: filepath.Join(dir, "__cluster"), Gen: volume.GenerationInfo{Gen: volume.Gen018}}}
	plain := func(base int64, n int) []byte {
		var recs []volume.BatchRecord
		for i := 0; i < n; i++ {
			recs = append(recs, volume.BatchRecord{Key: []byte(fmt.Sprintf("k%d", base+int64(i))), Value: []byte(fmt.Sprintf("order-%d", base+int64(i)))})
		}
		return volume.EncodeBatchOf(volume.BatchOf{Base: base, TimestampMs: now.Add(-time.Hour).UnixMilli(), ProducerID: -1, Records: recs})
	}
	txn := func(base int64, pid int64) []byte {
		return volume.EncodeBatchOf(volume.BatchOf{Base: base, TimestampMs: now.Add(-30 * time.Minute).UnixMilli(), ProducerID: pid, Transactional: true,
			Records: []volume.BatchRecord{{Value: []byte("pay-1")}, {Value: []byte("pay-2")}, {Value: []byte("pay-3")}}})
	}
	corrupt := plain(5, 2)
	corrupt[len(corrupt)-2] ^= 0x55
	v.segment(t, 0, plain(0, 5), txn(5, 4000), plain(8, 2))
	v.segment(t, 1, plain(0, 5), txn(5, 4001), plain(8, 2))
	v.segment(t, 2, plain(0, 5), txn(5, 4002), plain(8, 2))
	v.segment(t, 3, plain(0, 5), corrupt, plain(7, 3))
	v.segment(t, 4, plain(0, 5))
	offsets := v.l.LiveOffsetsDirOf(volume.Gen018)
	writeFile(t, v.l.ClusterDir, "assignment.json", whyAssignment)
	for g, p := range map[string]int{"g-reaped": 0, "g-marker": 1, "g-open": 2, "g-corrupt": 3} {
		writeFile(t, offsets, g+".json", fmt.Sprintf(`{"offsets":{"orders/%d":5}}`, p))
	}
	writeFile(t, offsets, "g-fine.json", `{"offsets":{"orders/4":5}}`)
	v.slot(t, "pay-reaped", `{"pid":4000,"epoch":1,"state":"CompleteAbort"}`)
	v.slot(t, "pay-marker", `{"pid":4001,"epoch":0,"state":"CompleteCommit"}`)
	v.slot(t, "pay-open", fmt.Sprintf(`{"pid":4002,"epoch":0,"state":"Ongoing","ongoingSinceMs":%d,"transactionTimeoutMs":60000,"partitions":[{"topic":"orders","partitions":[2]}],"groups":["g-open"]}`, now.Add(-10*time.Second).UnixMilli()))
	m := writeFile(t, filepath.Join(v.l.MarkerQueuePath(), "to-kaas-1"), "4001-0.json",
		`{"transactionalId":"pay-marker","producerId":4001,"producerEpoch":0,"commit":true,"coordinatorEpoch":3,"partitions":[{"topic":"orders","partitions":[1]}]}`)
	os.Chtimes(m, now.Add(-5*time.Minute), now.Add(-5*time.Minute))
	return v
}

// whyAssignment: two brokers, orders with five partitions.
const whyAssignment = `{"controllerEpoch":1,"assignmentVersion":3,"generatedAt":"2026-07-23T11:00:00Z","controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive","lastSeen":"2026-07-23T11:00:00Z"},{"id":"kaas-1","health":"alive","lastSeen":"2026-07-23T11:00:00Z"}],"partitions":[{"topic":"orders","partition":0,"broker":"kaas-0","epoch":1,"role":"leader"},{"topic":"orders","partition":1,"broker":"kaas-1","epoch":1,"role":"leader"}]}`

func (v *whyVolume) segment(t *testing.T, part int32, batches ...[]byte) {
	t.Helper()
	dir := v.l.PartitionDir("orders", part)
	os.MkdirAll(dir, 0o755)
	w, err := volume.CreateSegment(dir, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		w.AppendRaw(b)
	}
	w.Close()
}

// slot adds one entry to the slot file its id hashes to.
func (v *whyVolume) slot(t *testing.T, id, entry string) {
	t.Helper()
	p := filepath.Join(v.l.TxnStatePath(), grouphash.TxnSlotFile(id))
	all := map[string]json.RawMessage{}
	if b, err := os.ReadFile(p); err == nil {
		json.Unmarshal(b, &all)
	}
	all[id] = json.RawMessage(entry)
	b, _ := json.Marshal(all)
	writeFile(t, filepath.Dir(p), filepath.Base(p), string(b))
}

func (v *whyVolume) args(extra ...string) []string {
	return append([]string{"--data-dir", v.dir, "--kaas-version", "0.2.18", "--now", v.now.Format(time.RFC3339)}, extra...)
}

func TestGroupsWhyNamesEachBlocker(t *testing.T) {
	t.Parallel()
	v := plantWhyVolume(t)
	r := runCLI(t, "", nil, append([]string{"groups", "describe"}, v.args("--all", "--why", "-o", "json")...)...)
	if r.Code != 3 {
		t.Fatalf("exit %d (want 3: blocked partitions)\n%s\n%s", r.Code, r.Out, r.Err)
	}
	var doc views.GroupsWhyView
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, g := range doc.Groups {
		for _, b := range g.Blockers {
			got[g.Group] = b.Kind
		}
		if g.Group == "g-fine" && g.Lagging != 0 {
			t.Fatalf("g-fine lags: %+v", g)
		}
	}
	want := map[string]string{"g-reaped": "abortedWithoutMarkers", "g-marker": "markersPending", "g-open": "openTransaction", "g-corrupt": "corruptBatch"}
	for g, k := range want {
		if got[g] != k {
			t.Errorf("%s: blocker %q, want %q\n%s", g, got[g], k, r.Out)
		}
	}
	for _, g := range doc.Groups {
		if (g.Group == "g-open") != (len(g.PendingTxnOffsets) == 1) {
			t.Errorf("%s: pending transactional offsets %+v", g.Group, g.PendingTxnOffsets)
		}
	}
}

// whyDoc runs describe --why -o json for the groups and parses it.
func whyDoc(t *testing.T, v *whyVolume, extra ...string) views.GroupsWhyView {
	t.Helper()
	r := runCLI(t, "", nil, append([]string{"groups", "describe"}, v.args(append([]string{"--why", "-o", "json"}, extra...)...)...)...)
	var doc views.GroupsWhyView
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", r.Code, err, r.Out, r.Err)
	}
	return doc
}

// The printed fix, run as printed, unblocks the group and leaves every
// other offset file byte for byte as it was.
func TestGroupsWhyFixRunsAsPrinted(t *testing.T) {
	t.Parallel()
	for _, group := range []string{"g-reaped", "g-corrupt"} {
		v := plantWhyVolume(t)
		doc := whyDoc(t, v, group)
		fix := doc.Groups[0].Blockers[0].FixCommand
		if !strings.HasPrefix(fix, "kaasctl offsets reset ") || !strings.Contains(fix, "--topic orders:") {
			t.Fatalf("%s: fix %q", group, fix)
		}
		offsets := v.l.LiveOffsetsDirOf(volume.Gen018)
		before := map[string]string{}
		ents, _ := os.ReadDir(offsets)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(offsets, e.Name()))
			before[e.Name()] = string(b)
		}
		r := runCLI(t, "", nil, strings.Fields(fix)[1:]...)
		if r.Code != 0 {
			t.Fatalf("%s: %s exited %d\n%s\n%s", group, fix, r.Code, r.Out, r.Err)
		}
		after := whyDoc(t, v, group)
		if b := after.Groups[0].Blockers; len(b) != 1 || inspect.Blocking(b[0].Kind) || b[0].Committed <= doc.Groups[0].Blockers[0].Committed {
			t.Fatalf("%s after the fix: %+v", group, b)
		}
		for name, was := range before {
			b, _ := os.ReadFile(filepath.Join(offsets, name))
			if name != group+".json" && string(b) != was {
				t.Errorf("%s changed: %s -> %s", name, was, b)
			}
		}
	}
}

func TestTxnListHanging(t *testing.T) {
	t.Parallel()
	v := plantWhyVolume(t)
	r := runCLI(t, "", nil, append([]string{"txn", "list", "--hanging"}, v.args("-o", "json")...)...)
	var doc views.TxnListView
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil || r.Code != 0 {
		t.Fatalf("exit %d %v\n%s\n%s", r.Code, err, r.Out, r.Err)
	}
	if len(doc.Transactions) != 1 || doc.Transactions[0].ID != "pay-reaped" {
		t.Fatalf("hanging: %+v", doc.Transactions)
	}
	h := doc.Transactions[0].Holds
	if len(h) != 1 || h[0].Group != "g-reaped" || h[0].Topic != "orders" || h[0].Partition != 0 || h[0].Committed != 5 || h[0].Kind != inspect.BlockReapedNoMarkers {
		t.Fatalf("holds %+v", h)
	}
	r = runCLI(t, "", nil, append([]string{"txn", "describe", "pay-reaped"}, v.args()...)...)
	if !strings.Contains(r.Out, "holds back") || !strings.Contains(r.Out, "orders/0 (g-reaped at 5)") {
		t.Fatalf("describe:\n%s", r.Out)
	}
}
