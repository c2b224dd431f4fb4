package commands

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

// writeTestJournal records a group through the journal writer: progress,
// a rewind of orders/1, then a partial rewrite that drops it.
func writeTestJournal(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	j := &watch.OffsetJournal{Dir: filepath.Join(root, watch.OffsetJournalSubdir), OffsetsDir: "/data/__cluster/__consumer_offsets"}
	base := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	states := []map[string]int64{
		{"orders/0": 10, "orders/1": 10, "orders/2": 10},
		{"orders/0": 20, "orders/1": 20, "orders/2": 20},
		{"orders/0": 30, "orders/1": 30, "orders/2": 30},
		{"orders/0": 30, "orders/1": 4, "orders/2": 30},
		{"orders/0": 35, "orders/1": 8, "orders/2": 36},
		{"orders/0": 40},
	}
	var prev *inspect.OffsetObservation
	for i, st := range states {
		cur := inspect.OffsetObservation{Time: base.Add(time.Duration(i) * time.Minute), Group: "app", File: "/data/__cluster/__consumer_offsets/app.json", Format: volume.FormatEnvelope, Offsets: st}
		ev := watch.OffsetEvent{Prev: prev, Cur: cur, Initial: prev == nil}
		var before map[string]int64
		if prev != nil {
			before = prev.Offsets
			ev.Anomalies = inspect.CompareOffsetObservations(*prev, cur, false)
		}
		ev.Changed, ev.Removed = watch.OffsetDelta(before, st)
		if err := j.Append([]watch.OffsetEvent{ev}); err != nil {
			t.Fatal(err)
		}
		prev = &cur
	}
	j.Close()
	return root
}

func TestOffsetsHistoryTable(t *testing.T) {
	t.Parallel()
	journal := writeTestJournal(t)
	r := runCLI(t, "", nil, "offsets", "history", "app", "--journal", journal, "--timeline")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	golden(t, "offsets-history.txt", strings.ReplaceAll(r.Out, journal, "JOURNAL"))

	r = runCLI(t, "", nil, "offsets", "history", "app", "--journal", journal, "--since", "2026-11-30T10:03:30Z", "-o", "json")
	var v inspect.OffsetHistoryView
	if err := json.Unmarshal([]byte(r.Out), &v); err != nil || r.Code != 0 {
		t.Fatalf("%v %d %s", err, r.Code, r.Err)
	}
	// The state at --since is carried in (the 10:03 point, without its
	// REWIND), then the two later points.
	if len(v.Points) != 3 || len(v.Anomalies) != 2 || v.Anomalies[0].Kind != inspect.AnomalyVanished {
		t.Errorf("since: %d points %+v", len(v.Points), v.Anomalies)
	}
	r = runCLI(t, "", nil, "offsets", "history", "app", "--journal", journal, "--partition", "orders:1", "-o", "jsonl")
	lines := strings.Split(strings.TrimSpace(r.Out), "\n")
	if len(lines) != 6 || strings.Contains(r.Out, `"partition":0`) {
		t.Errorf("jsonl --partition orders:1:\n%s", r.Out)
	}
	var row inspect.HistoryRow
	if err := json.Unmarshal([]byte(lines[5]), &row); err != nil || row.Anomaly != "VANISHED" || row.Offset != nil || *row.Previous != 8 {
		t.Errorf("last row %+v %v", row, err)
	}
}

