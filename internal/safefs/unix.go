//go:build unix

package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

func infoOf(st *unix.Stat_t) Info {
	return Info{
		Mode:    modeOf(st),
		UID:     st.Uid,
		GID:     st.Gid,
		Size:    st.Size,
		ModTime: time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)),
		Dev:     uint64(st.Dev),
		Ino:     uint64(st.Ino),
	}
}

func modeOf(st *unix.Stat_t) fs.FileMode {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

func retry[T any](f func() (T, error)) (T, error) {
	for {
		v, err := f()
		if err != unix.EINTR {
			return v, err
		}
	}
}

// openRegularAt opens name (relative to dirfd, or absolute with AT_FDCWD)
// for reading: regular files only, never blocking. follow lets the last
// component be a link.
func openRegularAt(dirfd int, name, display string, follow bool) (int, Info, error) {
	flags := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := retry(func() (int, error) { return unix.Openat(dirfd, name, flags, 0) })
	if err != nil {
		if err == unix.ELOOP && !follow {
			return -1, Info{}, linkError(dirfd, name, display, false)
		}
		return -1, Info{}, &fs.PathError{Op: "open", Path: display, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, Info{}, &fs.PathError{Op: "fstat", Path: display, Err: err}
	}
	info := infoOf(&st)
	if k := Kind(info.Mode); k != "" {
		unix.Close(fd)
		e := &KindError{Path: display, Kind: k}
		if follow {
			buf := make([]byte, 4096)
			if n, err := unix.Readlinkat(dirfd, name, buf); err == nil {
				e.Target = string(buf[:n])
			}
		}
		return -1, Info{}, e
	}
	return fd, info, nil
}

func linkError(dirfd int, name, display string, writing bool) error {
	e := &KindError{Path: display, Kind: kindSymlink, Writing: writing}
	buf := make([]byte, 4096)
	if n, err := unix.Readlinkat(dirfd, name, buf); err == nil {
		e.Target = string(buf[:n])
	}
	return e
}

// readFd reads fd to the end into buf (reused), capped at limit. With
// size >= 0 (the open's fstat), a read that leaves buf with exactly size
// bytes and room to spare ends it: a read of a regular file returns less
// than asked only at its end, so the read that would return 0 is saved.
func readFd(fd int, display string, buf []byte, limit, size int64) ([]byte, []byte, error) {
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if int64(cap(buf)) > limit {
				return nil, buf, &TooLargeError{Path: display, Limit: limit}
			}
			buf = slices.Grow(buf, max(4096, cap(buf)))
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, buf, os.NewSyscallError("read "+display, err)
		}
		if n == 0 {
			if int64(len(buf)) > limit {
				return nil, buf, &TooLargeError{Path: display, Limit: limit}
			}
			return buf, buf, nil
		}
		buf = buf[:len(buf)+n]
		if size >= 0 && int64(len(buf)) == size && len(buf) < cap(buf) && size <= limit {
			return buf, buf, nil
		}
	}
}

// ReadInto reads a regular file inside the volume into buf (reused): the
// last component is never followed, special files are refused, and the
// size is capped at MaxFileBytes. It returns the data and the buffer.
func ReadInto(path string, buf []byte) ([]byte, []byte, error) {
	data, buf, _, err := ReadIntoInfo(path, buf)
	return data, buf, err
}

// ReadIntoInfo is ReadInto that also returns the file's metadata as of
// the open (the fstat the open does anyway: no further system call).
func ReadIntoInfo(path string, buf []byte) ([]byte, []byte, Info, error) {
	return readIntoInfoAt(unix.AT_FDCWD, path, path, buf)
}

// ReadIntoInfo is ReadIntoInfo of the file name inside d: the kernel
// resolves one name, not the whole path (a 100,000-file scan opens every
// file of its directory).
func (d *Dir) ReadIntoInfo(name string, buf []byte) ([]byte, []byte, Info, error) {
	return readIntoInfoAt(d.fd, name, d.join(name), buf)
}

func readIntoInfoAt(dirfd int, name, display string, buf []byte) ([]byte, []byte, Info, error) {
	fd, info, err := openRegularAt(dirfd, name, display, false)
	if err != nil {
		return nil, buf, Info{}, err
	}
	defer unix.Close(fd)
	if need := info.Size + 1; info.Size >= 0 && need <= MaxFileBytes && int64(cap(buf)) < need {
		// Sized from the fstat: one read, which readFd takes as the end
		// when it returns that size (offset files are replaced by rename,
		// never grown in place).
		buf = make([]byte, 0, need)
	}
	data, buf, err := readFd(fd, display, buf, MaxFileBytes, info.Size)
	return data, buf, info, err
}

