package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
)

// The first minutes of a new user: --help and -h anywhere on the line, and
// "did you mean" for a mistyped command or flag.

// showHelp prints the help page of the command at path (the app's page and
// the help topics when path is empty) on stdout.
func showHelp(app *cli.App, path []string) error {
	return app.Run(append([]string{app.Name, "help"}, path...))
}

// usageError turns a flag parsing error into a usage error (exit 2)
// (completion.FlagError): flags spelled as typed, the closest flag, and
// kaasctl's common flags placed after the command.
func usageError(c *cli.Context, err error, _ bool) error {
	return completion.FlagError(c, err, isCommonFlag)
}

// isCommonFlag reports whether name (without dashes) is one of the flags
// commonFlags attaches to every command.
func isCommonFlag(name string) bool { return completion.HasFlag(commonFlags(), name) }
