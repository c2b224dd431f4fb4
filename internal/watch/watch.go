// Package watch follows kaas's assignment.json as the controller rewrites
// it, and keeps a journal of every version seen.
//
// The controller replaces the file by rename (tmp + rename), so the watch
// is on the directory, not the file. fsnotify gives prompt local events; a
// poll (stat every interval, full re-read every FullReadEvery polls) covers
// NFS, where writes from other hosts raise no local event and attributes
// may be cached. A missing, half-written or invalid file is reported once
// per state change and retried; it never stops the watch.
package watch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// Version is one assignment version as read.
type Version struct {
	Assignment *volume.Assignment
	Raw        []byte
	Digest     [32]byte
	Observed   time.Time
	// Rewritten: same epoch and version as the previous one, different
	// bytes (a manual edit, or two controllers writing one file).
	Rewritten bool
}

// Options configure Run.
type Options struct {
	Path         string        // the assignment.json to follow
	PollInterval time.Duration // default 1s
	// FullReadEvery re-reads the file every N polls even when its stat did
	// not change (NFS attribute caching). Default 30.
	FullReadEvery int
	// PollOnly disables fsnotify.
	PollOnly bool
	// OnVersion is called for every new version, in order, from Run's
	// goroutine.
	OnVersion func(Version)
	// OnProblem is called when the file becomes unreadable in a new way
	// (missing, half-written, invalid); ok=true when it is readable again.
	OnProblem func(msg string, ok bool)
	// Now is the clock (tests).
	Now func() time.Time
}

// Run follows the file until ctx is done. It returns nil on cancellation;
// it only fails when it cannot start at all.
func Run(ctx context.Context, opt Options) error {
	if opt.Path == "" {
		return errors.New("watch: no path")
	}
	if opt.PollInterval <= 0 {
		opt.PollInterval = time.Second
	}
	if opt.FullReadEvery <= 0 {
		opt.FullReadEvery = 30
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	w := &watcher{opt: opt, name: filepath.Base(opt.Path), dir: filepath.Dir(opt.Path)}
	if !opt.PollOnly {
		if fw, err := fsnotify.NewWatcher(); err == nil {
			defer fw.Close()
			w.fw = fw
			w.addWatch()
		}
	}
	w.check(true)
	w.follow(ctx)
	return nil
}

// follow is Run's loop until ctx is done: a fsnotify event for the file
// reads it (and, when that fails, reads it again soon: a writer may still
// be writing), and every poll stats it (adding the directory's watch again
// when it was lost), reading it every FullReadEvery polls regardless.
func (w *watcher) follow(ctx context.Context) {
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w.fw != nil {
		events, errs = w.fw.Events, w.fw.Errors
	}
	tick := time.NewTicker(w.opt.PollInterval)
	defer tick.Stop()
	// A failed read right after an event is retried soon, not only at the
	// next poll: a writer may still be writing.
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	polls := 0
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if filepath.Base(ev.Name) != w.name {
				continue
			}
			if !w.check(false) {
				retry.Reset(w.opt.PollInterval / 10)
			}
		case _, ok := <-errs:
			if !ok {
				errs = nil
			}
			// An overflowed or failed inotify: the poll still covers us.
		case <-retry.C:
			w.check(false)
		case <-tick.C:
			polls++
			if w.fw != nil && !w.watching {
				w.addWatch()
			}
			full := polls%w.opt.FullReadEvery == 0
			w.poll(full)
		}
	}
}

type watcher struct {
	opt      Options
	name     string
	dir      string
	fw       *fsnotify.Watcher
	watching bool

	last     *Version
	lastStat statKey
	failed   bool
	problem  string
}

type statKey struct {
	size  int64
	mtime time.Time
	ino   uint64
}

func (w *watcher) addWatch() {
	if err := w.fw.Add(w.dir); err == nil {
		w.watching = true
	}
}

func (w *watcher) poll(full bool) {
	st, err := os.Stat(w.opt.Path)
	if err != nil {
		w.check(false)
		return
	}
	k := statKey{size: st.Size(), mtime: st.ModTime(), ino: inode(st)}
	if full || w.failed || k != w.lastStat {
		w.check(false)
	}
}

// check reads and parses the file; it reports a new version or a problem.
// It returns false when the file could not be used.
func (w *watcher) check(first bool) bool {
	data, st, err := readFile(w.opt.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			w.fail("missing: " + w.opt.Path + " does not exist (controller not started, or the file is being replaced)")
		} else {
			w.fail(w.opt.Path + ": " + safefs.Problem(err))
		}
		return false
	}
	w.lastStat = st
	a, _, perr := volume.ParseAssignment(w.opt.Path, data)
	if perr != nil {
		msg := perr.Error()
		if len(bytes.TrimSpace(data)) == 0 || bytes.Contains([]byte(msg), []byte("truncated")) {
			msg = "half-written: " + msg + " (will retry)"
		}
		w.fail(msg)
		return false
	}
	if w.failed && w.opt.OnProblem != nil {
		w.opt.OnProblem("readable again", true)
	}
	w.failed, w.problem = false, ""
	d := sha256.Sum256(data)
	if w.last != nil && w.last.Digest == d {
		return true
	}
	v := Version{Assignment: a, Raw: data, Digest: d, Observed: w.opt.Now()}
	if w.last != nil {
		pa := w.last.Assignment
		if pa.ControllerEpoch == a.ControllerEpoch && pa.AssignmentVersion == a.AssignmentVersion {
			v.Rewritten = true
		}
	}
	w.last = &v
	if w.opt.OnVersion != nil {
		w.opt.OnVersion(v)
	}
	return true
}

func (w *watcher) fail(msg string) {
	w.failed = true
	if msg == w.problem {
		return
	}
	w.problem = msg
	if w.opt.OnProblem != nil {
		w.opt.OnProblem(msg, false)
	}
}

// readFile reads the file: a regular file only (a FIFO or device, or a
// link to one, is an error naming it, never a hang), at most
// safefs.MaxFileBytes.
func readFile(path string) ([]byte, statKey, error) {
	data, info, err := safefs.Read(path, true, 0)
	if err != nil {
		return nil, statKey{}, err
	}
	return data, statKey{size: info.Size, mtime: info.ModTime, ino: info.Ino}, nil
}
