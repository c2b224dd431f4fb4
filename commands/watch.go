package commands

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render/views"
)

func init() {
	register(Descriptor{
		Path:   "watch",
		Usage:  "follow assignment.json (coordinator moves as they happen) or, with --offsets, every offset file (rewinds, vanished partitions, an offsets journal)",
		Common: fgAll, // --offsets with brokers also follows the groups' membership
		Docs: []FormatDoc{
			{Title: "watch", Doc: views.WatchView{}, JSONL: "each move, as it happens", Rank: 110},
			{Title: "watch --offsets", Doc: views.WatchOffsetsView{}, JSONL: "each offset-file change (events[]), as it happens", Rank: 120},
		},
		Build: buildWatchCmd,
	})
}

func buildWatchCmd() *cli.Command {
	return &cli.Command{
		Flags: append([]cli.Flag{
			durationFlag("poll-interval", time.Second, "how often to check the file besides fsnotify events"),
			&cli.BoolFlag{Name: "poll-only", Usage: "do not use fsnotify (polling only)"},
			&cli.StringFlag{Name: "journal", Usage: "append every version seen to this directory"},
			&cli.BoolFlag{Name: "once", Usage: "print the current version's summary and exit"},
			durationFlag("timeout", 0, "stop after this long (exit 0; exit 1 if no readable version was seen)"),
			&cli.IntFlag{Name: "count", Usage: "stop after this many versions (the current one counts; --count 2 waits for the next); with --offsets, after this many changes (anomalies with --anomalies-only)"},
			&cli.StringSliceFlag{Name: "group", Aliases: []string{"g"}, Usage: "only these groups (names or globs; repeatable); names are followed even without an entry or offset file"},
			&cli.StringFlag{Name: "assignment", Aliases: []string{"f"}, Usage: "follow this file instead of the volume's assignment.json"},
		}, watchOffsetsFlags()...),
		Action: action(parseWatch, runWatch),
	}
}

// watchOptions is 'watch' after flag parsing.
type watchOptions struct {
	assignment   string   // --assignment FILE ("": the volume's assignment.json)
	journal      string   // --journal DIR ("": none)
	groups       []string // --group names or globs
	pollInterval time.Duration
	pollOnly     bool
	once         bool
	timeout      time.Duration // 0: until Ctrl-C
	count        int           // 0: no limit
	// --offsets: follow the offset files instead.
	offsets       bool
	anomaliesOnly bool
	offsetJournal observe.JournalSpec
	// members is the membership observed with brokers (--offsets).
	members watchMembersSpec
}

func parseWatch(c *cli.Context) (watchOptions, error) {
	o := watchOptions{assignment: c.String("assignment"), journal: c.String("journal"), groups: c.StringSlice("group"),
		pollInterval: flagDuration(c, "poll-interval"), pollOnly: c.Bool("poll-only"), once: c.Bool("once"),
		timeout: flagDuration(c, "timeout"), count: c.Int("count"), offsets: c.Bool("offsets"), anomaliesOnly: c.Bool("anomalies-only")}
	if c.Args().Present() {
		return o, exit.UsageErrorf("watch takes no arguments (use --assignment FILE); got %q", c.Args().First())
	}
	if o.pollInterval <= 0 {
		return o, exit.UsageErrorf("--poll-interval must be positive")
	}
	if !o.offsets {
		return o, nil
	}
	if isSet(c, "assignment") {
		return o, exit.UsageErrorf("--offsets follows the offset files of the volume; --assignment does not apply")
	}
	var err error
	if o.members, err = watchMembersFrom(c); err != nil {
		return o, err
	}
	o.offsetJournal, err = offsetJournalFrom(c)
	return o, err
}

// runWatch follows assignment.json, or with --offsets every offset file,
// until Ctrl-C, SIGTERM, --timeout or --count.
func runWatch(ctx context.Context, g *Globals, o watchOptions) error {
	ctx, stop := watchContext(ctx, o.timeout)
	defer stop()
	if o.offsets {
		return runWatchOffsets(ctx, g, o)
	}
	path, layout, err := watchedAssignment(ctx, g, o)
	if err != nil {
		return err
	}
	var journal *watch.Journal
	if o.journal != "" {
		if w, err := watch.CheckJournalDir(o.journal, layout.DataDir); err != nil {
			return exit.Refusedf("%v", err)
		} else if w != "" {
			g.Warnf("%s", w)
		}
		journal = &watch.Journal{Dir: o.journal}
	}
	extra := inspect.ExactNames(o.groups)
	groupsFor := func(a *volume.Assignment) []string {
		return inspect.UnionGroups(a, nil, append(offsetFileGroups(g), extra...))
	}
	if o.once {
		return watchOnce(g, path, journal, groupsFor, o.groups)
	}
	return followAssignment(ctx, g, o, path, journal, groupsFor)
}

// watchedAssignment is the file to follow: --assignment, or the volume's
// (a volume not created yet is waited for).
func watchedAssignment(ctx context.Context, g *Globals, o watchOptions) (string, volume.Layout, error) {
	path := o.assignment
	var layout volume.Layout
	if g.HasVolume() {
		var err error
		if layout, err = layoutOrWait(ctx, g, o); err != nil {
			return "", layout, err
		}
		if path == "" {
			path = layout.AssignmentPath()
		}
	}
	if path == "" {
		return "", layout, exit.UsageErrorf("nothing to watch: give --data-dir/--cluster-dir (or KAAS_DATA_DIR) or --assignment FILE")
	}
	return path, layout, nil
}

// watchMode says how the watch learns of changes.
func watchMode(o watchOptions) string {
	if o.pollOnly {
		return "poll every " + o.pollInterval.String()
	}
	return "fsnotify + poll every " + o.pollInterval.String()
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

// watchContext ends on Ctrl-C, SIGTERM or after timeout (0: none).
func watchContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := untilSignal(ctx)
	if timeout > 0 {
		tctx, cancel := context.WithTimeout(ctx, timeout)
		return tctx, func() { cancel(); stop() }
	}
	return ctx, stop
}

// layoutOrWait resolves the volume; a cluster not created yet is waited
// for (without --once), as the watch waits for a missing assignment.json
// (its help promises to retry).
func layoutOrWait(ctx context.Context, g *Globals, o watchOptions) (volume.Layout, error) {
	l, err := g.Layout()
	if err != nil && !o.once && volumeNotThereYet(err) {
		g.Notef("%v; waiting for it to appear (Ctrl-C to stop)", err)
		if l, err = waitForVolume(ctx, g, o.pollInterval); err == nil {
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

// watchOnce prints the current version's summary (and journals it).
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
	view := views.WatchOnceView{Path: path}
	if journal != nil {
		if view.Journal, err = journal.Write(a.ControllerEpoch, a.AssignmentVersion, data, sha256.Sum256(data)); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	groups := inspect.MatchingGroups(groupsFor(a), filter)
	step := inspect.NextStep(nil, nil, a, groups, filter, g.Now())
	placements := inspect.PlacementsAt(step.State, groups)
	view.Version, view.KnownGroups = step.Version, len(groups)
	view.Coordinators = inspect.CoordinatorCounts(placements, step.Version.Brokers)
	return g.Printer.Print(views.WatchOnceOutput(view, placements))
}
