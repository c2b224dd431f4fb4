package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/render"
)

func init() {
	register(Descriptor{
		Path:  "groups timeline",
		Usage: "a group's story: generations and members joining and leaving, coordinator moves, every recorded commit attributed (members, admin, zombie, cache rewrite, kaasctl), kaasctl's own writes, conditions",
		Docs: []FormatDoc{
			{Title: "groups timeline", Doc: inspect.Timeline{}, JSONL: "each event (events[]), in order", Rank: 53},
		},
		Build: func() *cli.Command {
			return &cli.Command{
				ArgsUsage: "GROUP",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "journal", Aliases: []string{"j"}, Usage: "the `DIR` given to 'watch --journal', 'watch --offsets --journal' or 'exporter --journal' (its offsets/, events/ and assignment versions)"},
					&cli.StringSliceFlag{Name: "assignments", Usage: "more assignment.json versions: a `DIR` of snapshots or a file (repeatable)"},
					&cli.StringSliceFlag{Name: "logs", Usage: "broker log `FILE`s or dirs for the coordinator moves' times and causes (repeatable; - for stdin)"},
					&cli.StringFlag{Name: "since", Usage: "from `TIME` (" + timeUsage + ")"},
					&cli.StringFlag{Name: "until", Usage: "up to `TIME` (same forms as --since)"},
					&cli.StringSliceFlag{Name: "source", Usage: "only events of these `SOURCES` (commits, members, coordinator, kaasctl, health, observer; repeatable or comma list)"},
					&cli.Int64Flag{Name: "rewind-page-records", Value: inspect.DefaultRewindPageRecords, Usage: "a rewind by the group's own members of more than `N` records pages"},
				},
				Action: actionWith(parseGroupsTimeline, runGroupsTimeline),
			}
		},
	})
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

func parseGroupsTimeline(c *cli.Context, g *Globals) (groupsTimelineOptions, error) {
	o := groupsTimelineOptions{journal: c.String("journal"), assignments: c.StringSlice("assignments"), logs: c.StringSlice("logs"), pageRecords: c.Int64("rewind-page-records")}
	if c.NArg() != 1 {
		return o, exit.UsageErrorf("groups timeline takes one GROUP (got %d arguments)", c.NArg())
	}
	o.group = c.Args().First()
	if o.pageRecords < 1 {
		return o, exit.UsageErrorf("--rewind-page-records must be 1 or more")
	}
	for _, s := range splitList(c.StringSlice("source")) {
		if !slices.Contains(timelineSourceNames, s) {
			return o, exit.UsageErrorf("--source %q: one of %s", s, strings.Join(timelineSourceNames, ", "))
		}
		o.sources = append(o.sources, s)
	}
	var err error
	o.since, o.until, err = parseWindow(c.String("since"), c.String("until"), g)
	return o, err
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
	return printTimeline(g.Printer, tl)
}

// printTimeline prints the story: a table of events (every column in csv
// and wide), then the counts and the notes.
func printTimeline(p *render.Printer, tl *inspect.Timeline) error {
	t := render.NewTable("TIME", "SOURCE", "EVENT", "AUTHOR", "DETAIL", "SEVERITY+", "EVIDENCE+", "WHY+")
	for _, e := range tl.Events {
		author, why := "", ""
		if a := e.Attribution; a != nil {
			author, why = a.Author, a.Who+": "+a.Why
			if !a.Certain {
				author += "?"
			}
		}
		t.Add(render.Timestamp(e.Time), e.Source, e.Kind, render.Dash(author), e.Summary, render.Dash(e.Severity), e.Evidence, render.Dash(why))
	}
	return p.Print(render.Output{Data: tl, Items: tl.Events, Table: t, Human: func(p *render.Printer) error {
		fmt.Fprintf(p.Out, "group %s: %s\n", render.Clean(tl.Group), timelineSpan(tl))
		if len(tl.Events) > 0 {
			if err := p.Table(t); err != nil {
				return err
			}
		}
		return writeTimelineFooter(p, tl)
	}})
}

// timelineSpan is "12 events from … to …".
func timelineSpan(tl *inspect.Timeline) string {
	if len(tl.Events) == 0 {
		return "no event in range"
	}
	return fmt.Sprintf("%s from %s to %s", render.Plural(len(tl.Events), "event", "events"), render.Timestamp(tl.Events[0].Time), render.Timestamp(tl.Events[len(tl.Events)-1].Time))
}

// writeTimelineFooter is the commits by author, the sources read, and
// the notes.
func writeTimelineFooter(p *render.Printer, tl *inspect.Timeline) error {
	var lines []string
	if tl.Commits > 0 {
		parts := make([]string, 0, len(tl.ByAuthor))
		for _, a := range tl.ByAuthor {
			parts = append(parts, fmt.Sprintf("%s %d", a.Author, a.Commits))
		}
		lines = append(lines, "", fmt.Sprintf("%s (%s), %s", render.Plural(tl.Commits, "commit", "commits"), strings.Join(parts, ", "), render.Plural(tl.Rewinds, "rewind", "rewinds")))
	}
	lines = append(lines, "")
	for _, s := range tl.Sources {
		lines = append(lines, fmt.Sprintf("%-12s %s (%s)", s.Name, s.Read, render.Plural(s.Events, "event", "events")))
	}
	for _, n := range tl.Notes {
		lines = append(lines, p.Paint(render.Bold, "note: ")+n)
	}
	return render.Lines(p.Out, lines...)
}
