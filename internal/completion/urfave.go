package completion

import (
	"flag"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// urfave/cli's shared state, kept per app: its help and version flags and
// its help sub-command.

// OwnHelpFlags replaces urfave/cli's package-level help and version
// flags: urfave/cli appends them to every app and command, and
// BoolFlag.Apply records its default in the flag itself: two apps running
// at once (tests, or any embedding) would write the same shared flag.
// These flags apply a copy instead.
func OwnHelpFlags() {
	cli.HelpFlag = &copyOnApply{*cli.HelpFlag.(*cli.BoolFlag)}
	// --version only: -v is --verbose, as on every command (urfave's -v
	// alias made a leading -v print the version and drop the command).
	version := *cli.VersionFlag.(*cli.BoolFlag)
	version.Aliases = nil
	cli.VersionFlag = &copyOnApply{version}
}

// DefaultOnce makes every flag's help say its default once. urfave/cli
// appends "(default: VALUE)" from the flag's Go value, which is not the
// default when kaasctl resolves it later (--keep-backups: flag, then
// KAASCTL_KEEP_BACKUPS, then 10) and is noise for a switch (every switch
// is off until given, and "--dry-run ... (the default) (default: false)"
// reads as a contradiction). So the appended text is dropped for
// switches and for every flag whose own text already speaks of its
// default.
func DefaultOnce() {
	orig := cli.FlagStringer
	cli.FlagStringer = func(f cli.Flag) string {
		s := orig(f)
		if _, isSwitch := f.(*cli.BoolFlag); isSwitch {
			// Not through GetDefaultText: it reads what Apply writes, and
			// urfave's own HelpFlag is one object shared by every app (a
			// race when two commands run at once, as the tests do).
			s = strings.Replace(s, " (default: false)", "", 1)
			return strings.Replace(s, " (default: true)", "", 1)
		}
		df, ok := f.(cli.DocGenerationFlag)
		if !ok {
			return s
		}
		d := df.GetDefaultText()
		if d == "" {
			return s
		}
		if strings.Contains(strings.ToLower(df.GetUsage()), "default") {
			s = strings.Replace(s, " (default: "+d+")", "", 1)
		}
		return s
	}
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

// HelpCommand is urfave/cli's help sub-command, one per parent command.
func HelpCommand() *cli.Command {
	return &cli.Command{Name: "help", Aliases: []string{"h"}, Usage: "Shows a list of commands or help for one command", ArgsUsage: "[command]", Action: urfaveHelpAction}
}

// copyOnApply is a BoolFlag whose Apply leaves the flag unchanged.
type copyOnApply struct{ cli.BoolFlag }

// Names is the flag's name and aliases, read from its fields (urfave's
// Names runs a regular expression over each).
func (f *copyOnApply) Names() []string { return NameAndAliases(f.Name, f.Aliases) }

func (f *copyOnApply) Apply(set *flag.FlagSet) error {
	c := f.BoolFlag
	return c.Apply(set)
}

// Prepare readies a command tree for kaasctl's app: every command's flag
// errors go through onUsage (usage errors, exit 2); each parent answers
// an unknown sub-command with UnknownCommand and has a help sub-command
// of its own; each leaf gets flagsFor(its path) (AppendMissing: its own
// flag wins a name) and a hidden help sub-command ('kaasctl whois help').
func Prepare(cmds []*cli.Command, flagsFor func(path []string) []cli.Flag, onUsage cli.OnUsageErrorFunc) {
	for _, c := range cmds {
		prepare(c, nil, flagsFor, onUsage)
	}
}

func prepare(cmd *cli.Command, parents []string, flagsFor func(path []string) []cli.Flag, onUsage cli.OnUsageErrorFunc) {
	path := append(append([]string(nil), parents...), cmd.Name)
	cmd.OnUsageError = onUsage
	if len(cmd.Subcommands) > 0 {
		// A help sub-command of its own: urfave's shared one would be
		// appended to (and written by) every parent of every app.
		if !cmd.HideHelp && !cmd.HideHelpCommand {
			cmd.Subcommands = append(cmd.Subcommands, HelpCommand())
		}
		name := cmd.Name
		cmd.Action = func(c *cli.Context) error {
			if c.Args().Present() {
				return UnknownCommand(c.Args().First(), name, c.Command.Subcommands)
			}
			return cli.ShowSubcommandHelp(c)
		}
		for _, s := range cmd.Subcommands {
			prepare(s, path, flagsFor, onUsage)
		}
		return
	}
	if cmd.Name == "help" && cmd.Command("help") == nil {
		// Run, a help command without a help sub-command of its own gets
		// urfave's package-level one appended, and writes it: two apps
		// answering 'help' at once would race on that shared command. This
		// one is the same command, the app's own (and has none below it).
		h := HelpCommand()
		h.HideHelpCommand = true
		cmd.Subcommands = append(cmd.Subcommands, h)
	}
	if cmd.Name != "help" {
		cmd.Flags = AppendMissing(cmd.Flags, flagsFor(path))
		if !cmd.HideHelp && !cmd.HideHelpCommand {
			h := HelpCommand()
			h.Hidden = true
			cmd.Subcommands = append(cmd.Subcommands, h)
		}
	}
}