func TestOffsetsHistoryUsage(t *testing.T) {
	t.Parallel()
	journal := writeTestJournal(t)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"offsets", "history"}, 2, "one GROUP"},
		{[]string{"offsets", "history", "app"}, 2, "--journal"},
		{[]string{"offsets", "history", "app", "--journal", journal, "--since", "yesterday"}, 2, "--since"},
		{[]string{"offsets", "history", "app", "--journal", journal, "--since", "2026-11-30T11:00:00Z", "--until", "2026-11-30T10:00:00Z"}, 2, "before --since"},
		{[]string{"offsets", "history", "app", "--journal", t.TempDir()}, 1, "no offsets journal segments"},
		{[]string{"offsets", "history", "app", "--journal", journal, "--partition", "bad topic"}, 2, "--partition"},
	} {
		r := runCLI(t, "", nil, tc.args...)
		if r.Code != tc.code || !strings.Contains(r.Err, tc.msg) {
			t.Errorf("%v: exit %d %q (want %d, %q)", tc.args, r.Code, r.Err, tc.code, tc.msg)
		}
	}
	// A group the journal does not know: an empty history, said so.
	r := runCLI(t, "", nil, "offsets", "history", "other", "--journal", journal, "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Err, "no history") || !strings.Contains(r.Out, `"points": []`) {
		t.Errorf("unknown group: %d %s %s", r.Code, r.Err, r.Out)
	}
}

func TestSparkline(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	v := func(n int64) *int64 { return &n }
	times := []time.Time{t0, t0.Add(time.Minute), t0.Add(2 * time.Minute), t0.Add(3 * time.Minute)}
	got := render.Sparkline(times, []*int64{v(0), v(50), v(100), nil}, []bool{false, false, false, true}, t0, t0.Add(3*time.Minute), 4)
	if got != "▁▄█!" {
		t.Errorf("%q", got)
	}
	got = render.Sparkline(times[:3], []*int64{v(5), nil, v(5)}, []bool{false, false, false}, t0, t0.Add(4*time.Minute), 5)
	if []rune(got)[0] != '█' || !strings.ContainsRune(got, '·') {
		t.Errorf("%q", got)
	}
	// On a terminal the table has the PROGRESS column.
	var b strings.Builder
	p := &render.Printer{Out: &b, TTY: true}
	hv := &inspect.OffsetHistoryView{Group: "g", Partitions: []inspect.HistoryPartition{{Topic: "t", Partition: 0, Spark: "▁▄█"}}}
	views.WriteHistoryHuman(p, hv, false, "")
	if !strings.Contains(b.String(), "PROGRESS") || !strings.Contains(b.String(), "▁▄█") {
		t.Errorf("%s", b.String())
	}
}

// An offline reset undone from kaasctl's backup alone: --to-history at a
// moment before the reset restores what the group had then; at a moment
// after it, what the reset wrote (the backup is the state before the
// rewrite, not after it).
func TestRestoreFromBackupsAroundAReset(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	before := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	r := runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-offset", "40", "--execute")
	if r.Code != 0 {
		t.Fatalf("reset: exit %d %s", r.Code, r.Err)
	}
	after := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	plan := func(at string) string {
		t.Helper()
		r := runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--to-history", at, "--export")
		if r.Code != 0 {
			t.Fatalf("--to-history %s: exit %d %s", at, r.Code, r.Err)
		}
		return strings.TrimSpace(r.Out)
	}
	if got := plan(before); got != "orders,0,5" {
		t.Errorf("before the reset: plan %q, want orders,0,5\n", got)
	}
	if got := plan(after); got != "orders,0,40" {
		t.Errorf("after the reset: plan %q, want orders,0,40 (what the reset wrote)", got)
	}
	r = runCLI(t, "", nil, "offsets", "history", "g", "--data-dir", data, "-o", "json")
	var v struct {
		Partitions []struct {
			First, Last int64
		}
	}
	if err := json.Unmarshal([]byte(r.Out), &v); err != nil || len(v.Partitions) != 1 || v.Partitions[0].First != 5 || v.Partitions[0].Last != 40 {
		t.Errorf("history: %v %s", err, r.Out)
	}
	_ = cd
}

