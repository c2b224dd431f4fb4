package commands

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:    "offsets reset",
		Usage:   "reset committed offsets of inactive groups (Kafka's full reset matrix; dry-run unless --execute)",
		Refuses: true,
		Docs: []FormatDoc{
			{Title: "offsets reset / offsets delete", Doc: views.ResetView{}, JSONL: "the whole document", Rank: 220},
		},
		Tool: &MCPTool{Name: "offsets_reset_plan", Title: "Plan an offsets reset or restore", Input: mcpserver.OffsetsResetInput{}, Plan: true,
			Description: "Plans (dry run) an offsets reset or a restore from history, checked as the command checks it; returns the plan and the command a person runs to apply it. Never writes."},
		Build: leaf(resetFlags, checkOffsetsReset, runOffsetsReset),
	})
}

// resetFlags are offsets reset's flags, bound to o.
func resetFlags(o *resetOptions) []cli.Flag {
	const spec = "Reset specification (exactly one)"
	return append(append(writeSafetyFlags(&o.mode),
		&cli.GenericFlag{Name: "group", Aliases: []string{"g"}, Value: completion.Repeated(&o.groups), Usage: "group to reset (repeatable)"},
		&cli.BoolFlag{Name: "all-groups", Usage: "every group: offset files on the volume and groups the brokers list", Destination: &o.allGroups},
		&cli.BoolFlag{Name: "all-topics", Usage: "scope: every partition the group has committed offsets for"},
		&cli.GenericFlag{Name: "topic", Aliases: []string{"t"}, Value: completion.Repeated(nil), Usage: "scope: `TOPIC` (every partition) or TOPIC:0,2 (repeatable)"},
		&cli.BoolFlag{Name: "to-earliest", Usage: "spec: the log start offset", Category: spec},
		&cli.BoolFlag{Name: "to-latest", Usage: "spec: the log end offset", Category: spec},
		&cli.BoolFlag{Name: "to-current", Usage: "spec: the committed offset (the log end where none)", Category: spec},
		&cli.StringFlag{Name: "to-offset", Usage: "spec: offset `N` on every partition in scope", Category: spec},
		&cli.StringFlag{Name: "shift-by", Usage: "spec: move the committed offset by `±N`", Category: spec},
		&cli.StringFlag{Name: "to-datetime", Usage: "spec: first offset at or after `TIME` (YYYY-MM-DDTHH:mm:SS[.sss][Z|±hh:mm], or epoch ms; no zone = UTC, as in Kafka)", Category: spec},
		&cli.StringFlag{Name: "by-duration", Usage: "spec: first offset at or after now minus `DURATION` (PT1H, P1DT2H, 1h, 90m; -PT30M is the future, as in Java)", Category: spec},
		&cli.StringFlag{Name: "from-file", Usage: "spec: offsets from a CSV `FILE` (topic,partition,offset or group,topic,partition,offset); --topic/--all-topics are ignored with it, as in Kafka", Category: spec, Destination: &o.fromFile},
		&cli.StringFlag{Name: "to-group", Usage: "spec: the committed offsets of group `SRC` (its offset file and, live, its coordinator), within the scope", Category: spec},
		&cli.BoolFlag{Name: "export", Usage: "print the plan as CSV on stdout (for --from-file)", Destination: &o.export},
		&cli.BoolFlag{Name: "allow-unverified-log-end", Usage: "offline: plan rows whose log end is not verified (no readable segment file; at most manifest.json, which trails the log) instead of refusing them; offsets are then not clamped (loud)", Category: "Safety"},
	), historyResetFlags(o)...)
}

// writeSafetyFlags are shared by offsets reset and offsets delete, bound
// to m (parseWriteCommand reads the rest).
func writeSafetyFlags(m *writeMode) []cli.Flag {
	const cat = "Safety"
	return []cli.Flag{
		&cli.BoolFlag{Name: "dry-run", Usage: "only print the plan (the default)", Category: cat},
		&cli.BoolFlag{Name: "execute", Aliases: []string{"x"}, Usage: "apply the plan", Category: cat, Destination: &m.execute},
		&cli.BoolFlag{Name: "force", Usage: "write even if a group is not Empty/Dead or brokers answer with --offline (loud; consumers race the write)", Category: cat, Destination: &m.force},
		&cli.BoolFlag{Name: "offline", Usage: "write the offset files directly instead of committing through the brokers (only when no broker answers, or with --force)", Category: cat, Destination: &m.offline},
		followSymlinksFlag(cat),
		keepBackupsFlag(cat),
	}
}

// followSymlinksFlag lets a writing command write through links inside
// the volume (refused by default: a planted link would redirect the write).
func followSymlinksFlag(cat string) cli.Flag {
	return &cli.BoolFlag{Name: "follow-symlinks", Usage: "write through a symbolic link inside the volume (a linked __consumer_offsets dir or <group>.json); refused without it", Category: cat}
}

