package commands

import (
	"context"
	"regexp"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:     "groups explain",
		Usage:    "one verdict per group: ok, warning or page, why (conditions and incidents with evidence), lag, drain, retention, coordinator and its moves, and the next command to run",
		Problems: &views.ExitProblem{Label: "groups explain", When: "a verdict other than ok (warning or page)", Rank: 80},
		Docs: []FormatDoc{
			{Title: "groups explain", Doc: views.GroupsExplainView{}, JSONL: "each group's verdict (groups[])", Rank: 52},
		},
		Tool: &MCPTool{Name: "groups_explain", Title: "Explain groups", Input: mcpserver.GroupsExplainInput{},
			Description: "One verdict per group: ok, warning or page; why (conditions and incidents with evidence); lag in messages and seconds; time to drain; retention; coordinator and its moves; the next command to run."},
		Args:  "[GROUP...]",
		Build: leaf(explainFlags, checkGroupsExplain, runGroupsExplain),
	})
}

// explainFlags are groups explain's flags, bound to o.
func explainFlags(o *groupsExplainOptions) []cli.Flag {
	return []cli.Flag{
		completion.DurationFlag(&o.window, "window", 30*time.Second, "observe for `D` (0: once)"),
		completion.DurationFlag(&o.interval, "interval", 5*time.Second, "observe every `D`"),
		&cli.StringFlag{Name: "regex", Aliases: []string{"r"}, Usage: "only groups whose id matches `RE`"},
		&cli.IntFlag{Name: "max-groups", Value: 10000, Usage: "observe at most `N` groups (0: no cap; groups named are always observed)", Destination: &o.maxGroups},
		&cli.BoolFlag{Name: "problems", Usage: "list only the verdicts that are not ok", Destination: &o.problemsOnly},
		&cli.StringFlag{Name: "exporter", Usage: "take the conditions and forecasts a running 'kaasctl exporter' at `URL` evaluated, and observe once", Destination: &o.exporterURL},
		&cli.StringFlag{Name: "journal", Usage: "a 'kaasctl watch --journal' or 'exporter --journal' `DIR`: the coordinator moves of its assignment versions (and the offsets history a next command reads)", Destination: &o.journal},
		completion.DurationFlag(&o.movesSince, "moves-since", 24*time.Hour, "list the coordinator moves of the last `D`"),
	}
}

// groupsExplainOptions is 'groups explain' after flag parsing.
type groupsExplainOptions struct {
	window, interval time.Duration
	filter           *regexp.Regexp
	maxGroups        int
	problemsOnly     bool
	exporterURL      string
	journal          string
	movesSince       time.Duration
	// names are the groups asked for (none: every group).
	names []string
}

// checkGroupsExplain reads the GROUPs and --regex and holds the window to
// its bounds.
func checkGroupsExplain(c *cli.Context, _ *Globals, o *groupsExplainOptions) error {
	o.names = c.Args().Slice()
	if err := checkExplainWindow(*o); err != nil {
		return err
	}
	var err error
	o.filter, err = compileRegex("regex", c.String("regex"))
	return err
}

// checkExplainWindow holds --window and --interval to groups health's
// bounds (a window of 0 is one observation).
func checkExplainWindow(o groupsExplainOptions) error {
	switch {
	case o.window < 0 || o.interval <= 0:
		return exit.UsageErrorf("--window must not be negative and --interval must be positive")
	case o.movesSince < 0:
		return exit.UsageErrorf("--moves-since must not be negative")
	case o.window == 0:
		return nil
	case o.interval > o.window:
		return exit.UsageErrorf("--interval %s is longer than --window %s (--window 0 observes once)", o.interval, o.window)
	}
	if n := o.window/o.interval + 1; n > maxHealthObservations || o.interval < minHealthInterval {
		return exit.UsageErrorf("--window %s every --interval %s is %d observations: groups explain takes at most %d, at least %s apart",
			o.window, o.interval, n, maxHealthObservations, minHealthInterval)
	}
	return nil
}

func runGroupsExplain(ctx context.Context, g *Globals, o groupsExplainOptions) error {
	v, missing, cover, err := explainGroups(ctx, g, o)
	if err != nil {
		return err
	}
	if err := g.Printer.Print(views.ExplainOutput(v)); err != nil {
		return err
	}
	if len(missing) > 0 {
		return cover.MissingError(missing)
	}
	notOK := 0
	for _, vd := range v.Groups {
		if vd.Severity != inspect.VerdictOK {
			notOK++
		}
	}
	if notOK > 0 {
		return exit.ProblemsFound("%s not ok", render.Plural(notOK, "group", "groups"))
	}
	return nil
}

// explainGroups observes the groups and builds their verdicts, with the
// groups asked for that were not observed and what the observation
// covered.
func explainGroups(ctx context.Context, g *Globals, o groupsExplainOptions) (views.GroupsExplainView, []string, inspect.HealthCoverage, error) {
	v := views.GroupsExplainView{Source: "observed", Window: o.window.String(), Interval: o.interval.String(), Groups: []inspect.Verdict{},
		Severities: map[string]int{inspect.VerdictPage: 0, inspect.VerdictWarning: 0, inspect.VerdictOK: 0}}
	if o.window == 0 {
		v.Interval = ""
	}
	src, closeFn, err := explainSource(ctx, g, o)
	if err != nil {
		return v, nil, inspect.HealthCoverage{}, err
	}
	defer closeFn()
	ob, err := exporter.ObserveExplain(ctx, src, o.window, o.interval, o.exporterURL, g)
	healths, last, seen, cover := ob.Healths, ob.Last, ob.Seen, ob.Cover
	if err != nil {
		return v, nil, cover, err
	}
	if ob.Exporter != nil {
		v.Source, v.Window, v.Interval = o.exporterURL, ob.Exporter.Window, ""
	}
	if src.Layout != nil {
		gi := src.Layout.WithGeneration().Gen
		v.Generation = &gi
	}
	moves, msrc := explainMoves(g, o, seen, last)
	v.Moves = msrc
	missing := buildVerdicts(g, o, &v, healths, last, moves)
	return v, missing, cover, nil
}

// explainSource is the observation source: groups health's, with lag in
// seconds and the served ends checked against the segments at every
// observation.
func explainSource(ctx context.Context, g *Globals, o groupsExplainOptions) (*observe.Source, func(), error) {
	src, closeFn, err := exporterSource(ctx, g, o.filter, o.maxGroups, true, observe.ConnectChecked)
	if err != nil {
		return nil, nil, err
	}
	src.ServedCheckInterval = time.Nanosecond
	src.BlockerFlags = g.GivenFlags()
	src.BlockersAtOnce = o.window == 0 || o.exporterURL != "" // one observation
	exporter.OnlyNamed(src, o.names)
	return src, closeFn, nil
}
