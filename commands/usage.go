package commands

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
)

// The first minutes of a new user: --help and -h anywhere on the line, and
// "did you mean" for a mistyped command or flag.

// showHelp prints the help page of the command at path (the app's page and
// the help topics when path is empty) on stdout.
func showHelp(app *cli.App, path []string) error {
	return app.Run(append([]string{app.Name, "help"}, path...))
}

// unknownCommand is the usage error for a word that names no command under
// parent ("" for the top level), with the closest command when one is near.
func unknownCommand(word, parent string, cmds []*cli.Command) error {
	where, helpCmd := "", "kaasctl --help"
	if parent != "" {
		where = " for 'kaasctl " + parent + "'"
		helpCmd = "kaasctl " + parent + " --help"
	}
	msg := fmt.Sprintf("unknown command %q%s", word, where)
	if s := completion.Suggest(word, completion.CommandNames(cmds)); s != "" {
		return exit.UsageErrorf("%s; did you mean %q? Run '%s' for the list", msg, strings.Join(strings.Fields("kaasctl "+parent+" "+s), " "), helpCmd)
	}
	return exit.UsageErrorf("%s; run '%s' for the list", msg, helpCmd)
}

// flagErrorPrefixes are the messages of Go's flag package that name a flag
// with its single-dash spelling.
var flagErrorPrefixes = []string{
	"flag provided but not defined: ",
	"flag needs an argument: ",
	"bad flag syntax: ",
}

// usageError turns a flag parsing error into a usage error (exit 2) that
// spells flags the way the user typed them (--data-dri, not -data-dri)
// and suggests the closest flag of the command.
func usageError(c *cli.Context, err error, _ bool) error {
	msg := err.Error()
	for _, p := range flagErrorPrefixes {
		rest, ok := strings.CutPrefix(msg, p)
		if !ok || !strings.HasPrefix(rest, "-") {
			continue
		}
		name := strings.TrimLeft(rest, "-")
		msg = p + dashed(name)
		if p == flagErrorPrefixes[0] {
			msg = "unknown flag " + dashed(name)
			if c != nil && c.Command != nil {
				if s := completion.Suggest(name, visibleFlagNames(c.Command.Flags)); s != "" {
					msg += fmt.Sprintf("; did you mean %s?", dashed(s))
				}
				run := "; run"
				if strings.HasSuffix(msg, "?") {
					run = " Run"
				}
				if c.Command.HelpName == "kaasctl" && isCommonFlag(name) {
					// kaasctl -q groups list: the common flags belong to
					// each command, after its name.
					if name == "v" {
						msg += " (-v is --verbose, as on every command; the version: kaasctl --version)"
					}
					return exit.UsageErrorf("%s before the command: kaasctl's flags go after the command name (kaasctl COMMAND ... %s)", msg, dashed(name))
				}
				if c.Command.HelpName != "" {
					msg += fmt.Sprintf("%s '%s --help' for its flags", run, c.Command.HelpName)
				}
			}
		}
		return exit.UsageErrorf("%s", msg)
	}
	// "invalid value "x" for flag -count: ..." and similar.
	if i := strings.Index(msg, " for flag -"); i >= 0 {
		rest := msg[i+len(" for flag -"):]
		name, tail, _ := strings.Cut(rest, ":")
		msg = msg[:i] + " for flag " + dashed(name)
		if tail != "" {
			msg += ":" + tail
		}
	}
	return exit.UsageErrorf("%s", msg)
}

// dashed spells a flag name the way kaasctl's help does: -o, --data-dir.
func dashed(name string) string {
	if len([]rune(name)) == 1 {
		return "-" + name
	}
	return "--" + name
}

// visibleFlagNames lists the names of the visible flags and --help.
func visibleFlagNames(flags []cli.Flag) []string {
	out := []string{"help"}
	for _, f := range flags {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		for _, n := range completion.FlagNames(f) {
			if len(n) > 1 {
				out = append(out, n)
			}
		}
	}
	return out
}

// isCommonFlag reports whether name (without dashes) is one of the flags
// commonFlags attaches to every command.
func isCommonFlag(name string) bool {
	for _, f := range commonFlags() {
		if completion.HasFlagName(f, name) {
			return true
		}
	}
	return false
}
