package safefs

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A log the user names is created 0600 and appended to, never opened
// through a planted link or as a FIFO.
func TestOpenAppend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "mcp.log")
	for _, line := range []string{"one\n", "two\n"} {
		f, err := OpenAppend(p)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line)
		f.Close()
	}
	if b, _ := os.ReadFile(p); string(b) != "one\ntwo\n" {
		t.Errorf("log %q", b)
	}
	if fi, _ := os.Stat(p); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	link := filepath.Join(dir, "planted.log")
	if err := os.Symlink(filepath.Join(dir, "target"), link); err != nil {
		t.Skip(err)
	}
	if f, err := OpenAppend(link); err == nil {
		f.Close()
		t.Error("opened through a link")
	}
	if _, err := os.Lstat(filepath.Join(dir, "target")); err == nil {
		t.Error("created the link's target")
	}
}
