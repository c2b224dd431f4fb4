package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/anomaly"
	"github.com/kaasctl/kaasctl/internal/volume"
)

var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func obs(group string, at time.Time, offs map[string]int64) anomaly.Observation {
	return anomaly.Observation{Time: at, Group: group, File: filepath.Join("/d", group+".json"), Format: volume.FormatEnvelope, Offsets: offs}
}

// step builds the event a follower would emit from prev to cur.
func step(prev *anomaly.Observation, cur anomaly.Observation) OffsetEvent {
	ev := OffsetEvent{Prev: prev, Cur: cur}
	var before map[string]int64
	if prev != nil {
		before = prev.Offsets
		ev.Anomalies = anomaly.Compare(*prev, cur, false)
	}
	ev.Changed, ev.Removed = OffsetDelta(before, cur.Offsets)
	return ev
}

func readAll(t *testing.T, dir string, opt JournalReadOptions) JournalRead {
	t.Helper()
	jr, err := ReadOffsetJournal(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	return jr
}

func TestOffsetJournalRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := &OffsetJournal{Dir: dir, OffsetsDir: "/d"}
	a0 := obs("app", t0, map[string]int64{"orders/0": 10, "orders/1": 20, "orders/2": 30})
	ev0 := step(nil, a0)
	ev0.Initial = true
	if err := j.Append([]OffsetEvent{ev0}); err != nil {
		t.Fatal(err)
	}
	a1 := obs("app", t0.Add(time.Second), map[string]int64{"orders/0": 11, "orders/1": 20, "orders/2": 30})
	a2 := obs("app", t0.Add(2*time.Second), map[string]int64{"orders/0": 11, "orders/1": 5, "orders/2": 30})
	a3 := obs("app", t0.Add(3*time.Second), map[string]int64{"orders/0": 12})
	for _, ev := range []OffsetEvent{step(&a0, a1), step(&a1, a2), step(&a2, a3)} {
		if err := j.Append([]OffsetEvent{ev}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	jr := readAll(t, dir, JournalReadOptions{Group: "app"})
	if len(jr.Warnings) > 0 {
		t.Fatalf("warnings %v", jr.Warnings)
	}
	pts := ReplayGroup(jr.Records, "app")
	if len(pts) != 4 {
		t.Fatalf("%d points: %+v", len(pts), pts)
	}
	if pts[2].Offsets["orders/1"] != 5 || len(pts[2].Anomalies) != 1 || pts[2].Anomalies[0].Kind != anomaly.Rewind {
		t.Errorf("rewind point %+v", pts[2])
	}
	if len(pts[3].Offsets) != 1 || len(pts[3].Removed) != 2 || len(pts[3].Anomalies) != 2 {
		t.Errorf("partial rewrite point %+v", pts[3])
	}
	if pts[1].File != "/d/app.json" {
		t.Errorf("file %q (from the segment header)", pts[1].File)
	}
	// Compact: a change record carries only what changed.
	data, _ := os.ReadFile(j.Segment())
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if !strings.Contains(lines[2], `"changed":{"orders/0":11}`) || strings.Contains(lines[2], "orders/1") || strings.Contains(lines[2], "app.json") {
		t.Errorf("the change record is not a delta: %s", lines[2])
	}
}

// A crash cuts the last write: the reader keeps everything before it and
// says which line it ignored; a bad line in the middle is skipped.
func TestOffsetJournalTornLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := &OffsetJournal{Dir: dir, OffsetsDir: "/d"}
	a0 := obs("app", t0, map[string]int64{"orders/0": 10})
	a1 := obs("app", t0.Add(time.Second), map[string]int64{"orders/0": 11})
	j.Append([]OffsetEvent{step(nil, a0)})
	j.Append([]OffsetEvent{step(&a0, a1)})
	j.Close()
	seg := j.Segment()
	data, _ := os.ReadFile(seg)
	torn := append(append([]byte{}, data...), `{"kind":"change","time":"2026-11-30T10:00:02Z","group":"app","chan`...)
	os.WriteFile(seg, torn, 0o644)
	jr := readAll(t, dir, JournalReadOptions{})
	pts := ReplayGroup(jr.Records, "app")
	// The torn write lost a change at an unknown time after 10:00:01: a
	// gap from there, which nothing after it closes yet.
	if len(pts) != 3 || pts[1].Offsets["orders/0"] != 11 || pts[1].Unsound || pts[2].Kind != RecGap || !pts[2].Unsound || !pts[2].Time.Equal(t0.Add(time.Second)) {
		t.Errorf("points %+v", pts)
	}
	if len(jr.Warnings) != 1 || !strings.Contains(jr.Warnings[0], "torn last line ignored") || !strings.Contains(jr.Warnings[0], seg+":4") {
		t.Errorf("warnings %v", jr.Warnings)
	}
	// A corrupt line in the middle (a disk error, an edit): skipped, named.
	mid := strings.Replace(string(data), `"changed"`, `"chan`, 1)
	os.WriteFile(seg, []byte(mid), 0o644)
	jr = readAll(t, dir, JournalReadOptions{})
	if len(jr.Warnings) != 1 || !strings.Contains(jr.Warnings[0], "unreadable record skipped") {
		t.Errorf("warnings %v", jr.Warnings)
	}
	// A writer that restarts after the crash starts a new segment, whose
	// snapshot carries the state on.
	j2 := &OffsetJournal{Dir: dir, OffsetsDir: "/d"}
	a2 := obs("app", t0.Add(5*time.Second), map[string]int64{"orders/0": 12})
	ev := step(nil, a2)
	ev.Initial = true
	if err := j2.Append([]OffsetEvent{ev}); err != nil {
		t.Fatal(err)
	}
	j2.Close()
	if j2.Segment() == seg {
		t.Error("the restarted writer appended to the torn segment")
	}
}

// Rotation by size keeps every segment readable on its own (header and
// snapshot), and retention removes whole old segments by size and by age.
func TestOffsetJournalRotationRetention(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := &OffsetJournal{Dir: dir, OffsetsDir: "/d", SegmentBytes: 2 << 10, MaxBytes: 8 << 10}
	prev := obs("app", t0, map[string]int64{"orders/0": 0, "orders/1": 0})
	ev := step(nil, prev)
	ev.Initial = true
	j.Append([]OffsetEvent{ev})
	for i := 1; i <= 400; i++ {
		cur := obs("app", t0.Add(time.Duration(i)*time.Second), map[string]int64{"orders/0": int64(i), "orders/1": 0})
		if err := j.Append([]OffsetEvent{step(&prev, cur)}); err != nil {
			t.Fatal(err)
		}
		prev = cur
	}
	j.Close()
	segs, _ := listSegments(dir)
	var total int64
	for _, s := range segs {
		total += s.size
	}
	if len(segs) < 3 || total > 8<<10+2<<10 {
		t.Errorf("%d segments, %d bytes (max 8 KiB + one segment)", len(segs), total)
	}
	for _, s := range segs[:len(segs)-1] {
		if !strings.HasSuffix(s.name, ".jsonl.gz") {
			t.Errorf("rotated segment %s not compressed", s.name)
		}
	}
	// The oldest kept segment starts with a snapshot: the state is known
	// from its first record.
	jr := readAll(t, dir, JournalReadOptions{Group: "app"})
	pts := ReplayGroup(jr.Records, "app")
	if pts[0].Kind != RecSnapshot || lastOf(pts).Offsets["orders/0"] != 400 {
		t.Errorf("first %+v last %+v", pts[0], lastOf(pts))
	}
	// Seeking: Since inside the last segment reads that segment only.
	last := segs[len(segs)-1]
	jr = readAll(t, dir, JournalReadOptions{Group: "app", Since: last.start.Add(time.Millisecond)})
	if len(jr.Segments) != 1 {
		t.Errorf("Since read %d segments", len(jr.Segments))
	}
	// Age: everything but the active segment is older than a minute.
	j2 := &OffsetJournal{Dir: dir, MaxAge: time.Minute}
	j2.name = last.name
	j2.Retain(t0.Add(time.Hour))
	segs, _ = listSegments(dir)
	if len(segs) != 1 || segs[0].name != last.name {
		t.Errorf("after age retention: %+v", segs)
	}
}

func lastOf(pts []HistoryPoint) HistoryPoint { return pts[len(pts)-1] }

// Compactness: a group of 6 partitions committing one moved partition at
// a time is recorded in well under the size of whole copies.
func TestOffsetJournalCompact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := &OffsetJournal{Dir: dir, OffsetsDir: "/d"}
	offs := map[string]int64{}
	for p := range 6 {
		offs[fmt.Sprintf("orders/%d", p)] = 0
	}
	prev := obs("orders-app", t0, offs)
	j.Append([]OffsetEvent{step(nil, prev)})
	copies := 0
	for i := 1; i <= 600; i++ {
		next := map[string]int64{}
		for k, v := range prev.Offsets {
			next[k] = v
		}
		next[fmt.Sprintf("orders/%d", i%6)] += 7 // one partition moves per commit
		cur := obs("orders-app", t0.Add(time.Duration(i)*time.Second), next)
		j.Append([]OffsetEvent{step(&prev, cur)})
		// What recording whole copies of the file would take per commit.
		whole, _ := json.Marshal(map[string]any{"time": cur.Time, "group": cur.Group, "offsets": next})
		copies += len(whole) + 1
		prev = cur
	}
	j.Close()
	st, _ := os.Stat(j.Segment())
	if st.Size()*10 > int64(copies)*6 {
		t.Errorf("journal %d bytes for 600 commits; whole copies would be %d", st.Size(), copies)
	}
}

