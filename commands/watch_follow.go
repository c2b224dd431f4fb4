package commands

import (
	"context"
	"fmt"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/render/views"
)

// assignmentWatch is one run of `watch` on assignment.json: each version
// is journaled, compared with the previous one (inspect.AssignmentFollower)
// and printed.
type assignmentWatch struct {
	g         *Globals
	path      string
	max       int // --count
	journal   *watch.Journal
	groupsFor func(*volume.Assignment) []string
	follow    inspect.AssignmentFollower
	out       *views.WatchOut
	problems  []string
	// journalFailures counts the versions the journal could not keep.
	journalFailures int
}

// followAssignment follows path until ctx ends or --count versions.
func followAssignment(ctx context.Context, g *Globals, o watchOptions, path string, journal *watch.Journal, groupsFor func(*volume.Assignment) []string) error {
	g.Notef("watching %s (%s); Ctrl-C to stop", path, watchMode(o))
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	w := &assignmentWatch{g: g, path: path, max: o.count, journal: journal, groupsFor: groupsFor,
		follow: inspect.AssignmentFollower{Path: path, Filter: o.groups}}
	w.out = views.NewWatchOut(g.Printer, views.WatchCSVHeader, stop)
	err := watch.Run(ctx, watch.Options{
		Path: path, PollInterval: o.pollInterval, PollOnly: o.pollOnly, Now: g.Now,
		OnVersion: func(v watch.Version) {
			w.onVersion(v)
			if w.max > 0 && len(w.follow.Versions) >= w.max {
				stop()
			}
		},
		OnProblem: w.onProblem,
	})
	if err != nil {
		return err
	}
	view := views.WatchView{Path: path, Versions: w.follow.Versions, Events: w.follow.Events, Problems: w.problems, MissedVersions: w.follow.Missed}
	if err := w.out.End(view); err != nil {
		return err
	}
	if len(view.Versions) == 0 {
		return fmt.Errorf("no readable version of %s was seen", path)
	}
	if w.journalFailures > 0 {
		return fmt.Errorf("%s could not be written to the journal %s (see the warnings above)", render.Plural(w.journalFailures, "version", "versions"), journal.Dir)
	}
	return nil
}

func (w *assignmentWatch) onProblem(msg string, ok bool) {
	if ok {
		w.g.Notef("%s is readable again", w.path)
		return
	}
	w.problems = append(w.problems, msg)
	w.g.Warnf("%s", msg)
}

func (w *assignmentWatch) onVersion(v watch.Version) {
	a, g := v.Assignment, w.g
	if w.journal != nil {
		if jp, err := w.journal.Write(a.ControllerEpoch, a.AssignmentVersion, v.Raw, v.Digest); err != nil {
			w.journalFailures++
			g.Warnf("journal: %v (version epoch %d v%d not saved)", err, a.ControllerEpoch, a.AssignmentVersion)
		} else if !g.Quiet {
			g.Notef("journal: %s", jp)
		}
	}
	fv := w.follow.Next(a, w.groupsFor(a), v.Rewritten, v.Observed)
	for _, warning := range fv.Warnings {
		g.Warnf("%s", warning)
	}
	if fv.Version.MissingBefore > 0 && g.Printer.Format != render.Table && g.Printer.Format != render.Wide {
		g.Warnf("%s", fv.Version.Gap) // the table names it on the version's line
	}
	w.out.Version(fv)
}