// ReadFile reads a regular file inside the volume (see ReadInto).
func ReadFile(path string) ([]byte, error) {
	data, _, err := ReadInto(path, nil)
	return data, err
}

// ReadFileFollow reads a file the user named: links are followed, but
// only a regular file is read, capped at limit bytes (MaxFileBytes when 0).
func ReadFileFollow(path string, limit int64) ([]byte, Info, error) {
	return Read(path, true, limit)
}

// Read reads a regular file and returns its metadata (as of the open):
// follow lets the last component be a link; limit caps the size
// (MaxFileBytes when 0).
func Read(path string, follow bool, limit int64) ([]byte, Info, error) {
	if limit <= 0 {
		limit = MaxFileBytes
	}
	fd, info, err := openRegularAt(unix.AT_FDCWD, path, path, follow)
	if err != nil {
		return nil, info, err
	}
	defer unix.Close(fd)
	// The size at open sizes the buffer (one allocation for a 60 MB
	// assignment, not a doubling series); a file that grows meanwhile is
	// still read to its end.
	var buf []byte
	if info.Size > 0 && info.Size < limit {
		buf = make([]byte, 0, info.Size+1)
	}
	data, _, err := readFd(fd, path, buf, limit, -1)
	return data, info, err
}

// OpenFollow opens a file the user named (a configuration file, a CSV):
// links are followed, but the open never blocks (O_NONBLOCK: a FIFO with
// no writer would hang a plain open) and anything but a regular file is a
// *KindError naming it. The file is returned in blocking mode, to be read
// as usual; the caller closes it.
func OpenFollow(path string) (*os.File, Info, error) {
	fd, info, err := openRegularAt(unix.AT_FDCWD, path, path, true)
	if err != nil {
		return nil, info, err
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, Info{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), info, nil
}

// Lstat is os.Lstat as an Info.
func Lstat(path string) (Info, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return Info{}, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	return infoOf(&st), nil
}

// Dir is an open directory; every operation is relative to it.
type Dir struct {
	fd   int
	path string
}

// Path is the directory's path as it was reached.
func (d *Dir) Path() string { return d.path }

// Close releases the directory.
func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

func (d *Dir) join(name string) string { return filepath.Join(d.path, name) }

// OpenDir opens a directory following links (a root the user named).
func OpenDir(path string) (*Dir, error) {
	fd, err := retry(func() (int, error) {
		return unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{fd: fd, path: filepath.Clean(path)}, nil
}

// OpenBelow opens path, a directory at or under root: root itself is
// opened following links (the user named it), every component below it
// is checked and opened without following links. writing only changes the
// wording of a refusal. With follow, path is opened following links.
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
		sub, err := d.openSub(p, writing)
		d.Close()
		if err != nil {
			return nil, err
		}
		d = sub
	}
	return d, nil
}

// Sub opens the directory name inside d without following a link.
func (d *Dir) Sub(name string, writing bool) (*Dir, error) { return d.openSub(name, writing) }

func (d *Dir) openSub(name string, writing bool) (*Dir, error) {
	fd, err := retry(func() (int, error) {
		return unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOTDIR {
			var st unix.Stat_t
			if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				m := modeOf(&st)
				if m&fs.ModeSymlink != 0 {
					return nil, linkError(d.fd, name, d.join(name), writing)
				}
				if !m.IsDir() {
					return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: errors.New("not a directory (a " + orRegular(Kind(m)) + ")")}
				}
			}
		}
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	return &Dir{fd: fd, path: d.join(name)}, nil
}

func orRegular(k string) string {
	if k == "" {
		return "regular file"
	}
	return k
}

// Lstat describes name inside d without following a link.
func (d *Dir) Lstat(name string) (Info, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Info{}, &fs.PathError{Op: "lstat", Path: d.join(name), Err: err}
	}
	return infoOf(&st), nil
}

// Stat describes d itself.
func (d *Dir) Stat() (Info, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return Info{}, &fs.PathError{Op: "fstat", Path: d.path, Err: err}
	}
	return infoOf(&st), nil
}

