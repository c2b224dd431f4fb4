package repair

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

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
	res := WriteResult{Path: path}
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
	d, base, err := openForWrite(path, opts)
	if err != nil {
		return res, err
	}
	defer func() { d.Close() }()
	old, info, err := d.ReadFile(base, true)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return res, fmt.Errorf("%s: the file is already gone (removed by someone else since kaasctl read it); nothing was removed", path)
	case err != nil:
		return res, fmt.Errorf("reading before the removal: %w", err)
	}
	cur := FileState{Path: path, Exists: true, Data: old, ModTime: info.ModTime, Size: info.Size}
	if opts.Expect != nil && !opts.Expect.Same(cur) {
		return res, fmt.Errorf("%s: %w", path, ErrConcurrentWrite)
	}
	if err := step(StepCheck); err != nil {
		return res, err
	}
	backupName := ""
	undo := func(err error) (WriteResult, error) {
		if backupName != "" {
			d.Remove(backupName)
			res.Backup = ""
		}
		return res, err
	}
	if opts.Backup {
		own := fileOwner{set: true, uid: info.UID, gid: info.GID, mode: info.Mode.Perm()}
		name, err := writeBackup(d, base, old, own, opts.Now())
		if err != nil {
			return res, fmt.Errorf("%s: writing the backup: %w", path, err)
		}
		backupName, res.Backup = name, filepath.Join(d.Path(), name)
	}
	if err := step(StepBackup); err != nil {
		return undo(err)
	}
	again, _, err := d.ReadFile(base, true)
	if err != nil || (opts.Expect != nil && !opts.Expect.Same(FileState{Exists: true, Data: again})) {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return undo(fmt.Errorf("%s: re-reading before the removal: %w", path, err))
		}
		return undo(fmt.Errorf("%s: %w", path, ErrConcurrentWrite))
	}
	if err := step(StepRecheck); err != nil {
		return undo(err)
	}
	if err := d.Remove(base); err != nil {
		return undo(fmt.Errorf("%s: removing: %w", path, err))
	}
	if err := step(StepRemove); err != nil {
		return res, err
	}
	if err := d.Sync(); err != nil {
		return res, fmt.Errorf("%s: removed, but fsync of %s failed (the removal may not survive a power loss): %w", path, d.Path(), err)
	}
	if err := step(StepDirSync); err != nil {
		return res, err
	}
	if opts.Backup {
		res.Pruned = pruneBackups(d, base, opts.Policy.Keep(), opts.Now())
	}
	return res, nil
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
