package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/render/views"
)

// watchOffsetsFlags are the flags of `watch --offsets` (added to watch).
func watchOffsetsFlags() []cli.Flag {
	const cat = "Offsets (--offsets)"
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "offsets", Usage: "follow every group's offset file instead of assignment.json: print changes and anomalies (REWIND, VANISHED, PLAIN_MAP, CORRUPT, EMPTIED) as they happen; with --journal, record every change", Category: cat},
		&cli.BoolFlag{Name: "anomalies-only", Usage: "print only anomalies (the journal still records every change)", Category: cat},
	}, append(offsetJournalFlags(cat), watchMembersFlags()...)...)
}

// offsetJournalFlags are the offsets journal's retention flags, shared by
// `watch --offsets` and `exporter` (read with offsetJournalFrom).
func offsetJournalFlags(cat string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "journal-max-bytes", Value: "1GiB", Usage: "keep at most this much offsets journal (e.g. 500MiB, 2GB; 0: no limit); whole segments are removed, oldest first", Category: cat},
		durationFlag("journal-max-age", 30*24*time.Hour, "remove offsets journal segments whose last record is older than this (0: no limit)", cat),
		durationFlag("journal-segment-age", time.Hour, "start a new journal segment after this long (the closed one is gzipped)", cat),
	}
}

// offsetJournalFrom reads --journal and the retention flags.
func offsetJournalFrom(c *cli.Context) (observe.JournalSpec, error) {
	js := observe.JournalSpec{Dir: c.String("journal"), MaxAge: flagDuration(c, "journal-max-age"), SegmentAge: flagDuration(c, "journal-segment-age")}
	var err error
	if js.MaxBytes, err = flagSize(c, "journal-max-bytes"); err != nil {
		return js, exit.UsageErrorf("--journal-max-bytes: %v", err)
	}
	if js.MaxAge < 0 || js.SegmentAge < 0 {
		return js, exit.UsageErrorf("--journal-max-age and --journal-segment-age must not be negative")
	}
	return js, nil
}

// offsetsWatch is one run of `watch --offsets`: each batch of changes is
// journaled, selected (watch.OffsetSelection) and printed.
type offsetsWatch struct {
	g       *Globals
	dir     string
	once    bool
	journal *watch.OffsetJournal
	sel     watch.OffsetSelection
	out     *views.WatchOut
	view    views.WatchOffsetsView
	// journalFailures counts the batches the journal could not record.
	journalFailures int
	// members observes the groups' membership (nil without brokers).
	members *membersWatch
}

// runWatchOffsets follows every offset file of the volume's live offsets
// dir until ctx ends, --count changes, or (--once) the first scan.
func runWatchOffsets(ctx context.Context, g *Globals, o watchOptions) error {
	l, err := layoutOrWait(ctx, g, o)
	if err != nil {
		return err
	}
	dir, gen, err := observe.LiveOffsetsDir(ctx, l, o.pollInterval, g)
	if err != nil {
		return err
	}
	// A journal that already holds a run carries its state on, so what
	// changed while nothing was watching is reported and flagged.
	journal, seed, err := observe.OpenJournal(o.offsetJournal, l.DataDir, dir, gen, g)
	if err != nil {
		return err
	}
	if journal != nil {
		defer journal.Close()
	}
	watchOffsetsNotes(g, o, dir, gen, journal)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	w := newOffsetsWatch(g, o, dir, gen, journal, stop)
	w.sel.Seen(seed)
	if w.members, err = watchMembers(ctx, g, w, l, o); err != nil {
		return err
	}
	defer w.members.close()
	err = watch.FollowOffsets(ctx, watch.OffsetsOptions{
		Dir: dir, PollInterval: o.pollInterval, PollOnly: o.pollOnly, Generation: gen, OnTick: w.members.onTick(), TickEvery: o.members.interval,
		OnEvents: w.onEvents, Now: g.Now, Seed: seed, OnNote: func(msg string) { g.Notef("%s", msg) },
		OnReady: func() {
			if o.once {
				stop()
			}
		},
		OnProblem: w.onProblem,
	})
	if err != nil {
		return err
	}
	return w.end()
}

func watchOffsetsNotes(g *Globals, o watchOptions, dir string, gen volume.Generation, journal *watch.OffsetJournal) {
	genNote := "generation " + gen.Label()
	if !gen.Known() {
		genNote = "kaas generation unknown: following CD/__consumer_offsets; a plain-map file is not flagged"
	}
	g.Notef("watching the offset files in %s (%s; %s); Ctrl-C to stop", dir, watchMode(o), genNote)
	if journal != nil {
		g.Notef("journal: %s", journal.Dir)
	}
}

func newOffsetsWatch(g *Globals, o watchOptions, dir string, gen volume.Generation, journal *watch.OffsetJournal, stop context.CancelFunc) *offsetsWatch {
	w := &offsetsWatch{g: g, dir: dir, once: o.once, journal: journal,
		view: views.WatchOffsetsView{Dir: dir, Generation: string(gen), Events: []views.OffsetWatchEvent{}, Problems: []string{}, Members: []views.MemberWatchEvent{}}}
	if journal != nil {
		w.view.Journal = journal.Dir
	}
	w.out = views.NewWatchOut(g.Printer, views.WatchOffsetsCSVHeader, stop)
	// --count N stops after N changes shown (after the baseline; with
	// --anomalies-only, N anomalous changes); --once after the baseline,
	// which it shows, as json and yaml do.
	w.sel = watch.OffsetSelection{Match: inspect.GroupMatcher(o.groups), ShowBaseline: o.once || w.out.AtEnd(),
		AnomaliesOnly: o.anomaliesOnly, Max: o.count}
	return w
}

func (w *offsetsWatch) onProblem(msg string, ok bool) {
	if ok {
		w.g.Notef("%s is readable again", w.dir)
		return
	}
	w.view.Problems = append(w.view.Problems, msg)
	w.g.Warnf("%s", msg)
}

func (w *offsetsWatch) onEvents(evs []watch.OffsetEvent) {
	g := w.g
	if w.journal != nil {
		if err := w.journal.Append(evs); err != nil {
			w.journalFailures++
			g.Warnf("journal: %v (%d changes not recorded)", err, len(evs))
		}
		for _, warning := range w.journal.Warnings {
			g.Warnf("%s", warning)
		}
		w.journal.Warnings = nil
	}
	if w.members != nil {
		w.members.noteFiles(evs)
		w.members.rewindAuthors(evs)
	}
	sel := w.sel.Take(evs)
	if sel.Done {
		defer w.out.Stop()
	}
	w.view.Events = append(w.view.Events, sel.Changes...)
	if sel.Baseline > 0 && !w.once {
		g.Notef("baseline: %s", render.Plural(sel.Baseline, "offset file", "offset files"))
	}
	w.out.Changes(sel.Changes)
}

// end prints the view (json, yaml) and says how the watch went.
func (w *offsetsWatch) end() error {
	w.view.Files, w.view.Anomalies = w.sel.Files(), w.sel.Anomalies
	if err := w.out.End(w.view); err != nil {
		return err
	}
	if w.journal != nil && w.journal.Segment() != "" {
		w.g.Notef("journal segment: %s", w.journal.Segment())
	}
	if w.journalFailures > 0 {
		return fmt.Errorf("%s could not be written to the journal %s (see the warnings above)", render.Plural(w.journalFailures, "batch", "batches"), w.journal.Dir)
	}
	if w.once && !w.sel.SeenAny() {
		return fmt.Errorf("no offset file seen in %s", w.dir)
	}
	return nil
}
