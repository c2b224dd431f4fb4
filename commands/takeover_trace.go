package commands

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:   "takeover trace",
		Usage:  "reconstruct every group's coordinator timeline from assignment history and broker logs",
		Common: fgAssignment,
		Docs: []FormatDoc{
			{Title: "takeover trace", Doc: views.TraceView{}, JSONL: "each event (trace.events[])", Rank: 100},
		},
		Tool: &MCPTool{Name: "takeover_trace", Title: "Takeover trace", Input: mcpserver.TakeoverTraceInput{},
			Description: "The coordinator timeline of the groups: when each moved, from which broker to which, and why."},
		Args:  "[PATH...]",
		Build: leaf(traceFlags, checkTakeoverTrace, runTakeoverTrace),
	})
}

// traceFlags are takeover trace's flags, bound to o.
func traceFlags(o *takeoverTraceOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "assignments", Aliases: []string{"a"}, Usage: "assignment versions: files or directories (repeatable)"},
		&cli.StringFlag{Name: "journal", Usage: "a 'kaasctl watch --journal' directory", Destination: &o.journal},
		&cli.BoolFlag{Name: "no-live", Usage: "do not include the volume's current assignment.json", Destination: &o.noLive},
		&cli.StringSliceFlag{Name: "logs", Aliases: []string{"l"}, Usage: "broker logs: files, directories, or - for stdin (repeatable)"},
		&cli.StringFlag{Name: "broker", Usage: "broker of log lines whose prefix, fields and file name name none (e.g. stdin)", Destination: &o.broker},
		&cli.StringSliceFlag{Name: "group", Aliases: []string{"g"}, Usage: "only these groups (names or globs; repeatable); names are followed even without other evidence"},
		&cli.StringFlag{Name: "since", Usage: "only events at or after `TIME` (" + timeUsage + ")"},
		&cli.StringFlag{Name: "until", Usage: "only events at or before `TIME` (same forms as --since)"},
		&cli.BoolFlag{Name: "placements", Usage: "json/yaml: also list every group's coordinator at every version (versions[].placements)", Destination: &o.placements},
	}
}

// takeoverTraceOptions is 'takeover trace' after flag parsing.
type takeoverTraceOptions struct {
	assignments []string // --assignments files or directories
	logs        []string // --logs files, directories, "-"
	paths       []string // positional PATHs: directories and *.json are assignments, the rest logs
	journal     string   // --journal DIR ("": none)
	noLive      bool     // --no-live: leave out the volume's assignment.json
	broker      string   // --broker of log lines that name none
	groups      []string // --group names or globs
	since       time.Time
	until       time.Time
	placements  bool
}

// checkTakeoverTrace reads the inputs and the time window (against the
// run's clock; its notes go to g).
func checkTakeoverTrace(c *cli.Context, g *Globals, o *takeoverTraceOptions) error {
	o.assignments, o.logs = slices.Clone(c.StringSlice("assignments")), slices.Clone(c.StringSlice("logs"))
	o.paths, o.groups = c.Args().Slice(), c.StringSlice("group")
	var err error
	o.since, o.until, err = parseWindow(c.String("since"), c.String("until"), g)
	return err
}

// runTakeoverTrace reads the assignment versions and logs, builds the
// trace and prints it.
func runTakeoverTrace(_ context.Context, g *Globals, o takeoverTraceOptions) error {
	asgPaths, logPaths := inspect.TraceInputPaths(o.assignments, o.logs, o.paths, o.journal)
	var offsetGroups []string
	if g.HasVolume() {
		l, err := g.Layout()
		if err != nil {
			return err
		}
		if !o.noLive {
			if _, err := os.Stat(l.AssignmentPath()); err == nil {
				asgPaths = append(asgPaths, l.AssignmentPath())
			} else {
				g.Warnf("%s: %v (the live version is not included)", l.AssignmentPath(), err)
			}
		}
		offsetGroups = offsetFileGroups(g)
	}
	if len(asgPaths) == 0 && len(logPaths) == 0 {
		return exit.UsageErrorf("nothing to trace: give --assignments DIR (a history or a watch journal), --journal DIR, a volume (--data-dir/--cluster-dir), or --logs")
	}
	hist, src := inspect.ReadTraceHistory(g, asgPaths, offsetGroups)
	logs, logErrs := inspect.ReadTraceLogs(g, g.IO.In, g.Progress, o.broker, logPaths, &src)
	if len(hist.Snapshots) == 0 && len(logs) == 0 {
		return fmt.Errorf("nothing to trace: no readable assignment version and no recognized log line")
	}
	tr := inspect.BuildTrace(inspect.TraceInput{
		Snapshots: hist.Snapshots, Logs: logs, Groups: append(offsetGroups, inspect.ExactNames(o.groups)...),
		Filter: o.groups, Since: o.since, Until: o.until, Placements: o.placements,
	})
	if err := g.Printer.Print(views.TraceOutput(views.TraceView{Sources: src, Trace: tr, Filters: views.TraceFilters(o.groups, o.since, o.until)})); err != nil {
		return err
	}
	if !g.HasVolume() && len(inspect.ExactNames(o.groups)) == 0 && len(hist.Snapshots) > 1 {
		g.Notef("hint: no volume given, so %s: add --data-dir DIR (its offset files name every group) or --group NAME", views.TraceNoVolumeHint(tr))
	}
	if n := len(src.Unreadable) + len(logErrs); n > 0 {
		return &exit.CodedError{Code: exit.Error, Err: fmt.Errorf("%s could not be read (see the warnings above); the trace covers the rest", render.Plural(n, "input", "inputs"))}
	}
	return nil
}
