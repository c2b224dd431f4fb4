package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

// volumeWriteFlags are the flags every volume-wide write (repair, migrate)
// starts with: a dry run unless --execute.
func volumeWriteFlags(more ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "dry-run", Usage: "only list what would change (the default)"},
		&cli.BoolFlag{Name: "execute", Aliases: []string{"x"}, Usage: "make the changes"},
	}, more...)
}

// parseVolumeWrite reads the command line of a volume-wide write: no
// arguments, not both --dry-run and --execute; it returns --execute.
func parseVolumeWrite(c *cli.Context, name string) (bool, error) {
	if c.NArg() > 0 {
		return false, exit.UsageErrorf("volume %s takes no arguments (got %q)", name, c.Args().First())
	}
	if c.Bool("dry-run") && c.Bool("execute") {
		return false, exit.UsageErrorf("Option \"[%s]\" only accepts one of [execute] and [dry-run]", name)
	}
	return c.Bool("execute"), nil
}

// printVolumeActions prints the actions of a repair or migration, each with
// its RESULT; refused says the whole run was refused (nothing written). A
// run with no actions prints no table for people (the notes say why).
func printVolumeActions(g *Globals, data any, acts []repair.RepairAction, refused bool) error {
	if len(acts) == 0 && !g.Printer.Format.Machine() {
		return nil
	}
	return g.Printer.Print(views.VolumeActionsOutput(data, acts, refused))
}
