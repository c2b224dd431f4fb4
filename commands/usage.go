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

// usageError turns a flag parsing error into a usage error (exit 2)
// (completion.FlagError): flags spelled as typed, the closest flag, and
// kaasctl's common flags placed after the command.
func usageError(c *cli.Context, err error, _ bool) error {
	return completion.FlagError(c, err, isCommonFlag)
}

func dashed(name string) string { return completion.Dashed(name) }

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
