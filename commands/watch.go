package commands

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/render"
)

func init() {
	register(func() *cli.Command {
		return &cli.Command{
			Name:  "watch",
			Usage: "follow assignment.json (coordinator moves as they happen) or, with --offsets, every offset file (rewinds, vanished partitions, an offsets journal)",
			UsageText: "kaasctl watch --data-dir /data [--journal DIR] [--group G]... [-o jsonl]\n" +
				"kaasctl watch --offsets --data-dir /data --journal /var/lib/kaasctl/journal [--anomalies-only]\n" +
				"kaasctl watch --data-dir /data --once [--journal DIR]      (print the current version; snapshot it)\n" +
				"kaasctl watch --cluster-dir /cluster --timeout 10m -o json",
			Description: "Follows CD/assignment.json with fsnotify on its directory (the controller replaces the file by\n" +
				"rename) plus a poll every --poll-interval: on NFS, writes from other hosts raise no local event.\n" +
				"A missing, half-written or invalid file is reported and retried, never fatal; so is a volume whose\n" +
				"cluster dir does not exist yet (the watch waits for it; --once does not wait).\n\n" +
				"Each new version is compared with the previous one: every known group (explicit entries, offset\n" +
				"files, --group) whose coordinator changes is printed with its cause, in the same shape as\n" +
				"'kaasctl takeover trace' events. -o jsonl streams one event per line; -o json/yaml print the\n" +
				"versions and events seen when the watch ends (Ctrl-C, --timeout).\n\n" +
				"--journal DIR keeps every version seen as DIR/assignment-e<epoch>-v<version>.json (atomic writes);\n" +
				"'kaasctl takeover trace --journal DIR' reads it. Keep DIR off the data-dir root: kaas's operator\n" +
				"deletes unknown directories there (kaasctl refuses such a DIR unless its name starts with '.').\n\n" +
				"--offsets follows every group's offset file instead (the live offsets dir of the volume's kaas\n" +
				"generation): each change is printed as it happens with the anomalies kaas causes silently: REWIND\n" +
				"(a committed offset moved back: a stale commit), VANISHED (partitions gone: a partial rewrite),\n" +
				"PLAIN_MAP (on 0.2.18, a file brokers read as empty), CORRUPT, EMPTIED. With --journal DIR every\n" +
				"change is recorded in DIR/offsets/ as per-partition deltas (JSON lines, fsync per batch, hourly\n" +
				"segments gzipped on rotation, --journal-max-bytes/--journal-max-age retention);\n" +
				"'kaasctl offsets history GROUP --journal DIR' reads it and 'kaasctl offsets reset --to-history TIME\n" +
				"--journal DIR' restores from it (see docs/offsets-journal.md).",
			Flags: append([]cli.Flag{
				&cli.DurationFlag{Name: "poll-interval", Value: time.Second, Usage: "how often to check the file besides fsnotify events"},
				&cli.BoolFlag{Name: "poll-only", Usage: "do not use fsnotify (polling only)"},
				&cli.StringFlag{Name: "journal", Usage: "append every version seen to this directory"},
				&cli.BoolFlag{Name: "once", Usage: "print the current version's summary and exit"},
				&cli.DurationFlag{Name: "timeout", Usage: "stop after this long (exit 0; exit 1 if no readable version was seen)"},
				&cli.IntFlag{Name: "count", Usage: "stop after this many versions (the current one counts; --count 2 waits for the next); with --offsets, after this many changes (anomalies with --anomalies-only)"},
				&cli.StringSliceFlag{Name: "group", Aliases: []string{"g"}, Usage: "only these groups (names or globs; repeatable); names are followed even without an entry or offset file"},
				&cli.StringFlag{Name: "assignment", Aliases: []string{"f"}, Usage: "follow this file instead of the volume's assignment.json"},
			}, watchOffsetsFlags()...),
			Action: watchCmd,
		}
	})
}

