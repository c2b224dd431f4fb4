package commands

import (
	"context"
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render/views"
	"github.com/kaasctl/kaasctl/repair"
)

func init() {
	register(Descriptor{
		Path:     "offsets delete",
		Usage:    "delete committed offsets of topics/partitions from inactive groups (dry-run unless --execute)",
		Problems: &views.ExitProblem{Label: "offsets delete", When: "a deleted offset a broker still serves from its cache", Rank: 60},
		Refuses:  true,
		Tool: &MCPTool{Name: "offsets_delete_plan", Title: "Plan an offsets delete", Input: mcpserver.OffsetsDeleteInput{}, Doc: views.ResetView{}, Plan: true,
			Description: "Plans (dry run) deleting a group's committed offsets of topics; returns the plan and the command a person runs to apply it. Never writes."},
		Build: func() *cli.Command {
			return &cli.Command{
				Flags: append(writeSafetyFlags(),
					&cli.GenericFlag{Name: "group", Aliases: []string{"g"}, Value: &repeatedFlag{}, Usage: "group (repeatable)"},
					&cli.GenericFlag{Name: "topic", Aliases: []string{"t"}, Value: &repeatedFlag{}, Usage: "`TOPIC` (every committed partition) or TOPIC:0,2 (repeatable)"},
				),
				Action: actionWith(parseOffsetsDelete, runOffsetsDelete),
			}
		},
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
