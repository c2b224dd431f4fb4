package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
)

// Shell completion (internal/completion): the scripts call the hidden
// '__complete' command with the words typed so far; kaasctl answers with
// one candidate per line.

func init() {
	completion.SetFlagValues("assignor", inspect.Assignors)
	completion.SetFlagValues("failover", inspect.FailoverModels)
	register(Descriptor{
		Path:   "completion",
		Usage:  "print a shell completion script (bash, zsh or fish)",
		Common: fgNone,
		Args:   "bash|zsh|fish",
		Build:  leaf(nil, checkCompletion, runCompletion),
	})
	register(Descriptor{
		Path:   "__complete",
		Usage:  "print completion candidates for the words typed so far (used by the completion scripts)",
		Hidden: true,
		Common: fgNone,
		Build:  newCompleteCmd,
	})
}

// completionOptions is 'completion' after flag parsing.
type completionOptions struct {
	Script string // the completion script of the shell named
}

// checkCompletion reads the shell named.
func checkCompletion(c *cli.Context, _ *Globals, o *completionOptions) error {
	if c.NArg() != 1 {
		return exit.UsageErrorf("name one shell: bash, zsh or fish")
	}
	script, ok := completion.Scripts[c.Args().First()]
	if !ok {
		return exit.UsageErrorf("no completion for %q: choose bash, zsh or fish", c.Args().First())
	}
	o.Script = script
	return nil
}

func runCompletion(_ context.Context, g *Globals, o completionOptions) error {
	_, err := fmt.Fprint(g.IO.Out, o.Script)
	return err
}

func newCompleteCmd() *cli.Command {
	return &cli.Command{
		HideHelp:        true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			return runComplete(iosFrom(c), parseCompleteWords(c.App, c.Args().Slice()))
		},
	}
}

// completeOptions is '__complete' after parsing: the command tree, the
// words typed and the shell asking. Flags are not parsed (they are among
// the words), so it runs without Globals: a broken config file must not
// print a warning into the shell's completion.
type completeOptions struct {
	App   *cli.App
	Words []string
	// Shell is the shell the candidates are quoted for ("": as they are,
	// for a script of an earlier kaasctl, which passes no --shell).
	Shell string
}

// parseCompleteWords reads '__complete [--shell=SH] WORD...'
// (completion.ParseWords).
func parseCompleteWords(app *cli.App, words []string) completeOptions {
	shell, ws := completion.ParseWords(words)
	return completeOptions{App: app, Words: ws, Shell: shell}
}

// runComplete prints one candidate a line, quoted for the shell asking
// (completion.Replies).
func runComplete(ios *IOStreams, o completeOptions) error {
	env := completion.Env{Getenv: ios.getenv, Topics: topicNames(), DataDirFlag: flagDataDir, ClusterDirFlag: flagClusterDir}
	for _, cand := range completion.Replies(o.App.Commands, o.Words, o.Shell, env) {
		if _, err := fmt.Fprintln(ios.Out, cand); err != nil {
			return err
		}
	}
	return nil
}
