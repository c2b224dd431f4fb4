package commands

import (
	"fmt"
	"time"

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
			Action: runOffsetsDelete,
		}
	})
}

func runOffsetsDelete(c *cli.Context) error {
	g, m, err := writeCommandArgs(c, "offsets delete")
	if err != nil {
		return err
	}
	groups := repeated(c, "group")
	if len(groups) == 0 {
		return exit.UsageErrorf("Option '[delete-offsets]' takes the option: --group")
	}
	if len(repeated(c, "topic")) == 0 {
		return exit.UsageErrorf("Option '[delete-offsets]' takes the option: --topic (TOPIC or TOPIC:0,2)")
	}
	_, scopes, err := parseScopes(c, true)
	if err != nil {
		return err
	}
	ctx := c.Context
	l, cl, err := writeTarget(ctx, g, m)
	if err != nil {
		return err
	}
	if cl != nil {
		defer cl.Close()
	}
	uniq := []string{}
	for _, gr := range groups {
		if !containsStr(uniq, gr) {
			uniq = append(uniq, gr)
		}
	}
	plans, err := repair.PlanGroups(ctx, repair.Inputs{Layout: l, Client: cl, Now: time.Now(), Policy: m.policy},
		repair.ResetOptions{Groups: uniq, Scopes: scopes, Delete: true})
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
	return applyAndReport(c, g, m, cl, "delete", "", plans, len(uniq) > 1, nil)
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
