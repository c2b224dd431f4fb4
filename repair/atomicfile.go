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
	if opts.Perm == 0 {
		opts.Perm = 0o644
	}
	return runAtomic(path, opts, (*atomicWrite).check, func(w *atomicWrite, own fileOwner) (WriteResult, error) {
		if err := w.writeTemp(data, own); err != nil {
			return w.res, err
		}
		if err := w.recheck(); err != nil {
			return w.res, err
		}
		return w.switchOver()
	})
}

// runAtomic runs the steps a write and a removal share: it opens path's
// directory (openDir), reads and checks the file (check: the current
// state and the owner and mode the result and the backup get), backs it
// up, hands over to finish, and closes the directory.
func runAtomic(path string, opts WriteOptions, check func(*atomicWrite) (FileState, fileOwner, error), finish func(*atomicWrite, fileOwner) (WriteResult, error)) (WriteResult, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	w := &atomicWrite{path: path, opts: opts, res: WriteResult{Path: path}}
	err := w.openDir()
	defer func() {
		if w.d != nil {
			w.d.Close()
		}
	}()
	if err != nil {
		return w.res, err
	}
	cur, own, err := check(w)
	if err != nil {
		return w.res, err
	}
	if err := w.backup(cur, own); err != nil {
		return w.res, err
	}
	return finish(w, own)
}

// atomicWrite is one WriteFileAtomic or RemoveFileAtomic: the directory
// the file is written in (opened without following links), the file's name
// there, and what the write created so far (backup, temp file), which a
// failure before the switch removes.
type atomicWrite struct {
	path       string
	opts       WriteOptions
	res        WriteResult
	d          *safefs.Dir
	base       string
	where      string // d's path
	backupName string
	tmp        *os.File
	tmpName    string
}

// step runs the test hook after the write step name.
func (w *atomicWrite) step(name string) error {
	if w.opts.afterStep != nil {
		if err := w.opts.afterStep(name); err != nil {
			return fmt.Errorf("%s: %s: %w", w.path, name, err)
		}
	}
	return nil
}

// openDir opens the file's directory from opts.Root without following
// links; with --follow-symlinks a link at the file itself is resolved and
// its target's directory opened instead (openForWrite, the one rule).
func (w *atomicWrite) openDir() error {
	d, base, err := openForWrite(w.path, w.opts)
	if err != nil {
		return err
	}
	w.d, w.base, w.where = d, base, d.Path()
	return nil
}

// check reads the file as it is now, refuses the write when it is not
// what the caller read (ErrConcurrentWrite), and decides the result's
// owner and mode: the old file's; a new file takes the mode asked for and,
// when kaasctl runs as root, its directory's owner (the broker's uid), so
// brokers can rewrite it.
func (w *atomicWrite) check() (FileState, fileOwner, error) {
	cur := FileState{Path: w.path}
	old, info, err := w.d.ReadFile(w.base, true)
	switch {
	case err == nil:
		cur.Exists, cur.Data, cur.ModTime, cur.Size = true, old, info.ModTime, info.Size
	case errors.Is(err, fs.ErrNotExist):
	default:
		return cur, fileOwner{}, fmt.Errorf("reading before the write: %w", err)
	}
	if err := w.checked(cur); err != nil {
		return cur, fileOwner{}, err
	}
	own := fileOwner{mode: w.opts.Perm}
	if cur.Exists {
		own = ownerOf(info)
	} else if os.Geteuid() == 0 {
		if di, err := w.d.Stat(); err == nil {
			own.set, own.uid, own.gid = true, di.UID, di.GID
		}
	}
	return cur, own, nil
}

// checked refuses a write or removal of a file that is not what the
// caller read (ErrConcurrentWrite), then runs the check step's hook.
func (w *atomicWrite) checked(cur FileState) error {
	if w.opts.Expect != nil && !w.opts.Expect.Same(cur) {
		return fmt.Errorf("%s: %w", w.path, ErrConcurrentWrite)
	}
	return w.step(StepCheck)
}

// ownerOf is the owner and mode of an existing file.
func ownerOf(info safefs.Info) fileOwner {
	return fileOwner{set: true, uid: info.UID, gid: info.GID, mode: info.Mode.Perm()}
}

