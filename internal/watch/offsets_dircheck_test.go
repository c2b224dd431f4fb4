package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/anomaly"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// testFollower is a follower driven by hand: each scan is one poll.
func testFollower(dir string, settle time.Duration) (*offsetFollower, *[]OffsetEvent, *[]string) {
	var evs []OffsetEvent
	var notes []string
	opt := OffsetsOptions{Dir: dir, Generation: volume.Gen018, Now: time.Now,
		OnEvents: func(e []OffsetEvent) { evs = append(evs, e...) },
		OnNote:   func(m string) { notes = append(notes, m) }}
	f := &offsetFollower{opt: opt, files: map[string]*followed{}, dirSettle: settle}
	return f, &evs, &notes
}

func renameInto(t *testing.T, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func kindsOf(evs []OffsetEvent) []string {
	var out []string
	for _, ev := range evs {
		for _, a := range ev.Anomalies {
			out = append(out, a.Group+":"+a.Kind)
		}
	}
	return out
}

// A poll skips the per-file pass while the directory's stat is settled and
// unchanged; kaas's tmp+rename commits change it, so they are seen at the
// next poll; a write in place is left to the full pass, which turns the
// check off once it finds such a hidden change.
func TestFollowOffsetsDirCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	renameInto(t, dir, "app.json", `{"offsets":{"orders/0":10,"orders/1":20}}`)
	f, evs, notes := testFollower(dir, 0)
	f.scan(false, true)
	if len(*evs) != 1 || !(*evs)[0].Initial {
		t.Fatalf("first scan: %+v", *evs)
	}
	f.scan(false, false) // settles the directory's stat (dirSettle 0): one more per-file pass
	if !f.dirSettled {
		t.Fatal("the directory's stat did not settle")
	}
	f.scan(false, false)
	if f.lastSkip.IsZero() {
		t.Fatal("an unchanged, settled directory did not skip the per-file pass")
	}

	// A commit as kaas makes it (tmp + rename) changes the directory.
	renameInto(t, dir, "app.json", `{"offsets":{"orders/0":11,"orders/1":20}}`)
	f.scan(false, false)
	if len(*evs) != 2 || (*evs)[1].Changed["orders/0"] != 11 {
		t.Fatalf("rename not seen at the next poll: %+v", *evs)
	}
	f.scan(false, false) // settle again
	f.scan(false, false) // skip

	// A write in place (no rename) does not change the directory: the
	// polls skip it, the full pass finds it, and the check goes off.
	if err := os.WriteFile(filepath.Join(dir, "app.json"), []byte(`{"offsets":{"orders/0":2,"orders/1":20}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f.scan(false, false)
	if len(*evs) != 2 {
		t.Fatalf("an in-place write was seen by a skipped poll: %+v", *evs)
	}
	f.scan(true, false)
	if got := kindsOf((*evs)[2:]); len(got) != 1 || got[0] != "app:"+anomaly.Rewind {
		t.Fatalf("full pass: %v", got)
	}
	if !f.dirOff || len(*notes) != 1 {
		t.Fatalf("the check stayed on after a hidden change (notes %q)", *notes)
	}
	// From now on every poll checks every file.
	if err := os.WriteFile(filepath.Join(dir, "app.json"), []byte(`{"offsets":{"orders/0":3,"orders/1":20}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f.scan(false, false)
	if len(*evs) != 4 {
		t.Fatalf("in-place write after the check went off: %+v", *evs)
	}
}

// The directory's stat is trusted only after it stayed the same for
// dirSettle: a change within the same (coarse) mtime tick as the previous
// one is still found by the per-file pass.
func TestFollowOffsetsDirSettle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	renameInto(t, dir, "app.json", `{"offsets":{"orders/0":10}}`)
	f, evs, _ := testFollower(dir, time.Hour)
	f.scan(false, true)
	for i := 0; i < 3; i++ {
		f.scan(false, false)
	}
	if f.dirSettled || !f.lastSkip.IsZero() {
		t.Fatal("the directory's stat was trusted before dirSettle")
	}
	if err := os.WriteFile(filepath.Join(dir, "app.json"), []byte(`{"offsets":{"orders/0":4}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f.scan(false, false)
	if got := kindsOf(*evs); len(got) != 1 || got[0] != "app:"+anomaly.Rewind {
		t.Fatalf("unsettled directory: %v", got)
	}
}

// BenchmarkOffsetsPoll is one poll of the offsets follower over 100,000
// unchanged offset files: "per-file" lists the directory and stats every
// file (the follower before the directory check), "dir-check" stats the
// directory once.
func BenchmarkOffsetsPoll(b *testing.B) {
	const files = 100_000
	dir := b.TempDir()
	for i := 0; i < files; i++ {
		name := filepath.Join(dir, fmt.Sprintf("group-%06d.json", i))
		if err := os.WriteFile(name, []byte(`{"offsets":{"orders/0":10,"orders/1":20}}`), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []struct {
		name  string
		check bool
	}{{"per-file", false}, {"dir-check", true}} {
		b.Run(mode.name, func(b *testing.B) {
			f, evs, _ := testFollower(dir, 0)
			f.opt.noDirCheck = !mode.check
			f.scan(false, true)
			if len(*evs) != files {
				b.Fatalf("first scan: %d events", len(*evs))
			}
			f.scan(false, false) // settles the directory's stat
			*evs = nil
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.scan(false, false)
			}
			b.StopTimer()
			if len(*evs) != 0 {
				b.Fatalf("%d events from unchanged files", len(*evs))
			}
			if mode.check && f.lastSkip.IsZero() {
				b.Fatal("the directory check did not skip")
			}
		})
	}
}