func TestParseJournalRecord(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{``, `{}`, `{"kind":"change","group":"g"}`, `{"kind":"x","time":"2026-11-30T10:00:00Z","group":"g"}`,
		`{"kind":"change","time":"2026-11-30T10:00:00Z"}`, `{"kind":"change","time":"2026-11-30T10:00:00Z","group":"g","changed":{"nokey":1}}`,
		`{"kind":"segment","time":"2026-11-30T10:00:00Z","version":99}`, `{"kind":"change","time":"2026-11-30T10:00:00Z","group":"g"} {}`} {
		if _, err := ParseJournalRecord([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	r, err := ParseJournalRecord([]byte(`{"kind":"change","time":"2026-11-30T10:00:00.5Z","group":"g","changed":{"a/b/0":3},"removed":["x/1"]}`))
	if err != nil || r.Changed["a/b/0"] != 3 || r.Removed[0] != "x/1" {
		t.Errorf("%+v %v", r, err)
	}
}

// The follower on a real directory: every kind of change, as kaas makes
// them (tmp + rename), and as a broken writer makes them.
func TestFollowOffsets(t *testing.T) {
	t.Parallel()
	for _, pollOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("pollOnly=%v", pollOnly), func(t *testing.T) { followOffsets(t, pollOnly) })
	}
}

func followOffsets(t *testing.T, pollOnly bool) {
	dir := t.TempDir()
	put := func(name, content string) {
		tmp := filepath.Join(dir, name+".tmp")
		os.WriteFile(tmp, []byte(content), 0o644)
		os.Rename(tmp, filepath.Join(dir, name))
	}
	put("app.json", `{"offsets":{"orders/0":10,"orders/1":20}}`)
	put("app.json.kaasctl-bak-20261130T100000.000000000Z", `{"offsets":{}}`)
	var mu sync.Mutex
	var got []OffsetEvent
	seen := make(chan struct{}, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- FollowOffsets(ctx, OffsetsOptions{Dir: dir, PollInterval: 20 * time.Millisecond, FullReadEvery: 3, PollOnly: pollOnly,
			Generation: volume.Gen018,
			OnEvents: func(evs []OffsetEvent) {
				mu.Lock()
				got = append(got, evs...)
				mu.Unlock()
				seen <- struct{}{}
			}})
	}()
	wait := func(n int) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			mu.Lock()
			l := len(got)
			mu.Unlock()
			if l >= n {
				return
			}
			select {
			case <-seen:
			case <-deadline:
				t.Fatalf("saw %d events, want %d", l, n)
			}
		}
	}
	wait(1)
	put("app.json", `{"offsets":{"orders/0":11,"orders/1":20}}`)
	wait(2)
	put("app.json", `{"offsets":{"orders/0":11,"orders/1":3}}`)
	wait(3)
	put("app.json", `{"orders/0":12,"orders/1":3}`) // a plain map: read as empty on 0.2.18
	wait(4)
	put("app.json", `{"offsets":{"orders/0":`) // torn
	wait(5)
	put("app.json", `{"offsets":{"orders/0":13}}`)
	wait(6)
	os.Remove(filepath.Join(dir, "app.json"))
	wait(7)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range got {
		var ks []string
		for _, a := range ev.Anomalies {
			ks = append(ks, a.Kind)
		}
		kinds = append(kinds, strings.Join(ks, "+"))
	}
	want := []string{"", "", "REWIND", "PLAIN_MAP", "CORRUPT", "VANISHED", "VANISHED"}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Errorf("anomalies %q, want %q", kinds, want)
	}
	if !got[0].Initial || got[0].Cur.Group != "app" || len(got) != 7 {
		t.Errorf("first %+v (%d events; the backup must not be followed)", got[0], len(got))
	}
	if got[1].Changed["orders/0"] != 11 || len(got[1].Changed) != 1 {
		t.Errorf("delta %v", got[1].Changed)
	}
	// After the torn write, the next good one is compared with the last
	// good offsets: orders/1 vanished.
	if got[5].Prev == nil || got[5].Prev.Offsets["orders/1"] != 3 || got[5].Removed[0] != "orders/1" {
		t.Errorf("after corrupt: %+v", got[5])
	}
	if !got[6].Cur.Missing {
		t.Errorf("removal %+v", got[6])
	}
}

