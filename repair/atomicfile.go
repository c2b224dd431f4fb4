// Package repair holds everything in kaasctl that writes to the volume or
// commits over the wire. Every write is planned first (dry-run is the
// default), backed up, atomic, and verified.
package repair

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// FileState is a file as kaasctl read it, to detect a concurrent writer.
type FileState struct {
	Path    string
	Exists  bool
	Data    []byte
	ModTime time.Time
	Size    int64
	// Mode is the file's permission bits.
	Mode fs.FileMode
}

// ReadState reads a file's content and metadata; a missing file is a state
// too (Exists false). Only a regular file is read (never through a link at
// the last component, never a FIFO or device), at most safefs.MaxFileBytes.
func ReadState(path string) (FileState, error) {
	return readState(path, false)
}

// readState is ReadState; follow lets the file be a link (--follow-symlinks).
func readState(path string, follow bool) (FileState, error) {
	st := FileState{Path: path}
	var data []byte
	var info safefs.Info
	var err error
	if follow {
		data, info, err = safefs.ReadFileFollow(path, 0)
	} else {
		var d *safefs.Dir
		dir, base := splitPath(path)
		if d, err = safefs.OpenDir(dir); err == nil {
			data, info, err = d.ReadFile(base, false)
			d.Close()
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	st.Exists, st.Data, st.ModTime, st.Size, st.Mode = true, data, info.ModTime, info.Size, info.Mode.Perm()
	return st, nil
}

func splitPath(path string) (string, string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	return dir, base
}

// Same reports whether two states show the same file content.
func (s FileState) Same(o FileState) bool {
	return s.Exists == o.Exists && bytes.Equal(s.Data, o.Data)
}

// ErrConcurrentWrite means the file changed between kaasctl's read and its
// write: someone else (a broker) is writing it.
var ErrConcurrentWrite = errors.New("the file changed since kaasctl read it (a broker or another tool is writing it); nothing was written")

// Write steps, in order; failure injection in tests names them.
const (
	StepCheck     = "check"      // compare the file with what was read
	StepBackup    = "backup"     // copy the old content beside the file
	StepTempWrite = "temp-write" // write the new content to a unique temp file
	StepTempSync  = "temp-fsync" // fsync the temp file
	StepRecheck   = "recheck"    // compare again right before the switch
	StepRename    = "rename"     // rename the temp file over the target
	StepDirSync   = "dir-fsync"  // fsync the directory so the rename is durable
)

// Policy is what the user allows kaasctl's writes to do: the writing
// commands' --follow-symlinks and --keep-backups (KAASCTL_KEEP_BACKUPS).
type Policy struct {
	// FollowSymlinks writes through a symbolic link inside the volume (a
	// linked offsets dir or group file); by default such a write is refused.
	FollowSymlinks bool `json:"followSymlinks"`
	// KeepBackups is how many backups per file a write keeps: 0 means
	// volume.DefaultKeepBackups, a negative number keeps them all.
	KeepBackups int `json:"keepBackups"`
}

// Keep is the effective number of backups kept per file (-1: all).
func (p Policy) Keep() int {
	switch {
	case p.KeepBackups == 0:
		return volume.DefaultKeepBackups
	case p.KeepBackups < 0:
		return -1
	}
	return p.KeepBackups
}

// WriteOptions controls WriteFileAtomic.
type WriteOptions struct {
	// Expect, when set, aborts the write with ErrConcurrentWrite if the
	// file no longer matches it (checked before and right before the rename).
	Expect *FileState
	// Backup copies the current content to <path>.kaasctl-bak-<time>
	// before the switch (when the file exists); see BackupName.
	Backup bool
	// Perm is a new file's mode (default 0644); an existing file keeps its
	// own mode and owner.
	Perm fs.FileMode
	// Now stamps backup names (default time.Now).
	Now func() time.Time
	// Root is the volume directory path lies in (the cluster dir or the
	// data dir; see VolumeRoot): every component below it is opened
	// without following links. Empty: only the file itself is checked.
	Root string
	// Policy: --follow-symlinks and the backup retention.
	Policy Policy
	// afterStep, in tests, runs after each step and may fail it.
	afterStep func(step string) error
}

// WriteResult says what was written.
type WriteResult struct {
	Path   string `json:"path"`
	Backup string `json:"backup,omitempty"`
	// Pruned are older backups removed by the retention.
	Pruned []string `json:"pruned,omitempty"`
	// StaleTemps are temp files an interrupted kaasctl left in the
	// directory, removed before this write (the first write of a run into
	// a directory looks for them).
	StaleTemps []string `json:"staleTemps,omitempty"`
}

// VolumeRoot is the directory of l a write to path is checked from, for
// WriteOptions.Root (volume.Layout.WriteRoot: the outermost volume dir
// holding path, so DATA/__cluster is checked too); "" when path is in
// neither.
func VolumeRoot(l volume.Layout, path string) string { return l.WriteRoot(path) }

// CheckWritePath refuses a path a write would reach through a symbolic
// link (a component below root, or the file itself) unless the policy
// follows links. A missing file is fine; a missing directory is too (a
// write creates it).
func CheckWritePath(root, path string, pol Policy) error {
	if pol.FollowSymlinks {
		return nil
	}
	dir, base := splitPath(path)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	d, err := safefs.OpenBelow(root, dir, false, true)
	if err != nil {
		return err
	}
	defer d.Close()
	info, err := d.Lstat(base)
	if err != nil {
		return nil
	}
	if k := safefs.Kind(info.Mode); k != "" {
		if k == "symbolic link" {
			to, _ := os.Readlink(path)
			return &safefs.KindError{Path: path, Kind: k, Target: to, Writing: true}
		}
		return &safefs.KindError{Path: path, Kind: k}
	}
	return nil
}

// WriteFileAtomic replaces path with data so that, whatever happens and
// wherever the process dies, the file holds either its old content or the
// new one: unique temp file in the same directory → fsync → rename → fsync
// of the directory. Every step is relative to the directory reached from
// opts.Root without following links; the file itself is never written
// through a link (unless opts.Policy.FollowSymlinks). The new file keeps
// the old one's owner and mode; the backup has the same owner and mode.
// Any failure before the rename removes what the write created (temp file
// and backup). After the switch, backups beyond the retention are removed.
func WriteFileAtomic(path string, data []byte, opts WriteOptions) (WriteResult, error) {
	res := WriteResult{Path: path}
	if opts.Perm == 0 {
		opts.Perm = 0o644
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	step := func(name string) error {
		if opts.afterStep != nil {
			if err := opts.afterStep(name); err != nil {
				return fmt.Errorf("%s: %s: %w", path, name, err)
			}
		}
		return nil
	}
	dir, base := splitPath(path)
	d, err := safefs.OpenBelow(opts.Root, dir, opts.Policy.FollowSymlinks, true)
	if err != nil {
		return res, fmt.Errorf("%s: %w", path, err)
	}
	defer func() { d.Close() }()
	if opts.Policy.FollowSymlinks {
		if info, err := d.Lstat(base); err == nil && info.Mode&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(path)
			if err != nil {
				return res, fmt.Errorf("%s: resolving the link: %w", path, err)
			}
			nd, err := safefs.OpenDir(filepath.Dir(target))
			if err != nil {
				return res, fmt.Errorf("%s: %w", path, err)
			}
			d.Close()
			d, base = nd, filepath.Base(target)
		}
	}
	where := d.Path()

	cur := FileState{Path: path}
	old, info, err := d.ReadFile(base, true)
	switch {
	case err == nil:
		cur.Exists, cur.Data, cur.ModTime, cur.Size = true, old, info.ModTime, info.Size
	case errors.Is(err, fs.ErrNotExist):
	default:
		return res, fmt.Errorf("reading before the write: %w", err)
	}
	if opts.Expect != nil && !opts.Expect.Same(cur) {
		return res, fmt.Errorf("%s: %w", path, ErrConcurrentWrite)
	}
	if err := step(StepCheck); err != nil {
		return res, err
	}
	// Owner and mode of the result: the old file's; a new file takes the
	// mode asked for and, when kaasctl runs as root, its directory's owner
	// (the broker's uid), so brokers can rewrite it.
	own := fileOwner{mode: opts.Perm}
	if cur.Exists {
		own = fileOwner{set: true, uid: info.UID, gid: info.GID, mode: info.Mode.Perm()}
	} else if os.Geteuid() == 0 {
		if di, err := d.Stat(); err == nil {
			own.set, own.uid, own.gid = true, di.UID, di.GID
		}
	}

	backupName := ""
	removeBackup := func() {
		if backupName != "" {
			d.Remove(backupName)
			res.Backup = ""
		}
	}
	if opts.Backup && cur.Exists {
		name, err := writeBackup(d, base, cur.Data, own, opts.Now())
		if err != nil {
			return res, fmt.Errorf("%s: writing the backup: %w", path, err)
		}
		backupName, res.Backup = name, filepath.Join(where, name)
	}
	if err := step(StepBackup); err != nil {
		removeBackup()
		return res, err
	}

	res.StaleTemps = sweepStaleTemps(d)
	tmp, tmpName, err := d.CreateTemp(TempPrefix(base), ".tmp")
	if err != nil {
		removeBackup()
		return res, fmt.Errorf("%s: creating a temp file: %w", path, err)
	}
	// Held until the temp file is renamed or removed, and released by the
	// kernel when the process dies: a later run tells an abandoned temp
	// file from one being written.
	safefs.TryLock(tmp)
	tmpPath := filepath.Join(where, tmpName)
	fail := func(err error) (WriteResult, error) {
		tmp.Close()
		d.Remove(tmpName)
		removeBackup()
		return res, err
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(fmt.Errorf("%s: writing %s: %w", path, tmpPath, err))
	}
	if err := own.apply(tmp); err != nil {
		return fail(fmt.Errorf("%s: %w", path, err))
	}
	if err := step(StepTempWrite); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(fmt.Errorf("%s: fsync %s: %w", path, tmpPath, err))
	}
	if err := tmp.Close(); err != nil {
		return fail(fmt.Errorf("%s: closing %s: %w", path, tmpPath, err))
	}
	if err := step(StepTempSync); err != nil {
		return fail(err)
	}

	if opts.Expect != nil {
		again, _, err := d.ReadFile(base, true)
		now := FileState{Path: path, Exists: err == nil, Data: again}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(fmt.Errorf("%s: re-reading before the switch: %w", path, err))
		}
		if !opts.Expect.Same(now) {
			return fail(fmt.Errorf("%s: %w", path, ErrConcurrentWrite))
		}
	}
	if err := step(StepRecheck); err != nil {
		return fail(err)
	}

	if err := d.Rename(tmpName, base); err != nil {
		return fail(fmt.Errorf("%s: renaming %s over it: %w", path, tmpPath, err))
	}
	if err := step(StepRename); err != nil {
		return res, err
	}
	if err := d.Sync(); err != nil {
		return res, fmt.Errorf("%s: the new content is in place, but fsync of %s failed (it may not survive a power loss): %w", path, where, err)
	}
	if err := step(StepDirSync); err != nil {
		return res, err
	}
	if opts.Backup {
		res.Pruned = pruneBackups(d, base, opts.Policy.Keep(), opts.Now())
	}
	return res, nil
}

