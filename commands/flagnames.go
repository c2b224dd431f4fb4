package commands

import (
	"slices"

	"github.com/urfave/cli/v2"
)

// Flag names without urfave's cost: a flag's Names() runs a regular
// expression over each of its names (it strips a v1-style "name, n"), and
// Context.IsSet looks an unset flag up through every flag's Names(). With
// the common flags on every command that was most of a command's start-up
// (3 ms of a 10,000-group live list). kaasctl declares every name plainly,
// so the fields are the names.

// flagNames is f.Names() for the flag types kaasctl declares, read from
// their fields; any other type asks urfave.
func flagNames(f cli.Flag) []string {
	switch f := f.(type) {
	case *cli.StringFlag:
		return nameAndAliases(f.Name, f.Aliases)
	case *cli.BoolFlag:
		return nameAndAliases(f.Name, f.Aliases)
	case *cli.StringSliceFlag:
		return nameAndAliases(f.Name, f.Aliases)
	case *cli.IntFlag:
		return nameAndAliases(f.Name, f.Aliases)
	case *cli.DurationFlag:
		return nameAndAliases(f.Name, f.Aliases)
	case *cli.GenericFlag:
		return nameAndAliases(f.Name, f.Aliases)
	case *copyOnApply:
		return nameAndAliases(f.Name, f.Aliases)
	}
	return f.Names()
}

func nameAndAliases(name string, aliases []string) []string {
	out := make([]string, 0, 1+len(aliases))
	return append(append(out, name), aliases...)
}

// flagName is a flag's first name.
func flagName(f cli.Flag) string { return flagNames(f)[0] }

// hasFlagName reports whether name is one of f's names.
func hasFlagName(f cli.Flag, name string) bool { return slices.Contains(flagNames(f), name) }

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
		i := slices.IndexFunc(flags, func(f cli.Flag) bool { return hasFlagName(f, name) })
		if i < 0 {
			continue
		}
		names := flagNames(flags[i])
		for _, given := range cx.LocalFlagNames() {
			if slices.Contains(names, given) {
				return true
			}
		}
		return false
	}
	return false
}
