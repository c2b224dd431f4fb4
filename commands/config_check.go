package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/views"
)

// configCheckOptions is 'config check' after flag parsing.
type configCheckOptions struct {
	Profile string // the profile NAME argument; "" for the settings in force
}

func init() {
	register(Descriptor{
		Path:     "config check",
		Usage:    "connect with the resolved settings: reach every seed broker, list the cluster's brokers, show the request-version cap",
		Problems: &views.ExitProblem{Label: "config show / check", When: "seed brokers that did not answer", Rank: 31},
		Args:     "[NAME]",
		Build:    leaf(nil, checkConfigCheck, runConfigCheck),
	})
}

// checkConfigCheck reads the profile NAME, if any.
func checkConfigCheck(c *cli.Context, _ *Globals, o *configCheckOptions) error {
	var err error
	o.Profile, err = optionalProfileArg(c, "config check")
	return err
}

func runConfigCheck(ctx context.Context, g *Globals, o configCheckOptions) error {
	st := namedProfile(g, o.Profile)
	if st.FileErr != nil && st.Explicit {
		return exit.UsageErrorf("%v", st.FileErr)
	}
	if st.Err != nil {
		return exit.UsageErrorf("%v", st.Err)
	}
	s := st.Settings
	if len(s.Brokers) == 0 {
		return exit.UsageErrorf("%v", wire.ErrNoBrokers)
	}
	cc, err := wire.CheckConnection(ctx, s)
	if err != nil {
		return err
	}
	v := views.NewConfigCheck(s, cc)
	if err := g.Printer.Print(views.ConfigCheckOutput(&v)); err != nil {
		return err
	}
	if len(cc.Failed) > 0 {
		return exit.ProblemsFound("%d of %d seed brokers did not answer", len(cc.Failed), len(v.Seeds))
	}
	return nil
}