// fileOwner is the owner and mode a written file gets.
type fileOwner struct {
	set      bool
	uid, gid uint32
	mode     fs.FileMode
}

func (o fileOwner) apply(f *os.File) error {
	if o.set {
		if err := safefs.Fchown(f, o.uid, o.gid); err != nil {
			return fmt.Errorf("cannot keep the file's owner %d:%d (kaasctl runs as uid %d): run kaasctl as the file's owner or as root: %w", o.uid, o.gid, os.Geteuid(), err)
		}
	}
	if err := f.Chmod(o.mode); err != nil {
		return fmt.Errorf("cannot keep the file's mode %04o: %w", o.mode, err)
	}
	return nil
}

// BackupSuffix marks kaasctl's backups (see volume.BackupMarker).
const BackupSuffix = volume.BackupMarker

// backupStamp is the time part of a backup name (sortable, fixed width).
const backupStamp = volume.BackupStampLayout

// backupTail is the room kept after the stem: the marker, the stamp and a
// "-NN" for backups taken in the same nanosecond.
const backupTail = len(BackupSuffix) + len(backupStamp) + 3

// BackupStem is the part of a backup name that stands for the file: the
// file name itself, or, when it is too long for NAME_MAX with the backup
// suffix (group ids over 207 bytes), its first bytes, "~" and 16 hex digits
// of the SHA-256 of the whole file name (docs/offsets-writes.md).
func BackupStem(base string) string {
	return safefs.Shorten(base, safefs.NameMax-backupTail)
}