// keepBackupsFlag is the backup retention of a writing command.
func keepBackupsFlag(cat string) cli.Flag {
	return &cli.IntFlag{Name: "keep-backups", Usage: fmt.Sprintf("keep the last `N` backups per file, older ones are removed after each write (default %d, or KAASCTL_KEEP_BACKUPS; 0 keeps all)", volume.DefaultKeepBackups), Category: cat}
}

// parseWritePolicy reads --follow-symlinks and --keep-backups (then
// KAASCTL_KEEP_BACKUPS: repair.PolicyOf).
func parseWritePolicy(c *cli.Context, g *Globals) (repair.Policy, error) {
	return repair.PolicyOf(c.Bool("follow-symlinks"), c.Int("keep-backups"), completion.IsSet(c, "keep-backups"), g.IO.getenv(repair.KeepBackupsEnv))
}

// writeMode is what the safety flags resolved to.
type writeMode struct {
	execute, force, offline bool
	policy                  repair.Policy
}

// parseWriteCommand checks the command line common to offsets reset and
// delete: flags only (cmd names the command in the usage error), not
// both --dry-run and --execute; it reads the write policy into m.
func parseWriteCommand(c *cli.Context, g *Globals, cmd string, m *writeMode) error {
	if c.NArg() > 0 {
		return exit.UsageErrorf("%s takes no arguments (got %q): name groups with --group", cmd, c.Args().First())
	}
	if c.Bool("dry-run") && m.execute {
		return exit.UsageErrorf("Option \"[%s]\" only accepts one of [execute] and [dry-run]", c.Command.Name)
	}
	var err error
	m.policy, err = parseWritePolicy(c, g)
	return err
}

// writeTarget resolves the volume a write goes to and connects
// (repair.WriteTarget); the caller closes the client (nil offline).
func writeTarget(ctx context.Context, g *Globals, m writeMode) (volume.Layout, *wire.Client, error) {
	return repair.WriteTarget(ctx, g, m.execute, m.offline, m.force)
}

// resetSpecFlag is the one reset specification flag given.
func resetSpecFlag(c *cli.Context) (string, error) {
	var set, all []string
	for _, k := range repair.SpecKinds {
		if all = append(all, string(k)); completion.IsSet(c, string(k)) {
			set = append(set, string(k))
		}
	}
	if len(set) == 0 {
		return "", exit.UsageErrorf("Option '[reset-offsets]' requires one of the following scenarios: --%s", strings.Join(all, ", --"))
	}
	if len(set) > 1 {
		return "", exit.UsageErrorf("Option \"[%s]\" can't be used with option \"[%s]\"", set[0], set[1])
	}
	return set[0], nil
}

// parseResetSpec reads exactly one reset specification
// (repair.ParseSpec), against the run's clock. A --from-file is only
// named here (the run reads it).
func parseResetSpec(c *cli.Context, g *Globals) (repair.Spec, error) {
	f, err := resetSpecFlag(c)
	if err != nil {
		return repair.Spec{}, err
	}
	return repair.ParseSpec(repair.SpecKind(f), c.String(f), g.Now(), g)
}

// parseScopes reads --all-topics / --topic.
func parseScopes(c *cli.Context, required bool) (bool, []repair.TopicScope, error) {
	all := c.Bool("all-topics")
	topics := completion.RepeatedValues(c, "topic")
	if all && len(topics) > 0 {
		return false, nil, exit.UsageErrorf("Option \"[all-topics]\" can't be used with option \"[topic]\"")
	}
	if !all && len(topics) == 0 && required {
		return false, nil, exit.UsageErrorf("One of the reset scopes should be defined: --all-topics, --topic.")
	}
	var scopes []repair.TopicScope
	for _, t := range topics {
		s, err := repair.ParseTopicScope(t)
		if err != nil {
			return false, nil, exit.UsageErrorf("%v", err)
		}
		scopes = append(scopes, s)
	}
	return all, scopes, nil
}

// resetOptions is 'offsets reset' after flag parsing.
type resetOptions struct {
	mode writeMode
	// spec is the reset specification; a --from-file spec is read by the
	// run (fromFile names the file, "-" for stdin).
	spec      repair.Spec
	fromFile  string
	allTopics bool
	scopes    []repair.TopicScope
	groups    []string // --group, in the order given
	allGroups bool
	// multi: several groups in play (--all-groups, or --group more than once).
	multi bool
	// export prints the plan as CSV; exportRollback names the rollback file.
	export         bool
	exportRollback string
	// overwriteRollback lets --export-rollback replace an existing file.
	overwriteRollback bool
	// journal and historySince are read by the restores from history.
	journal      string
	historySince time.Time
}

