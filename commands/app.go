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
	"github.com/kaasctl/kaasctl/internal/helpjson"
	"github.com/kaasctl/kaasctl/internal/helptext"
	"github.com/kaasctl/kaasctl/render"
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
	for _, cmd := range app.Commands {
		prepare(cmd, nil)
	}
	return app
}

// prepare attaches the common flags that apply (flagGroupsOf) to every
// leaf command, maps flag parsing errors to exit 2, and makes parents
// reject unknown sub-commands.
func prepare(cmd *cli.Command, parents []string) {
	path := append(append([]string(nil), parents...), cmd.Name)
	cmd.OnUsageError = usageError
	if len(cmd.Subcommands) > 0 {
		// A help sub-command of its own: urfave's shared one would be
		// appended to (and written by) every parent of every app.
		if !cmd.HideHelp && !cmd.HideHelpCommand {
			cmd.Subcommands = append(cmd.Subcommands, completion.HelpCommand())
		}
		name := cmd.Name
		cmd.Action = func(c *cli.Context) error {
			if c.Args().Present() {
				return completion.UnknownCommand(c.Args().First(), name, c.Command.Subcommands)
			}
			return cli.ShowSubcommandHelp(c)
		}
		for _, s := range cmd.Subcommands {
			prepare(s, path)
		}
		return
	}
	if cmd.Name == "help" && cmd.Command("help") == nil {
		// Run, a help command without a help sub-command of its own gets
		// urfave's package-level one appended, and writes it: two apps
		// answering 'help' at once would race on that shared command. This
		// one is the same command, the app's own (and has none below it).
		h := completion.HelpCommand()
		h.HideHelpCommand = true
		cmd.Subcommands = append(cmd.Subcommands, h)
	}
	if cmd.Name != "help" {
		cmd.Flags = appendMissing(cmd.Flags, commonFlagsFor(flagGroupsOf(path)))
		// Leaves too ('kaasctl whois help'); hidden, as urfave's is.
		if !cmd.HideHelp && !cmd.HideHelpCommand {
			h := completion.HelpCommand()
			h.Hidden = true
			cmd.Subcommands = append(cmd.Subcommands, h)
		}
	}
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
