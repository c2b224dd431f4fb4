package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/logparse"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/render/views"
)

func init() {
	register(Descriptor{
		Path:   "takeover trace",
		Usage:  "reconstruct every group's coordinator timeline from assignment history and broker logs",
		Common: fgAssignment,
		Docs: []FormatDoc{
			{Title: "takeover trace", Doc: views.TraceView{}, JSONL: "each event (trace.events[])", Rank: 100},
		},
		Build: buildTakeoverTraceCmd,
	})
}

func buildTakeoverTraceCmd() *cli.Command {
	return &cli.Command{
		ArgsUsage: "[PATH...]",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "assignments", Aliases: []string{"a"}, Usage: "assignment versions: files or directories (repeatable)"},
			&cli.StringFlag{Name: "journal", Usage: "a 'kaasctl watch --journal' directory"},
			&cli.BoolFlag{Name: "no-live", Usage: "do not include the volume's current assignment.json"},
			&cli.StringSliceFlag{Name: "logs", Aliases: []string{"l"}, Usage: "broker logs: files, directories, or - for stdin (repeatable)"},
			&cli.StringFlag{Name: "broker", Usage: "broker of log lines whose prefix, fields and file name name none (e.g. stdin)"},
			&cli.StringSliceFlag{Name: "group", Aliases: []string{"g"}, Usage: "only these groups (names or globs; repeatable); names are followed even without other evidence"},
			&cli.StringFlag{Name: "since", Usage: "only events at or after `TIME` (" + timeUsage + ")"},
			&cli.StringFlag{Name: "until", Usage: "only events at or before `TIME` (same forms as --since)"},
			&cli.BoolFlag{Name: "placements", Usage: "json/yaml: also list every group's coordinator at every version (versions[].placements)"},
		},
		Action: actionWith(parseTakeoverTrace, runTakeoverTrace),
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

// parseTakeoverTrace reads the flags; --since and --until are resolved
// against the run's clock (g.Now) and their notes go to g.
func parseTakeoverTrace(c *cli.Context, g *Globals) (takeoverTraceOptions, error) {
	o := takeoverTraceOptions{assignments: slices.Clone(c.StringSlice("assignments")), logs: slices.Clone(c.StringSlice("logs")),
		paths: c.Args().Slice(), journal: c.String("journal"), noLive: c.Bool("no-live"), broker: c.String("broker"),
		groups: c.StringSlice("group"), placements: c.Bool("placements")}
	var err error
	if o.since, o.until, err = parseWindow(c.String("since"), c.String("until"), g); err != nil {
		return o, err
	}
	return o, nil
}