// A chain of offline rewinds seen from kaasctl's backups alone: each
// rewrite is a REWIND in the history (as the journal would mark it), and
// the restore before the incident goes back to the state before the first.
func TestOffsetsHistoryBackupsMarkAnomalies(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	for i := 0; i < 2; i++ { // 5 -> 4 -> 3 (the log starts at 3)
		r := runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--shift-by", "-1", "--execute")
		if r.Code != 0 {
			t.Fatalf("reset %d: exit %d %s", i, r.Code, r.Err)
		}
	}
	r := runCLI(t, "", nil, "offsets", "history", "g", "--data-dir", data, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("history: exit %d %s", r.Code, r.Err)
	}
	var v inspect.OffsetHistoryView
	if err := json.Unmarshal([]byte(r.Out), &v); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range v.Anomalies {
		got = append(got, a.Kind+":"+a.Partition+":"+strconv.FormatInt(a.Before, 10)+">"+strconv.FormatInt(a.After, 10))
	}
	if want := "REWIND:orders/0:5>4,REWIND:orders/0:4>3"; strings.Join(got, ",") != want {
		t.Errorf("anomalies from backups %v, want %s\n%s", got, want, r.Out)
	}
	if len(v.Partitions) != 1 || v.Partitions[0].Anomalies != 2 {
		t.Errorf("partitions %+v", v.Partitions)
	}
	r = runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--to-history-before-anomaly", "--export")
	if r.Code != 0 || strings.TrimSpace(r.Out) != "orders,0,5" {
		t.Errorf("restore before the incident: exit %d plan %q %s", r.Code, r.Out, r.Err)
	}
}

// --timeline keeps its columns aligned whatever the kinds (before-rewrite
// is wider than snapshot or change).
func TestOffsetsHistoryTimelineAligned(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	for i := 0; i < 2; i++ {
		if r := runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--shift-by", "-1", "--execute"); r.Code != 0 {
			t.Fatalf("reset: exit %d %s", r.Code, r.Err)
		}
	}
	r := runCLI(t, "", nil, "offsets", "history", "g", "--data-dir", data, "--timeline")
	_, tl, ok := strings.Cut(r.Out, "timeline\n")
	if r.Code != 0 || !ok {
		t.Fatalf("exit %d\n%s%s", r.Code, r.Out, r.Err)
	}
	col := -1
	lines := strings.Split(strings.TrimRight(tl, "\n"), "\n")
	for _, l := range lines {
		i := strings.Index(l, " partition (")
		if i < 0 {
			t.Fatalf("timeline line %q", l)
		}
		i = strings.LastIndex(l[:i], " ") // the start of the count
		if col >= 0 && i != col {
			t.Errorf("timeline columns misaligned:\n%s", tl)
			break
		}
		col = i
	}
	if len(lines) != 3 || !strings.Contains(lines[0], "before-rewrite") {
		t.Errorf("timeline:\n%s", tl)
	}
}

