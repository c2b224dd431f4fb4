package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/render"
)

// Habits from kafka-consumer-groups.sh, rpk and kcl: 'groups delete'
// points at what kaasctl does instead, and 'lag' is the offsets view of
// groups describe (groups_describe_views.go).

func init() {
	register(Descriptor{
		Path:   "groups delete",
		Usage:  "not a kaasctl command: says how to remove a group's committed offsets",
		Hidden: true,
		Args:   "GROUP...",
		Build:  leaf(nil, checkGroupsDelete, func(context.Context, *Globals, struct{}) error { return nil }),
	})
	register(Descriptor{
		Path:  "lag",
		Usage: "committed offset, log end and lag per partition of groups (groups describe --offsets; every group without a name)",
		Args:  "[GROUP...]",
		Build: leaf(lagFlags, checkLag, runGroupsDescribe),
	})
}

// lagFlags are lag's flags, bound to o.
func lagFlags(o *groupsDescribeOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "group", Aliases: []string{"g"}, Usage: "`GROUP` (repeatable; the same as naming it)"},
		&cli.StringFlag{Name: "regex", Aliases: []string{"r"}, Usage: "every group whose id matches `RE`"},
		&cli.GenericFlag{Name: "topic", Aliases: []string{"t"}, Value: completion.Repeated(nil), Usage: "only partitions of `TOPIC` (repeatable or comma list)"},
		&cli.BoolFlag{Name: "lagging-only", Usage: "only partitions with lag above 0", Destination: &o.filter.LaggingOnly},
		&cli.StringFlag{Name: "lag", Usage: "only groups whose total lag matches `EXPR` (>N, N..M, ...)"},
	}
}

// checkGroupsDelete refuses 'groups delete', pointing at offsets delete.
func checkGroupsDelete(c *cli.Context, _ *Globals, _ *struct{}) error {
	g := "GROUP"
	if c.Args().Len() > 0 {
		g = render.ShellQuote(c.Args().First())
	}
	return exit.UsageErrorf("kaasctl has no 'groups delete': a kaas group is its offset file and its coordinator's memory, "+
		"and kaasctl never sends DeleteGroups. Remove its committed offsets with 'kaasctl offsets delete --group %s --topic TOPIC' "+
		"(one --topic per topic it committed, as 'kaasctl groups describe %s' lists them; a dry run, --execute applies; the group must be Empty)", g, g)
}

// checkLag makes groups describe's options the offsets view (every group
// when none is named).
func checkLag(c *cli.Context, _ *Globals, o *groupsDescribeOptions) error {
	if err := describeArgs(c, o); err != nil {
		return err
	}
	if len(o.sel.Names) == 0 && o.sel.Regex == nil {
		o.sel.All = true
	}
	o.view = "offsets"
	return o.checkSelection()
}
