package commands

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:  "groups timeline",
		Usage: "a group's story: generations and members joining and leaving, coordinator moves, every recorded commit attributed (members, admin, zombie, cache rewrite, kaasctl), kaasctl's own writes, conditions",
		Docs: []FormatDoc{
			{Title: "groups timeline", Doc: inspect.Timeline{}, JSONL: "each event (events[]), in order", Rank: 53},
		},
		Args:  "GROUP",
		Build: leaf(timelineFlags, checkGroupsTimeline, runGroupsTimeline),
	})
}

// timelineFlags are groups timeline's flags, bound to o.
func timelineFlags(o *groupsTimelineOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "journal", Aliases: []string{"j"}, Usage: "the `DIR` given to 'watch --journal', 'watch --offsets --journal' or 'exporter --journal' (its offsets/, events/ and assignment versions)", Destination: &o.journal},
		&cli.StringSliceFlag{Name: "assignments", Usage: "more assignment.json versions: a `DIR` of snapshots or a file (repeatable)"},
		&cli.StringSliceFlag{Name: "logs", Usage: "broker log `FILE`s or dirs for the coordinator moves' times and causes (repeatable; - for stdin)"},
		&cli.StringFlag{Name: "since", Usage: "from `TIME` (" + timeUsage + ")"},
		&cli.StringFlag{Name: "until", Usage: "up to `TIME` (same forms as --since)"},
		&cli.StringSliceFlag{Name: "source", Usage: "only events of these `SOURCES` (commits, members, coordinator, kaasctl, health, observer; repeatable or comma list)"},
		&cli.Int64Flag{Name: "rewind-page-records", Value: inspect.DefaultRewindPageRecords, Usage: "a rewind by the group's own members of more than `N` records pages", Destination: &o.pageRecords},
	}
}

// groupsTimelineOptions is 'groups timeline' after flag parsing.
type groupsTimelineOptions struct {
	group        string
	journal      string
	assignments  []string
	logs         []string
	since, until time.Time
	sources      []string // nil: all
	pageRecords  int64
}

// timelineSourceNames are the sources --source accepts.
var timelineSourceNames = []string{inspect.TLCommits, inspect.TLMembers, inspect.TLCoordinator, inspect.TLKaasctl, inspect.TLHealth, inspect.TLObserver}

// checkGroupsTimeline reads the GROUP, the inputs, --source and the time
// window (against the run's clock).
func checkGroupsTimeline(c *cli.Context, g *Globals, o *groupsTimelineOptions) error {
	o.assignments, o.logs = c.StringSlice("assignments"), c.StringSlice("logs")
	if c.NArg() != 1 {
		return exit.UsageErrorf("groups timeline takes one GROUP (got %d arguments)", c.NArg())
	}
	o.group = c.Args().First()
	if o.pageRecords < 1 {
		return exit.UsageErrorf("--rewind-page-records must be 1 or more")
	}
	for _, s := range splitList(c.StringSlice("source")) {
		if !slices.Contains(timelineSourceNames, s) {
			return exit.UsageErrorf("--source %q: one of %s", s, strings.Join(timelineSourceNames, ", "))
		}
		o.sources = append(o.sources, s)
	}
	var err error
	o.since, o.until, err = parseWindow(c.String("since"), c.String("until"), g)
	return err
}

// runGroupsTimeline reads every source of the group's story and prints it.
func runGroupsTimeline(_ context.Context, g *Globals, o groupsTimelineOptions) error {
	if o.journal == "" && !g.HasVolume() && len(o.assignments) == 0 {
		return exit.UsageErrorf("nothing to read: give --journal DIR (recorded by 'kaasctl exporter --journal DIR' or 'kaasctl watch --offsets --journal DIR'), the volume (--data-dir: kaasctl's writes, the live assignment.json) or --assignments")
	}
	in, err := readTimelineInput(g, o)
	if err != nil {
		return err
	}
	tl := inspect.BuildTimeline(in)
	if len(o.sources) > 0 {
		tl.Events = slices.DeleteFunc(tl.Events, func(e inspect.TimelineEvent) bool { return !slices.Contains(o.sources, e.Source) })
	}
	return g.Printer.Print(views.TimelineOutput(tl))
}

// readTimelineInput reads every source of the group's story
// (repair.ReadTimeline): the volume's when one is given.
func readTimelineInput(g *Globals, o groupsTimelineOptions) (inspect.TimelineInput, error) {
	r := repair.TimelineReading{Group: o.group, Since: o.since, Until: o.until, PageRecords: o.pageRecords, Journal: o.journal,
		Assignments: o.assignments, Logs: o.logs, HasVolume: g.HasVolume(), Now: g.Now(), Stdin: g.IO.In, Progress: g.Progress, Notes: g}
	if r.HasVolume {
		var err error
		if r.Layout, err = g.Layout(); err != nil {
			return inspect.TimelineInput{Group: o.group, Since: o.since, Until: o.until, PageRecords: o.pageRecords}, err
		}
		r.OutOfOrder = r.Layout.WithGeneration().Gen.CommitOrder()
	}
	return repair.ReadTimeline(r)
}
