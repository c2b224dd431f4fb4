// Package commands wires kaasctl's command line: each command lives in its
// own file, parses its flags into an options struct, calls the logic in
// inspect/ or repair/, and hands the result to render/.
package commands

import (
	"flag"
	"fmt"
	"io"
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
			return unknownCommand(c.Args().First(), "", c.App.Commands)
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
			cmd.Subcommands = append(cmd.Subcommands, newHelpCommand())
		}
		name := cmd.Name
		cmd.Action = func(c *cli.Context) error {
			if c.Args().Present() {
				return unknownCommand(c.Args().First(), name, c.Command.Subcommands)
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
		h := newHelpCommand()
		h.HideHelpCommand = true
		cmd.Subcommands = append(cmd.Subcommands, h)
	}
	if cmd.Name != "help" {
		cmd.Flags = appendMissing(cmd.Flags, commonFlagsFor(flagGroupsOf(path)))
		// Leaves too ('kaasctl whois help'); hidden, as urfave's is.
		if !cmd.HideHelp && !cmd.HideHelpCommand {
			h := newHelpCommand()
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

// urfave/cli appends its package-level help and version flags to every
// app and command, and BoolFlag.Apply records its default in the flag
// itself: two apps running at once (tests, or any embedding) would write
// the same shared flag. These flags apply a copy instead.
func init() {
	cli.HelpFlag = &copyOnApply{*cli.HelpFlag.(*cli.BoolFlag)}
	// --version only: -v is --verbose, as on every command (urfave's -v
	// alias made a leading -v print the version and drop the command).
	version := *cli.VersionFlag.(*cli.BoolFlag)
	version.Aliases = nil
	cli.VersionFlag = &copyOnApply{version}
}

// urfaveHelpAction is what urfave/cli's own help sub-command does, taken
// once from an app it sets up.
var urfaveHelpAction = func() cli.ActionFunc {
	app := &cli.App{Writer: io.Discard}
	app.Setup()
	for _, c := range app.Commands {
		if c.Name == "help" {
			return c.Action
		}
	}
	panic("urfave/cli set up no help command")
}()

// newHelpCommand is urfave/cli's help sub-command, one per parent command.
func newHelpCommand() *cli.Command {
	return &cli.Command{Name: "help", Aliases: []string{"h"}, Usage: "Shows a list of commands or help for one command", ArgsUsage: "[command]", Action: urfaveHelpAction}
}

// copyOnApply is a BoolFlag whose Apply leaves the flag unchanged.
type copyOnApply struct{ cli.BoolFlag }

// Names is the flag's name and aliases, read from its fields (urfave's
// Names runs a regular expression over each).
func (f *copyOnApply) Names() []string { return completion.NameAndAliases(f.Name, f.Aliases) }

func (f *copyOnApply) Apply(set *flag.FlagSet) error {
	c := f.BoolFlag
	return c.Apply(set)
}
