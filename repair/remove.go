package repair

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/kaasctl/kaasctl/internal/safefs"
)

// StepRemove is the removal of a file (RemoveFileAtomic).
const StepRemove = "remove"

// RemoveFileAtomic removes path the way WriteFileAtomic replaces it: the
// directory reached from opts.Root without following links, the file
// never removed through a link (unless opts.Policy.FollowSymlinks, which
// removes the file the link names), aborted with ErrConcurrentWrite when
// it no longer matches opts.Expect (checked before the backup and right
// before the removal), a backup of its content with its owner and mode
// beside it first (opts.Backup), then the removal and an fsync of the
// directory. A failure before the removal removes the backup again; a
// file already gone is an error (nothing to remove: someone else did).
func RemoveFileAtomic(path string, opts WriteOptions) (WriteResult, error) {
	return runAtomic(path, opts, (*atomicWrite).checkRemoval, func(w *atomicWrite, _ fileOwner) (WriteResult, error) {
		if err := w.recheckRemoval(); err != nil {
			return w.res, err
		}
		return w.remove()
	})
}

// checkRemoval reads the file as it is now and refuses the removal when
// it is gone (someone else removed it) or not what the caller read
// (ErrConcurrentWrite); its owner and mode are the backup's.
func (w *atomicWrite) checkRemoval() (FileState, fileOwner, error) {
	old, info, err := w.d.ReadFile(w.base, true)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return FileState{}, fileOwner{}, fmt.Errorf("%s: the file is already gone (removed by someone else since kaasctl read it); nothing was removed", w.path)
	case err != nil:
		return FileState{}, fileOwner{}, fmt.Errorf("reading before the removal: %w", err)
	}
	cur := FileState{Path: w.path, Exists: true, Data: old, ModTime: info.ModTime, Size: info.Size}
	if err := w.checked(cur); err != nil {
		return cur, fileOwner{}, err
	}
	return cur, ownerOf(info), nil
}

// recheckRemoval reads the file once more right before the removal: one
// that changed or went away since is a concurrent write, and the backup
// this removal made is removed again.
func (w *atomicWrite) recheckRemoval() error {
	again, _, err := w.d.ReadFile(w.base, true)
	if err != nil || (w.opts.Expect != nil && !w.opts.Expect.Same(FileState{Exists: true, Data: again})) {
		w.removeBackup()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: re-reading before the removal: %w", w.path, err)
		}
		return fmt.Errorf("%s: %w", w.path, ErrConcurrentWrite)
	}
	if err := w.step(StepRecheck); err != nil {
		w.removeBackup()
		return err
	}
	return nil
}

// remove removes the file, makes the removal durable (fsync of the
// directory) and prunes backups beyond the retention. A failure of the
// removal itself removes the backup again; one after it leaves the file
// removed.
func (w *atomicWrite) remove() (WriteResult, error) {
	if err := w.d.Remove(w.base); err != nil {
		w.removeBackup()
		return w.res, fmt.Errorf("%s: removing: %w", w.path, err)
	}
	return w.settle(StepRemove, "removed", "the removal")
}

// openForWrite opens the directory a write or removal of path works in
// (below opts.Root, no link followed unless the policy says so; with it, a
// link at path is resolved to the file it names) and the file's name in it.
func openForWrite(path string, opts WriteOptions) (*safefs.Dir, string, error) {
	dir, base := splitPath(path)
	d, err := safefs.OpenBelow(opts.Root, dir, opts.Policy.FollowSymlinks, true)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if !opts.Policy.FollowSymlinks {
		return d, base, nil
	}
	info, err := d.Lstat(base)
	if err != nil || info.Mode&fs.ModeSymlink == 0 {
		return d, base, nil
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		d.Close()
		return nil, "", fmt.Errorf("%s: resolving the link: %w", path, err)
	}
	nd, err := safefs.OpenDir(filepath.Dir(target))
	d.Close()
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return nd, filepath.Base(target), nil
}
