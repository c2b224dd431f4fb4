package commands

import (
	"context"

	"github.com/urfave/cli/v2"
)

// leaf builds a command from three parts: flags, the command's own flags
// bound to a fresh options value (each flag's Destination a field of it);
// check, which finishes the options from what one flag cannot say alone
// (arguments, values read against the run's clock, flags that go
// together; usage errors), and may be nil; and run, the work, which a test
// can call directly with GlobalsFor's Globals and an options value. The
// common flags are read into Globals first.
func leaf[O any](flags func(*O) []cli.Flag, check func(*cli.Context, *Globals, *O) error, run func(context.Context, *Globals, O) error) func() *cli.Command {
	return func() *cli.Command {
		o := new(O)
		c := &cli.Command{Action: func(c *cli.Context) error {
			g, err := globalsOf(c)
			if err != nil {
				return err
			}
			if check != nil {
				if err := check(c, g, o); err != nil {
					return err
				}
			}
			return run(c.Context, g, *o)
		}}
		if flags != nil {
			c.Flags = flags(o)
		}
		return c
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
