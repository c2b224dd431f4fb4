package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// Many file names kaas cannot use in one directory are one finding with a
// count and a few examples, not one each (100,000 of them made 18 MB).
func TestManyUnparsableNamesAggregate(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	for i := range 500 {
		writeFile(t, data, fmt.Sprintf("orders/0/junk-%03d.log", i), "x")
		writeFile(t, cd, fmt.Sprintf("__consumer_offsets/notes-%03d.txt", i), "x")
	}
	r := runCLI(t, "", nil, "volume", "check", "--data-dir", data, "-o", "json")
	rep := mustJSON[inspect.CheckReport](t, r.Out)
	count := map[string]int{}
	msg := map[string]string{}
	for _, f := range rep.Findings {
		count[f.Code]++
		msg[f.Code] = f.Message
	}
	for _, code := range []string{volume.CodeSegmentUnparsable, volume.CodeUnknownFile} {
		if count[code] != 1 || !strings.Contains(msg[code], "500") || !strings.Contains(msg[code], "-000.") {
			t.Errorf("%s: %d findings, message %q", code, count[code], msg[code])
		}
	}
	if len(r.Out) > 64<<10 {
		t.Errorf("volume check wrote %d bytes for 1,000 odd names", len(r.Out))
	}
}

// A file modified in the future (a clock ahead, a copy that kept its
// times) reads as "in the future", never as "0s old": volume check names
// the offset file and the temp file.
func TestFutureModTimeIsNamed(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	future := time.Now().Add(90 * 24 * time.Hour)
	gp := filepath.Join(cd, "__consumer_offsets", "g.json")
	tmp := writeFile(t, cd, "__consumer_offsets/g.json.123.tmp", `{"offsets":{}}`)
	for _, p := range []string{gp, tmp} {
		os.Chtimes(p, future, future)
	}
	r := runCLI(t, "", nil, "volume", "check", "--data-dir", data, "-o", "json")
	rep := mustJSON[inspect.CheckReport](t, r.Out)
	named := map[string]bool{}
	for _, f := range rep.Findings {
		if strings.Contains(f.Message, "0s old") || strings.Contains(f.Message, "0s ago") {
			t.Errorf("%s: %s", f.Path, f.Message)
		}
		if strings.Contains(f.Message, "in the future") {
			named[f.Path] = true
		}
	}
	if !named[gp] || !named[tmp] {
		t.Errorf("not named as in the future: %v (findings %v)", named, findingCodes(rep))
	}
}

// A backup named for a time in the future is no point in history (the
// history warns about it) and goes first when backups are pruned: the
// backup a write just made is never the one removed.
func TestFutureNamedBackup(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	od := filepath.Join(cd, "__consumer_offsets")
	future := writeFile(t, od, "g.json.kaasctl-bak-20991231T000000.000000000Z", `{"offsets":{"orders/0":1}}`)
	r := runCLI(t, "", nil, "offsets", "history", "g", "--data-dir", data, "-o", "json")
	v := mustJSON[inspect.OffsetHistoryView](t, r.Out)
	if len(v.Points) != 0 || !strings.Contains(r.Err, future) || !strings.Contains(r.Err, "future") {
		t.Errorf("history: %d points\n%s\n%s", len(v.Points), r.Out, r.Err)
	}
	r = runCLI(t, "", nil, "volume", "check", "--data-dir", data, "-o", "json")
	if !strings.Contains(r.Out, future) {
		t.Errorf("volume check does not name the future-named backup:\n%s", r.Out)
	}
	r = runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-offset", "9", "--execute", "--keep-backups", "1")
	if r.Code != 0 {
		t.Fatalf("reset: exit %d\n%s", r.Code, r.Err)
	}
	ents, _ := os.ReadDir(od)
	var backups []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".kaasctl-bak-") {
			backups = append(backups, e.Name())
		}
	}
	if len(backups) != 1 || backups[0] == filepath.Base(future) {
		t.Errorf("after the reset with --keep-backups 1: %v (the new backup must be the one kept)", backups)
	}
}

// --export-rollback FILE never overwrites an earlier rollback unless told
// to (--overwrite-rollback); refused, nothing is written.
func TestExportRollbackKeepsAnEarlierFile(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	rb := filepath.Join(t.TempDir(), "rollback.csv")
	os.WriteFile(rb, []byte("orders,0,5\n"), 0o644)
	before := fileHashes(t, data)
	args := []string{"offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-offset", "9", "--execute", "--export-rollback", rb}
	r := runCLI(t, "", nil, args...)
	if got, _ := os.ReadFile(rb); r.Code != 4 || string(got) != "orders,0,5\n" || !strings.Contains(r.Err, "--overwrite-rollback") {
		t.Errorf("exit %d, file %q\n%s", r.Code, got, r.Err)
	}
	sameHashes(t, "refused reset", before, fileHashes(t, data))
	r = runCLI(t, "", nil, append(args, "--overwrite-rollback")...)
	if got, _ := os.ReadFile(rb); r.Code != 0 || !strings.Contains(string(got), "orders,0,5") || !strings.HasPrefix(string(got), "# rollback") {
		t.Errorf("--overwrite-rollback: exit %d, file %q\n%s", r.Code, got, r.Err)
	}
}
