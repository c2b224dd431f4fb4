package watch

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// flakyFile is a segment on a disk that fills up: the writes listed in
// failWrites (counted from 1 over the writer's life) write half their
// bytes and fail with ENOSPC; failTruncate makes taking them back fail too.
type flakyFile struct {
	*os.File
	n            *int
	failWrites   map[int]bool
	failTruncate bool
}

func (f *flakyFile) Write(b []byte) (int, error) {
	*f.n++
	if f.failWrites[*f.n] {
		n, _ := f.File.Write(b[:len(b)/2])
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.Write(b)
}

func (f *flakyFile) Truncate(size int64) error {
	if f.failTruncate {
		return &os.PathError{Op: "truncate", Path: f.Name(), Err: syscall.EIO}
	}
	return f.File.Truncate(size)
}

// checkWholeLines asserts every line of every plain segment in dir is a
// complete record, and returns the records.
func checkWholeLines(t *testing.T, dir string, allowTorn bool) {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, "offsets-*.jsonl"))
	for _, s := range segs {
		f, err := os.Open(s)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(s)
		if len(data) > 0 && data[len(data)-1] != '\n' && !allowTorn {
			t.Errorf("%s ends in a partial line: %q", s, data[max(0, len(data)-40):])
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			if _, err := ParseJournalRecord(sc.Bytes()); err != nil && !(allowTorn && n > 1 && !strings.HasSuffix(string(data), "\n")) {
				t.Errorf("%s:%d: %v: %s", s, n, err, sc.Text())
			}
		}
		f.Close()
	}
}

// After a write that fails with ENOSPC, the journal is cut back to its last
// complete record, and the first write that succeeds records the gap and a
// snapshot of every group, so the history is sound again from there; the
// changes made meanwhile are not appended to a partial line.
func TestOffsetJournalAfterAFullDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		failTruncate bool
	}{{"truncated back", false}, {"truncate fails too: a new segment", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writes := 0
			j := &OffsetJournal{Dir: dir, OffsetsDir: "/d"}
			j.openFile = func(path string) (segmentFile, error) {
				f, err := openSegmentFile(path)
				if err != nil {
					return nil, err
				}
				return &flakyFile{File: f.(*os.File), n: &writes, failWrites: map[int]bool{3: true, 4: true}, failTruncate: tc.failTruncate}, nil
			}
			a0 := obs("app", t0, map[string]int64{"orders/0": 10, "orders/1": 10})
			b0 := obs("billing", t0, map[string]int64{"pay/0": 1})
			a1 := obs("app", t0.Add(time.Minute), map[string]int64{"orders/0": 20, "orders/1": 10})
			a2 := obs("app", t0.Add(2*time.Minute), map[string]int64{"orders/0": 30, "orders/1": 10}) // lost
			b1 := obs("billing", t0.Add(3*time.Minute), map[string]int64{"pay/0": 2})                 // lost
			a3 := obs("app", t0.Add(4*time.Minute), map[string]int64{"orders/0": 30, "orders/1": 15})
			if err := j.Append([]OffsetEvent{step(nil, a0), step(nil, b0)}); err != nil {
				t.Fatal(err)
			}
			if err := j.Append([]OffsetEvent{step(&a0, a1)}); err != nil {
				t.Fatal(err)
			}
			err := j.Append([]OffsetEvent{step(&a1, a2)})
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("full disk: %v", err)
			}
			if err := j.Append([]OffsetEvent{step(&b0, b1)}); !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("still full: %v", err)
			}
			checkWholeLines(t, dir, tc.failTruncate)
			// Space is back.
			if err := j.Append([]OffsetEvent{step(&a2, a3)}); err != nil {
				t.Fatal(err)
			}
			j.Close()
			checkWholeLines(t, dir, tc.failTruncate)

			jr := readAll(t, dir, JournalReadOptions{})
			var gaps []JournalRecord
			for _, r := range jr.Records {
				if r.Kind == RecGap && r.Since != nil && strings.Contains(r.Problem, "not recorded") {
					gaps = append(gaps, r)
				}
			}
			if len(gaps) != 1 || !gaps[0].Since.Equal(a2.Time) || !gaps[0].Time.Equal(a3.Time) || !strings.Contains(gaps[0].Problem, "2 changes") || !strings.Contains(gaps[0].Problem, "no space left") {
				t.Fatalf("gap records %+v", gaps)
			}
			// app: sound up to a1; a gap from a2; sound again from the
			// snapshot written with a3, which holds what was observed.
			pts := ReplayGroup(jr.Records, "app")
			last := pts[len(pts)-1]
			if last.Unsound || last.Offsets["orders/0"] != 30 || last.Offsets["orders/1"] != 15 {
				t.Errorf("app after the gap: %+v", last)
			}
			var sawGap, sawSnapshotAfter bool
			for _, p := range pts {
				switch {
				case p.Kind == RecGap && p.Time.Equal(a2.Time):
					sawGap = true
				case sawGap && p.Kind == RecSnapshot && !p.Unsound && p.Offsets["orders/0"] == 30:
					sawSnapshotAfter = true
				case !sawGap && p.Unsound && p.Kind != RecGap: // a torn line left behind is a gap of its own
					t.Errorf("unsound before the gap: %+v", p)
				}
			}
			if !sawGap || !sawSnapshotAfter {
				t.Errorf("app points %+v", pts)
			}
			bp := ReplayGroup(jr.Records, "billing")
			if bl := bp[len(bp)-1]; bl.Unsound || bl.Offsets["pay/0"] != 2 {
				t.Errorf("billing after the gap (its lost change is in the snapshot): %+v", bp)
			}
			segs, _ := filepath.Glob(filepath.Join(dir, "offsets-*"))
			if want := map[bool]int{false: 1, true: 2}[tc.failTruncate]; len(segs) != want {
				t.Errorf("%d segments, want %d: %v", len(segs), want, segs)
			}
		})
	}
}
