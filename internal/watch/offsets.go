package watch

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/kaasctl/kaasctl/internal/anomaly"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// OffsetEvent is one observed change of one group's offset file.
type OffsetEvent struct {
	// Prev is the previous observation; nil the first time a file is seen
	// (the follower's first scan, or a file created since).
	Prev *anomaly.Observation
	Cur  anomaly.Observation
	// Initial is true for the observations of the first scan.
	Initial bool
	// Changed maps "topic/partition" to the new offset of every partition
	// whose offset changed or that appeared; Removed lists the partitions
	// that are gone. Both are empty for a corrupt or missing file.
	Changed map[string]int64
	Removed []string
	// Anomalies are what anomaly.Compare finds between
	// Prev and Cur.
	Anomalies []anomaly.Anomaly
}

// OffsetsOptions configure FollowOffsets.
type OffsetsOptions struct {
	Dir          string        // the offsets dir to follow (volume.Layout.FollowedOffsetsDir)
	PollInterval time.Duration // default 1s
	// FullReadEvery re-reads every file every N polls even when neither
	// the directory's stat nor the file's changed (NFS attribute caching,
	// writes in place). Default 30.
	FullReadEvery int
	PollOnly      bool
	// Generation decides whether a plain-map file is an anomaly (brokers of
	// 0.2.18 read it as empty). GenUnknown claims nothing.
	Generation volume.Generation
	// OnEvents receives each batch of changes (one scan, or one fsnotify
	// burst), in order, from FollowOffsets' goroutine. A batch is never empty.
	OnEvents func([]OffsetEvent)
	// OnProblem reports the directory itself becoming unreadable (ok=false)
	// or readable again (ok=true).
	OnProblem func(msg string, ok bool)
	Now       func() time.Time
	// Seed is what an earlier run last saw (see LastJournalState): the
	// first scan is compared with it, so a change made while nothing was
	// watching is reported (and flagged) instead of taken as the baseline.
	Seed []anomaly.Observation
	// OnReady, when set, is called once the first scan is done (after its
	// OnEvents, if it found anything).
	OnReady func()
	// OnNote, when set, receives notes about how the follower works (the
	// directory check turned off, see scan).
	OnNote func(msg string)
	// OnTick, when set, is called every TickEvery from FollowOffsets'
	// goroutine, between batches (what a watch also observes besides the
	// files, in order with them: the groups' membership).
	OnTick    func()
	TickEvery time.Duration

	// noDirCheck turns the directory check off (benchmarks compare).
	noDirCheck bool
}

// dirSettle is how long a directory must keep the same stat before a poll
// trusts it to say "nothing changed": longer than the coarsest timestamp
// granularity kaas's volumes are likely to have (1 s on ext3 and some NFS
// servers; 2 s on FAT), so a change made in the same tick as the last one
// cannot hide behind an unchanged mtime.
const dirSettle = 2 * time.Second

