package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:     "offsets delete",
		Usage:    "delete committed offsets of topics/partitions from inactive groups (dry-run unless --execute)",
		Problems: &views.ExitProblem{Label: "offsets delete", When: "a deleted offset a broker still serves from its cache", Rank: 60},
		Refuses:  true,
		Tool: &MCPTool{Name: "offsets_delete_plan", Title: "Plan an offsets delete", Input: mcpserver.OffsetsDeleteInput{}, Doc: views.ResetView{}, Plan: true,
			Description: "Plans (dry run) deleting a group's committed offsets of topics; returns the plan and the command a person runs to apply it. Never writes."},
		Build: leaf(deleteFlags, checkOffsetsDelete, runOffsetsDelete),
	})
}

// deleteFlags are offsets delete's flags, bound to o.
func deleteFlags(o *deleteOptions) []cli.Flag {
	return append(writeSafetyFlags(&o.mode),
		&cli.GenericFlag{Name: "group", Aliases: []string{"g"}, Value: completion.Repeated(nil), Usage: "group (repeatable)"},
		&cli.GenericFlag{Name: "topic", Aliases: []string{"t"}, Value: completion.Repeated(nil), Usage: "`TOPIC` (every committed partition) or TOPIC:0,2 (repeatable)"},
	)
}

// deleteOptions is 'offsets delete' after flag parsing.
type deleteOptions struct {
	mode   writeMode
	groups []string // each once, in the order given
	scopes []repair.TopicScope
}

// checkOffsetsDelete reads the groups (each once) and the scopes: both
// are required.
func checkOffsetsDelete(c *cli.Context, g *Globals, o *deleteOptions) error {
	if err := parseWriteCommand(c, g, "offsets delete", &o.mode); err != nil {
		return err
	}
	groups := completion.RepeatedValues(c, "group")
	if len(groups) == 0 {
		return exit.UsageErrorf("Option '[delete-offsets]' takes the option: --group")
	}
	if len(completion.RepeatedValues(c, "topic")) == 0 {
		return exit.UsageErrorf("Option '[delete-offsets]' takes the option: --topic (TOPIC or TOPIC:0,2)")
	}
	var err error
	if _, o.scopes, err = parseScopes(c, true); err != nil {
		return err
	}
	o.groups = inspect.SelectGroups(nil, groups, false, nil)
	return nil
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
	plans, err := repair.PlanDelete(ctx, repair.Inputs{Layout: l, Client: cl, Now: g.Now(), Policy: o.mode.policy}, o.groups, o.scopes)
	if err != nil {
		return err
	}
	return applyAndReport(ctx, g, o.mode, cl, applyRun{cmd: "delete", plans: plans, multi: len(o.groups) > 1})
}
