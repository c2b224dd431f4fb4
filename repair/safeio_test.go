//go:build unix

package repair

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// testVolume is a cluster dir with one group file; it returns the layout
// and the group file's path.
func testVolume(t *testing.T) (volume.Layout, string) {
	t.Helper()
	data := t.TempDir()
	cd := filepath.Join(data, "__cluster")
	if err := os.MkdirAll(filepath.Join(cd, volume.OffsetsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(cd, volume.AssignmentFile), []byte(`{"controllerEpoch":1,"assignmentVersion":1,"brokers":[]}`), 0o644)
	p := filepath.Join(cd, volume.OffsetsDir, "g.json")
	if err := os.WriteFile(p, []byte(oldContent), 0o644); err != nil {
		t.Fatal(err)
	}
	return volume.Layout{DataDir: data, ClusterDir: cd}, p
}

func backupsOf(t *testing.T, p string) []string {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Dir(p))
	var out []string
	for _, e := range ents {
		if isBackupOf(e.Name(), filepath.Base(p)) {
			out = append(out, e.Name())
		}
	}
	return out
}

func ownerMode(t *testing.T, p string) (uint32, uint32, os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid, fi.Mode().Perm()
}

// A 0600 file stays 0600 and its backup is no more readable. As root, a
// file owned by 1000:1000 keeps that owner, and so does its backup.
func TestWriteKeepsOwnerAndMode(t *testing.T) {
	t.Parallel()
	_, p := testVolume(t)
	os.Chmod(p, 0o600)
	asRoot := os.Geteuid() == 0
	if asRoot {
		if err := os.Chown(p, 1000, 1000); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := ReadState(p)
	res, err := WriteFileAtomic(p, []byte(newContent), WriteOptions{Expect: &st, Backup: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{p, res.Backup} {
		uid, gid, mode := ownerMode(t, f)
		if mode != 0o600 {
			t.Errorf("%s: mode %04o, want 0600", f, mode)
		}
		if asRoot && (uid != 1000 || gid != 1000) {
			t.Errorf("%s: owner %d:%d, want 1000:1000", f, uid, gid)
		}
	}
	if !asRoot {
		t.Skip("the owner half needs root (chown to another uid); the mode half passed")
	}
}

// A write that fails in the write step (a full disk) leaves the old file,
// no temp file and no backup; so does a failure at any step before the
// switch.
func TestFailedWriteRemovesTempAndBackup(t *testing.T) {
	t.Parallel()
	for _, failAt := range []string{StepBackup, StepTempWrite, StepTempSync, StepRecheck} {
		t.Run(failAt, func(t *testing.T) {
			p := setup(t)
			st, _ := ReadState(p)
			enospc := syscall.ENOSPC
			_, err := WriteFileAtomic(p, []byte(newContent), WriteOptions{Expect: &st, Backup: true, afterStep: func(s string) error {
				if s == failAt {
					return enospc
				}
				return nil
			}})
			if !errors.Is(err, enospc) {
				t.Fatalf("err %v", err)
			}
			ents, _ := os.ReadDir(filepath.Dir(p))
			if len(ents) != 1 || ents[0].Name() != "g.json" {
				t.Errorf("left behind: %v", ents)
			}
			if got, _ := os.ReadFile(p); string(got) != oldContent {
				t.Errorf("content %s", got)
			}
		})
	}
}

// After 30 writes, the last 10 backups remain (or --keep-backups N).
func TestBackupRetention(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		keep, want int
	}{{0, volume.DefaultKeepBackups}, {3, 3}, {-1, 30}} {
		p := setup(t)
		t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
		var last WriteResult
		for i := range 30 {
			st, _ := ReadState(p)
			now := t0.Add(time.Duration(i) * time.Second)
			content := []byte(strings.Replace(newContent, "0,", string(rune('a'+i%26))+",", 1))
			var err error
			last, err = WriteFileAtomic(p, content, WriteOptions{Expect: &st, Backup: true, Now: func() time.Time { return now }, Policy: Policy{KeepBackups: c.keep}})
			if err != nil {
				t.Fatal(err)
			}
		}
		bs := backupsOf(t, p)
		if len(bs) != c.want {
			t.Errorf("keep %d: %d backups, want %d", c.keep, len(bs), c.want)
			continue
		}
		if filepath.Join(filepath.Dir(p), bs[len(bs)-1]) != last.Backup {
			t.Errorf("keep %d: newest backup %s is not the last write's %s", c.keep, bs[len(bs)-1], last.Backup)
		}
		if c.keep == 3 && !strings.Contains(bs[0], "T100027") {
			t.Errorf("keep 3: oldest kept %s, want the 28th write's", bs[0])
		}
	}
}

// A group id of 246 bytes (kaas's limit): the temp and backup names stay
// within NAME_MAX, and the backup is found by its stem.
func TestLongGroupIDWrite(t *testing.T) {
	t.Parallel()
	l, _ := testVolume(t)
	group := strings.Repeat("g", 246)
	p, err := GroupFilePath(l, group)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte(oldContent), 0o644)
	var tmpName string
	for range 2 {
		st, _ := ReadState(p)
		res, err := WriteFileAtomic(p, []byte(newContent), WriteOptions{Expect: &st, Backup: true, Root: l.ClusterDir, afterStep: func(s string) error {
			if s == StepTempSync {
				ents, _ := os.ReadDir(filepath.Dir(p))
				for _, e := range ents {
					if strings.HasSuffix(e.Name(), ".tmp") {
						tmpName = e.Name()
					}
				}
			}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		if n := filepath.Base(res.Backup); len(n) > 255 || !strings.HasPrefix(n, BackupStem(group+".json")) {
			t.Errorf("backup name %d bytes: %s", len(n), n)
		}
	}
	if tmpName == "" || len(tmpName) > 255 {
		t.Errorf("temp name %d bytes: %q", len(tmpName), tmpName)
	}
	if bs := backupsOf(t, p); len(bs) != 2 {
		t.Errorf("backups found by stem: %v", bs)
	}
	if got, _ := os.ReadFile(p); string(got) != newContent {
		t.Errorf("content %s", got)
	}
}

// A <group>.json that is a link to a secret file outside the volume is
// neither read into a backup nor written through.
func TestSymlinkedGroupFileRefused(t *testing.T) {
	t.Parallel()
	l, p := testVolume(t)
	secret := filepath.Join(t.TempDir(), "shadow")
	os.WriteFile(secret, []byte(`{"offsets":{"secret/0":1}}`), 0o600)
	os.Remove(p)
	os.Symlink(secret, p)
	if _, err := ReadGroupFile(l, "g"); !errors.Is(err, safefs.ErrSymlink) {
		t.Errorf("ReadGroupFile through a link: %v", err)
	}
	if _, err := readGroupFile(l, "g", Policy{}); err == nil || !strings.Contains(err.Error(), "--follow-symlinks") {
		t.Errorf("the refusal does not say how to override: %v", err)
	}
	_, err := WriteFileAtomic(p, []byte(newContent), WriteOptions{Backup: true, Root: l.ClusterDir})
	if !errors.Is(err, safefs.ErrSymlink) || !strings.Contains(err.Error(), p) {
		t.Errorf("write through a link: %v", err)
	}
	if got, _ := os.ReadFile(secret); string(got) != `{"offsets":{"secret/0":1}}` {
		t.Errorf("the secret was overwritten: %s", got)
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Errorf("something was created beside the link: %v", ents)
	}
	// --follow-symlinks: the target is rewritten, the link stays a link,
	// and the backup has the target's mode.
	st, _ := readState(p, true)
	res, err := WriteFileAtomic(p, []byte(newContent), WriteOptions{Expect: &st, Backup: true, Root: l.ClusterDir, Policy: Policy{FollowSymlinks: true}})
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(p); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	if got, _ := os.ReadFile(secret); string(got) != newContent {
		t.Errorf("target %s", got)
	}
	if _, _, mode := ownerMode(t, res.Backup); mode != 0o600 {
		t.Errorf("backup mode %04o, want the target's 0600", mode)
	}
}

// A linked __consumer_offsets is refused for writes (and by the plan),
// and allowed with FollowSymlinks.
func TestSymlinkedOffsetsDirRefused(t *testing.T) {
	t.Parallel()
	l, _ := testVolume(t)
	real := filepath.Join(t.TempDir(), "elsewhere")
	os.Rename(l.OffsetsPath(), real)
	os.Symlink(real, l.OffsetsPath())
	p := filepath.Join(l.OffsetsPath(), "g.json")
	_, err := WriteFileAtomic(p, []byte(newContent), WriteOptions{Root: l.ClusterDir})
	if !errors.Is(err, safefs.ErrSymlink) {
		t.Fatalf("write through a linked dir: %v", err)
	}
	if err := CheckWritePath(l.ClusterDir, p, Policy{}); !errors.Is(err, safefs.ErrSymlink) {
		t.Errorf("CheckWritePath: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(real, "g.json")); string(got) != oldContent {
		t.Errorf("written through: %s", got)
	}
	st, _ := ReadState(p)
	if _, err := WriteFileAtomic(p, []byte(newContent), WriteOptions{Expect: &st, Root: l.ClusterDir, Policy: Policy{FollowSymlinks: true}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(real, "g.json")); string(got) != newContent {
		t.Errorf("with --follow-symlinks: %s", got)
	}
}

// The predictable-name attack: links planted under .kaasctl-quarantine at
// every name a run could pick from the clock. volume repair moves the
// corrupt file into a fresh directory of its own, and nothing lands in the
// attacker's directory.
func TestQuarantinePlantedLinks(t *testing.T) {
	t.Parallel()
	l, p := testVolume(t)
	os.WriteFile(p, []byte(`{"offsets":{"orders/0":`), 0o644) // truncated: quarantined
	canary := t.TempDir()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	q := filepath.Join(l.ClusterDir, QuarantineDir)
	os.Mkdir(q, 0o700)
	for _, name := range []string{now.Format("20060102T150405Z"), now.Format("20060102T150405Z") + "-0000000000000000"} {
		if err := os.Symlink(canary, filepath.Join(q, name)); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := RepairVolume(l, RepairOptions{Execute: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 0 || len(rep.Actions) != 1 || !rep.Actions[0].Done {
		t.Fatalf("report %+v", rep)
	}
	if ents, _ := os.ReadDir(canary); len(ents) != 0 {
		t.Errorf("repair wrote outside the volume: %v", ents)
	}
	dest := rep.Actions[0].Dest
	if !strings.HasPrefix(dest, q+string(filepath.Separator)) {
		t.Fatalf("dest %s", dest)
	}
	if got, err := os.ReadFile(dest); err != nil || string(got) != `{"offsets":{"orders/0":` {
		t.Errorf("quarantined copy: %v %q", err, got)
	}
	runDir := filepath.Dir(filepath.Dir(dest))
	if fi, err := os.Lstat(runDir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("run dir %s: %v %v", runDir, err, fi)
	}

	// The quarantine dir itself a link: refused, nothing moved, canary empty.
	l2, p2 := testVolume(t)
	os.WriteFile(p2, []byte(`{"offsets":{"orders/0":`), 0o644)
	os.Symlink(canary, filepath.Join(l2.ClusterDir, QuarantineDir))
	rep, err = RepairVolume(l2, RepairOptions{Execute: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 1 || !strings.Contains(rep.Actions[0].Error, "symbolic link") {
		t.Errorf("linked quarantine dir: %+v", rep.Actions)
	}
	if ents, _ := os.ReadDir(canary); len(ents) != 0 {
		t.Errorf("repair wrote through the linked quarantine dir: %v", ents)
	}
	if _, err := os.Stat(p2); err != nil {
		t.Errorf("the file was lost: %v", err)
	}
}

// A quarantine dir owned by another uid is refused (root only: chown).
func TestQuarantineForeignOwner(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the quarantine dir another owner")
	}
	l, p := testVolume(t)
	os.WriteFile(p, []byte(`{"offsets":{"orders/0":`), 0o644)
	q := filepath.Join(l.ClusterDir, QuarantineDir)
	os.Mkdir(q, 0o777)
	os.Chown(q, 1000, 1000)
	rep, err := RepairVolume(l, RepairOptions{Execute: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 1 || !strings.Contains(rep.Actions[0].Error, "owned by uid 1000") {
		t.Errorf("foreign quarantine dir: %+v", rep.Actions)
	}
	if ents, _ := os.ReadDir(q); len(ents) != 0 {
		t.Errorf("written into it: %v", ents)
	}
}

// volume repair on a linked offsets dir: refused in the plan, with a
// clear error, and nothing changes.
func TestRepairSymlinkedOffsetsDir(t *testing.T) {
	t.Parallel()
	l, p := testVolume(t)
	os.WriteFile(p, []byte(`{"orders/0":5}`), 0o644) // plain map: convert
	real := filepath.Join(t.TempDir(), "elsewhere")
	os.Rename(l.OffsetsPath(), real)
	os.Symlink(real, l.OffsetsPath())
	l = l.PinnedTo(volume.Gen018, "test") // converting a plain map is a 0.2.18 fix
	for _, execute := range []bool{false, true} {
		rep, err := RepairVolume(l, RepairOptions{Execute: execute})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Failed != 1 || !strings.Contains(rep.Actions[0].Error, "--follow-symlinks") || rep.Actions[0].Done {
			t.Errorf("execute=%v: %+v", execute, rep.Actions)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(real, "g.json")); string(got) != `{"orders/0":5}` {
		t.Errorf("changed: %s", got)
	}
	rep, err := RepairVolume(l, RepairOptions{Execute: true, Policy: Policy{FollowSymlinks: true}})
	if err != nil || rep.Failed != 0 || !rep.Actions[0].Done {
		t.Fatalf("with --follow-symlinks: %v %+v", err, rep.Actions)
	}
}

// volume repair quarantines a corrupt file of a 246-byte group id: the
// salvaged CSV's name fits NAME_MAX too.
func TestRepairLongGroupIDQuarantine(t *testing.T) {
	t.Parallel()
	l, _ := testVolume(t)
	group := strings.Repeat("q", 246)
	p := filepath.Join(l.OffsetsPath(), group+".json")
	os.WriteFile(p, []byte(`{"offsets":{"orders/0":5,"orders/1":"12"}}`), 0o644)
	rep, err := RepairVolume(l, RepairOptions{Execute: true})
	if err != nil {
		t.Fatal(err)
	}
	var a *RepairAction
	for i := range rep.Actions {
		if rep.Actions[i].Group == group {
			a = &rep.Actions[i]
		}
	}
	if a == nil || !a.Done || a.Salvaged == "" {
		t.Fatalf("actions %+v", rep.Actions)
	}
	if n := filepath.Base(a.Salvaged); len(n) > 255 {
		t.Errorf("salvaged name %d bytes", len(n))
	}
	if got, err := os.ReadFile(a.Salvaged); err != nil || !strings.Contains(string(got), "orders,0,5") {
		t.Errorf("salvaged CSV: %v %q", err, got)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the corrupt file is still in place: %v", err)
	}
}