// FollowOffsets follows every <group>.json in opt.Dir until ctx is done:
// fsnotify on the directory (kaas replaces files by rename) plus a poll,
// since on NFS writes from other hosts raise no local event. A poll stats
// the directory and, when it changed, every file (see dirUnchanged); every
// FullReadEvery polls it re-reads every file. Hidden files, *.tmp, kaasctl's backups and sub-directories
// are not offset files of the directory and are skipped.
func FollowOffsets(ctx context.Context, opt OffsetsOptions) error {
	if opt.Dir == "" {
		return errors.New("watch: no offsets dir")
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
	f := &offsetFollower{opt: opt, files: map[string]*followed{},
		plainMapIsEmpty: opt.Generation.Known() && !opt.Generation.PlainMapIsOffsets(), dirSettle: dirSettle}
	for _, o := range opt.Seed {
		if o.Missing || o.Corrupt || filepath.Dir(o.File) != filepath.Clean(opt.Dir) {
			continue
		}
		f.files[filepath.Base(o.File)] = &followed{last: f.keep(o), goodIsLast: true, seeded: true}
	}
	var events <-chan fsnotify.Event
	var errs <-chan error
	var fw *fsnotify.Watcher
	watching := false
	if !opt.PollOnly {
		if w, err := fsnotify.NewWatcher(); err == nil {
			defer w.Close()
			fw = w
			watching = fw.Add(opt.Dir) == nil
			events, errs = fw.Events, fw.Errors
		}
	}
	f.scan(false, true)
	if opt.OnReady != nil {
		opt.OnReady()
	}
	tick := time.NewTicker(opt.PollInterval)
	defer tick.Stop()
	// Events come in bursts (tmp write, rename): gather them briefly so a
	// batch is one fsync of the journal, not one per event.
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	pending := map[string]bool{}
	polls := 0
	var ticks <-chan time.Time
	if opt.OnTick != nil && opt.TickEvery > 0 {
		t := time.NewTicker(opt.TickEvery)
		defer t.Stop()
		ticks = t.C
		opt.OnTick()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticks:
			opt.OnTick()
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			name := filepath.Base(ev.Name)
			if filepath.Dir(ev.Name) != filepath.Clean(opt.Dir) || !offsetFileName(name) {
				continue
			}
			if len(pending) == 0 {
				settle.Reset(opt.PollInterval / 20)
			}
			pending[name] = true
		case _, ok := <-errs:
			if !ok {
				errs = nil
			}
		case <-settle.C:
			names := make([]string, 0, len(pending))
			for n := range pending {
				names = append(names, n)
			}
			clear(pending)
			slices.Sort(names)
			f.emit(f.checkNames(names))
		case <-tick.C:
			polls++
			if fw != nil && !watching {
				watching = fw.Add(opt.Dir) == nil
			}
			f.scan(polls%opt.FullReadEvery == 0, false)
			if f.dirProblem != "" {
				watching = false // the directory is gone: watch it again when it is back
			}
		}
	}
}

type followed struct {
	stat   statKey
	digest [32]byte
	// last is the last observation; the last one that could be read is
	// last itself (goodIsLast) or good (both unset after the file was
	// removed); its offsets are what a journal reader holds for the group
	// (a corrupt write leaves them, a removal empties them): offsetstate.go.
	last       keptObs
	good       *keptObs
	goodIsLast bool
	// seeded: known from an earlier run, not read yet in this one.
	seeded bool
}

type offsetFollower struct {
	opt             OffsetsOptions
	files           map[string]*followed // by file name
	keys            map[string]string    // the files' partition keys, shared
	plainMapIsEmpty bool
	dirProblem      string

	// The directory check (see scan): the directory's stat, when this
	// process first saw it (monotonic clock), whether it has been stable
	// for dirSettle with a per-file pass after that, and when a poll last
	// skipped the per-file pass on its word.
	dirKey     statKey
	dirSince   time.Time
	dirSettled bool
	lastSkip   time.Time
	dirSettle  time.Duration
	// dirOff: a full pass found changes the directory's stat had hidden
	// (NFS attribute caching, writes in place without a rename): the
	// follower checks every file on every poll from then on.
	dirOff bool
}

// offsetFileName reports whether a directory entry name is a group's
// offset file.
func offsetFileName(name string) bool {
	return strings.HasSuffix(name, ".json") && len(name) > len(".json") && !strings.HasPrefix(name, ".") &&
		!strings.Contains(name, volume.BackupMarker)
}