// A follower seeded with an earlier run's state reports only what changed
// since, with the anomalies; the journal resumed from it starts its
// segment with every group.
func TestFollowOffsetsSeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "same.json"), []byte(`{"offsets":{"orders/0":7}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "app.json"), []byte(`{"offsets":{"orders/0":3}}`), 0o644)
	seed := []anomaly.Observation{
		{Time: t0, Group: "same", File: filepath.Join(dir, "same.json"), Format: volume.FormatEnvelope, Offsets: map[string]int64{"orders/0": 7}},
		{Time: t0, Group: "app", File: filepath.Join(dir, "app.json"), Format: volume.FormatEnvelope, Offsets: map[string]int64{"orders/0": 9}},
	}
	var got []OffsetEvent
	ctx, cancel := context.WithCancel(context.Background())
	err := FollowOffsets(ctx, OffsetsOptions{Dir: dir, PollOnly: true, Seed: seed,
		OnEvents: func(evs []OffsetEvent) { got = append(got, evs...) }, OnReady: cancel})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Cur.Group != "app" || got[0].Prev == nil || len(got[0].Anomalies) != 1 || got[0].Anomalies[0].Kind != anomaly.Rewind {
		t.Fatalf("%+v", got)
	}
	jd := t.TempDir()
	j := &OffsetJournal{Dir: jd, OffsetsDir: dir}
	j.Resume(seed)
	if err := j.Append(got); err != nil {
		t.Fatal(err)
	}
	j.Close()
	state, _, err := LastJournalState(jd)
	if err != nil || len(state) != 2 {
		t.Fatalf("%+v %v", state, err)
	}
	for _, o := range state {
		if o.Group == "app" && o.Offsets["orders/0"] != 3 || o.Group == "same" && o.Offsets["orders/0"] != 7 {
			t.Errorf("%+v", o)
		}
	}
}