// checkOffsetsReset reads the spec, the scope and the policy and checks
// how the flags combine (usage errors, exit 2), as kafka-consumer-groups.sh
// does.
func checkOffsetsReset(c *cli.Context, g *Globals, o *resetOptions) error {
	if err := parseWriteCommand(c, g, "offsets reset", &o.mode); err != nil {
		return err
	}
	var err error
	if o.spec, err = parseResetSpec(c, g); err != nil {
		return err
	}
	o.spec.AllowUnverifiedLogEnd = c.Bool("allow-unverified-log-end")
	if o.overwriteRollback && o.exportRollback == "" {
		return exit.UsageErrorf("--overwrite-rollback goes with --export-rollback FILE")
	}
	if o.allTopics, o.scopes, err = parseScopes(c, o.spec.Kind != repair.FromFile && !o.spec.FromHistory()); err != nil {
		return err
	}
	if len(o.groups) == 0 && !o.allGroups {
		return exit.UsageErrorf("Option '[%s]' takes one of these options: --group, --all-groups", "reset-offsets")
	}
	if len(o.groups) > 0 && o.allGroups {
		return exit.UsageErrorf("Option \"[group]\" can't be used with option \"[all-groups]\"")
	}
	o.multi = o.allGroups || len(o.groups) > 1
	if o.spec.Kind == repair.ToGroup && slices.Contains(o.groups, o.spec.Source) {
		return exit.UsageErrorf("--to-group %s: the source is also a group to reset; name a different group", o.spec.Source)
	}
	if o.spec.FromHistory() {
		return parseHistoryFlags(c, g, o)
	}
	return nil
}

// runOffsetsReset reads a --from-file plan, plans every group's reset
// (repair.PrepareReset, repair.PlanReset), and hands the plans to the one
// safe write path.
func runOffsetsReset(ctx context.Context, g *Globals, o resetOptions) error {
	if err := repair.CheckRollbackTarget(o.exportRollback, o.overwriteRollback); err != nil {
		return err
	}
	ask := repair.ResetAsk{Spec: o.spec, FromFile: o.fromFile, Stdin: g.IO.In, AllTopics: o.allTopics, Scopes: o.scopes,
		Groups: o.groups, AllGroups: o.allGroups, Multi: o.multi, Journal: o.journal, HistorySince: o.historySince}
	if err := repair.PrepareReset(&ask, g, g.Progress); err != nil {
		return err
	}
	l, cl, err := writeTarget(ctx, g, o.mode)
	if err != nil {
		return err
	}
	if cl != nil {
		defer cl.Close()
	}
	plans, spec, err := repair.PlanReset(ctx, repair.Inputs{Layout: l, Client: cl, Now: g.Now(), Policy: o.mode.policy}, ask, g, g.Progress)
	if err != nil {
		return err
	}
	record, err := exportRollback(g, o.exportRollback, o.overwriteRollback, plans)
	if err != nil {
		return err
	}
	if record != nil {
		defer record.Close()
	}
	return applyAndReport(ctx, g, o.mode, cl, applyRun{cmd: "reset", spec: spec.String(), plans: plans, multi: o.multi, export: o.export, record: record})
}

// brokerNamer names brokers as kaas does (observe.BrokerNamer) from the
// volume's assignment.json; nil without a volume.
func brokerNamer(g *Globals) *inspect.NodeNamer {
	if !g.HasVolume() {
		return nil
	}
	l, err := g.Layout()
	if err != nil {
		return nil
	}
	return observe.BrokerNamer(l)
}

// applyRun is what applyAndReport writes and reports.
type applyRun struct {
	cmd, spec string // reset | delete; the spec as the user wrote it
	plans     []*repair.GroupPlan
	// multi: several groups in play (the --export layout names groups).
	multi  bool
	export bool     // reset --export: the plan as CSV on stdout
	record *os.File // --export-rollback, a line per finished group (nil: none)
}

// applyAndReport hands the plans to the one safe write path
// (repair.ApplyOffsets) and prints what it did: the per-group messages on
// stderr, the table/document (or the --export CSV) on stdout. It returns
// the run's exit error.
func applyAndReport(ctx context.Context, g *Globals, m writeMode, cl *wire.Client, r applyRun) error {
	if m.execute && m.force {
		views.ForceBanner(g.IO.Err, r.plans)
	}
	opts := repair.ApplyOptions{Command: r.cmd, Client: cl, Execute: m.execute, Force: m.force, Names: brokerNamer(g), What: strings.TrimSpace("offsets " + r.cmd + " " + r.spec)}
	if m.execute {
		stop := onInterrupt(g)
		defer stop.release()
		opts.Stop = stop.requested
		opts.Done = views.GroupRecorder(g.IO.Err, g.Quiet, len(r.plans), r.record)
	}
	res, applyErr := repair.ApplyOffsets(ctx, r.plans, opts)
	views.ReportGroups(g.IO.Err, g, r.plans)
	if r.cmd == "delete" && m.execute && cl == nil && res.Written > 0 {
		g.Warnf("offline: a broker that has these groups loaded keeps the deleted offsets in memory and writes them back on its next commit to the group; restart the group's coordinator (or delete the whole group with DeleteGroups) if a consumer may commit before it forgets them")
	}
	if r.export {
		if err := repair.ExportPlan(g.IO.Out, r.plans, r.multi); err != nil {
			return err
		}
	} else if err := views.PrintResetView(g.Printer, views.BuildResetView(r.cmd, m.execute, cl != nil, m.force, r.spec, r.plans)); err != nil {
		return err
	}
	views.NoteApplied(g, views.ApplyRun{Command: r.cmd, Execute: m.execute, Live: cl != nil}, res, applyErr)
	return applyErr
}