// BackupName is the name of a backup of the file base taken at t (the
// n-th one in the same nanosecond when n > 0).
func BackupName(base string, t time.Time, n int) string {
	name := BackupStem(base) + BackupSuffix + t.UTC().Format(backupStamp)
	if n > 0 {
		name += fmt.Sprintf("-%d", n)
	}
	return name
}

// TempPrefix is the start of a temp file's name ("." + the file name,
// shortened like BackupStem when needed, + ".kaasctl-"); 16 random hex
// digits and ".tmp" follow.
func TempPrefix(base string) string {
	const tail = len(".kaasctl-") + 16 + len(".tmp")
	return "." + safefs.Shorten(base, safefs.NameMax-1-tail) + ".kaasctl-"
}

// writeBackup writes data as a new backup of base in d: created
// exclusively, never through a link, with the file's owner and mode (so a
// backup is never more readable than its file), synced.
func writeBackup(d *safefs.Dir, base string, data []byte, own fileOwner, now time.Time) (string, error) {
	for i := 0; ; i++ {
		name := BackupName(base, now, i)
		f, err := d.Create(name, 0o600)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", err
		}
		werr := own.apply(f)
		if werr == nil {
			_, werr = f.Write(data)
		}
		serr := f.Sync()
		cerr := f.Close()
		if err := errors.Join(werr, serr, cerr); err != nil {
			d.Remove(name)
			return "", fmt.Errorf("%s: %w", filepath.Join(d.Path(), name), err)
		}
		return name, nil
	}
}