// ReadFile reads the regular file name inside d (never a link, FIFO or
// device; capped at MaxFileBytes). A missing file is an error matching
// fs.ErrNotExist.
func (d *Dir) ReadFile(name string, writing bool) ([]byte, Info, error) {
	fd, info, err := openRegularAt(d.fd, name, d.join(name), false)
	if err != nil {
		var ke *KindError
		if errors.As(err, &ke) {
			ke.Writing = writing
		}
		return nil, info, err
	}
	defer unix.Close(fd)
	data, _, err := readFd(fd, d.join(name), nil, MaxFileBytes, -1)
	return data, info, err
}

// Create creates name exclusively (O_EXCL|O_NOFOLLOW) for writing.
func (d *Dir) Create(name string, perm fs.FileMode) (*os.File, error) {
	fd, err := retry(func() (int, error) {
		return unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	})
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: d.join(name), Err: err}
	}
	return os.NewFile(uintptr(fd), d.join(name)), nil
}

// CreateTemp creates prefix<16 random hex digits>suffix exclusively, mode 0600.
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

// Rename renames old to new, both inside d.
func (d *Dir) Rename(old, new string) error {
	if err := unix.Renameat(d.fd, old, d.fd, new); err != nil {
		return &os.LinkError{Op: "rename", Old: d.join(old), New: d.join(new), Err: err}
	}
	return nil
}

// Link hard-links old inside d as new inside to (never following a link,
// never replacing new).
func (d *Dir) Link(old string, to *Dir, new string) error {
	if err := unix.Linkat(d.fd, old, to.fd, new, 0); err != nil {
		return &os.LinkError{Op: "link", Old: d.join(old), New: to.join(new), Err: err}
	}
	return nil
}

// Remove unlinks the file name inside d (never a directory).
func (d *Dir) Remove(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	return nil
}

// RemoveDir removes the empty directory name inside d.
func (d *Dir) RemoveDir(name string) error {
	if err := unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR); err != nil {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	return nil
}

// Sync makes the directory's entries durable.
func (d *Dir) Sync() error {
	if err := unix.Fsync(d.fd); err != nil && err != unix.EINVAL {
		return &fs.PathError{Op: "fsync", Path: d.path, Err: err}
	}
	return nil
}

