// Package commands wires kaasctl's command line: each command lives in its
// own file, parses its flags into an options struct, calls the logic in
// inspect/ or repair/, and hands the result to render/.
package commands

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/helptext"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views/helpjson"
)

// NewApp builds the command tree writing to ios.
func NewApp(ios *IOStreams) *cli.App {
	app := &cli.App{
		Name:                 "kaasctl",
		Usage:                "operate kaas consumer groups: coordinators, offsets, assignments, takeovers",
		Description:          helptext.Command("kaasctl", nil),
		Version:              versionString(),
		Writer:               ios.Out,
		ErrWriter:            ios.Err,
		Reader:               ios.In,
		Metadata:             map[string]any{"io": ios},
		Commands:             buildCommands(),
		EnableBashCompletion: true,
		Suggest:              true,
		HideHelpCommand:      true,
		HideVersion:          false,
		ExitErrHandler:       func(*cli.Context, error) {},
	}
	// Bare 'kaasctl', --help and 'kaasctl help' list the help topics too.
	app.CustomAppHelpTemplate = cli.AppHelpTemplate + helpTopicsSection()
	app.Action = func(c *cli.Context) error {
		if c.Args().Present() {
			return completion.UnknownCommand(c.Args().First(), "", c.App.Commands)
		}
		return cli.ShowAppHelp(c)
	}
	app.OnUsageError = usageError
	prepareTree(app.Commands)
	return app
}

// prepareTree readies the tree (completion.Prepare): each leaf gets the
// common flags that apply to it (flagGroupsOf), flag errors are usage
// errors (exit 2).
func prepareTree(cmds []*cli.Command) {
	completion.Prepare(cmds, func(path []string) []cli.Flag { return commonFlagsFor(flagGroupsOf(path)) }, usageError)
}

// Main runs kaasctl with args (args[0] is the program name) and returns the
// exit code.
func Main(args []string, ios *IOStreams) int {
	app := NewApp(ios)
	var err error
	if path, ok := helpjson.Request(app, args); ok {
		err = helpTreeSource().Write(app, ios.Out, path)
	} else if path, ok := completion.HelpRequest(app.Commands, args); ok {
		err = showHelp(app, path)
	} else {
		err = app.Run(completion.ReorderArgs(app.Commands, args))
	}
	if err == nil {
		return exit.OK
	}
	code := exit.Code(err)
	if !exit.IsSilent(err) {
		msg := err.Error()
		if code == exit.Usage && !strings.Contains(msg, "--help") {
			msg += " (see --help)"
		}
		fmt.Fprintf(ios.Err, "kaasctl: %s\n", render.CleanText(msg))
	}
	return code
}

// urfave/cli's package-level help and version flags, made copies on
// apply (completion.OwnHelpFlags); every flag's default said once
// (completion.DefaultOnce).
func init() {
	completion.OwnHelpFlags()
	completion.DefaultOnce()
}
