package completion

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
)

// flagErrorPrefixes are the messages of Go's flag package that name a flag
// with its single-dash spelling.
var flagErrorPrefixes = []string{
	"flag provided but not defined: ",
	"flag needs an argument: ",
	"bad flag syntax: ",
}

// FlagError turns a flag parsing error into a usage error (exit 2) that
// spells flags the way the user typed them (--data-dri, not -data-dri)
// and suggests the closest flag of the command; a flag isCommon says
// belongs to every command, given before the command, is told to go
// after it.
func FlagError(c *cli.Context, err error, isCommon func(name string) bool) error {
	msg := err.Error()
	for _, p := range flagErrorPrefixes {
		rest, ok := strings.CutPrefix(msg, p)
		if !ok || !strings.HasPrefix(rest, "-") {
			continue
		}
		name := strings.TrimLeft(rest, "-")
		msg = p + Dashed(name)
		if p == flagErrorPrefixes[0] {
			msg = "unknown flag " + Dashed(name)
			if c != nil && c.Command != nil {
				if s := Suggest(name, visibleFlagNames(c.Command.Flags)); s != "" {
					msg += fmt.Sprintf("; did you mean %s?", Dashed(s))
				}
				run := "; run"
				if strings.HasSuffix(msg, "?") {
					run = " Run"
				}
				if c.Command.HelpName == "kaasctl" && isCommon(name) {
					// kaasctl -q groups list: the common flags belong to
					// each command, after its name.
					if name == "v" {
						msg += " (-v is --verbose, as on every command; the version: kaasctl --version)"
					}
					return exit.UsageErrorf("%s before the command: kaasctl's flags go after the command name (kaasctl COMMAND ... %s)", msg, Dashed(name))
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
		msg = msg[:i] + " for flag " + Dashed(name)
		if tail != "" {
			msg += ":" + tail
		}
	}
	return exit.UsageErrorf("%s", msg)
}

// Dashed spells a flag name the way kaasctl's help does: -o, --data-dir.
func Dashed(name string) string {
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
		for _, n := range FlagNames(f) {
			if len(n) > 1 {
				out = append(out, n)
			}
		}
	}
	return out
}
