package commands

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/render"
)

type watchView struct {
	Path     string                 `json:"path"`
	Versions []inspect.TraceVersion `json:"versions"`
	Events   []inspect.TraceEvent   `json:"events"`
	Problems []string               `json:"problems"`
	// MissedVersions counts the versions written and replaced between two
	// reads (versions are consecutive): each is named in its version's gap.
	MissedVersions int64 `json:"missedVersions"`
}

var watchCSVHeader = []string{"TIME", "EPOCH", "VERSION", "GROUP", "FROM", "TO", "CAUSE", "EVIDENCE", "DETAIL"}

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
	out       *watchOut
	problems  []string
	// journalFailures counts the versions the journal could not keep.
	journalFailures int
	// gw and bw are the group and broker column widths so far.
	gw, bw int
}

// followAssignment follows path until ctx ends or --count versions.
func followAssignment(ctx context.Context, g *Globals, o watchOptions, path string, journal *watch.Journal, groupsFor func(*volume.Assignment) []string) error {
	g.Notef("watching %s (%s); Ctrl-C to stop", path, watchMode(o))
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	w := &assignmentWatch{g: g, path: path, max: o.count, journal: journal, groupsFor: groupsFor,
		follow: inspect.AssignmentFollower{Path: path, Filter: o.groups}, gw: 12, bw: 8}
	w.out = newWatchOut(g.Printer, watchCSVHeader, stop)
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
	view := watchView{Path: path, Versions: w.follow.Versions, Events: w.follow.Events, Problems: w.problems, MissedVersions: w.follow.Missed}
	if err := w.out.end(view); err != nil {
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
	w.print(fv)
}

// print streams one version: its moves (jsonl, csv), or its line and
// one per move (table, wide).
func (w *assignmentWatch) print(fv inspect.FollowedVersion) {
	if !w.out.streaming() {
		return // json and yaml: printed at the end
	}
	switch p := w.out.p; p.Format {
	case render.JSONL:
		for _, e := range fv.Events {
			w.out.event(e)
		}
	case render.CSV:
		for _, e := range fv.Events {
			w.out.event(e, []string{render.Timestamp(e.Time), strconv.FormatInt(e.ControllerEpoch, 10), strconv.FormatInt(e.AssignmentVersion, 10),
				e.Group, e.From, e.To, string(e.Cause), string(e.Evidence), e.Detail})
		}
	default:
		for _, e := range fv.Events {
			w.gw = max(w.gw, min(40, len(render.Shorten(e.Group, 40))))
			w.bw = max(w.bw, len(e.From), len(e.To))
		}
		summary := render.Plural(len(fv.Events), "move", "moves")
		if fv.First {
			summary = "current version: " + placementSummary(fv.Placements)
		}
		lines := []string{versionLine(p, fv.Version, summary)}
		for _, e := range fv.Events {
			lines = append(lines, traceEventLine(p, e, w.gw, w.bw))
		}
		w.out.lines(lines...)
	}
	w.out.flush()
}

// brokersText is a version's brokers with those that joined (+) and left
// (-) since the previous one.
func brokersText(v inspect.TraceVersion) string {
	bs := "brokers " + strings.Join(v.Brokers, " ")
	var delta []string
	for _, j := range v.Joined {
		delta = append(delta, "+"+j)
	}
	for _, l := range v.Left {
		delta = append(delta, "-"+l)
	}
	if len(delta) > 0 {
		bs += " (" + strings.Join(delta, " ") + ")"
	}
	return bs
}

// versionLine is a followed version's line: time, epoch and version,
// controller, brokers, summary and a gap before it.
func versionLine(p *render.Printer, v inspect.TraceVersion, summary string) string {
	var info []string
	if v.Controller != "" {
		info = append(info, "controller "+v.Controller)
	}
	info = append(info, brokersText(v), summary)
	if v.MissingBefore > 0 {
		info = append(info, p.Paint(render.Yellow, v.Gap))
	}
	return p.Paint(render.Bold, render.Clock(v.Time, true)+"  "+fmt.Sprintf("epoch %d v%d", v.ControllerEpoch, v.AssignmentVersion)) + "  " + strings.Join(info, " · ")
}
