package commands

import (
	"context"
	"regexp"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/when"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:     "groups prune",
		Usage:    "remove what kaas never expires: empty groups past an age, offsets on deleted or recreated topics, unsubscribed topics, probe leftovers (dry-run unless --execute)",
		Problems: &views.ExitProblem{Label: "groups prune --execute", When: "a pruned offset a coordinator still serves from memory, or a\n                                 pruned group a broker still lists (the broker is named)", Rank: 120},
		Refuses:  true,
		Common:   fgAll,
		Docs: []FormatDoc{
			{Title: "groups prune", Doc: views.GroupsPruneView{}, JSONL: "each group (groups[])", Rank: 55},
			{Title: "groups prune --restore", Doc: views.PruneRestoreView{}, JSONL: "each group (groups[])", Rank: 56},
		},
		Build: leaf(pruneFlags, checkGroupsPrune, runGroupsPrune),
	})
}

// defaultPruneMaxGroups is --max-groups's default.
const defaultPruneMaxGroups = 1000

// pruneFlags are groups prune's flags, bound to o.
func pruneFlags(o *pruneOptions) []cli.Flag {
	const sel, filt, safe = "Selectors (at least one)", "Which groups", "Safety"
	return []cli.Flag{
		&cli.StringFlag{Name: "empty-for", Usage: "select groups with no member and no commit for `AGE` (30d, 12h, P7D): the whole offset file goes", Category: sel},
		&cli.StringFlag{Name: "age-from", Usage: "where the age of the last commit comes from: journal, mtime (the file's modification time) or both (the later of the two; default with --journal, else mtime)", Category: sel, Destination: &o.ask.AgeFrom},
		&cli.StringFlag{Name: "journal", Usage: "the offsets journal `DIR` (recorded by 'kaasctl watch --offsets --journal DIR' or 'kaasctl exporter --journal DIR'): commit times for --empty-for and --recreated-topics", Category: sel, Destination: &o.journal},
		&cli.BoolFlag{Name: "deleted-topics", Usage: "select offsets on topics that exist neither on the volume nor on the brokers", Category: sel, Destination: &o.ask.Deleted},
		&cli.BoolFlag{Name: "recreated-topics", Usage: "select offsets committed past a topic's log end before its first record was written (deleted and recreated; never a stale takeover)", Category: sel, Destination: &o.ask.Recreated},
		&cli.BoolFlag{Name: "unsubscribed", Usage: "select offsets on topics no live member subscribes to or is assigned (listed: the group is live)", Category: sel, Destination: &o.ask.Unsubscribed},
		&cli.BoolFlag{Name: "canaries", Usage: "select the probe's canary groups that no broker's probe uses now", Category: sel, Destination: &o.ask.Canary},
		&cli.StringFlag{Name: "group-regex", Usage: "only groups whose id matches `RE`", Category: filt},
		&cli.GenericFlag{Name: "exclude", Value: completion.Repeated(nil), Usage: "leave out groups whose id matches `RE` (repeatable)", Category: filt},
		&cli.IntFlag{Name: "max-groups", Value: defaultPruneMaxGroups, Usage: "write at most `N` groups in one run: a plan over it writes nothing (exit 4) until the cap is raised", Category: filt, Destination: &o.maxGroups},
		&cli.BoolFlag{Name: "dry-run", Usage: "only print the plan (the default)", Category: safe},
		&cli.BoolFlag{Name: "execute", Aliases: []string{"x"}, Usage: "apply the plan", Category: safe, Destination: &o.mode.execute},
		&cli.BoolFlag{Name: "offline", Usage: "prune with every broker down (the files only; nothing can hold a group in memory then)", Category: safe, Destination: &o.mode.offline},
		followSymlinksFlag(safe),
		keepBackupsFlag(safe),
		&cli.StringFlag{Name: "export", Usage: "write the plan to `FILE` (.json: the JSON document; otherwise CSV; - for CSV on stdout)", Category: safe, Destination: &o.export},
		&cli.StringFlag{Name: "export-rollback", Usage: "keep every planned group's file, byte for byte, in `FILE` (JSON lines, synced before each write) for --restore; an existing FILE is refused unless --overwrite-rollback; removed again when the prune wrote nothing", Category: safe, Destination: &o.rollback},
		&cli.BoolFlag{Name: "overwrite-rollback", Usage: "let --export-rollback replace an existing FILE", Category: safe, Destination: &o.overwrite},
		&cli.StringFlag{Name: "restore", Usage: "put back the files of a prune's rollback `FILE` (dry-run unless --execute); refuses a file that changed since the prune", Category: safe, Destination: &o.restore},
	}
}

