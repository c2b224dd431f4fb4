package commands

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/observe/watchrun"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:    "watch",
		Usage:   "follow assignment.json (coordinator moves as they happen) or, with --offsets, every offset file (rewinds, vanished partitions, an offsets journal)",
		Refuses: true,
		Common:  fgAll, // --offsets with brokers also follows the groups' membership
		Docs: []FormatDoc{
			{Title: "watch", Doc: watchrun.WatchView{}, JSONL: "each move, as it happens", Rank: 110},
			{Title: "watch --offsets", Doc: watchrun.WatchOffsetsView{}, JSONL: "each offset-file change (events[]), as it happens", Rank: 120},
		},
		Build: leaf(watchFlags, checkWatch, runWatch),
	})
}

// watchFlags are watch's flags, bound to o.
func watchFlags(o *watchOptions) []cli.Flag {
	return append([]cli.Flag{
		completion.DurationFlag(&o.pollInterval, "poll-interval", time.Second, "how often to check the file besides fsnotify events"),
		&cli.BoolFlag{Name: "poll-only", Usage: "do not use fsnotify (polling only)", Destination: &o.pollOnly},
		&cli.StringFlag{Name: "journal", Usage: "append every version seen to this directory", Destination: &o.journal},
		&cli.BoolFlag{Name: "once", Usage: "print the current version's summary and exit", Destination: &o.once},
		completion.DurationFlag(&o.timeout, "timeout", 0, "stop after this long (exit 0; exit 1 if no readable version was seen)"),
		&cli.IntFlag{Name: "count", Usage: "stop after this many versions (the current one counts; --count 2 waits for the next); with --offsets, after this many changes (anomalies with --anomalies-only)", Destination: &o.count},
		&cli.StringSliceFlag{Name: "group", Aliases: []string{"g"}, Usage: "only these groups (names or globs; repeatable); names are followed even without an entry or offset file"},
		&cli.StringFlag{Name: "assignment", Aliases: []string{"f"}, Usage: "follow this file instead of the volume's assignment.json", Destination: &o.assignment},
	}, watchOffsetsFlags(o)...)
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

// checkWatch refuses arguments and a poll interval that is not positive;
// with --offsets, it reads and checks the offsets flags.
func checkWatch(c *cli.Context, _ *Globals, o *watchOptions) error {
	o.groups = c.StringSlice("group")
	if c.Args().Present() {
		return exit.UsageErrorf("watch takes no arguments (use --assignment FILE); got %q", c.Args().First())
	}
	if o.pollInterval <= 0 {
		return exit.UsageErrorf("--poll-interval must be positive")
	}
	if !o.offsets {
		return nil
	}
	if completion.IsSet(c, "assignment") {
		return exit.UsageErrorf("--offsets follows the offset files of the volume; --assignment does not apply")
	}
	if err := o.members.check(); err != nil {
		return err
	}
	return checkOffsetJournal(c, &o.offsetJournal)
}

// runWatch follows assignment.json, or with --offsets every offset file,
// until Ctrl-C, SIGTERM, --timeout or --count.
func runWatch(ctx context.Context, g *Globals, o watchOptions) error {
	ctx, stop := watchrun.Context(ctx, o.timeout)
	defer stop()
	if o.offsets {
		return runWatchOffsets(ctx, g, o)
	}
	path, layout, err := watchrun.AssignmentPath(ctx, o.assignment, g.HasVolume(), g.Layout, g, o.once, o.pollInterval)
	if err != nil {
		return err
	}
	journal, err := watchrun.AssignmentJournal(o.journal, layout.DataDir, g)
	if err != nil {
		return err
	}
	extra := inspect.ExactNames(o.groups)
	groupsFor := func(a *volume.Assignment) []string {
		return inspect.UnionGroups(a, nil, append(offsetFileGroups(g), extra...))
	}
	if o.once {
		view, placements, err := watchrun.Once(watchEnv(g), path, journal, groupsFor, o.groups)
		if err != nil {
			return err
		}
		return g.Printer.Print(views.WatchOnceOutput(view, placements))
	}
	return watchrun.FollowAssignment(ctx, watchEnv(g), watchrun.FollowOptions{Path: path, PollInterval: o.pollInterval, PollOnly: o.pollOnly,
		Mode: watchrun.Mode(o.pollOnly, o.pollInterval), Count: o.count, Groups: o.groups}, journal, groupsFor)
}

// layoutOrWait resolves the volume; a cluster not created yet is waited
// for (without --once; watchrun.LayoutOrWait).
func layoutOrWait(ctx context.Context, g *Globals, o watchOptions) (volume.Layout, error) {
	return watchrun.LayoutOrWait(ctx, g.Layout, g, o.once, o.pollInterval)
}