// dirUnchanged stats the directory and reports whether the per-file pass
// of this poll can be skipped.
//
// kaas writes every offset file as <group>.json.tmp and renames it over
// <group>.json, and kaasctl's own writes do the same: every commit adds
// and removes a directory entry, which sets the directory's mtime (and, on
// some file systems, its size). A directory whose stat (mtime, size,
// inode) is what it was at the last per-file pass therefore holds the
// same files as then, and one stat replaces the listing plus one stat per
// file (100,000 of them at that scale) on every poll.
//
// What the directory's stat can hide, and what covers it:
//   - A change in the same timestamp tick as the last one (coarse mtimes:
//     1 s on ext3 and some NFS servers). The stat is only trusted once it
//     has stayed the same for dirSettle and a per-file pass ran after that:
//     a later change is then in a later tick, so it moves the mtime.
//   - A write in place (no rename: an editor, a copy over the file). With
//     fsnotify working locally, the file's own event reports it; the full
//     pass every FullReadEvery polls reads every file regardless.
//   - NFS attribute caching: a client may serve the directory's cached
//     attributes for up to acdirmax (60 s by default; the acregmax=1 kaas
//     recommends is for files only), and writes from other hosts raise no
//     local fsnotify event. The full pass (a fresh listing and a read of
//     every file, which revalidates on open) bounds the delay to
//     FullReadEvery polls. When a full pass finds a change older than the
//     last poll that trusted the directory, the directory's stat is not to
//     be trusted on this mount, and the check is turned off for the rest of
//     the run (OnNote says so): every poll then checks every file again.
func (f *offsetFollower) dirUnchanged() bool {
	if f.opt.noDirCheck || f.dirOff {
		return false
	}
	st, err := os.Stat(f.opt.Dir)
	if err != nil {
		f.dirKey, f.dirSettled = statKey{}, false
		return false
	}
	k, now := statOf(st), time.Now()
	switch {
	case k != f.dirKey:
		f.dirKey, f.dirSince, f.dirSettled = k, now, false
		return false
	case f.dirSettled:
		return true
	default:
		// Stable for dirSettle: this poll's per-file pass is the last one
		// needed until the stat changes.
		f.dirSettled = now.Sub(f.dirSince) >= f.dirSettle
		return false
	}
}