// backup copies the current content beside the file, when asked for and
// the file exists.
func (w *atomicWrite) backup(cur FileState, own fileOwner) error {
	if w.opts.Backup && cur.Exists {
		name, err := writeBackup(w.d, w.base, cur.Data, own, w.opts.Now())
		if err != nil {
			return fmt.Errorf("%s: writing the backup: %w", w.path, err)
		}
		w.backupName, w.res.Backup = name, filepath.Join(w.where, name)
	}
	if err := w.step(StepBackup); err != nil {
		w.removeBackup()
		return err
	}
	return nil
}

// removeBackup removes the backup this write made, if any.
func (w *atomicWrite) removeBackup() {
	if w.backupName != "" {
		w.d.Remove(w.backupName)
		w.res.Backup = ""
	}
}

// abort removes what the write created before the switch (the temp file
// and the backup) and returns err.
func (w *atomicWrite) abort(err error) error {
	w.tmp.Close()
	w.d.Remove(w.tmpName)
	w.removeBackup()
	return err
}

// writeTemp writes data to a new, exclusive temp file beside the file
// (after sweeping the temp files an interrupted kaasctl left there), with
// the result's owner and mode, and makes it durable.
func (w *atomicWrite) writeTemp(data []byte, own fileOwner) error {
	w.res.StaleTemps = sweepStaleTemps(w.d)
	tmp, tmpName, err := w.d.CreateTemp(TempPrefix(w.base), ".tmp")
	if err != nil {
		w.removeBackup()
		return fmt.Errorf("%s: creating a temp file: %w", w.path, err)
	}
	w.tmp, w.tmpName = tmp, tmpName
	// Held until the temp file is renamed or removed, and released by the
	// kernel when the process dies: a later run tells an abandoned temp
	// file from one being written.
	safefs.TryLock(tmp)
	tmpPath := filepath.Join(w.where, tmpName)
	if _, err := tmp.Write(data); err != nil {
		return w.abort(fmt.Errorf("%s: writing %s: %w", w.path, tmpPath, err))
	}
	if err := own.apply(tmp); err != nil {
		return w.abort(fmt.Errorf("%s: %w", w.path, err))
	}
	if err := w.step(StepTempWrite); err != nil {
		return w.abort(err)
	}
	if err := tmp.Sync(); err != nil {
		return w.abort(fmt.Errorf("%s: fsync %s: %w", w.path, tmpPath, err))
	}
	if err := tmp.Close(); err != nil {
		return w.abort(fmt.Errorf("%s: closing %s: %w", w.path, tmpPath, err))
	}
	if err := w.step(StepTempSync); err != nil {
		return w.abort(err)
	}
	return nil
}

// recheck compares the file with what the caller read once more, right
// before the switch.
func (w *atomicWrite) recheck() error {
	if w.opts.Expect != nil {
		again, _, err := w.d.ReadFile(w.base, true)
		now := FileState{Path: w.path, Exists: err == nil, Data: again}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return w.abort(fmt.Errorf("%s: re-reading before the switch: %w", w.path, err))
		}
		if !w.opts.Expect.Same(now) {
			return w.abort(fmt.Errorf("%s: %w", w.path, ErrConcurrentWrite))
		}
	}
	if err := w.step(StepRecheck); err != nil {
		return w.abort(err)
	}
	return nil
}

// switchOver renames the temp file over the file, makes the rename
// durable (fsync of the directory) and prunes backups beyond the
// retention. A failure after the rename leaves the new content in place.
func (w *atomicWrite) switchOver() (WriteResult, error) {
	if err := w.d.Rename(w.tmpName, w.base); err != nil {
		return w.res, w.abort(fmt.Errorf("%s: renaming %s over it: %w", w.path, filepath.Join(w.where, w.tmpName), err))
	}
	return w.settle(StepRename, "the new content is in place", "it")
}

// settle follows the switch (step: the rename or the removal): its step's
// hook, the fsync of the directory that makes it durable (done and what
// name what a failure of it leaves), and the pruning of backups beyond
// the retention.
func (w *atomicWrite) settle(step, done, what string) (WriteResult, error) {
	if err := w.step(step); err != nil {
		return w.res, err
	}
	if err := w.d.Sync(); err != nil {
		return w.res, fmt.Errorf("%s: %s, but fsync of %s failed (%s may not survive a power loss): %w", w.path, done, w.where, what, err)
	}
	if err := w.step(StepDirSync); err != nil {
		return w.res, err
	}
	if w.opts.Backup {
		w.res.Pruned = pruneBackups(w.d, w.base, w.opts.Policy.Keep(), w.opts.Now())
	}
	return w.res, nil
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
