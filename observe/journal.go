package observe

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/anomaly"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/render"
)

// JournalSpec is --journal DIR with its retention flags.
type JournalSpec struct {
	Dir        string // the --journal DIR ("": no journal)
	MaxBytes   int64
	MaxAge     time.Duration
	SegmentAge time.Duration
}

// EventJournal is the events journal of the --journal DIR (nil without
// one), observed by observer every interval, with the offsets journal's
// retention.
func (js JournalSpec) EventJournal(observer string, interval time.Duration) *watch.EventJournal {
	if js.Dir == "" {
		return nil
	}
	return &watch.EventJournal{Dir: filepath.Join(js.Dir, watch.EventJournalSubdir), Observer: observer, Interval: interval,
		MaxBytes: js.MaxBytes, MaxAge: js.MaxAge, SegmentAge: js.SegmentAge}
}

// OpenJournal opens the offsets journal in DIR/offsets for the offsets
// dir dir of generation gen (nil without a DIR); a DIR inside the volume
// dataDir is refused. A journal that already holds a run is resumed: seed
// is where it left off, so the follower reports and flags what changed
// while nothing was watching.
func OpenJournal(js JournalSpec, dataDir, dir string, gen volume.Generation, notes render.Notes) (journal *watch.OffsetJournal, seed []anomaly.Observation, err error) {
	if js.Dir == "" {
		return nil, nil, nil
	}
	if w, err := watch.CheckJournalDir(js.Dir, dataDir); err != nil {
		return nil, nil, exit.Refusedf("%v", err)
	} else if w != "" {
		notes.Warnf("%s", w)
	}
	journal = &watch.OffsetJournal{Dir: filepath.Join(js.Dir, watch.OffsetJournalSubdir), OffsetsDir: dir, Generation: gen,
		MaxBytes: js.MaxBytes, MaxAge: js.MaxAge, SegmentAge: js.SegmentAge}
	state, last, err := watch.LastJournalState(journal.Dir)
	if err != nil {
		notes.Warnf("journal %s: %v (starting without the earlier state)", journal.Dir, err)
	} else if len(state) > 0 {
		seed = state
		journal.Resume(state)
		notes.Notef("resuming the journal: %s as of %s; changes since are compared with it", render.Plural(len(state), "group", "groups"), render.Timestamp(last))
	}
	return journal, seed, nil
}

// LiveOffsetsDir is the offsets dir `watch --offsets` (and the exporter's
// follower) follows and the generation it assumes: the detected or pinned
// (--kaas-version) one. A volume whose two offsets dirs both hold group
// files is refused until the version is pinned. On one with no group file
// yet every dir a generation it could be writes is watched until the
// first group file appears in one (watch.SettleOffsetsDir), and the note says
// which dir it settled on: a follower started before the first commit
// follows the dir kaas writes, not a guess.
func LiveOffsetsDir(ctx context.Context, l volume.Layout, poll time.Duration, notes render.Notes) (string, volume.Generation, error) {
	l = l.WithGeneration()
	gi := l.Gen
	if gi.Ambiguous && gi.Gen == volume.GenUnknown {
		return "", gi.Gen, exit.Refusedf("%v", &volume.GenerationError{Info: gi})
	}
	if gi.LiveOffsetsDir != "" {
		return gi.LiveOffsetsDir, gi.Gen, nil
	}
	cands := l.CandidateOffsetsDirs()
	if len(cands) == 1 {
		notes.Notef("kaas generation %s (%s): following %s", gi.Label, gi.Evidence, cands[0])
		return cands[0], gi.Gen, nil
	}
	notes.Notef("kaas generation %s (%s): no group file yet; watching %s until the first one appears", gi.Label, gi.Evidence, strings.Join(cands, " and "))
	dir, err := watch.SettleOffsetsDir(ctx, cands, poll)
	if err != nil {
		return "", gi.Gen, err
	}
	settled := l.Redetected().Gen
	notes.Notef("settled on %s: the first group file appeared there (kaas generation %s, %s)", dir, settled.Label, settled.Source)
	return dir, settled.Gen, nil
}
