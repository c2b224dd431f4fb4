package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
)

// volumeWriteFlags are the flags every volume-wide write (repair, migrate)
// starts with, --execute bound to execute: a dry run unless --execute.
func volumeWriteFlags(execute *bool, more ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "dry-run", Usage: "only list what would change (the default)"},
		&cli.BoolFlag{Name: "execute", Aliases: []string{"x"}, Usage: "make the changes", Destination: execute},
	}, more...)
}

// checkVolumeWrite checks the command line of a volume-wide write: no
// arguments, not both --dry-run and --execute.
func checkVolumeWrite(c *cli.Context, name string, execute bool) error {
	if c.NArg() > 0 {
		return exit.UsageErrorf("volume %s takes no arguments (got %q)", name, c.Args().First())
	}
	if c.Bool("dry-run") && execute {
		return exit.UsageErrorf("Option \"[%s]\" only accepts one of [execute] and [dry-run]", name)
	}
	return nil
}
