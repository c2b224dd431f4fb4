package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/logparse"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

func init() {
	register(Descriptor{
		Path:   "takeover trace",
		Usage:  "reconstruct every group's coordinator timeline from assignment history and broker logs",
		Common: fgAssignment,
		Docs: []FormatDoc{
			{Title: "takeover trace", Doc: traceView{}, JSONL: "each event (trace.events[])", Rank: 100},
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

type traceSources struct {
	Snapshots     int            `json:"snapshots"`
	Paths         []string       `json:"paths"`
	Duplicates    []string       `json:"duplicates"`
	Conflicts     []string       `json:"conflicts"`
	Unreadable    []string       `json:"unreadable"`
	Logs          []string       `json:"logs"`
	LogStats      logparse.Stats `json:"logStats"`
	OffsetGroups  int            `json:"offsetFileGroups"`
	LogLinesFound int            `json:"logEvents"`
}

type traceView struct {
	Sources traceSources `json:"sources"`
	Filters []string     `json:"filters"`
	*inspect.Trace
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
	if err := printTrace(g.Printer, traceView{Sources: src, Trace: tr, Filters: traceFilters(o)}); err != nil {
		return err
	}
	if !g.HasVolume() && len(inspect.ExactNames(o.groups)) == 0 && len(hist.Snapshots) > 1 {
		g.Notef("hint: no volume given, so %s: add --data-dir DIR (its offset files name every group) or --group NAME", traceNoVolumeHint(tr))
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
func readTraceHistory(g *Globals, paths, offsetGroups []string) (volume.HistoryResult, traceSources) {
	hist := volume.LoadAssignmentHistory(paths)
	src := traceSources{Snapshots: len(hist.Snapshots), Paths: paths, Duplicates: hist.Duplicates, Conflicts: hist.Conflicts, OffsetGroups: len(offsetGroups)}
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
func readTraceLogs(g *Globals, broker string, paths []string, src *traceSources) ([]logparse.Event, []error) {
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

// traceNoVolumeHint says what a trace without a volume may miss: the only
// groups known are those named in explicit entries and logs, and a group
// placed by the hash tier is recomputed only when its name is known.
func traceNoVolumeHint(tr *inspect.Trace) string {
	if len(tr.Events) == 0 {
		return fmt.Sprintf("'no coordinator moves' covers only the %s named in explicit entries or in the logs; any other group placed by the hash tier may have moved", render.Plural(tr.Groups, "group", "groups"))
	}
	return fmt.Sprintf("the %s followed are those named in explicit entries or in the logs (moves shown above included); any other group placed by the hash tier is not recomputed and may have moved too", render.Plural(tr.Groups, "group", "groups"))
}

func printTrace(p *render.Printer, view traceView) error {
	t := render.NewTable("TIME", "EPOCH", "VERSION", "GROUP", "FROM", "TO", "CAUSE", "EVIDENCE", "DETAIL+", "LOGS+")
	for _, e := range view.Events {
		t.Add(render.Timestamp(e.Time), strconv.FormatInt(e.ControllerEpoch, 10), strconv.FormatInt(e.AssignmentVersion, 10), e.Group, e.From, e.To,
			string(e.Cause), string(e.Evidence), e.Detail, strings.Join(e.Logs, " "))
	}
	return p.Print(render.Output{Data: view, Items: view.Events, Table: t, Human: func(p *render.Printer) error {
		return renderTrace(p, view)
	}})
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

// dayStamp prints times with the date once: on the first line and when
// the day changes.
type dayStamp struct{ day string }

func (d *dayStamp) stamp(t time.Time) string {
	day := ""
	if !t.IsZero() {
		day = t.UTC().Format("2006-01-02")
	}
	s := render.Clock(t, day != d.day && day != "")
	if day != "" {
		d.day = day
	}
	return s
}

func renderTrace(p *render.Printer, v traceView) error {
	tr := v.Trace
	lines := []string{p.Paint(render.Bold, traceHead(v))}
	var days dayStamp
	gw, bw := 5, 4
	for _, e := range tr.Events {
		gw = max(gw, min(40, len(render.Shorten(e.Group, 40))))
		bw = max(bw, len(e.From), len(e.To))
	}
	at, orphans := tr.EventsByVersion()
	for _, x := range tr.Versions {
		lines = append(lines, "", p.Paint(render.Bold, days.stamp(x.Time)+"  "+fmt.Sprintf("epoch %d v%d", x.ControllerEpoch, x.AssignmentVersion))+"  "+strings.Join(traceVersionInfo(p, tr, x), " · "))
		for _, n := range x.Notes {
			lines = append(lines, p.Paint(render.Dim, fmt.Sprintf("    ↳ %s %s  %s  [%s]", render.Clock(n.Time, false), render.Dash(n.Broker), n.Text, n.Ref)))
		}
		for _, e := range at[x.KeyOf()] {
			lines = append(lines, traceEventLine(p, e, gw, bw))
		}
	}
	if len(orphans) > 0 {
		lines = append(lines, "", p.Paint(render.Bold, "moves seen only in logs, at versions with no snapshot"))
		for _, e := range orphans {
			lines = append(lines, "  "+days.stamp(e.Time)+" epoch "+strconv.FormatInt(e.ControllerEpoch, 10)+" v"+strconv.FormatInt(e.AssignmentVersion, 10))
			lines = append(lines, traceEventLine(p, e, gw, bw))
		}
	}
	lines = append(lines, "")
	lines = append(lines, traceFooter(p, tr, len(v.Filters) > 0)...)
	return render.Lines(p.Out, lines...)
}

// traceHead is the trace's first line: groups, versions, logs.
func traceHead(v traceView) string {
	head := fmt.Sprintf("takeover trace · %s", render.Plural(v.Groups, "group", "groups"))
	if snaps := v.SnapshotVersions(); len(snaps) > 0 {
		first, last := snaps[0], snaps[len(snaps)-1]
		head += fmt.Sprintf(" · %s (epoch %d v%d … epoch %d v%d)", render.Plural(len(snaps), "assignment version", "assignment versions"),
			first.ControllerEpoch, first.AssignmentVersion, last.ControllerEpoch, last.AssignmentVersion)
	}
	if len(v.Sources.Logs) > 0 {
		head += fmt.Sprintf(" · %s (%d lines, %d used)", render.Plural(len(v.Sources.Logs), "log", "logs"), v.Sources.LogStats.Lines, v.Sources.LogLinesFound)
	}
	return head
}

// traceVersionInfo is what a version's line says after its epoch and
// version: controller, brokers, moves, the gap before it.
func traceVersionInfo(p *render.Printer, tr *inspect.Trace, x inspect.TraceVersion) []string {
	var info []string
	if x.Controller != "" {
		info = append(info, "controller "+x.Controller)
	}
	switch {
	case x.Source == "log":
		info = append(info, "known only from logs (no snapshot)")
	case x.First:
		info = append(info, brokersText(x), "first version: "+placementSummary(tr.Initial))
	default:
		info = append(info, brokersText(x), render.Plural(x.Moves, "move", "moves"))
	}
	if x.MissingBefore > 0 {
		info = append(info, p.Paint(render.Yellow, x.Gap))
	} else if x.Gap != "" {
		info = append(info, p.Paint(render.Dim, x.Gap))
	}
	return info
}

// traceFooter sums the moves up, and warns of versions never seen.
func traceFooter(p *render.Printer, tr *inspect.Trace, filtered bool) []string {
	var lines []string
	switch {
	case len(tr.Events) == 0 && filtered:
		lines = append(lines, "no coordinator moves for the groups and times selected")
	case len(tr.Events) == 0:
		lines = append(lines, "no coordinator moves")
	default:
		var parts []string
		for _, cc := range tr.EventsBy {
			parts = append(parts, fmt.Sprintf("%s %d", cc.Cause, cc.Count))
		}
		lines = append(lines, fmt.Sprintf("%s: %s · %d confirmed by broker logs · %d seen only in logs",
			render.Plural(len(tr.Events), "move", "moves"), strings.Join(parts, ", "), tr.Confirmed, tr.LogOnlyMoves))
	}
	if tr.MissedVersions > 0 {
		lines = append(lines, p.Paint(render.Yellow, fmt.Sprintf("%s never seen: a coordinator a group had only in a missing version is not in this trace",
			render.Plural(int(tr.MissedVersions), "assignment version", "assignment versions"))))
	}
	return lines
}

func traceEventLine(p *render.Printer, e inspect.TraceEvent, gw, bw int) string {
	cause := render.Pad(string(e.Cause), 19)
	switch e.Cause {
	case inspect.CauseBrokerLeft, inspect.CauseControllerFailover:
		cause = p.Paint(render.Red, cause)
	case inspect.CauseUnknown:
		cause = p.Paint(render.Yellow, cause)
	}
	s := "    " + render.Pad(render.Shorten(e.Group, 40), gw) + "  " + render.Pad(render.Dash(e.From), bw) + " → " + render.Pad(render.Dash(e.To), bw) +
		"  " + cause + " " + render.Pad(string(e.Evidence), 10)
	if p.Wide() {
		s += "  " + e.Detail
		if len(e.Logs) > 0 {
			s += "  [" + strings.Join(e.Logs, " ") + "]"
		}
	}
	return strings.TrimRight(s, " ")
}

// placementSummary is "N groups (b1 3, b2 4)": groups per coordinator.
func placementSummary(ps []inspect.Placement) string {
	if len(ps) == 0 {
		return "no groups known"
	}
	counts := map[string]int{}
	for _, p := range ps {
		counts[render.Dash(p.Coordinator)]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	return render.Plural(len(ps), "group", "groups") + " (" + strings.Join(parts, ", ") + ")"
}
