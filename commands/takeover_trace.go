package commands

import (
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
	registerSub("takeover", "explain group coordinator moves: when, from which broker to which, and why", func() *cli.Command {
		return &cli.Command{
			Name:      "trace",
			Usage:     "reconstruct every group's coordinator timeline from assignment history and broker logs",
			ArgsUsage: "[PATH...]",
			UsageText: "kaasctl takeover trace --assignments DIR|FILE... [--logs FILE|DIR|-...] [--group G]... [--since T] [--until T]\n" +
				"kaasctl takeover trace --data-dir /data --journal ~/kaas-journal --logs kaas-0.log,kaas-1.log.gz",
			Description: "Assignment versions come from --assignments (files, or directories whose files, any names, are\n" +
				"versions), --journal (a 'kaasctl watch --journal' directory) and the volume's live assignment.json\n" +
				"when a volume is given; they are ordered by controller epoch then version, duplicates dropped.\n" +
				"Positional PATHs that are directories or *.json files are assignment sources; other PATHs are logs.\n\n" +
				"At each version every known group's coordinator is recomputed (groups: explicit entries, offset\n" +
				"files on the volume, --group names, groups named in log lines) and each change is an event with\n" +
				"its cause. Logs (kaas Rust tracing JSON/text, kaas Go slog; kubectl --prefix/--timestamps; plain or\n" +
				"gzip; '-' for stdin) date versions ('controller active: assignment published', lease and broker-set\n" +
				"lines) and confirm moves ('group coordinator change' lines): evidence assignment, log or both.\n\n" +
				"--group takes names or globs (orders-*) and limits the report to them. --since/--until take RFC 3339\n" +
				"times or durations before now (90m, 2h, 1d).",
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
			Action: takeoverTrace,
		}
	})
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

func takeoverTrace(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	now := g.Now()
	since, err := parseWhen("since", c.String("since"), now, g)
	if err != nil {
		return err
	}
	until, err := parseWhen("until", c.String("until"), now, g)
	if err != nil {
		return err
	}
	if !since.IsZero() && !until.IsZero() && until.Before(since) {
		return exit.UsageErrorf("--until (%s) is before --since (%s)", until.Format(time.RFC3339), since.Format(time.RFC3339))
	}
	asgPaths := slices.Clone(c.StringSlice("assignments"))
	logPaths := slices.Clone(c.StringSlice("logs"))
	for _, a := range c.Args().Slice() {
		if st, err := os.Stat(a); (err == nil && st.IsDir()) || strings.HasSuffix(a, ".json") {
			asgPaths = append(asgPaths, a)
		} else {
			logPaths = append(logPaths, a)
		}
	}
	if j := c.String("journal"); j != "" {
		asgPaths = append(asgPaths, j)
	}
	var offsetGroups []string
	if g.HasVolume() {
		l, err := g.Layout()
		if err != nil {
			return err
		}
		if !c.Bool("no-live") {
			if _, err := os.Stat(l.AssignmentPath()); err == nil {
				asgPaths = append(asgPaths, l.AssignmentPath())
			} else {
				g.Warnf("%s: %v (the live version is not included)", l.AssignmentPath(), err)
			}
		}
		offsetGroups = trOffsetGroups(g)
	}
	if len(asgPaths) == 0 && len(logPaths) == 0 {
		return exit.UsageErrorf("nothing to trace: give --assignments DIR (a history or a watch journal), --journal DIR, a volume (--data-dir/--cluster-dir), or --logs")
	}

	hist := volume.LoadAssignmentHistory(asgPaths)
	src := traceSources{Snapshots: len(hist.Snapshots), Paths: asgPaths, Duplicates: hist.Duplicates, Conflicts: hist.Conflicts, OffsetGroups: len(offsetGroups)}
	for _, p := range hist.Problems {
		g.Warnf("%s: %s (skipped)", p.Path, p.Problem)
		src.Unreadable = append(src.Unreadable, p.Path)
	}
	for _, p := range hist.Conflicts {
		g.Warnf("%s: claims an epoch and version already read with different content (kept the first)", p)
	}
	if len(asgPaths) > 0 && len(hist.Snapshots) == 0 {
		g.Warnf("no readable assignment version among %s", strings.Join(asgPaths, ", "))
	}

	inputs, err := trLogInputs(logPaths, g)
	if err != nil {
		return err
	}
	var logs []logparse.Event
	var logErrs []error
	if len(inputs) > 0 {
		var st logparse.Stats
		var total int64
		for _, in := range inputs {
			if fi, err := os.Stat(in.Path); err == nil && in.Path != "-" {
				total += fi.Size()
			}
		}
		prog := g.Progress("reading logs (bytes)", total)
		logs, st, logErrs = logparse.ParseAll(inputs, logparse.Options{Broker: c.String("broker"), OnRead: func(n int) { prog.Add(int64(n)) }})
		prog.Done()
		for _, e := range logErrs {
			g.Warnf("log %v (skipped)", e)
		}
		src.LogStats = st
		src.LogLinesFound = len(logs)
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
	}
	if len(hist.Snapshots) == 0 && len(logs) == 0 {
		return fmt.Errorf("nothing to trace: no readable assignment version and no recognized log line")
	}

	tr := inspect.BuildTrace(inspect.TraceInput{
		Snapshots: hist.Snapshots, Logs: logs,
		Groups: append(offsetGroups, trExactNames(c.StringSlice("group"))...),
		Filter: c.StringSlice("group"), Since: since, Until: until, Placements: c.Bool("placements"),
	})
	view := traceView{Sources: src, Trace: tr}
	for _, gname := range c.StringSlice("group") {
		view.Filters = append(view.Filters, "group "+gname)
	}
	if !since.IsZero() {
		view.Filters = append(view.Filters, "since "+since.UTC().Format(time.RFC3339))
	}
	if !until.IsZero() {
		view.Filters = append(view.Filters, "until "+until.UTC().Format(time.RFC3339))
	}
	t := render.NewTable("TIME", "EPOCH", "VERSION", "GROUP", "FROM", "TO", "CAUSE", "EVIDENCE", "DETAIL+", "LOGS+")
	for _, e := range tr.Events {
		t.Add(trTime(e.Time), strconv.FormatInt(e.ControllerEpoch, 10), strconv.FormatInt(e.AssignmentVersion, 10), e.Group, e.From, e.To,
			string(e.Cause), string(e.Evidence), e.Detail, strings.Join(e.Logs, " "))
	}
	if err := g.Printer.Print(render.Output{Data: view, Items: tr.Events, Table: t, Human: func(p *render.Printer) error {
		return trRenderTrace(p, view)
	}}); err != nil {
		return err
	}
	if !g.HasVolume() && len(trExactNames(c.StringSlice("group"))) == 0 && len(hist.Snapshots) > 1 {
		// Without a volume the only groups known are those named in
		// explicit entries and logs: a group placed by the hash tier is
		// recomputed only when its name is known.
		what := fmt.Sprintf("the %s followed are those named in explicit entries or in the logs (moves shown above included); any other group placed by the hash tier is not recomputed and may have moved too", render.Plural(tr.Groups, "group", "groups"))
		if len(tr.Events) == 0 {
			what = fmt.Sprintf("'no coordinator moves' covers only the %s named in explicit entries or in the logs; any other group placed by the hash tier may have moved", render.Plural(tr.Groups, "group", "groups"))
		}
		g.Notef("hint: no volume given, so %s: add --data-dir DIR (its offset files name every group) or --group NAME", what)
	}
	if n := len(src.Unreadable) + len(logErrs); n > 0 {
		return &exit.CodedError{Code: exit.Error, Err: fmt.Errorf("%s could not be read (see the warnings above); the trace covers the rest", render.Plural(n, "input", "inputs"))}
	}
	return nil
}

// exactNames keeps the --group values that are names, not globs: those
// join the followed set even when nothing else mentions them.
func trExactNames(gs []string) []string {
	var out []string
	for _, g := range gs {
		if !strings.ContainsAny(g, "*?[") {
			out = append(out, g)
		}
	}
	return out
}

// logInputs expands --logs: files, directories (their regular files), "-".
func trLogInputs(paths []string, g *Globals) ([]logparse.Input, error) {
	var out []logparse.Input
	stdin := false
	for _, p := range paths {
		if p == "-" {
			if stdin {
				continue
			}
			stdin = true
			out = append(out, logparse.Input{Path: "-", R: g.IO.In})
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
	return out, nil
}

func trTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func trClock(t time.Time, withDate bool) string {
	if t.IsZero() {
		return "(time unknown)"
	}
	if withDate {
		return t.UTC().Format("2006-01-02 15:04:05.000")
	}
	return t.UTC().Format("15:04:05.000")
}

func trRenderTrace(p *render.Printer, v traceView) error {
	tr := v.Trace
	var lines []string
	head := fmt.Sprintf("takeover trace · %s", render.Plural(tr.Groups, "group", "groups"))
	var snaps []inspect.TraceVersion
	for _, x := range tr.Versions {
		if x.Source == "snapshot" {
			snaps = append(snaps, x)
		}
	}
	if len(snaps) > 0 {
		head += fmt.Sprintf(" · %s (epoch %d v%d … epoch %d v%d)", render.Plural(len(snaps), "assignment version", "assignment versions"),
			snaps[0].ControllerEpoch, snaps[0].AssignmentVersion, snaps[len(snaps)-1].ControllerEpoch, snaps[len(snaps)-1].AssignmentVersion)
	}
	if len(v.Sources.Logs) > 0 {
		head += fmt.Sprintf(" · %s (%d lines, %d used)", render.Plural(len(v.Sources.Logs), "log", "logs"), v.Sources.LogStats.Lines, v.Sources.LogLinesFound)
	}
	lines = append(lines, p.Paint(render.Bold, head))
	// Dates once: on the first line and when the day changes.
	day := ""
	stamp := func(t time.Time) string {
		d := ""
		if !t.IsZero() {
			d = t.UTC().Format("2006-01-02")
		}
		s := trClock(t, d != day && d != "")
		if d != "" {
			day = d
		}
		return s
	}
	gw, bw := 5, 4
	for _, e := range tr.Events {
		gw = max(gw, min(40, len(render.Shorten(e.Group, 40))))
		bw = max(bw, len(e.From), len(e.To))
	}
	evByVersion := map[[2]int64][]inspect.TraceEvent{}
	var orphan []inspect.TraceEvent
	known := map[[2]int64]bool{}
	for _, x := range tr.Versions {
		known[[2]int64{x.ControllerEpoch, x.AssignmentVersion}] = true
	}
	for _, e := range tr.Events {
		k := [2]int64{e.ControllerEpoch, e.AssignmentVersion}
		if known[k] {
			evByVersion[k] = append(evByVersion[k], e)
		} else {
			orphan = append(orphan, e)
		}
	}
	filtered := len(v.Filters) > 0
	for _, x := range tr.Versions {
		lines = append(lines, "")
		desc := fmt.Sprintf("epoch %d v%d", x.ControllerEpoch, x.AssignmentVersion)
		info := []string{}
		if x.Controller != "" {
			info = append(info, "controller "+x.Controller)
		}
		if x.Source == "log" {
			info = append(info, "known only from logs (no snapshot)")
		} else {
			bs := "brokers " + strings.Join(x.Brokers, " ")
			var delta []string
			for _, j := range x.Joined {
				delta = append(delta, "+"+j)
			}
			for _, l := range x.Left {
				delta = append(delta, "-"+l)
			}
			if len(delta) > 0 {
				bs += " (" + strings.Join(delta, " ") + ")"
			}
			info = append(info, bs)
			if x.First {
				info = append(info, "first version: "+trPlacementSummary(tr.Initial))
			} else {
				info = append(info, render.Plural(x.Moves, "move", "moves"))
			}
		}
		if x.MissingBefore > 0 {
			info = append(info, p.Paint(render.Yellow, x.Gap))
		} else if x.Gap != "" {
			info = append(info, p.Paint(render.Dim, x.Gap))
		}
		lines = append(lines, p.Paint(render.Bold, stamp(x.Time)+"  "+desc)+"  "+strings.Join(info, " · "))
		for _, n := range x.Notes {
			lines = append(lines, p.Paint(render.Dim, fmt.Sprintf("    ↳ %s %s  %s  [%s]", trClock(n.Time, false), render.Dash(n.Broker), n.Text, n.Ref)))
		}
		for _, e := range evByVersion[[2]int64{x.ControllerEpoch, x.AssignmentVersion}] {
			lines = append(lines, traceEventLine(p, e, gw, bw))
		}
	}
	if len(orphan) > 0 {
		lines = append(lines, "", p.Paint(render.Bold, "moves seen only in logs, at versions with no snapshot"))
		for _, e := range orphan {
			lines = append(lines, "  "+stamp(e.Time)+" epoch "+strconv.FormatInt(e.ControllerEpoch, 10)+" v"+strconv.FormatInt(e.AssignmentVersion, 10))
			lines = append(lines, traceEventLine(p, e, gw, bw))
		}
	}
	lines = append(lines, "")
	if len(tr.Events) == 0 {
		if filtered {
			lines = append(lines, "no coordinator moves for the groups and times selected")
		} else {
			lines = append(lines, "no coordinator moves")
		}
	} else {
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
	return render.Lines(p.Out, lines...)
}

func traceEventLine(p *render.Printer, e inspect.TraceEvent, gw, bw int) string {
	cause := string(e.Cause)
	switch e.Cause {
	case inspect.CauseBrokerLeft, inspect.CauseControllerFailover:
		cause = p.Paint(render.Red, render.Pad(cause, 19))
	case inspect.CauseUnknown:
		cause = p.Paint(render.Yellow, render.Pad(cause, 19))
	default:
		cause = render.Pad(cause, 19)
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

func trPlacementSummary(ps []inspect.Placement) string {
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