// scan lists the directory and checks every offset file whose stat
// changed (every one when full), plus files that disappeared. A poll that
// is neither full nor the first skips all that when the directory has not
// changed (dirUnchanged).
func (f *offsetFollower) scan(full, initial bool) {
	unchanged := f.dirUnchanged()
	if unchanged && !full && !initial {
		f.lastSkip = time.Now()
		return
	}
	ents, err := os.ReadDir(f.opt.Dir)
	if err != nil {
		msg := f.opt.Dir + ": " + err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			msg = "missing: " + f.opt.Dir + " does not exist (no group has committed yet, or the volume is not mounted)"
		}
		if msg != f.dirProblem {
			f.dirProblem = msg
			if f.opt.OnProblem != nil {
				f.opt.OnProblem(msg, false)
			}
		}
		return
	}
	if f.dirProblem != "" {
		f.dirProblem = ""
		if f.opt.OnProblem != nil {
			f.opt.OnProblem("readable again", true)
		}
	}
	seen := map[string]bool{}
	var names []string
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !offsetFileName(name) {
			continue
		}
		seen[name] = true
		old := f.files[name]
		if old == nil || full {
			names = append(names, name)
			continue
		}
		if st, err := e.Info(); err != nil || statOf(st) != old.stat {
			names = append(names, name)
		}
	}
	for name := range f.files {
		if !seen[name] && !f.files[name].last.missing {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	evs := f.checkNames(names)
	if initial {
		for i := range evs {
			evs[i].Initial = true
		}
	}
	if full && unchanged && !f.lastSkip.IsZero() && f.missedByDir(evs) {
		f.dirOff = true
		if f.opt.OnNote != nil {
			f.opt.OnNote(f.opt.Dir + ": a full re-read found changes the directory's modification time did not show (NFS attribute caching, or files written in place): every file is checked on every poll from now on")
		}
	}
	f.emit(evs)
}

// missedByDir reports whether a full pass, made while the directory's stat
// still said "unchanged", found a file changed before the last poll that
// skipped on its word: a change the check hid. (A change after that poll
// is news for this pass, not a miss; one fsnotify reported was read
// already and is no event here.)
func (f *offsetFollower) missedByDir(evs []OffsetEvent) bool {
	for _, ev := range evs {
		if ev.Cur.Missing || ev.Prev == nil {
			continue
		}
		if st, err := os.Stat(ev.Cur.File); err == nil && st.ModTime().Before(f.lastSkip) {
			return true
		}
	}
	return false
}

func (f *offsetFollower) emit(evs []OffsetEvent) {
	if len(evs) > 0 && f.opt.OnEvents != nil {
		f.opt.OnEvents(evs)
	}
}

func statOf(st fs.FileInfo) statKey {
	return statKey{size: st.Size(), mtime: st.ModTime(), ino: inode(st)}
}

// checkNames reads the named files and returns the changes.
func (f *offsetFollower) checkNames(names []string) []OffsetEvent {
	var out []OffsetEvent
	now := f.opt.Now()
	for _, name := range names {
		path := filepath.Join(f.opt.Dir, name)
		data, st, err := readFile(path)
		old := f.files[name]
		cur := anomaly.Observation{Time: now, Group: strings.TrimSuffix(name, ".json"), File: path, Offsets: map[string]int64{}}
		var digest [32]byte
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if old == nil || old.last.missing {
				continue // created and removed between two looks
			}
			cur.Missing = true
		case err != nil:
			cur.Corrupt, cur.Problem = true, err.Error()
		default:
			digest = sha256.Sum256(data)
			if old != nil && !old.last.missing && old.digest == digest {
				old.stat = st
				continue
			}
			if of, _, perr := volume.ParseOffsetFile(path, data); perr != nil {
				cur.Corrupt, cur.Problem = true, problemText(perr)
			} else {
				cur.Format = of.Format
				for _, e := range of.Entries {
					cur.Offsets[offsetKey(e.Topic, e.Partition)] = e.Offset
				}
			}
			if old != nil && old.seeded && !cur.Corrupt && cur.Format == old.last.format && old.stateEquals(cur.Offsets) {
				// As the earlier run left it: nothing happened meanwhile.
				old.seeded, old.stat, old.digest = false, st, digest
				continue
			}
		}
		if old != nil {
			old.seeded = false
		}
		if old == nil {
			old = &followed{}
			f.files[name] = old
		} else if cur.Corrupt && old.last.corrupt && cur.Problem == old.last.problem {
			// Still the same broken file: nothing new to say.
			old.stat, old.digest = st, digest
			continue
		}
		ev := OffsetEvent{Cur: cur, Changed: map[string]int64{}}
		var ref *anomaly.Observation
		switch {
		case cur.Corrupt:
			ref = f.observation(&old.last, name)
		case old.goodObs() != nil:
			ref = f.observation(old.goodObs(), name)
		default:
			ref = f.observation(&old.last, name)
		}
		if ref != nil {
			ev.Prev = ref
			ev.Anomalies = anomaly.Compare(*ref, cur, f.plainMapIsEmpty)
		}
		switch {
		case cur.Missing:
			_, ev.Removed = OffsetDelta(old.state(), nil)
		case !cur.Corrupt:
			ev.Changed, ev.Removed = OffsetDelta(old.state(), cur.Offsets)
		}
		old.observed(f, cur)
		old.stat, old.digest = st, digest
		out = append(out, ev)
	}
	return out
}

func offsetKey(topic string, part int32) string { return topic + "/" + strconv.Itoa(int(part)) }

func problemText(err error) string {
	var fe *volume.FileError
	if errors.As(err, &fe) {
		return fe.Problem
	}
	return err.Error()
}

// OffsetDelta is what changed from before to after: every partition whose
// offset is new or different, and every partition that is gone (sorted).
func OffsetDelta(before, after map[string]int64) (changed map[string]int64, removed []string) {
	changed = map[string]int64{}
	for k, v := range after {
		if old, ok := before[k]; !ok || old != v {
			changed[k] = v
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			removed = append(removed, k)
		}
	}
	slices.Sort(removed)
	return changed, removed
}