type watchOnceView struct {
	Path         string               `json:"path"`
	Version      inspect.TraceVersion `json:"version"`
	KnownGroups  int                  `json:"knownGroups"`
	Coordinators []trBrokerGroupCount `json:"coordinators"`
	Journal      string               `json:"journal"`
}

type trBrokerGroupCount struct {
	Broker string `json:"broker"`
	Groups int    `json:"groups"`
}

type watchView struct {
	Path     string                 `json:"path"`
	Versions []inspect.TraceVersion `json:"versions"`
	Events   []inspect.TraceEvent   `json:"events"`
	Problems []string               `json:"problems"`
	// MissedVersions counts the versions written and replaced between two
	// reads (versions are consecutive): each is named in its version's gap.
	MissedVersions int64 `json:"missedVersions"`
}

func watchCmd(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.Args().Present() {
		return exit.UsageErrorf("watch takes no arguments (use --assignment FILE); got %q", c.Args().First())
	}
	if c.Duration("poll-interval") <= 0 {
		return exit.UsageErrorf("--poll-interval must be positive")
	}
	if c.Bool("offsets") {
		return watchOffsetsCmd(c, g)
	}
	ctx, stop := watchContext(c)
	defer stop()
	path := c.String("assignment")
	var layout volume.Layout
	if g.HasVolume() {
		if layout, err = layoutOrWait(ctx, c, g); err != nil {
			return err
		}
		if path == "" {
			path = layout.AssignmentPath()
		}
	}
	if path == "" {
		return exit.UsageErrorf("nothing to watch: give --data-dir/--cluster-dir (or KAAS_DATA_DIR) or --assignment FILE")
	}
	var journal *watch.Journal
	if dir := c.String("journal"); dir != "" {
		if w, err := watch.CheckJournalDir(dir, layout.DataDir); err != nil {
			return exit.Refusedf("%v", err)
		} else if w != "" {
			g.Warnf("%s", w)
		}
		journal = &watch.Journal{Dir: dir}
	}
	filter := c.StringSlice("group")
	extra := trExactNames(filter)
	groupsFor := func(a *volume.Assignment) []string {
		gs := append(trOffsetGroups(g), extra...)
		return inspect.UnionGroups(a, nil, gs)
	}
	if c.Bool("once") {
		return watchOnce(g, path, journal, groupsFor, filter)
	}

	mode := "fsnotify + poll every " + c.Duration("poll-interval").String()
	if c.Bool("poll-only") {
		mode = "poll every " + c.Duration("poll-interval").String()
	}
	g.Notef("watching %s (%s); Ctrl-C to stop", path, mode)

	p := g.Printer
	view := watchView{Path: path}
	ctx, cancelCount := context.WithCancel(ctx)
	defer cancelCount()
	// json and yaml print the whole view at the end; the other formats
	// stream each version's moves as they come, and a failed write (a
	// closed pipe) stops the watch with that error.
	var out *render.Stream
	var writeErr error
	if p.Format != render.JSON && p.Format != render.YAML {
		var hdr []string
		if p.Format == render.CSV {
			hdr = []string{"TIME", "EPOCH", "VERSION", "GROUP", "FROM", "TO", "CAUSE", "EVIDENCE", "DETAIL"}
		}
		out = render.NewStream(p.Out, p.Format, hdr, "")
		writeErr = out.Flush()
	}
	maxVersions := c.Int("count")
	journalFailures := 0
	var prevState *inspect.RoutingState
	var prevA *volume.Assignment
	gw, bw := 12, 8
	onVersion := func(v watch.Version) {
		a := v.Assignment
		if journal != nil {
			if jp, err := journal.Write(a.ControllerEpoch, a.AssignmentVersion, v.Raw, v.Digest); err != nil {
				journalFailures++
				g.Warnf("journal: %v (version epoch %d v%d not saved)", err, a.ControllerEpoch, a.AssignmentVersion)
			} else if !g.Quiet {
				g.Notef("journal: %s", jp)
			}
		}
		for _, w := range inspect.VersionWarnings(path, prevA, a, v.Rewritten) {
			g.Warnf("%s", w)
		}
		groups := groupsFor(a)
		step := inspect.NextStep(prevState, prevA, a, groups, filter, v.Observed)
		first := prevState == nil
		prevState, prevA = step.State, a
		if step.Version.MissingBefore > 0 {
			view.MissedVersions += step.Version.MissingBefore
			if p.Format != render.Table && p.Format != render.Wide {
				// The table names it on the version's line.
				g.Warnf("%s", step.Version.Gap)
			}
		}
		view.Versions = append(view.Versions, step.Version)
		view.Events = append(view.Events, step.Events...)
		if maxVersions > 0 && len(view.Versions) >= maxVersions {
			defer cancelCount()
		}
		if out == nil || writeErr != nil {
			return // json and yaml: printed at the end
		}
		switch p.Format {
		case render.JSONL:
			for _, e := range step.Events {
				out.Event(e)
			}
		case render.CSV:
			for _, e := range step.Events {
				out.Event(e, []string{trTime(e.Time), strconv.FormatInt(e.ControllerEpoch, 10), strconv.FormatInt(e.AssignmentVersion, 10),
					e.Group, e.From, e.To, string(e.Cause), string(e.Evidence), e.Detail})
			}
		default:
			for _, e := range step.Events {
				gw = max(gw, min(40, len(render.Shorten(e.Group, 40))))
				bw = max(bw, len(e.From), len(e.To))
			}
			var lines []string
			summary := render.Plural(len(step.Events), "move", "moves")
			if first {
				summary = "current version: " + trPlacementSummary(inspect.PlacementsAt(step.State, trFilterGroups(groups, filter)))
			}
			lines = append(lines, trVersionLine(p, step.Version, summary))
			for _, e := range step.Events {
				lines = append(lines, traceEventLine(p, e, gw, bw))
			}
			out.Lines(lines...) // names cleaned, colour kept
		}
		if writeErr = out.Flush(); writeErr != nil {
			cancelCount()
		}
	}
	var problems []string
	err = watch.Run(ctx, watch.Options{
		Path: path, PollInterval: c.Duration("poll-interval"), PollOnly: c.Bool("poll-only"),
		OnVersion: onVersion,
		OnProblem: func(msg string, ok bool) {
			if ok {
				g.Notef("%s is readable again", path)
				return
			}
			problems = append(problems, msg)
			g.Warnf("%s", msg)
		},
		Now: g.Now,
	})
	if err != nil {
		return err
	}
	if writeErr != nil {
		return writeErr
	}
	view.Problems = problems
	if p.Format == render.JSON || p.Format == render.YAML {
		if err := p.Print(render.Output{Data: view}); err != nil {
			return err
		}
	}
	if len(view.Versions) == 0 {
		return fmt.Errorf("no readable version of %s was seen", path)
	}
	if journalFailures > 0 {
		return fmt.Errorf("%s could not be written to the journal %s (see the warnings above)", render.Plural(journalFailures, "version", "versions"), journal.Dir)
	}
	return nil
}