// runTakeoverTrace reads the assignment versions and logs, builds the
// trace and prints it.
func runTakeoverTrace(_ context.Context, g *Globals, o takeoverTraceOptions) error {
	asgPaths, logPaths := traceInputPaths(o)
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
	hist, src := readTraceHistory(g, asgPaths, offsetGroups)
	logs, logErrs := readTraceLogs(g, o.broker, logPaths, &src)
	if len(hist.Snapshots) == 0 && len(logs) == 0 {
		return fmt.Errorf("nothing to trace: no readable assignment version and no recognized log line")
	}
	tr := inspect.BuildTrace(inspect.TraceInput{
		Snapshots: hist.Snapshots, Logs: logs, Groups: append(offsetGroups, inspect.ExactNames(o.groups)...),
		Filter: o.groups, Since: o.since, Until: o.until, Placements: o.placements,
	})
	if err := g.Printer.Print(views.TraceOutput(views.TraceView{Sources: src, Trace: tr, Filters: traceFilters(o)})); err != nil {
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

// traceInputPaths sorts the positional PATHs into assignment sources
// (directories, *.json) and logs, after --assignments and --logs; the
// journal is an assignment source.
func traceInputPaths(o takeoverTraceOptions) (asg, logs []string) {
	asg, logs = slices.Clone(o.assignments), slices.Clone(o.logs)
	for _, a := range o.paths {
		if st, err := os.Stat(a); (err == nil && st.IsDir()) || strings.HasSuffix(a, ".json") {
			asg = append(asg, a)
		} else {
			logs = append(logs, a)
		}
	}
	if o.journal != "" {
		asg = append(asg, o.journal)
	}
	return asg, logs
}

// readTraceHistory reads the assignment versions, warning of what it skips.
func readTraceHistory(g *Globals, paths, offsetGroups []string) (volume.HistoryResult, views.TraceSources) {
	hist := volume.LoadAssignmentHistory(paths)
	src := views.TraceSources{Snapshots: len(hist.Snapshots), Paths: paths, Duplicates: hist.Duplicates, Conflicts: hist.Conflicts, OffsetGroups: len(offsetGroups)}
	for _, p := range hist.Problems {
		g.Warnf("%s: %s (skipped)", p.Path, p.Problem)
		src.Unreadable = append(src.Unreadable, p.Path)
	}
	for _, p := range hist.Conflicts {
		g.Warnf("%s: claims an epoch and version already read with different content (kept the first)", p)
	}
	if len(paths) > 0 && len(hist.Snapshots) == 0 {
		g.Warnf("no readable assignment version among %s", strings.Join(paths, ", "))
	}
	return hist, src
}

// readTraceLogs parses the broker logs, recording what was read in src.
func readTraceLogs(g *Globals, broker string, paths []string, src *views.TraceSources) ([]logparse.Event, []error) {
	inputs := logInputs(paths, g)
	if len(inputs) == 0 {
		return nil, nil
	}
	var total int64
	for _, in := range inputs {
		if fi, err := os.Stat(in.Path); err == nil && in.Path != "-" {
			total += fi.Size()
		}
	}
	prog := g.Progress("reading logs (bytes)", total)
	logs, st, logErrs := logparse.ParseAll(inputs, logparse.Options{Broker: broker, OnRead: func(n int) { prog.Add(int64(n)) }})
	prog.Done()
	for _, e := range logErrs {
		g.Warnf("log %v (skipped)", e)
	}
	src.LogStats, src.LogLinesFound = st, len(logs)
	for _, in := range inputs {
		src.Logs = append(src.Logs, in.Path)
	}
	if n := st.Unparsed + st.Binary + st.Overlong; n > 0 {
		g.Warnf("logs: %d lines skipped (%d unreadable key lines, %d with binary data, %d over %d MB)", n, st.Unparsed, st.Binary, st.Overlong, logparse.MaxLine>>20)
	}
	for _, u := range st.UnknownFormat {
		g.Warnf("%s: no line in a known kaas log format (is this a broker log?)", u)
	}
	g.Notef("logs: %d lines in %s, %d controller/coordinator lines", st.Lines, render.Plural(st.Files, "input", "inputs"), len(logs))
	return logs, logErrs
}

// traceFilters names the filters applied, for the view.
func traceFilters(o takeoverTraceOptions) []string {
	var out []string
	for _, gname := range o.groups {
		out = append(out, "group "+gname)
	}
	if !o.since.IsZero() {
		out = append(out, "since "+o.since.UTC().Format(time.RFC3339))
	}
	if !o.until.IsZero() {
		out = append(out, "until "+o.until.UTC().Format(time.RFC3339))
	}
	return out
}

// logInputs expands --logs: files, directories (their regular files),
// "-" (stdin, once); a path that cannot be read is skipped with a warning.
func logInputs(paths []string, g *Globals) []logparse.Input {
	var out []logparse.Input
	stdin := false
	for _, p := range paths {
		if p == "-" {
			if !stdin {
				stdin = true
				out = append(out, logparse.Input{Path: "-", R: g.IO.In})
			}
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			g.Warnf("log %s: %v (skipped)", p, err)
			continue
		}
		if !st.IsDir() {
			out = append(out, logparse.Input{Path: p})
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			g.Warnf("log dir %s: %v (skipped)", p, err)
			continue
		}
		for _, e := range ents {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				out = append(out, logparse.Input{Path: filepath.Join(p, e.Name())})
			}
		}
	}
	return out
}
