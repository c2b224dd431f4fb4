//go:build !unix

package safefs

// A portable fallback: the same checks through package os (Lstat before
// each step). Without openat, a link swapped in between a check and the
// operation is not caught; kaasctl's supported platforms are unix.

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

func infoOf(fi fs.FileInfo) Info {
	return Info{Mode: fi.Mode(), Size: fi.Size(), ModTime: fi.ModTime()}
}

func read(path string, follow bool, limit int64) ([]byte, Info, error) {
	if limit <= 0 {
		limit = MaxFileBytes
	}
	if !follow {
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			t, _ := os.Readlink(path)
			return nil, Info{}, &KindError{Path: path, Kind: kindSymlink, Target: t}
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, Info{}, err
	}
	if k := Kind(fi.Mode()); k != "" {
		return nil, Info{}, &KindError{Path: path, Kind: k}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, Info{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, Info{}, err
	}
	if int64(len(data)) > limit {
		return nil, Info{}, &TooLargeError{Path: path, Limit: limit}
	}
	return data, infoOf(fi), nil
}

// OpenFollow opens a regular file the user named (see the unix version;
// here the check is a stat before the open).
func OpenFollow(path string) (*os.File, Info, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, Info{}, err
	}
	if k := Kind(fi.Mode()); k != "" {
		return nil, Info{}, &KindError{Path: path, Kind: k}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, Info{}, err
	}
	return f, infoOf(fi), nil
}

// ReadInto reads a regular file inside the volume (see the unix version).
func ReadInto(path string, buf []byte) ([]byte, []byte, error) {
	data, _, err := read(path, false, 0)
	return data, buf, err
}

// ReadIntoInfo is ReadInto that also returns the file's metadata.
func ReadIntoInfo(path string, buf []byte) ([]byte, []byte, Info, error) {
	data, info, err := read(path, false, 0)
	return data, buf, info, err
}

// ReadIntoInfo is ReadIntoInfo of the file name inside d.
func (d *Dir) ReadIntoInfo(name string, buf []byte) ([]byte, []byte, Info, error) {
	return ReadIntoInfo(d.join(name), buf)
}

// ReadFile reads a regular file inside the volume.
func ReadFile(path string) ([]byte, error) {
	data, _, err := read(path, false, 0)
	return data, err
}

// ReadFileFollow reads a regular file the user named (links followed).
func ReadFileFollow(path string, limit int64) ([]byte, Info, error) { return read(path, true, limit) }

// Read reads a regular file; follow lets the last component be a link.
func Read(path string, follow bool, limit int64) ([]byte, Info, error) {
	return read(path, follow, limit)
}

// Lstat is os.Lstat as an Info.
func Lstat(path string) (Info, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return Info{}, err
	}
	return infoOf(fi), nil
}

// Dir is a directory; every operation is relative to its path.
type Dir struct{ path string }

func (d *Dir) join(name string) string { return filepath.Join(d.path, name) }

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

// Close releases the directory.
func (d *Dir) Close() error { return nil }

// OpenDir opens a directory following links.
func OpenDir(path string) (*Dir, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("not a directory")}
	}
	return &Dir{path: filepath.Clean(path)}, nil
}

// OpenBelow opens path below root, refusing links below root.
func OpenBelow(root, path string, follow, writing bool) (*Dir, error) {
	if follow || root == "" {
		return OpenDir(path)
	}
	parts, err := below(root, path)
	if err != nil {
		return nil, err
	}
	d, err := OpenDir(root)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		if d, err = d.openSub(p, writing); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Sub opens the directory name inside d without following a link.
func (d *Dir) Sub(name string, writing bool) (*Dir, error) { return d.openSub(name, writing) }

func (d *Dir) openSub(name string, writing bool) (*Dir, error) {
	p := d.join(name)
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		t, _ := os.Readlink(p)
		return nil, &KindError{Path: p, Kind: kindSymlink, Target: t, Writing: writing}
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: p, Err: errors.New("not a directory")}
	}
	return &Dir{path: p}, nil
}

// Lstat describes name inside d without following a link.
func (d *Dir) Lstat(name string) (Info, error) { return Lstat(d.join(name)) }

// Stat describes d itself.
func (d *Dir) Stat() (Info, error) { return Lstat(d.path) }

// ReadFile reads the regular file name inside d.
func (d *Dir) ReadFile(name string, writing bool) ([]byte, Info, error) {
	data, info, err := read(d.join(name), false, 0)
	var ke *KindError
	if errors.As(err, &ke) {
		ke.Writing = writing
	}
	return data, info, err
}

