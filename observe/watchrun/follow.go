package watchrun

import (
	"context"
	"fmt"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/render"
)

// assignmentWatch is one run of `watch` on assignment.json: each version
// is journaled, compared with the previous one (inspect.AssignmentFollower)
// and printed.
type assignmentWatch struct {
	env       Env
	path      string
	max       int // --count
	journal   *watch.Journal
	groupsFor func(*volume.Assignment) []string
	follow    inspect.AssignmentFollower
	out       Out
	problems  []string
	// journalFailures counts the versions the journal could not keep.
	journalFailures int
}

// FollowOptions are how watch follows assignment.json: the file, how
// often it polls (and whether fsnotify is off; Mode words it), at most
// Count versions (0: no limit), only these groups (names or globs).
type FollowOptions struct {
	Path         string
	PollInterval time.Duration
	PollOnly     bool
	Mode         string
	Count        int
	Groups       []string
}

// FollowAssignment follows o.Path until ctx ends or o.Count versions
// (journal nil: none; groupsFor: the groups of a version).
func FollowAssignment(ctx context.Context, env Env, o FollowOptions, journal *watch.Journal, groupsFor func(*volume.Assignment) []string) error {
	path := o.Path
	env.Notes.Notef("watching %s (%s); Ctrl-C to stop", path, o.Mode)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	w := &assignmentWatch{env: env, path: path, max: o.Count, journal: journal, groupsFor: groupsFor,
		follow: inspect.AssignmentFollower{Path: path, Filter: o.Groups}}
	w.out = env.Output(AssignmentOut, stop)
	err := watch.Run(ctx, watch.Options{
		Path: path, PollInterval: o.PollInterval, PollOnly: o.PollOnly, Now: env.Now,
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
	view := WatchView{Path: path, Versions: w.follow.Versions, Events: w.follow.Events, Problems: w.problems, MissedVersions: w.follow.Missed}
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
		w.env.Notes.Notef("%s is readable again", w.path)
		return
	}
	w.problems = append(w.problems, msg)
	w.env.Notes.Warnf("%s", msg)
}

func (w *assignmentWatch) onVersion(v watch.Version) {
	a, g := v.Assignment, w.env.Notes
	if w.journal != nil {
		if jp, err := w.journal.Write(a.ControllerEpoch, a.AssignmentVersion, v.Raw, v.Digest); err != nil {
			w.journalFailures++
			g.Warnf("journal: %v (version epoch %d v%d not saved)", err, a.ControllerEpoch, a.AssignmentVersion)
		} else if !w.env.Quiet {
			g.Notef("journal: %s", jp)
		}
	}
	fv := w.follow.Next(a, w.groupsFor(a), v.Rewritten, v.Observed)
	for _, warning := range fv.Warnings {
		g.Warnf("%s", warning)
	}
	if fv.Version.MissingBefore > 0 && !w.out.NamesGaps() {
		g.Warnf("%s", fv.Version.Gap) // the table names it on the version's line
	}
	w.out.Version(fv)
}
