//go:build unix

package safefs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// within fails the test when f does not return in time: a read that
// blocks must fail this test, not hang the suite.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return (blocked)", what)
	}
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo not possible here: %v", err)
	}
}

func TestReadRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "assignment.json")
	mkfifo(t, fifo)
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	within(t, "ReadFile(FIFO)", func() {
		_, err := ReadFile(fifo)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("FIFO: %v", err)
		}
	})
	within(t, "Read(FIFO, follow)", func() {
		if _, _, err := Read(fifo, true, 0); !errors.Is(err, ErrNotRegular) {
			t.Errorf("FIFO followed: %v", err)
		}
	})
	within(t, "ReadFile(link to /dev/zero)", func() {
		_, err := ReadFile(zero)
		if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), "/dev/zero") {
			t.Errorf("link, not followed: %v", err)
		}
	})
	within(t, "ReadFileFollow(link to /dev/zero)", func() {
		_, _, err := ReadFileFollow(zero, 0)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "character device") || !strings.Contains(err.Error(), "/dev/zero") {
			t.Errorf("link followed: %v", err)
		}
	})
	if _, err := ReadFile(dir); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if Problem(&KindError{Path: "/x", Kind: "socket"}) == "" || strings.HasPrefix(Problem(&KindError{Path: "/x", Kind: "socket"}), "/x") {
		t.Error("Problem keeps the path prefix")
	}
}

func TestReadCap(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "big.json")
	os.WriteFile(p, []byte(strings.Repeat("x", 5000)), 0o644)
	if _, _, err := Read(p, false, 4096); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), p) {
		t.Errorf("over the cap: %v", err)
	}
	data, info, err := Read(p, false, 5000)
	if err != nil || len(data) != 5000 || info.Size != 5000 {
		t.Errorf("at the cap: %d %v", len(data), err)
	}
}

func TestOpenBelowRefusesLinks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	os.Mkdir(filepath.Join(root, "real"), 0o755)
	os.Symlink(outside, filepath.Join(root, "__consumer_offsets"))
	if _, err := OpenBelow(root, filepath.Join(root, "__consumer_offsets"), false, true); !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), "--follow-symlinks") {
		t.Errorf("linked dir: %v", err)
	}
	d, err := OpenBelow(root, filepath.Join(root, "__consumer_offsets"), true, true)
	if err != nil {
		t.Fatalf("followed: %v", err)
	}
	d.Close()
	if _, err := OpenBelow(root, outside, false, true); err == nil {
		t.Error("a path outside the root was opened")
	}
	d, err = OpenBelow(root, filepath.Join(root, "real"), false, true)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// MkdirAllBelow never descends through a link either.
	os.Symlink(outside, filepath.Join(root, "real", "q"))
	if _, err := d.MkdirAllBelow("q/x", 0o700); !errors.Is(err, ErrSymlink) {
		t.Errorf("MkdirAllBelow through a link: %v", err)
	}
	if _, err := d.MkdirAllBelow("../x", 0o700); err == nil {
		t.Error("MkdirAllBelow accepted ..")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("something was created outside: %v", ents)
	}
}

func TestExclusiveDirs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// A planted link at a predictable name is never used.
	os.Symlink(outside, filepath.Join(root, "run"))
	if _, err := d.MkdirExcl("run", 0o700); !errors.Is(err, fs.ErrExist) {
		t.Errorf("MkdirExcl over a link: %v", err)
	}
	os.Symlink(outside, filepath.Join(root, ".kaasctl-quarantine"))
	if _, err := d.MkdirOwned(".kaasctl-quarantine", 0o700); !errors.Is(err, ErrSymlink) {
		t.Errorf("MkdirOwned on a link: %v", err)
	}
	sub, name, err := d.MkdirTemp(".x-", 0o700)
	if err != nil || !strings.HasPrefix(name, ".x-") || len(name) != 3+16 {
		t.Fatalf("MkdirTemp %q: %v", name, err)
	}
	sub.Close()
	_, name2, _ := d.MkdirTemp(".x-", 0o700)
	if name2 == name {
		t.Error("two temp dirs got one name")
	}
	if os.Geteuid() == 0 {
		os.Mkdir(filepath.Join(root, "theirs"), 0o755)
		os.Chown(filepath.Join(root, "theirs"), 1000, 1000)
		if _, err := d.MkdirOwned("theirs", 0o700); !errors.Is(err, ErrForeignOwner) || !strings.Contains(err.Error(), "uid 1000") {
			t.Errorf("foreign owner: %v", err)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("something was created outside: %v", ents)
	}
}

