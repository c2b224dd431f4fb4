package repair

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A removal backs the file up with its content, removes it, and leaves
// nothing else; a failure at any step before the removal leaves the file
// and no backup.
func TestRemoveFileAtomic(t *testing.T) {
	t.Parallel()
	p := setup(t)
	st, _ := ReadState(p)
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	res, err := RemoveFileAtomic(p, WriteOptions{Expect: &st, Backup: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Errorf("the file is still there: %v", err)
	}
	if b, err := os.ReadFile(res.Backup); err != nil || string(b) != oldContent || !strings.HasSuffix(res.Backup, "g.json.kaasctl-bak-20261129T100000.000000000Z") {
		t.Errorf("backup %s: %v %s", res.Backup, err, b)
	}
	for _, step := range []string{StepCheck, StepBackup, StepRecheck} {
		p := setup(t)
		st, _ := ReadState(p)
		_, err := RemoveFileAtomic(p, WriteOptions{Expect: &st, Backup: true, afterStep: func(s string) error {
			if s == step {
				return errors.New("injected")
			}
			return nil
		}})
		if err == nil || !strings.Contains(err.Error(), "injected") {
			t.Errorf("%s: err %v", step, err)
		}
		if got, _ := os.ReadFile(p); string(got) != oldContent {
			t.Errorf("%s: the file is %q", step, got)
		}
		ents, _ := os.ReadDir(filepath.Dir(p))
		if len(ents) != 1 {
			t.Errorf("%s: left %v", step, ents)
		}
	}
}

// A file that changed since it was read, a file already gone, and a file
// that is a link are never removed.
func TestRemoveFileAtomicRefuses(t *testing.T) {
	t.Parallel()
	p := setup(t)
	st, _ := ReadState(p)
	os.WriteFile(p, []byte(newContent), 0o644)
	if _, err := RemoveFileAtomic(p, WriteOptions{Expect: &st, Backup: true}); !errors.Is(err, ErrConcurrentWrite) {
		t.Errorf("changed file: %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != newContent {
		t.Errorf("changed file removed or rewritten: %q", got)
	}
	gone := filepath.Join(t.TempDir(), "gone.json")
	if _, err := RemoveFileAtomic(gone, WriteOptions{}); err == nil || !strings.Contains(err.Error(), "already gone") {
		t.Errorf("gone: %v", err)
	}
	target := setup(t)
	link := filepath.Join(t.TempDir(), "link.json")
	os.Symlink(target, link)
	if _, err := RemoveFileAtomic(link, WriteOptions{Backup: true}); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("link: %v", err)
	}
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("the link was removed: %v", err)
	}
	if got, _ := os.ReadFile(target); string(got) != oldContent {
		t.Errorf("the link's target changed: %q", got)
	}
}
