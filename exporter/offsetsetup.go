package exporter

import (
	"context"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
)

// OffsetsSetup is how a long-running exporter follows the offset files:
// On (--follow-offsets), the journal (--journal) and the poll interval.
type OffsetsSetup struct {
	On           bool
	Journal      observe.JournalSpec
	PollInterval time.Duration
}

// FollowOffsetsOf sets up the offsets follower of a long-running exporter
// (nil without a volume or with o.On false): it follows the live offsets
// dir of the detected or pinned generation (observe.LiveOffsetsDir, as
// 'watch --offsets'). On a volume whose generation cannot be decided it
// is left off with a warning, unless the journal asks for it.
func FollowOffsetsOf(src *observe.Source, o OffsetsSetup, g render.Notes) (*OffsetsFollow, error) {
	if src.Layout == nil {
		if o.Journal.Dir != "" {
			return nil, exit.UsageErrorf("--journal records the volume's offset files: give the volume (--data-dir/--cluster-dir or KAAS_DATA_DIR)")
		}
		return nil, nil
	}
	if !o.On {
		return nil, nil
	}
	l := src.Layout.WithGeneration()
	if cands := l.CandidateOffsetsDirs(); len(cands) > 1 && !(l.Gen.Ambiguous && l.Gen.Gen == volume.GenUnknown) {
		// No group file yet: the follower settles on the dir the first one
		// appears in, in its own goroutine, while the exporter serves.
		g.Notef("exporter: no group file yet; the offsets follower watches %s until the first one appears", strings.Join(cands, " and "))
		return &OffsetsFollow{Candidates: cands, Open: func(dir string) (*OffsetsFollow, error) {
			gen := l.Redetected().Gen.Gen
			journal, seed, err := observe.OpenJournal(o.Journal, l.DataDir, dir, gen, g)
			if err != nil {
				return nil, err
			}
			g.Notef("exporter: settled on %s (generation %s): following its offset files", dir, gen.Label())
			return &OffsetsFollow{Dir: dir, Generation: gen, Journal: journal, Seed: seed}, nil
		}}, nil
	}
	dir, gen, err := observe.LiveOffsetsDir(context.Background(), l, o.PollInterval, g)
	if err != nil {
		if o.Journal.Dir != "" {
			return nil, err
		}
		g.Warnf("%v; the offsets follower is off: rewinds and vanished partitions are compared between refreshes", err)
		return nil, nil
	}
	journal, seed, err := observe.OpenJournal(o.Journal, src.Layout.DataDir, dir, gen, g)
	if err != nil {
		return nil, err
	}
	how := "in memory"
	if journal != nil {
		how = "journal " + journal.Dir
	}
	g.Notef("exporter: following the offset files in %s (generation %s; %s)", dir, gen.Label(), how)
	return &OffsetsFollow{Dir: dir, Generation: gen, Journal: journal, Seed: seed}, nil
}
