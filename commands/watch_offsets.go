package commands

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/observe/watchrun"
	"github.com/kaasctl/kaasctl/views"
)

// watchOffsetsFlags are the flags of `watch --offsets` (added to
// watch), bound to o.
func watchOffsetsFlags(o *watchOptions) []cli.Flag {
	const cat = "Offsets (--offsets)"
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "offsets", Usage: "follow every group's offset file instead of assignment.json: print changes and anomalies (REWIND, VANISHED, PLAIN_MAP, CORRUPT, EMPTIED) as they happen; with --journal, record every change", Category: cat, Destination: &o.offsets},
		&cli.BoolFlag{Name: "anomalies-only", Usage: "print only anomalies (the journal still records every change)", Category: cat, Destination: &o.anomaliesOnly},
	}, append(offsetJournalFlags(&o.offsetJournal, cat), watchMembersFlags(&o.members)...)...)
}

// offsetJournalFlags are the offsets journal's retention flags, shared by
// `watch --offsets` and `exporter`, bound to js (checkOffsetJournal
// reads the rest).
func offsetJournalFlags(js *observe.JournalSpec, cat string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "journal-max-bytes", Value: "1GiB", Usage: "keep at most this much offsets journal (e.g. 500MiB, 2GB; 0: no limit); whole segments are removed, oldest first", Category: cat},
		completion.DurationFlag(&js.MaxAge, "journal-max-age", 30*24*time.Hour, "remove offsets journal segments whose last record is older than this (0: no limit)", cat),
		completion.DurationFlag(&js.SegmentAge, "journal-segment-age", time.Hour, "start a new journal segment after this long (the closed one is gzipped)", cat),
	}
}

// checkOffsetJournal reads --journal and --journal-max-bytes into js and
// checks the retention.
func checkOffsetJournal(c *cli.Context, js *observe.JournalSpec) error {
	js.Dir = c.String("journal")
	var err error
	if js.MaxBytes, err = flagSize(c, "journal-max-bytes"); err != nil {
		return exit.UsageErrorf("--journal-max-bytes: %v", err)
	}
	if js.MaxAge < 0 || js.SegmentAge < 0 {
		return exit.UsageErrorf("--journal-max-age and --journal-segment-age must not be negative")
	}
	return nil
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
	watchrun.OffsetsNotes(g, watchrun.Mode(o.pollOnly, o.pollInterval), dir, gen, journal)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	w := watchrun.NewOffsetsWatch(watchEnv(g), watchrun.OffsetsOptions{Groups: o.groups, Once: o.once, AnomaliesOnly: o.anomaliesOnly, Count: o.count}, dir, gen, journal, stop)
	w.Seen(seed)
	if w.Members, err = watchMembers(ctx, g, w, l, o); err != nil {
		return err
	}
	defer w.Members.Close()
	err = watch.FollowOffsets(ctx, watch.OffsetsOptions{
		Dir: dir, PollInterval: o.pollInterval, PollOnly: o.pollOnly, Generation: gen, OnTick: w.Members.OnTick(), TickEvery: o.members.interval,
		OnEvents: w.OnEvents, Now: g.Now, Seed: seed, OnNote: func(msg string) { g.Notef("%s", msg) },
		OnReady: func() {
			if o.once {
				stop()
			}
		},
		OnProblem: w.OnProblem,
	})
	if err != nil {
		return err
	}
	return w.End()
}

// watchEnv is what a watch tells and prints with: the run's notes and
// clock, and its output on the printer (views.WatchOutput).
func watchEnv(g *Globals) watchrun.Env {
	return watchrun.Env{Notes: g, Now: g.Now, Quiet: g.Quiet, Output: views.WatchOutput(g.Printer)}
}
