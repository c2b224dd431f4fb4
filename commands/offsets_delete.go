package commands

import (
	"context"
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/repair"
)

func init() {
	registerSub("offsets", offsetsUsage, func() *cli.Command {
		return &cli.Command{
			Name:  "delete",
			Usage: "delete committed offsets of topics/partitions from inactive groups (dry-run unless --execute)",
			Description: "kaas's OffsetDelete rewrites the group's file as a plain map, which Rust 0.2.18 brokers then read as\n" +
				"EMPTY (the Go flavour and Rust <= 0.2.17 read it as offsets): on 0.2.18 every offset of the group is lost. kaasctl never sends it. Instead, with the group Empty or Dead\n" +
				"(checked live; exit 4 otherwise, --force overrides), it rewrites the offset file without the named\n" +
				"partitions: backup beside the file, unique temp file, fsync, rename, fsync of the directory, aborted\n" +
				"if the file changed since it was read. Then it re-reads the file and reports every partition.\n\n" +
				"A kaas broker keeps a group's offsets in memory after the file lost them (the Go generation even\n" +
				"after the group is Dead): it serves them to a starting consumer and writes them back on the group's\n" +
				"next commit. With brokers, kaasctl therefore also asks the coordinator (OffsetFetch) after the write:\n" +
				"a partition it still serves is CACHED, with the broker named and what clears it (restart that broker,\n" +
				"or move the group to another coordinator), and the run exits 3 until the coordinator forgets them.\n" +
				"Offline nothing can be asked: restart the group's coordinator before its consumers start.\n\n" +
				"Examples:\n" +
				"  kaasctl offsets delete -b HOST:9092 --data-dir /data --group g --topic old-topic\n" +
				"  kaasctl offsets delete ... --group g --topic orders:3,4 --execute",
			Flags: append(writeSafetyFlags(),
				&cli.GenericFlag{Name: "group", Aliases: []string{"g"}, Value: &repeatedFlag{}, Usage: "group (repeatable)"},
				&cli.GenericFlag{Name: "topic", Aliases: []string{"t"}, Value: &repeatedFlag{}, Usage: "`TOPIC` (every committed partition) or TOPIC:0,2 (repeatable)"},
			),
			Action: actionWith(parseOffsetsDelete, runOffsetsDelete),
		}
	})
}

// deleteOptions is 'offsets delete' after flag parsing.
type deleteOptions struct {
	mode   writeMode
	groups []string // each once, in the order given
	scopes []repair.TopicScope
}

func parseOffsetsDelete(c *cli.Context, g *Globals) (deleteOptions, error) {
	var o deleteOptions
	var err error
	if o.mode, err = parseWriteCommand(c, g, "offsets delete"); err != nil {
		return o, err
	}
	groups := repeated(c, "group")
	if len(groups) == 0 {
		return o, exit.UsageErrorf("Option '[delete-offsets]' takes the option: --group")
	}
	if len(repeated(c, "topic")) == 0 {
		return o, exit.UsageErrorf("Option '[delete-offsets]' takes the option: --topic (TOPIC or TOPIC:0,2)")
	}
	if _, o.scopes, err = parseScopes(c, true); err != nil {
		return o, err
	}
	for _, gr := range groups {
		if !slices.Contains(o.groups, gr) {
			o.groups = append(o.groups, gr)
		}
	}
	return o, nil
}

// runOffsetsDelete plans the deletion of the scoped partitions from each
// group's offset file (never kaas's OffsetDelete) and applies it through
// the one safe write path.
func runOffsetsDelete(ctx context.Context, g *Globals, o deleteOptions) error {
	l, cl, err := writeTarget(ctx, g, o.mode)
	if err != nil {
		return err
	}
	if cl != nil {
		defer cl.Close()
	}
	plans, err := repair.PlanGroups(ctx, repair.Inputs{Layout: l, Client: cl, Now: g.Now(), Policy: o.mode.policy},
		repair.ResetOptions{Groups: o.groups, Scopes: o.scopes, Delete: true})
	if err != nil {
		return err
	}
	for _, gp := range plans {
		if gp.StateSource == "live" && gp.State != repair.StateEmpty && gp.State != repair.StateDead && gp.State != repair.StateUnknown {
			gp.Refused = fmt.Sprintf("Deleting offsets of a consumer group '%s' is forbidden if the group is not empty (the current state is %s). Stop every consumer of the group first.", volume.DisplayName(gp.Group), gp.State)
		}
		if gp.Error == "" && gp.FilePartitions == 0 {
			gp.Warnings = append(gp.Warnings, "the group has no offset file (or no offsets in it): nothing to delete")
		}
	}
	return applyAndReport(ctx, g, o.mode, cl, applyRun{cmd: "delete", plans: plans, multi: len(o.groups) > 1})
}
