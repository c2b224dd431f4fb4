package commands

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// volT0 is the fixed mtime of every copied test volume file; volNow is
// the --now the offline tests run at (two hours later).
var volT0 = time.Date(2026, 7, 23, 10, 0, 0, 0, time.UTC)

const volNow = "2026-07-23T12:00:00Z"

func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatal("go.mod not found above " + dir)
		}
	}
}

// hostile names created at test time (they cannot live in git).
var (
	longGroup    = strings.Repeat("g", 250)
	invalidGroup = "bad\xffname"
)

// copyTree copies the files and directories under src into a new temp
// dir and returns it.
func copyTree(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "vol")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// copyVolume copies testdata/volumes/<name> into a temp dir with every
// mtime set to volT0. For "damaged" it also adds group files whose names
// kaas cannot round-trip.
func copyVolume(t testing.TB, name string) string {
	t.Helper()
	dst := copyTree(t, filepath.Join(repoRoot(t), "testdata", "volumes", name))
	if name == "damaged" {
		od := filepath.Join(dst, "__cluster", "__consumer_offsets")
		for _, g := range []string{longGroup, invalidGroup} {
			if err := os.WriteFile(filepath.Join(od, g+".json"), []byte(`{"offsets":{"orders/0":1}}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Directories last, so file writes do not bump them again.
	var dirs []string
	filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			if d.IsDir() {
				dirs = append(dirs, p)
			} else {
				os.Chtimes(p, volT0, volT0)
			}
		}
		return nil
	})
	for _, d := range dirs {
		os.Chtimes(d, volT0, volT0)
	}
	return dst
}

// runCLI runs kaasctl and returns stdout, stderr and the exit code.
func runVol(t testing.TB, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(append([]string{"kaasctl"}, args...), &IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	return out.String(), errb.String(), code
}