func TestShorten(t *testing.T) {
	t.Parallel()
	if got := Shorten("g.json", 200); got != "g.json" {
		t.Errorf("short name changed: %s", got)
	}
	long := strings.Repeat("é", 123) + ".json" // 251 bytes
	a := Shorten(long, 213)
	if len(a) > 213 || !utf8.ValidString(a) || !strings.Contains(a, "~") {
		t.Errorf("shortened %d bytes, valid %v: %q", len(a), utf8.ValidString(a), a)
	}
	if Shorten(long, 213) != a {
		t.Error("not deterministic")
	}
	other := strings.Repeat("é", 123) + ".jsom"
	if Shorten(other, 213) == a {
		t.Error("two names, one short name")
	}
	if n := ShortName(".", long, ".kaasctl-0123456789abcdef.tmp"); len(n) > NameMax {
		t.Errorf("ShortName %d bytes", len(n))
	}
}

func TestCappedReader(t *testing.T) {
	t.Parallel()
	f, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	_, err = io.ReadAll(CappedReader(f, "plan.csv", 1<<20))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "plan.csv") {
		t.Errorf("endless stream: %v", err)
	}
	data, err := io.ReadAll(CappedReader(strings.NewReader("abc"), "x", 3))
	if err != nil || string(data) != "abc" {
		t.Errorf("at the cap: %q %v", data, err)
	}
}

// TestReadIntoInfoWholeFile: ReadIntoInfo returns every byte of files of
// every size around its buffer's, with a buffer reused from a larger and
// a smaller file before (it stops at the size the open gave when a read
// returns exactly that much).
func TestReadIntoInfoWholeFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var buf []byte
	for _, n := range []int{0, 1, 4095, 4096, 4097, 70000, 3, 0, 65536} {
		want := bytes.Repeat([]byte{'x'}, n)
		for i := range want {
			want[i] = byte('a' + i%26)
		}
		p := filepath.Join(dir, fmt.Sprintf("f%d.json", n))
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		var data []byte
		var info Info
		var err error
		data, buf, info, err = ReadIntoInfo(p, buf)
		if err != nil || !bytes.Equal(data, want) || info.Size != int64(n) {
			t.Fatalf("%d bytes: got %d bytes (size %d), err %v", n, len(data), info.Size, err)
		}
	}
}

// OthersCanChange is ssh's rule: a file or a directory above it writable
// by others (a sticky directory excepted) is named; so is a link's target.
func TestOthersCanChange(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	mk := func(dir string, mode os.FileMode) string {
		p := filepath.Join(base, dir)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	private, open, sticky := mk("private", 0o700), mk("open", 0o777), mk("sticky", 0o777|os.ModeSticky)
	write := func(dir string, mode os.FileMode) string {
		p := filepath.Join(dir, "config.yaml")
		os.WriteFile(p, []byte("x"), mode)
		os.Chmod(p, mode)
		return p
	}
	ok, inOpen, inSticky, wide := write(private, 0o600), write(open, 0o600), write(sticky, 0o644), filepath.Join(private, "wide.yaml")
	os.WriteFile(wide, nil, 0o666)
	os.Chmod(wide, 0o666)
	link := filepath.Join(private, "link.yaml")
	os.Symlink(inOpen, link)
	for p, want := range map[string]string{ok: "", inSticky: "", inOpen: "a directory above it", wide: "the file", link: "a directory above it"} {
		got := OthersCanChange(p)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", p, got, want)
		}
	}
	if got := ReadableByOthers(wide); !strings.Contains(got, "readable by others (mode 0666)") {
		t.Errorf("ReadableByOthers: %q", got)
	}
	if got := ReadableByOthers(ok); got != "" {
		t.Errorf("a private file: %q", got)
	}
}
