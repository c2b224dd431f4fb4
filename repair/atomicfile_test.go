package repair

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var allSteps = []string{StepCheck, StepBackup, StepTempWrite, StepTempSync, StepRecheck, StepRename, StepDirSync}

const (
	oldContent = `{"offsets":{"orders/0":10,"orders/1":20}}`
	newContent = `{"offsets":{"orders/0":0,"orders/1":0}}`
)

func setup(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "g.json")
	if err := os.WriteFile(p, []byte(oldContent), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// leftovers lists files other than the target and its backups.
func leftovers(t *testing.T, p string) []string {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Dir(p))
	var out []string
	for _, e := range ents {
		if e.Name() != filepath.Base(p) && !strings.Contains(e.Name(), BackupSuffix) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteFileAtomic(t *testing.T) {
	t.Parallel()
	p := setup(t)
	st, _ := ReadState(p)
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	res, err := WriteFileAtomic(p, []byte(newContent), WriteOptions{Expect: &st, Backup: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != newContent {
		t.Errorf("content %s", got)
	}
	if b, err := os.ReadFile(res.Backup); err != nil || string(b) != oldContent {
		t.Errorf("backup %s: %v %s", res.Backup, err, b)
	}
	if !strings.HasSuffix(res.Backup, "g.json.kaasctl-bak-20261129T100000.000000000Z") {
		t.Errorf("backup name %s", res.Backup)
	}
	if l := leftovers(t, p); len(l) != 0 {
		t.Errorf("temp files left: %v", l)
	}
	// A second write in the same instant gets its own backup.
	st, _ = ReadState(p)
	res2, err := WriteFileAtomic(p, []byte(oldContent), WriteOptions{Expect: &st, Backup: true, Now: func() time.Time { return now }})
	if err != nil || res2.Backup == res.Backup {
		t.Errorf("second backup %q vs %q: %v", res2.Backup, res.Backup, err)
	}
}

func TestWriteFileAtomicNewFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "new.json")
	st, _ := ReadState(p)
	res, err := WriteFileAtomic(p, []byte(newContent), WriteOptions{Expect: &st, Backup: true})
	if err != nil || res.Backup != "" {
		t.Fatalf("%v %+v", err, res)
	}
	if got, _ := os.ReadFile(p); string(got) != newContent {
		t.Errorf("content %s", got)
	}
}

func TestWriteFileAtomicConcurrentWriter(t *testing.T) {
	t.Parallel()
	p := setup(t)
	st, _ := ReadState(p)
	os.WriteFile(p, []byte(`{"offsets":{"orders/0":11}}`), 0o644) // a broker commits
	_, err := WriteFileAtomic(p, []byte(newContent), WriteOptions{Expect: &st, Backup: true})
	if !errors.Is(err, ErrConcurrentWrite) {
		t.Fatalf("want ErrConcurrentWrite, got %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != `{"offsets":{"orders/0":11}}` {
		t.Errorf("the broker's write was clobbered: %s", got)
	}
	// A write that lands between the first check and the rename is caught too.
	p = setup(t)
	st, _ = ReadState(p)
	_, err = WriteFileAtomic(p, []byte(newContent), WriteOptions{Expect: &st, afterStep: func(s string) error {
		if s == StepTempSync {
			os.WriteFile(p, []byte(`{"offsets":{}}`), 0o644)
		}
		return nil
	}})
	if !errors.Is(err, ErrConcurrentWrite) {
		t.Fatalf("late writer: want ErrConcurrentWrite, got %v", err)
	}
	if l := leftovers(t, p); len(l) != 0 {
		t.Errorf("temp files left after abort: %v", l)
	}
}

// A failure after each step leaves the old or the new content, never a
// mix, and no temp file.
func TestWriteFileAtomicFailureAfterEachStep(t *testing.T) {
	t.Parallel()
	for _, failAt := range allSteps {
		t.Run(failAt, func(t *testing.T) {
			p := setup(t)
			st, _ := ReadState(p)
			boom := errors.New("injected")
			_, err := WriteFileAtomic(p, []byte(newContent), WriteOptions{Expect: &st, Backup: true, afterStep: func(s string) error {
				if s == failAt {
					return boom
				}
				return nil
			}})
			if !errors.Is(err, boom) {
				t.Fatalf("err %v", err)
			}
			got, _ := os.ReadFile(p)
			if string(got) != oldContent && string(got) != newContent {
				t.Fatalf("partial file: %q", got)
			}
			renamed := failAt == StepRename || failAt == StepDirSync
			if renamed != (string(got) == newContent) {
				t.Errorf("after %s: content %q", failAt, got)
			}
			if l := leftovers(t, p); len(l) != 0 {
				t.Errorf("temp files left: %v", l)
			}
		})
	}
}

// The process dies (os.Exit, no deferred cleanup) after each step: the file
// is still the old or the new content. The test binary re-runs itself as
// the dying writer.
func TestWriteFileAtomicCrashAfterEachStep(t *testing.T) {
	t.Parallel()
	if dir := os.Getenv("KAASCTL_CRASH_DIR"); dir != "" {
		step := os.Getenv("KAASCTL_CRASH_STEP")
		p := filepath.Join(dir, "g.json")
		st, _ := ReadState(p)
		WriteFileAtomic(p, []byte(newContent), WriteOptions{Expect: &st, Backup: true, afterStep: func(s string) error {
			if s == step {
				os.Exit(7)
			}
			return nil
		}})
		os.Exit(0)
	}
	for _, step := range allSteps {
		t.Run(step, func(t *testing.T) {
			p := setup(t)
			cmd := exec.Command(os.Args[0], "-test.run=^TestWriteFileAtomicCrashAfterEachStep$")
			cmd.Env = append(os.Environ(), "KAASCTL_CRASH_DIR="+filepath.Dir(p), "KAASCTL_CRASH_STEP="+step)
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 7 {
				t.Fatalf("writer did not die at %s: %v", step, err)
			}
			got, _ := os.ReadFile(p)
			if string(got) != oldContent && string(got) != newContent {
				t.Fatalf("partial file after a crash at %s: %q", step, got)
			}
			for _, l := range leftovers(t, p) {
				if !strings.HasSuffix(l, ".tmp") || !strings.HasPrefix(l, ".g.json.kaasctl-") {
					t.Errorf("unexpected file after a crash: %s", l)
				}
			}
		})
	}
}
