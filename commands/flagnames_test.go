package commands

import (
	"io"
	"slices"
	"testing"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/urfave/cli/v2"
)

// eachCommand calls fn for every command of the app, depth first.
func eachCommand(cmds []*cli.Command, fn func(*cli.Command)) {
	for _, c := range cmds {
		fn(c)
		eachCommand(c.Subcommands, fn)
	}
}

// flagNames reads every flag kaasctl declares as urfave's Names() does.
func TestFlagNamesAreUrfaves(t *testing.T) {
	t.Parallel()
	app := NewApp(&IOStreams{Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }})
	n := 0
	check := func(f cli.Flag) {
		n++
		if got, want := completion.FlagNames(f), f.Names(); !slices.Equal(got, want) {
			t.Errorf("flag %v: flagNames %q, Names %q", want, got, want)
		}
	}
	for _, f := range app.Flags {
		check(f)
	}
	eachCommand(app.Commands, func(c *cli.Command) {
		for _, f := range c.Flags {
			check(f)
		}
	})
	check(cli.HelpFlag)
	if n < 500 {
		t.Fatalf("only %d flags checked", n)
	}
}

// isSet answers as urfave's Context.IsSet for every flag of the command
// run, by name and by alias, given or not.
func TestIsSetIsUrfaves(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"groups", "list", "-o", "json", "--brokers", "a:9092", "--data-dir", "/nonexistent"},
		{"groups", "list", "-q", "--output", "yaml", "-b", "a:9092,b:9092", "--timeout", "2s"},
		{"offsets", "reset", "--group", "g", "--to-earliest", "--all-topics", "--keep-backups", "3", "-v"},
		{"whois", "g1", "--live", "-b", "a:9092", "--profile", "prod", "--tls"},
		{"volume", "check"},
	} {
		app := NewApp(&IOStreams{Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }})
		var leaf *cli.Command
		eachCommand(app.Commands, func(c *cli.Command) {
			if completion.IsLeaf(c) {
				c.Before, c.After = nil, nil
				c.Action = func(c *cli.Context) error {
					leaf = c.Command
					set := 0
					for _, f := range c.Command.Flags {
						for _, name := range f.Names() {
							got, want := completion.IsSet(c, name), c.IsSet(name)
							if got != want {
								t.Errorf("%v: completion.IsSet(%q) = %v, IsSet %v", args, name, got, want)
							}
							if want {
								set++
							}
						}
					}
					if set == 0 && len(args) > 2 {
						t.Errorf("%v: no flag counted as set", args)
					}
					return nil
				}
			}
		})
		if err := app.Run(completion.ReorderArgs(app.Commands, append([]string{"kaasctl"}, args...))); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if leaf == nil {
			t.Fatalf("%v: no command ran", args)
		}
	}
}
