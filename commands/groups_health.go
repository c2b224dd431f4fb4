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
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:     "groups health",
		Usage:    "group health over a window: every active condition (REWIND, VANISHED, ERR, STOP, STALL, CHURN, WARN) with evidence and who a rewind was by, time to drain, retention forecast",
		Problems: &views.ExitProblem{Label: "groups health", When: "a group that is not OK (any condition but OK)", Rank: 70},
		Docs: []FormatDoc{
			{Title: "groups health", Doc: views.GroupsHealthView{}, JSONL: "each group (groups[])", Rank: 50},
		},
		Tool: &MCPTool{Name: "groups_health", Title: "Group health", Input: mcpserver.GroupsHealthInput{},
			Description: "Each group's health over a window: REWIND, VANISHED, ERR, STOP, STALL, WARN or OK, with evidence, time to drain and retention forecast."},
		Args:  "[GROUP...]",
		Build: leaf(healthFlags, checkGroupsHealth, runGroupsHealth),
	})
}

// healthFlags are groups health's flags, bound to o.
func healthFlags(o *groupsHealthOptions) []cli.Flag {
	return append([]cli.Flag{
		completion.DurationFlag(&o.window, "window", 30*time.Second, "observe for `D`"),
		completion.DurationFlag(&o.interval, "interval", 5*time.Second, "observe every `D`"),
		&cli.StringFlag{Name: "regex", Aliases: []string{"r"}, Usage: "only groups whose id matches `RE`"},
		&cli.IntFlag{Name: "max-groups", Value: 10000, Usage: "observe at most `N` groups (0: no cap)", Destination: &o.maxGroups},
		&cli.StringFlag{Name: "exporter", Usage: "read the health a running 'kaasctl exporter' at `URL` evaluated", Destination: &o.exporterURL},
		&cli.BoolFlag{Name: "all", Usage: "also list groups that are OK (the default lists every group; kept for symmetry with describe)", Hidden: true},
	}, churnFlags(&o.churn, "Membership (with brokers)")...)
}

// groups health's bounds: each observation is a refresh of every group
// (the volume's offset files and a broker round), and the window keeps them
// all, so --interval 1ns would never end.
const (
	maxHealthObservations = 1000
	minHealthInterval     = 10 * time.Millisecond
)

// groupsHealthOptions is 'groups health' after flag parsing.
type groupsHealthOptions struct {
	// window is observed every interval.
	window, interval time.Duration
	filter           *regexp.Regexp
	maxGroups        int
	// exporterURL reads a running exporter's evaluation instead.
	exporterURL string
	// names are the groups asked for (none: every group).
	names []string
	// churn: CHURN's threshold and the rewinds' severity.
	churn churnSpec
}

// checkGroupsHealth reads the GROUPs and --regex and holds the window to
// its bounds.
func checkGroupsHealth(c *cli.Context, _ *Globals, o *groupsHealthOptions) error {
	o.names = c.Args().Slice()
	if o.window <= 0 || o.interval <= 0 {
		return exit.UsageErrorf("--window and --interval must be positive")
	}
	if o.interval > o.window {
		return exit.UsageErrorf("--interval %s is longer than --window %s: at least two observations are needed", o.interval, o.window)
	}
	if n := o.window/o.interval + 1; n > maxHealthObservations || o.interval < minHealthInterval {
		return exit.UsageErrorf("--window %s every --interval %s is %d observations, each a refresh of every group: groups health takes at most %d, at least %s apart (for this window: --interval %s or more)",
			o.window, o.interval, n, maxHealthObservations, minHealthInterval, max(minHealthInterval, (o.window/(maxHealthObservations-1)).Round(time.Millisecond)+time.Millisecond))
	}
	if err := o.churn.check(); err != nil {
		return err
	}
	var err error
	o.filter, err = compileRegex("regex", c.String("regex"))
	return err
}

func runGroupsHealth(ctx context.Context, g *Globals, o groupsHealthOptions) error {
	v := views.GroupsHealthView{Window: o.window.String(), Interval: o.interval.String()}
	var all []inspect.GroupHealth
	var cover inspect.HealthCoverage
	if o.exporterURL != "" {
		doc, err := exporter.FetchHealth(ctx, o.exporterURL)
		if err != nil {
			return err
		}
		v.Source, v.Window, v.Interval = o.exporterURL, doc.Window, ""
		all, cover = doc.Groups, doc.Coverage
	} else {
		src, closeFn, err := exporterSource(ctx, g, o.filter, o.maxGroups, false, observe.ConnectChecked)
		if err != nil {
			return err
		}
		defer closeFn()
		v.Source = "observed"
		memberWindow := func(gi volume.GenerationInfo) inspect.MemberWindow { return o.churn.window(0, gi) }
		all, cover = exporter.ObserveNamedHealth(ctx, src, o.names, o.window, o.interval, memberWindow, g)
	}
	sel := inspect.SelectHealth(all, o.names, o.filter)
	v.Groups, v.States, v.Conditions = sel.Groups, sel.States, sel.Conditions
	if err := g.Printer.Print(render.Output{Data: v, Items: v.Groups, Table: views.GroupsHealthTable(g.Printer.Format, v.Groups)}); err != nil {
		return err
	}
	if len(sel.Missing) > 0 {
		return cover.MissingError(sel.Missing)
	}
	if sel.NotOK > 0 {
		return exit.ProblemsFound("%s not OK", render.Plural(sel.NotOK, "group", "groups"))
	}
	return nil
}
