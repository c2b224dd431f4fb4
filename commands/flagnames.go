package commands

import (
	"slices"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/urfave/cli/v2"
)

// Flag names without urfave's cost: a flag's Names() runs a regular
// expression over each of its names (it strips a v1-style "name, n"), and
// Context.IsSet looks an unset flag up through every flag's Names(). With
// the common flags on every command that was most of a command's start-up
// (3 ms of a 10,000-group live list). kaasctl declares every name plainly,
// so the fields are the names.

// isSet is c.IsSet(name) for kaasctl's flags, none of which is read from
// the environment by urfave: the flag is set when the command line gave
// it, under any of its names, to the nearest command (this one, then its
// parents) that declares it.
func isSet(c *cli.Context, name string) bool {
	for _, cx := range c.Lineage() {
		var flags []cli.Flag
		switch {
		case cx.Command != nil:
			flags = cx.Command.Flags
		case cx.App != nil:
			flags = cx.App.Flags
		}
		i := slices.IndexFunc(flags, func(f cli.Flag) bool { return completion.HasFlagName(f, name) })
		if i < 0 {
			continue
		}
		names := completion.FlagNames(flags[i])
		for _, given := range cx.LocalFlagNames() {
			if slices.Contains(names, given) {
				return true
			}
		}
		return false
	}
	return false
}