// Names lists the entries of d (unsorted).
func (d *Dir) Names() ([]string, error) {
	fd, err := retry(func() (int, error) {
		return unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// MkdirOwned opens the directory name inside d, creating it (mode perm)
// when it is missing. It is refused when it is a link, not a directory,
// or owned by another uid than kaasctl's.
func (d *Dir) MkdirOwned(name string, perm fs.FileMode) (*Dir, error) {
	if err := unix.Mkdirat(d.fd, name, uint32(perm.Perm())); err != nil && err != unix.EEXIST {
		return nil, &fs.PathError{Op: "mkdir", Path: d.join(name), Err: err}
	}
	sub, err := d.openSub(name, true)
	if err != nil {
		return nil, err
	}
	if err := sub.checkOwner(); err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// MkdirTemp creates prefix<16 random hex digits> inside d exclusively
// (see MkdirExcl).
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

// MkdirExcl creates the directory name inside d, failing when anything
// (a link included) is already there, and opens it without following
// links; it must be owned by kaasctl's uid.
func (d *Dir) MkdirExcl(name string, perm fs.FileMode) (*Dir, error) {
	if err := unix.Mkdirat(d.fd, name, uint32(perm.Perm())); err != nil {
		return nil, &fs.PathError{Op: "mkdir", Path: d.join(name), Err: err}
	}
	sub, err := d.openSub(name, true)
	if err != nil {
		return nil, err
	}
	if err := sub.checkOwner(); err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

func (d *Dir) checkOwner() error {
	st, err := d.Stat()
	if err != nil {
		return err
	}
	if uid := uint32(os.Geteuid()); st.UID != uid {
		return &OwnerError{Path: d.path, UID: st.UID, Own: uid}
	}
	return nil
}

// MkdirAllBelow opens the directory rel (slash-separated components)
// inside d, creating missing components with perm; no component may be a
// link. Components kaasctl creates are owned by it; existing ones are kept
// whoever owns them.
func (d *Dir) MkdirAllBelow(rel string, perm fs.FileMode) (*Dir, error) {
	cur := &Dir{fd: -1, path: d.path}
	fd, err := unix.Dup(d.fd)
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	cur.fd = fd
	parts, err := splitRel(rel)
	if err != nil {
		cur.Close()
		return nil, err
	}
	for _, p := range parts {
		if err := unix.Mkdirat(cur.fd, p, uint32(perm.Perm())); err != nil && err != unix.EEXIST {
			cur.Close()
			return nil, &fs.PathError{Op: "mkdir", Path: cur.join(p), Err: err}
		}
		sub, err := cur.openSub(p, true)
		cur.Close()
		if err != nil {
			return nil, err
		}
		cur = sub
	}
	return cur, nil
}

// File operations on an open file.

// Fchown sets f's owner when it differs from info's.
func Fchown(f *os.File, uid, gid uint32) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	if st.Uid == uid && st.Gid == gid {
		return nil
	}
	return f.Chown(int(uid), int(gid))
}

// Open opens a regular file inside the volume for positioned reads (the
// segment reader): the last component is never followed and special
// files are refused, like ReadInto; the caller closes it and bounds its
// own reads.
func Open(path string) (*os.File, Info, error) {
	fd, info, err := openRegularAt(unix.AT_FDCWD, path, path, false)
	if err != nil {
		return nil, info, err
	}
	return os.NewFile(uintptr(fd), path), info, nil
}

// TryLock takes an exclusive advisory lock (flock) on f without waiting:
// false when another process holds one. A lock lives as long as the
// process that took it, so a file whose lock can be taken was left by a
// process that is gone.
func TryLock(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case err == unix.EWOULDBLOCK:
		return false, nil
	}
	return false, &fs.PathError{Op: "flock", Path: f.Name(), Err: err}
}

// OpenRegular opens the regular file name inside d for reading (never a
// link, FIFO or device).
func (d *Dir) OpenRegular(name string) (*os.File, error) {
	fd, _, err := openRegularAt(d.fd, name, d.join(name), false)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), d.join(name)), nil
}

// OthersCanChange says why someone other than the user and root could
// change what path holds, or "" when nobody can: the file (the one a link
// leads to, and the link itself) or a directory above either writable by
// its group or others (a sticky directory excepted: there only an entry's
// owner may rename or remove it), or owned by another user. It is ssh's
// rule for its own configuration, for files that decide where kaasctl
// writes and whom it talks to.
func OthersCanChange(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	chains := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		chains = append(chains, real)
	}
	for _, p := range chains {
		for cur, file := p, true; ; cur, file = filepath.Dir(cur), false {
			if why := changeableBy(cur, file); why != "" {
				return why
			}
			if cur == filepath.Dir(cur) {
				break
			}
		}
	}
	return ""
}

// changeableBy checks one path of OthersCanChange.
func changeableBy(p string, file bool) string {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return ""
	}
	m := modeOf(&st)
	if m&fs.ModeSymlink != 0 {
		return "" // the link's own mode means nothing; its dir and target are checked
	}
	if uid := uint32(os.Geteuid()); st.Uid != uid && st.Uid != 0 {
		return fmt.Sprintf("%s is owned by uid %d, not by you (uid %d) or root", p, st.Uid, uid)
	}
	if m.Perm()&0o022 != 0 && (file || m&fs.ModeSticky == 0) {
		what := "the file"
		if !file {
			what = "a directory above it"
		}
		return fmt.Sprintf("%s (%s) is writable by others (mode %04o)", p, what, m.Perm())
	}
	return ""
}

// ReadableByOthers says when path (followed) can be read by its group or
// others (mode and what to do), or "".
func ReadableByOthers(path string) string {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return ""
	}
	if m := modeOf(&st); m.Perm()&0o044 != 0 {
		return fmt.Sprintf("%s is readable by others (mode %04o): chmod 600 it", path, m.Perm())
	}
	return ""
}

// OpenAppend opens a log file the user names for appending, creating it
// (mode 0600) when missing: never through a symbolic link, never a FIFO
// or device (the open does not block on one).
func OpenAppend(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	if err != nil {
		if err == unix.ELOOP {
			t, _ := os.Readlink(path)
			return nil, &KindError{Path: path, Kind: kindSymlink, Target: t, Writing: true}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err == nil {
		if k := Kind(fi.Mode()); k != "" {
			f.Close()
			return nil, &KindError{Path: path, Kind: k, Writing: true}
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
