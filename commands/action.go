package commands

import (
	"context"

	"github.com/urfave/cli/v2"
)

// action is a command's cli Action: the common flags into Globals, the
// command's own flags into its options (parse: the only code that reads the
// cli.Context), then the work (run), which a test can call directly with
// GlobalsFor and an options value.
func action[O any](parse func(*cli.Context) (O, error), run func(context.Context, *Globals, O) error) cli.ActionFunc {
	return actionWith(func(c *cli.Context, _ *Globals) (O, error) { return parse(c) }, run)
}

// actionWith is action for a parse that needs the run's Globals too (its
// clock for time flags, its warnings).
func actionWith[O any](parse func(*cli.Context, *Globals) (O, error), run func(context.Context, *Globals, O) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		g, err := globalsOf(c)
		if err != nil {
			return err
		}
		o, err := parse(c, g)
		if err != nil {
			return err
		}
		return run(c.Context, g, o)
	}
}

// globalsOf is the run's Globals: the common flags read (globals), or
// the server's for a call of 'kaasctl mcp' (runForMCP).
func globalsOf(c *cli.Context) (*Globals, error) {
	if g, ok := c.App.Metadata[mcpGlobals].(*Globals); ok {
		return g, nil
	}
	return globals(c)
}
