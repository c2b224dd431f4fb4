// Package safefs is how kaasctl touches files on the kaas volume: reads
// that always end and writes that cannot escape.
//
//   - Reads open regular files only (O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC, then
//     fstat): a FIFO, device, socket, directory or symbolic link is a
//     *KindError naming the file, so nothing ever blocks, and every read is
//     capped at MaxFileBytes, so a link to /dev/zero cannot grow memory.
//   - Dir is a directory reached from a trusted root one component at a
//     time without following links (openat with O_NOFOLLOW); every file
//     operation below it (create, rename, link, unlink) is relative to its
//     descriptor, so a link planted after the check changes nothing.
//   - Temp files and directories get unpredictable names and are created
//     exclusively (O_EXCL, mkdir), and a directory kaasctl reuses is
//     refused when it is a link or owned by another uid.
package safefs

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"
)

// MaxFileBytes caps every state file kaasctl reads into memory. kaas's
// largest files (assignment.json of a large cluster, a group with every
// partition of every topic) are a few MiB.
const MaxFileBytes = 256 << 20

// Sentinels for errors.Is.
var (
	// ErrSymlink: a path component (or the file) is a symbolic link.
	ErrSymlink = errors.New("symbolic link")
	// ErrNotRegular: the file is a FIFO, device, socket or directory.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is over the read cap.
	ErrTooLarge = errors.New("file too large")
	// ErrForeignOwner: a directory kaasctl would reuse belongs to another uid.
	ErrForeignOwner = errors.New("owned by another user")
)

// KindError is a path that is not what kaasctl may read or write through.
type KindError struct {
	Path string
	// Kind is what the path is: "symbolic link", "FIFO (named pipe)",
	// "character device", "block device", "socket", "directory".
	Kind string
	// Target is a symbolic link's target, when it could be read.
	Target string
	// Writing is true when the refusal is for a write.
	Writing bool
}

func (e *KindError) Error() string {
	if e.Kind == kindSymlink {
		to := ""
		if e.Target != "" {
			to = " (to " + e.Target + ")"
		}
		if e.Writing {
			return e.Path + ": is a symbolic link" + to + "; kaasctl does not write through links inside the volume (a planted link would redirect the write): replace the link with the real file or directory, or pass --follow-symlinks if the link is yours"
		}
		return e.Path + ": is a symbolic link" + to + "; kaasctl does not follow links inside the volume: replace it with the file it points to"
	}
	via := ""
	if e.Target != "" {
		via = " symbolic link to " + e.Target + ", a"
	}
	if e.Kind == kindDir {
		return e.Path + ": is a" + via + " directory, not a regular file"
	}
	return e.Path + ": is a" + via + " " + e.Kind + ", not a regular file; kaasctl reads only regular files (reading it could block forever or never end): remove it or replace it with the real file"
}

// Is makes errors.Is(err, ErrSymlink / ErrNotRegular) work.
func (e *KindError) Is(target error) bool {
	if e.Kind == kindSymlink {
		return target == ErrSymlink
	}
	return target == ErrNotRegular
}

// TooLargeError is a file over the read cap.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: file is larger than %d MiB (or endless, like a link to /dev/zero); kaasctl does not read it", e.Path, e.Limit>>20)
}

// Is makes errors.Is(err, ErrTooLarge) work.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// OwnerError is a directory kaasctl would reuse that another uid owns.
type OwnerError struct {
	Path     string
	UID, Own uint32
}

func (e *OwnerError) Error() string {
	return fmt.Sprintf("%s: owned by uid %d, not by kaasctl's uid %d; kaasctl does not write into a directory someone else prepared: check who created it, then remove or chown it", e.Path, e.UID, e.Own)
}

// Is makes errors.Is(err, ErrForeignOwner) work.
func (e *OwnerError) Is(target error) bool { return target == ErrForeignOwner }

const (
	kindSymlink = "symbolic link"
	kindDir     = "directory"
)

// Kind names a file mode's type the way messages say it ("" for a regular file).
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m&fs.ModeSymlink != 0:
		return kindSymlink
	case m.IsDir():
		return kindDir
	case m&fs.ModeNamedPipe != 0:
		return "FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}

// Info is what kaasctl needs of a file's metadata.
type Info struct {
	Mode    fs.FileMode
	UID     uint32
	GID     uint32
	Size    int64
	ModTime time.Time
	Dev     uint64
	Ino     uint64
}

// RandomSuffix is 16 hex digits from the system's random source: names
// nobody can predict (and so plant a link at).
func RandomSuffix() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return hex.EncodeToString(b[:])
}

// NameMax is the longest file name (one component) kaasctl creates.
const NameMax = 255

// ShortName keeps prefix+name+suffix within NameMax bytes: when it is too
// long, name is cut (at a UTF-8 boundary) and "~" plus the first 16 hex
// digits of the SHA-256 of the whole name are appended, so the result is
// deterministic and distinct for distinct names.
func ShortName(prefix, name, suffix string) string {
	if len(prefix)+len(name)+len(suffix) <= NameMax {
		return prefix + name + suffix
	}
	return prefix + Shorten(name, NameMax-len(prefix)-len(suffix)) + suffix
}

// Shorten returns name when it has at most max bytes, otherwise its first
// bytes (cut at a UTF-8 boundary), "~" and 16 hex digits of SHA-256(name),
// in at most max bytes.
func Shorten(name string, max int) string {
	if len(name) <= max {
		return name
	}
	h := hashHex(name)
	keep := max - 1 - len(h)
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8Start(name[keep]) {
		keep--
	}
	return name[:keep] + "~" + h
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// below returns path's components under root, or an error when path is
// not root or beneath it (compared after filepath.Clean).
func below(root, path string) ([]string, error) {
	root, path = filepath.Clean(root), filepath.Clean(path)
	if root == path {
		return nil, nil
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("%s is not inside %s", path, root)
	}
	return strings.Split(rel, string(filepath.Separator)), nil
}

func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// Problem words err for a message that already names the file: the path
// prefix of safefs's own errors is dropped; other errors are unchanged.
func Problem(err error) string {
	var ke *KindError
	var te *TooLargeError
	switch {
	case errors.As(err, &ke):
		return strings.TrimPrefix(ke.Error(), ke.Path+": ")
	case errors.As(err, &te):
		return strings.TrimPrefix(te.Error(), te.Path+": ")
	}
	return err.Error()
}

// CappedReader reads r (a stream the user gave, such as a --from-file CSV
// from a pipe) and fails with a *TooLargeError naming name once more than
// limit bytes (MaxFileBytes when 0) came through, so an endless stream
// cannot grow memory without bound.
func CappedReader(r io.Reader, name string, limit int64) io.Reader {
	if limit <= 0 {
		limit = MaxFileBytes
	}
	return &cappedReader{r: r, name: name, limit: limit, left: limit + 1}
}

type cappedReader struct {
	r     io.Reader
	name  string
	limit int64
	left  int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, &TooLargeError{Path: c.name, Limit: c.limit}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}
