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
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// FileState is a file as kaasctl read it, to detect a concurrent writer.
type FileState struct {
	Path    string
	Exists  bool
	Data    []byte
	ModTime time.Time
	Size    int64
}

// ReadState reads a file's content and metadata; a missing file is a state
// too (Exists false).
func ReadState(path string) (FileState, error) {
	st := FileState{Path: path}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return st, err
	}
	st.Exists, st.Data, st.ModTime, st.Size = true, data, fi.ModTime(), fi.Size()
	return st, nil
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

// WriteOptions controls WriteFileAtomic.
type WriteOptions struct {
	// Expect, when set, aborts the write with ErrConcurrentWrite if the
	// file no longer matches it (checked before and right before the rename).
	Expect *FileState
	// Backup copies the current content to <path>.kaasctl-bak-<time>
	// before the switch (when the file exists).
	Backup bool
	// Perm is the new file's mode (default 0644).
	Perm fs.FileMode
	// Now stamps backup names (default time.Now).
	Now func() time.Time
	// afterStep, in tests, runs after each step and may fail it.
	afterStep func(step string) error
}

// WriteResult says what was written.
type WriteResult struct {
	Path   string `json:"path"`
	Backup string `json:"backup,omitempty"`
}

// WriteFileAtomic replaces path with data so that, whatever happens and
// wherever the process dies, the file holds either its old content or the
// new one: unique temp file in the same directory → fsync → rename → fsync
// of the directory. The temp file is removed on any failure before the
// rename. The backup is written (and synced) before the switch.
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
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}

	cur, err := ReadState(path)
	if err != nil {
		return res, fmt.Errorf("%s: reading before the write: %w", path, err)
	}
	if opts.Expect != nil && !opts.Expect.Same(cur) {
		return res, fmt.Errorf("%s: %w", path, ErrConcurrentWrite)
	}
	if err := step(StepCheck); err != nil {
		return res, err
	}

	if opts.Backup && cur.Exists {
		b, err := writeBackup(path, cur.Data, opts.Now())
		if err != nil {
			return res, err
		}
		res.Backup = b
	}
	if err := step(StepBackup); err != nil {
		return res, err
	}

	tmp, err := os.CreateTemp(dir, "."+base+".kaasctl-*.tmp")
	if err != nil {
		return res, fmt.Errorf("%s: creating a temp file: %w", path, err)
	}
	tmpName := tmp.Name()
	cleanup := func() { tmp.Close(); os.Remove(tmpName) }
	if _, err := tmp.Write(data); err != nil {
		cleanup()
		return res, fmt.Errorf("%s: writing %s: %w", path, tmpName, err)
	}
	if err := tmp.Chmod(opts.Perm); err != nil {
		cleanup()
		return res, fmt.Errorf("%s: chmod %s: %w", path, tmpName, err)
	}
	if err := step(StepTempWrite); err != nil {
		cleanup()
		return res, err
	}
	if err := tmp.Sync(); err != nil {
		cleanup()
		return res, fmt.Errorf("%s: fsync %s: %w", path, tmpName, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmpName)
		return res, fmt.Errorf("%s: closing %s: %w", path, tmpName, err)
	}
	if err := step(StepTempSync); err != nil {
		os.Remove(tmpName)
		return res, err
	}

	if opts.Expect != nil {
		again, err := ReadState(path)
		if err != nil || !opts.Expect.Same(again) {
			os.Remove(tmpName)
			if err != nil {
				return res, fmt.Errorf("%s: re-reading before the switch: %w", path, err)
			}
			return res, fmt.Errorf("%s: %w", path, ErrConcurrentWrite)
		}
	}
	if err := step(StepRecheck); err != nil {
		os.Remove(tmpName)
		return res, err
	}

	if err := os.Rename(tmpName, path); err != nil {
		os.Remove(tmpName)
		return res, fmt.Errorf("%s: renaming %s over it: %w", path, tmpName, err)
	}
	if err := step(StepRename); err != nil {
		return res, err
	}
	if err := syncDir(dir); err != nil {
		return res, fmt.Errorf("%s: the new content is in place, but fsync of %s failed (it may not survive a power loss): %w", path, dir, err)
	}
	return res, step(StepDirSync)
}

// BackupSuffix marks kaasctl's backups (see volume.BackupMarker).
const BackupSuffix = volume.BackupMarker

func writeBackup(path string, data []byte, now time.Time) (string, error) {
	stamp := now.UTC().Format("20060102T150405.000000000Z")
	for i := 0; ; i++ {
		name := path + BackupSuffix + stamp
		if i > 0 {
			name += fmt.Sprintf("-%d", i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("%s: writing the backup %s: %w", path, name, err)
		}
		_, werr := f.Write(data)
		serr := f.Sync()
		cerr := f.Close()
		if err := errors.Join(werr, serr, cerr); err != nil {
			os.Remove(name)
			return "", fmt.Errorf("%s: writing the backup %s: %w", path, name, err)
		}
		return name, nil
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