// Create creates name exclusively for writing.
func (d *Dir) Create(name string, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(d.join(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

// CreateTemp creates prefix<random>suffix exclusively, mode 0600.
func (d *Dir) CreateTemp(prefix, suffix string) (*os.File, string, error) {
	for i := 0; ; i++ {
		name := prefix + RandomSuffix() + suffix
		f, err := d.Create(name, 0o600)
		if err != nil && errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		return f, name, err
	}
}

// Rename renames old to new inside d.
func (d *Dir) Rename(old, new string) error { return os.Rename(d.join(old), d.join(new)) }

// Link hard-links old inside d as new inside to.
func (d *Dir) Link(old string, to *Dir, new string) error {
	return os.Link(d.join(old), to.join(new))
}

// Remove unlinks the file name inside d.
func (d *Dir) Remove(name string) error { return os.Remove(d.join(name)) }

// RemoveDir removes the empty directory name inside d.
func (d *Dir) RemoveDir(name string) error {
	if _, err := d.openSub(name, true); err != nil {
		return err
	}
	return os.Remove(d.join(name))
}

// Sync is a no-op where directories cannot be synced.
func (d *Dir) Sync() error { return nil }

// Names lists the entries of d.
func (d *Dir) Names() ([]string, error) {
	ents, err := os.ReadDir(d.path)
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names, err
}

// MkdirOwned opens name inside d, creating it when missing; never a link.
func (d *Dir) MkdirOwned(name string, perm fs.FileMode) (*Dir, error) {
	if err := os.Mkdir(d.join(name), perm); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return d.openSub(name, true)
}

// MkdirTemp creates prefix<random> inside d exclusively.
func (d *Dir) MkdirTemp(prefix string, perm fs.FileMode) (*Dir, string, error) {
	for i := 0; ; i++ {
		name := prefix + RandomSuffix()
		sub, err := d.MkdirExcl(name, perm)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		return sub, name, err
	}
}

// MkdirExcl creates name inside d, failing when anything is there.
func (d *Dir) MkdirExcl(name string, perm fs.FileMode) (*Dir, error) {
	if err := os.Mkdir(d.join(name), perm); err != nil {
		return nil, err
	}
	return d.openSub(name, true)
}

// MkdirAllBelow opens rel inside d, creating missing components.
func (d *Dir) MkdirAllBelow(rel string, perm fs.FileMode) (*Dir, error) {
	parts, err := splitRel(rel)
	if err != nil {
		return nil, err
	}
	cur := d
	for _, p := range parts {
		if err := os.Mkdir(cur.join(p), perm); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if cur, err = cur.openSub(p, true); err != nil {
			return nil, err
		}
	}
	return cur, nil
}

// Fchown is a no-op where files have no unix owner.
func Fchown(f *os.File, uid, gid uint32) error { return nil }

// Open opens a regular file inside the volume for positioned reads.
func Open(path string) (*os.File, Info, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		t, _ := os.Readlink(path)
		return nil, Info{}, &KindError{Path: path, Kind: kindSymlink, Target: t}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, Info{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, Info{}, err
	}
	if k := Kind(fi.Mode()); k != "" {
		f.Close()
		return nil, Info{}, &KindError{Path: path, Kind: k}
	}
	return f, infoOf(fi), nil
}

// TryLock cannot tell here whether another process holds f: it never
// claims the lock, so nothing is taken for abandoned.
func TryLock(f *os.File) (bool, error) { return false, nil }

// OpenRegular opens the regular file name inside d for reading.
func (d *Dir) OpenRegular(name string) (*os.File, error) {
	f, _, err := OpenFollow(d.join(name))
	return f, err
}

// OthersCanChange is not checked on this platform (see the unix build).
func OthersCanChange(path string) string { return "" }

// ReadableByOthers is not checked on this platform (see the unix build).
func ReadableByOthers(path string) string { return "" }

// OpenAppend opens a log file the user names for appending, creating it
// (mode 0600) when missing; never through a symbolic link.
func OpenAppend(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		t, _ := os.Readlink(path)
		return nil, &KindError{Path: path, Kind: kindSymlink, Target: t, Writing: true}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || Kind(fi.Mode()) != "" {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, &KindError{Path: path, Kind: Kind(fi.Mode()), Writing: true}
	}
	return f, nil
}