// pruneOptions is 'groups prune' after flag parsing.
type pruneOptions struct {
	mode writeMode
	ask  inspect.PruneAsk
	// journal is --journal; filter --group-regex, exclude --exclude.
	journal   string
	filter    *regexp.Regexp
	exclude   []*regexp.Regexp
	maxGroups int
	export    string
	rollback  string
	overwrite bool
	restore   string
}

// checkGroupsPrune reads the policy, the filters and the selectors and
// checks how the flags combine.
func checkGroupsPrune(c *cli.Context, g *Globals, o *pruneOptions) error {
	if c.NArg() > 0 {
		return exit.UsageErrorf("groups prune takes no arguments (got %q): choose groups with --group-regex", c.Args().First())
	}
	if c.Bool("dry-run") && o.mode.execute {
		return exit.UsageErrorf("Option \"[prune]\" only accepts one of [execute] and [dry-run]")
	}
	var err error
	if o.mode.policy, err = parseWritePolicy(c, g); err != nil {
		return err
	}
	if o.overwrite && o.rollback == "" {
		return exit.UsageErrorf("--overwrite-rollback goes with --export-rollback FILE")
	}
	if o.maxGroups < 1 {
		return exit.UsageErrorf("--max-groups %d: at least 1 (the cap is a safety: raise it to prune more)", o.maxGroups)
	}
	if err := parsePruneFilters(c, o); err != nil {
		return err
	}
	if o.restore != "" {
		return checkRestoreAlone(c)
	}
	return parsePruneSelectors(c, g, o)
}

// parsePruneFilters reads --group-regex and every --exclude.
func parsePruneFilters(c *cli.Context, o *pruneOptions) error {
	var err error
	if o.filter, err = compileRegex("group-regex", c.String("group-regex")); err != nil {
		return err
	}
	for _, s := range completion.RepeatedValues(c, "exclude") {
		re, err := compileRegex("exclude", s)
		if err != nil {
			return err
		}
		o.exclude = append(o.exclude, re)
	}
	return nil
}

// pruneSelectorFlags are the selector flags (a restore takes none).
var pruneSelectorFlags = []string{"empty-for", "age-from", "journal", "deleted-topics", "recreated-topics", "unsubscribed", "canaries", "export", "export-rollback", "group-regex", "exclude", "max-groups"}

func checkRestoreAlone(c *cli.Context) error {
	for _, f := range pruneSelectorFlags {
		if completion.IsSet(c, f) {
			return exit.UsageErrorf("--restore puts back what a rollback file holds: --%s does not go with it", f)
		}
	}
	return nil
}

// parsePruneSelectors reads --empty-for and holds the selectors together
// (inspect.PruneAsk.Check).
func parsePruneSelectors(c *cli.Context, g *Globals, o *pruneOptions) error {
	o.ask.Now = g.Now()
	if s := c.String("empty-for"); s != "" {
		d, err := when.ParseDuration(s)
		if err != nil || d <= 0 {
			return exit.UsageErrorf("--empty-for %q: an age such as 30d, 12h, 90m or P7D (more than 0)", s)
		}
		o.ask.Empty, o.ask.MinAge = true, d
	}
	if err := o.ask.Check(o.journal != ""); err != nil {
		return exit.UsageErrorf("%v", err)
	}
	return nil
}

// picks says which groups the filters take.
func (o *pruneOptions) picks(group string) bool {
	if o.filter != nil && !o.filter.MatchString(group) {
		return false
	}
	for _, re := range o.exclude {
		if re.MatchString(group) {
			return false
		}
	}
	return true
}

// runGroupsPrune plans the prune over the volume (and the brokers), then,
// with --execute and within the cap, applies it through the one write
// path, and prints the plan or what was done.
func runGroupsPrune(ctx context.Context, g *Globals, o pruneOptions) error {
	if o.restore != "" {
		return runPruneRestore(ctx, g, o)
	}
	if err := repair.CheckRollbackTarget(o.rollback, o.overwrite); err != nil {
		return err
	}
	l, cl, err := writeTarget(ctx, g, o.mode)
	if err != nil {
		return err
	}
	if cl != nil {
		defer cl.Close()
	}
	run, err := newPruneRun(ctx, g, o, l, cl)
	if err != nil {
		return err
	}
	if err := run.Plan(ctx); err != nil {
		return err
	}
	capErr := run.CheckCap()
	if o.mode.execute && capErr == nil {
		stop := onInterrupt(g)
		err := run.Apply(ctx, stop.requested)
		stop.release()
		if err != nil {
			return err
		}
	}
	if err := reportPrune(g, o, run.Report()); err != nil {
		return err
	}
	return run.ExitErr(capErr)
}