// A record in the middle of a journal segment that cannot be read: the
// state rebuilt after it would be wrong (records are deltas), so a restore
// to a moment between it and the next full snapshot is refused, naming the
// gap and the nearest sound moments, and writes nothing; restores before
// the gap and from the snapshot after it go ahead; history shows the gap.
func TestRestoreRefusedAcrossAJournalGap(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	writeFile(t, data, "orders/1/manifest.json", `{"epoch":1,"highWatermark":50,"logStartOffset":0}`)
	writePartitionLog(t, data, "orders/1", 0, 50)
	offsetsDir := filepath.Join(cd, "__consumer_offsets")
	root := t.TempDir()
	j := &watch.OffsetJournal{Dir: filepath.Join(root, watch.OffsetJournalSubdir), OffsetsDir: offsetsDir, SegmentAge: 3*time.Minute + 30*time.Second}
	base := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	states := []map[string]int64{
		{"orders/0": 10, "orders/1": 10},
		{"orders/0": 20, "orders/1": 10},
		{"orders/0": 30, "orders/1": 10}, // damaged below
		{"orders/0": 30, "orders/1": 15},
		{"orders/0": 40, "orders/1": 15}, // a new segment: a full snapshot first
	}
	var prev *inspect.OffsetObservation
	for i, st := range states {
		cur := inspect.OffsetObservation{Time: base.Add(time.Duration(i) * time.Minute), Group: "g", File: filepath.Join(offsetsDir, "g.json"), Format: volume.FormatEnvelope, Offsets: st}
		ev := watch.OffsetEvent{Prev: prev, Cur: cur, Initial: prev == nil}
		var before map[string]int64
		if prev != nil {
			before = prev.Offsets
		}
		ev.Changed, ev.Removed = watch.OffsetDelta(before, st)
		if err := j.Append([]watch.OffsetEvent{ev}); err != nil {
			t.Fatal(err)
		}
		prev = &cur
	}
	j.Close()
	segs, _ := filepath.Glob(filepath.Join(root, watch.OffsetJournalSubdir, "offsets-*"))
	if len(segs) != 2 {
		t.Fatalf("want two segments: %v", segs)
	}
	// The rotated segment is gzipped: damage a record inside it.
	zr, err := gzip.NewReader(bytes.NewReader(must(os.ReadFile(segs[0]))))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(zr)
	os.Remove(segs[0])
	lines := strings.Split(string(raw), "\n")
	damaged := 0
	for i, l := range lines {
		if strings.Contains(l, `"orders/0":30`) {
			lines[i], damaged = strings.Replace(l, `"changed"`, `"chan`, 1), i+1
		}
	}
	if damaged == 0 {
		t.Fatalf("no record to damage in:\n%s", raw)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte(strings.Join(lines, "\n")))
	zw.Close()
	os.WriteFile(segs[0], zb.Bytes(), 0o644)
	fileBefore, _ := os.ReadFile(filepath.Join(offsetsDir, "g.json"))

	reset := func(at string, extra ...string) cliResult {
		return runCLI(t, "", nil, append([]string{"offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--journal", root, "--to-history", at}, extra...)...)
	}
	r := reset("2026-11-30T10:03:30Z", "--execute")
	for _, want := range []string{"gap from 2026-11-30T10:01:00Z", segs[0] + ":" + strconv.Itoa(damaged), "2026-11-30T10:00:00Z (the last sound state before the gap)", "2026-11-30T10:04:00Z (the first full snapshot after it)"} {
		if !strings.Contains(r.Err, want) {
			t.Errorf("restore across the gap: exit %d, stderr lacks %q:\n%s", r.Code, want, r.Err)
		}
	}
	if r.Code != 4 {
		t.Errorf("restore across the gap: exit %d, want 4 (refused)\n%s", r.Code, r.Out)
	}
	if now, _ := os.ReadFile(filepath.Join(offsetsDir, "g.json")); string(now) != string(fileBefore) {
		t.Errorf("the refused restore wrote %s", now)
	}
	for at, want := range map[string]string{
		"2026-11-30T10:00:30Z": "orders,0,10\norders,1,10",
		"2026-11-30T10:04:00Z": "orders,0,40\norders,1,15",
		"2026-11-30T10:05:00Z": "orders,0,40\norders,1,15",
	} {
		if r := reset(at, "--export"); r.Code != 0 || strings.TrimSpace(r.Out) != want {
			t.Errorf("--to-history %s: exit %d, plan %q, want %q\n%s", at, r.Code, r.Out, want, r.Err)
		}
	}
	r = runCLI(t, "", nil, "offsets", "history", "g", "--journal", root, "-o", "json")
	var v inspect.OffsetHistoryView
	if err := json.Unmarshal([]byte(r.Out), &v); err != nil || len(v.Gaps) != 1 {
		t.Fatalf("history: %v %s", err, r.Out)
	}
	if gp := v.Gaps[0]; !gp.Time.Equal(base.Add(time.Minute)) || gp.Until == nil || !gp.Until.Equal(base.Add(4*time.Minute)) || !strings.Contains(gp.Problem, "unreadable record") {
		t.Errorf("gap %+v", gp)
	}
	r = runCLI(t, "", nil, "offsets", "history", "g", "--journal", root)
	if !strings.Contains(r.Out, "1 gap in the journal") || !strings.Contains(r.Out, "until the full snapshot at 2026-11-30T10:04:00") {
		t.Errorf("history table does not show the gap:\n%s", r.Out)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