func trFilterGroups(groups, filter []string) []string {
	if len(filter) == 0 {
		return groups
	}
	match := inspect.GroupMatcher(filter)
	var out []string
	for _, name := range groups {
		if match(name) {
			out = append(out, name)
		}
	}
	return out
}

func trVersionLine(p *render.Printer, v inspect.TraceVersion, summary string) string {
	info := []string{}
	if v.Controller != "" {
		info = append(info, "controller "+v.Controller)
	}
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
	info = append(info, bs, summary)
	if v.MissingBefore > 0 {
		info = append(info, p.Paint(render.Yellow, v.Gap))
	}
	return p.Paint(render.Bold, trClock(v.Time, true)+"  "+fmt.Sprintf("epoch %d v%d", v.ControllerEpoch, v.AssignmentVersion)) + "  " + strings.Join(info, " · ")
}

// volumeNotThereYet reports whether resolving the volume failed only
// because its directories do not exist yet.
func volumeNotThereYet(err error) bool {
	var fe *volume.FileError
	if !errors.As(err, &fe) {
		return false
	}
	return strings.Contains(fe.Problem, "does not exist") || strings.Contains(fe.Problem, "holds neither")
}

// watchContext ends on Ctrl-C, SIGTERM or after --timeout.
func watchContext(c *cli.Context) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if d := c.Duration("timeout"); d > 0 {
		tctx, cancel := context.WithTimeout(ctx, d)
		return tctx, func() { cancel(); stop() }
	}
	return ctx, stop
}

