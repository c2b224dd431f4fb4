package watchrun

import (
	"context"
	"fmt"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/anomaly"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/render"
)

// OffsetsOptions are what watch --offsets shows: only these groups (names
// or globs), the baseline and stop (Once), only anomalies, at most Count
// changes (0: no limit).
type OffsetsOptions struct {
	Groups        []string
	Once          bool
	AnomaliesOnly bool
	Count         int
}

// OffsetsWatch is one run of `watch --offsets`: each batch of changes is
// journaled, selected (watch.OffsetSelection) and printed.
type OffsetsWatch struct {
	env     Env
	dir     string
	once    bool
	journal *watch.OffsetJournal
	sel     watch.OffsetSelection
	stop    context.CancelFunc
	out     Out
	view    WatchOffsetsView
	// journalFailures counts the batches the journal could not record.
	journalFailures int
	// Members observes the groups' membership (nil without brokers).
	Members *MembersWatch
}

// NewOffsetsWatch is a watch of the offset files in dir (journal nil:
// none); stop ends it.
func NewOffsetsWatch(env Env, o OffsetsOptions, dir string, gen volume.Generation, journal *watch.OffsetJournal, stop context.CancelFunc) *OffsetsWatch {
	w := &OffsetsWatch{env: env, dir: dir, once: o.Once, journal: journal, stop: stop,
		view: WatchOffsetsView{Dir: dir, Generation: string(gen), Events: []OffsetWatchEvent{}, Problems: []string{}, Members: []MemberWatchEvent{}}}
	if journal != nil {
		w.view.Journal = journal.Dir
	}
	w.out = env.Output(OffsetsOut, stop)
	// --count N stops after N changes shown (after the baseline; with
	// --anomalies-only, N anomalous changes); --once after the baseline,
	// which it shows, as json and yaml do.
	w.sel = watch.OffsetSelection{Match: inspect.GroupMatcher(o.Groups), ShowBaseline: o.Once || w.out.AtEnd(),
		AnomaliesOnly: o.AnomaliesOnly, Max: o.Count}
	return w
}

// OnProblem tells the follower's problems (ok: the dir is readable
// again).
func (w *OffsetsWatch) OnProblem(msg string, ok bool) {
	if ok {
		w.env.Notes.Notef("%s is readable again", w.dir)
		return
	}
	w.view.Problems = append(w.view.Problems, msg)
	w.env.Notes.Warnf("%s", msg)
}

// OnEvents journals, selects and prints a batch of changes.
func (w *OffsetsWatch) OnEvents(evs []watch.OffsetEvent) {
	g := w.env.Notes
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
	if w.Members != nil {
		w.Members.noteFiles(evs)
		w.Members.rewindAuthors(evs)
	}
	sel := w.sel.Take(evs)
	if sel.Done {
		defer w.stop()
	}
	w.view.Events = append(w.view.Events, sel.Changes...)
	if sel.Baseline > 0 && !w.once {
		g.Notef("baseline: %s", render.Plural(sel.Baseline, "offset file", "offset files"))
	}
	w.out.Changes(sel.Changes)
}

// End prints the view (json, yaml) and says how the watch went.
func (w *OffsetsWatch) End() error {
	w.view.Files, w.view.Anomalies = w.sel.Files(), w.sel.Anomalies
	if err := w.out.End(w.view); err != nil {
		return err
	}
	if w.journal != nil && w.journal.Segment() != "" {
		w.env.Notes.Notef("journal segment: %s", w.journal.Segment())
	}
	if w.journalFailures > 0 {
		return fmt.Errorf("%s could not be written to the journal %s (see the warnings above)", render.Plural(w.journalFailures, "batch", "batches"), w.journal.Dir)
	}
	if w.once && !w.sel.SeenAny() {
		return fmt.Errorf("no offset file seen in %s", w.dir)
	}
	return nil
}

// OffsetsNotes tells what a watch of the offset files follows: the dir,
// how (mode), the generation, the journal.
func OffsetsNotes(g render.Notes, mode, dir string, gen volume.Generation, journal *watch.OffsetJournal) {
	genNote := "generation " + gen.Label()
	if !gen.Known() {
		genNote = "kaas generation unknown: following CD/__consumer_offsets; a plain-map file is not flagged"
	}
	g.Notef("watching the offset files in %s (%s; %s); Ctrl-C to stop", dir, mode, genNote)
	if journal != nil {
		g.Notef("journal: %s", journal.Dir)
	}
}

// Seen seeds the selection with the observations a resumed journal
// carries.
func (w *OffsetsWatch) Seen(seed []anomaly.Observation) { w.sel.Seen(seed) }