// isBackupOf reports whether name is one of kaasctl's backups of base.
func isBackupOf(name, base string) bool {
	rest, ok := strings.CutPrefix(name, BackupStem(base)+BackupSuffix)
	if !ok || len(rest) < len(backupStamp) {
		return false
	}
	if _, err := time.Parse(backupStamp, rest[:len(backupStamp)]); err != nil {
		return false
	}
	n := rest[len(backupStamp):]
	if n == "" {
		return true
	}
	if n[0] != '-' {
		return false
	}
	_, err := strconv.Atoi(n[1:])
	return err == nil
}

// listBackups returns the names of base's backups in d, oldest first.
func listBackups(d *safefs.Dir, base string) []string {
	names, err := d.Names()
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range names {
		if isBackupOf(n, base) {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, compareBackups)
	return out
}

// compareBackups orders backup names by time, then by their -N.
func compareBackups(a, b string) int {
	ia, ib := strings.Index(a, BackupSuffix), strings.Index(b, BackupSuffix)
	ta, tb := a[ia+len(BackupSuffix):], b[ib+len(BackupSuffix):]
	if c := strings.Compare(ta[:len(backupStamp)], tb[:len(backupStamp)]); c != 0 {
		return c
	}
	na, _ := strconv.Atoi(strings.TrimPrefix(ta[len(backupStamp):], "-"))
	nb, _ := strconv.Atoi(strings.TrimPrefix(tb[len(backupStamp):], "-"))
	return na - nb
}

// pruneBackups removes base's oldest backups (regular files only) so at
// most keep remain; keep < 0 keeps them all. Backups named for a time
// after now (a clock that was ahead, a file kaasctl did not make) count
// as the oldest: the one a write just made is never removed for them. It
// returns what it removed.
func pruneBackups(d *safefs.Dir, base string, keep int, now time.Time) []string {
	if keep < 0 {
		return nil
	}
	all := listBackups(d, base)
	future := func(n string) bool {
		t, ok := volume.BackupTime(n)
		return ok && t.After(now.Add(volume.FutureSlack))
	}
	slices.SortStableFunc(all, func(a, b string) int { return boolCmp(!future(a), !future(b)) })
	var removed []string
	for _, n := range all[:max(0, len(all)-keep)] {
		if info, err := d.Lstat(n); err != nil || !info.Mode.IsRegular() {
			continue
		}
		if d.Remove(n) == nil {
			removed = append(removed, filepath.Join(d.Path(), n))
		}
	}
	if len(removed) > 0 {
		d.Sync()
	}
	return removed
}

// kaasctlTempRE matches the temp files WriteFileAtomic creates (see
// TempPrefix), and nothing else.
var kaasctlTempRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\..+\.kaasctl-[0-9a-f]{16}\.tmp$`) })

// swept records the directories this process already swept.
var swept sync.Map

// sweepStaleTemps removes, once per directory per process, the temp files
// kaasctl left there when it was killed between creating one and renaming
// it (a bulk reset interrupted twice, a SIGKILL): kaasctl's own names
// only, and only those whose lock can be taken, so no other process is
// writing them. Returns the paths removed.
func sweepStaleTemps(d *safefs.Dir) []string {
	if _, done := swept.LoadOrStore(d.Path(), true); done {
		return nil
	}
	names, err := d.Names()
	if err != nil {
		return nil
	}
	var removed []string
	for _, n := range names {
		if !kaasctlTempRE().MatchString(n) {
			continue
		}
		f, err := d.OpenRegular(n)
		if err != nil {
			continue
		}
		free, _ := safefs.TryLock(f)
		if free && d.Remove(n) == nil {
			removed = append(removed, filepath.Join(d.Path(), n))
		}
		f.Close()
	}
	if len(removed) > 0 {
		d.Sync()
	}
	slices.Sort(removed)
	return removed
}