// layoutOrWait resolves the volume; a cluster not created yet is waited
// for (without --once), as the watch waits for a missing assignment.json
// (its help promises to retry).
func layoutOrWait(ctx context.Context, c *cli.Context, g *Globals) (volume.Layout, error) {
	l, err := g.Layout()
	if err != nil && !c.Bool("once") && volumeNotThereYet(err) {
		g.Notef("%v; waiting for it to appear (Ctrl-C to stop)", err)
		if l, err = waitForVolume(ctx, g, c.Duration("poll-interval")); err == nil {
			g.Notef("the volume appeared: cluster dir %s", l.ClusterDir)
		}
	}
	return l, err
}

// waitForVolume resolves the volume every interval until it exists (or
// ctx ends: then the last error).
func waitForVolume(ctx context.Context, g *Globals, interval time.Duration) (volume.Layout, error) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			l, err := g.Layout()
			if err == nil {
				return l, nil
			}
			return l, fmt.Errorf("%w (the watch ended before the volume appeared)", err)
		case <-tick.C:
			l, err := g.Layout()
			if err == nil || !volumeNotThereYet(err) {
				return l, err
			}
		}
	}
}

func watchOnce(g *Globals, path string, journal *watch.Journal, groupsFor func(*volume.Assignment) []string, filter []string) error {
	data, _, err := safefs.Read(path, true, 0)
	if err != nil {
		return &volume.FileError{Path: path, Problem: safefs.Problem(err)}
	}
	a, fs, err := volume.ParseAssignment(path, data)
	if err != nil {
		return err
	}
	g.WarnFindings(fs)
	view := watchOnceView{Path: path}
	if journal != nil {
		h := sha256.Sum256(data)
		jp, err := journal.Write(a.ControllerEpoch, a.AssignmentVersion, data, h)
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		view.Journal = jp
	}
	groups := trFilterGroups(groupsFor(a), filter)
	step := inspect.NextStep(nil, nil, a, groups, filter, g.Now())
	view.Version = step.Version
	view.KnownGroups = len(groups)
	counts := map[string]int{}
	for _, pl := range inspect.PlacementsAt(step.State, groups) {
		counts[pl.Coordinator]++
	}
	for _, b := range step.Version.Brokers {
		view.Coordinators = append(view.Coordinators, trBrokerGroupCount{Broker: b, Groups: counts[b]})
		delete(counts, b)
	}
	for b, n := range counts {
		view.Coordinators = append(view.Coordinators, trBrokerGroupCount{Broker: b, Groups: n})
	}
	t := render.NewTable("BROKER", "GROUPS")
	for _, bc := range view.Coordinators {
		name := bc.Broker
		if name == "" {
			name = "(none)"
		}
		t.Add(name, strconv.Itoa(bc.Groups))
	}
	return g.Printer.Print(render.Output{Data: view, Items: view.Coordinators, Table: t, Human: func(p *render.Printer) error {
		lines := []string{trVersionLine(p, step.Version, "current version: "+trPlacementSummary(inspect.PlacementsAt(step.State, groups)))}
		if view.Journal != "" {
			lines = append(lines, "journal: "+view.Journal)
		}
		return render.Lines(p.Out, lines...)
	}})
}
