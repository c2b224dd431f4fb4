package completion

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

func FindCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// FindPath is the command the words name from the top, each a name or
// alias of a sub-command of the one before (nil: none, or no words).
func FindPath(cmds []*cli.Command, words []string) *cli.Command {
	var cur *cli.Command
	for _, w := range words {
		if cur = FindCommand(cmds, w); cur == nil {
			return nil
		}
		cmds = cur.Subcommands
	}
	return cur
}

// IsLeaf reports whether cmd runs work rather than choosing a sub-command
// (its only sub-command, if any, is help).
func IsLeaf(cmd *cli.Command) bool {
	for _, s := range cmd.Subcommands {
		if s.Name != "help" {
			return false
		}
	}
	return true
}

func TakesValue(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range FlagNames(f) {
			if n == name {
				if tv, ok := f.(cli.DocGenerationFlag); ok {
					return tv.TakesValue()
				}
				return true
			}
		}
	}
	return false
}

// FlagNames is f.Names() for the flag types kaasctl declares, read from
// their fields; any other type asks urfave.
func FlagNames(f cli.Flag) []string {
	switch f := f.(type) {
	case *cli.StringFlag:
		return NameAndAliases(f.Name, f.Aliases)
	case *cli.BoolFlag:
		return NameAndAliases(f.Name, f.Aliases)
	case *cli.StringSliceFlag:
		return NameAndAliases(f.Name, f.Aliases)
	case *cli.IntFlag:
		return NameAndAliases(f.Name, f.Aliases)
	case *cli.DurationFlag:
		return NameAndAliases(f.Name, f.Aliases)
	case *cli.GenericFlag:
		return NameAndAliases(f.Name, f.Aliases)
	}
	return f.Names()
}

func NameAndAliases(name string, aliases []string) []string {
	out := make([]string, 0, 1+len(aliases))
	return append(append(out, name), aliases...)
}

// FlagName is a flag's first name.
func FlagName(f cli.Flag) string { return FlagNames(f)[0] }

// HasFlagName reports whether name is one of f's names.
func HasFlagName(f cli.Flag, name string) bool { return slices.Contains(FlagNames(f), name) }

// HasFlag reports whether name is one of the names of one of fs.
func HasFlag(fs []cli.Flag, name string) bool {
	for _, f := range fs {
		if HasFlagName(f, name) {
			return true
		}
	}
	return false
}

// Suggest returns the candidate closest to typed, or "" when none is close
// enough to be a likely typo: at most one edit (insert, delete, substitute
// or swap two neighbours) per three characters, and at least one.
func Suggest(typed string, candidates []string) string {
	best, bestD := "", -1
	limit := max(1, len(typed)/3)
	for _, c := range candidates {
		if c == "" || c == typed {
			continue
		}
		d := editDistance(typed, c)
		if d <= limit && d < len(typed) && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	if best == "" && len(typed) >= 3 {
		// A prefix of exactly one candidate: "kaasctl assign" → assignment.
		for _, c := range candidates {
			if strings.HasPrefix(c, typed) {
				if best != "" {
					return ""
				}
				best = c
			}
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours each cost one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// CommandNames lists the visible names (and aliases) of cmds.
func CommandNames(cmds []*cli.Command) []string {
	var out []string
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		out = append(out, c.Names()...)
	}
	return out
}

// AppendMissing adds the common flags a command does not define itself: a
// command's own flag wins when a name collides (sandbox's hidden --brokers
// only refuses the old spelling of --broker-count), instead of the flag set panicking.
func AppendMissing(own, common []cli.Flag) []cli.Flag {
	taken := map[string]bool{}
	for _, f := range own {
		for _, n := range FlagNames(f) {
			taken[n] = true
		}
	}
	out := own
	for _, f := range common {
		clash := false
		for _, n := range FlagNames(f) {
			if taken[n] {
				clash = true
			}
		}
		if !clash {
			out = append(out, f)
		}
	}
	return out
}

// Flag names without urfave's cost: a flag's Names() runs a regular
// expression over each of its names (it strips a v1-style "name, n"), and
// Context.IsSet looks an unset flag up through every flag's Names(). With
// the common flags on every command that was most of a command's start-up
// (3 ms of a 10,000-group live list). kaasctl declares every name plainly,
// so the fields are the names.

// IsSet is c.IsSet(name) for kaasctl's flags, none of which is read from
// the environment by urfave: the flag is set when the command line gave
// it, under any of its names, to the nearest command (this one, then its
// parents) that declares it.
func IsSet(c *cli.Context, name string) bool {
	for _, cx := range c.Lineage() {
		var flags []cli.Flag
		switch {
		case cx.Command != nil:
			flags = cx.Command.Flags
		case cx.App != nil:
			flags = cx.App.Flags
		}
		i := slices.IndexFunc(flags, func(f cli.Flag) bool { return HasFlagName(f, name) })
		if i < 0 {
			continue
		}
		names := FlagNames(flags[i])
		for _, given := range cx.LocalFlagNames() {
			if slices.Contains(names, given) {
				return true
			}
		}
		return false
	}
	return false
}
