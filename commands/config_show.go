package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/views"
)

// configShowOptions is 'config show' after flag parsing.
type configShowOptions struct {
	Profile string // the profile NAME argument; "" for the settings in force
}

func init() {
	register(Descriptor{
		Path:     "config show",
		Usage:    "show the resolved connection and volume settings and where each comes from (flag, env, profile, default); secrets masked",
		Problems: &views.ExitProblem{Label: "config show / check", When: "configuration problems", Rank: 30},
		Build:    leaf(nil, checkConfigShow, runConfigShow),
	})
}

// checkConfigShow reads the profile NAME, if any.
func checkConfigShow(c *cli.Context, _ *Globals, o *configShowOptions) error {
	var err error
	o.Profile, err = optionalProfileArg(c, "config show")
	return err
}

func runConfigShow(_ context.Context, g *Globals, o configShowOptions) error {
	st := namedProfile(g, o.Profile)
	var problems []string
	for _, err := range []error{st.FileErr, st.Err} {
		if err != nil {
			problems = append(problems, err.Error())
		}
	}
	v := views.NewConfigShow(st.Settings, g.vin, views.VolumeKeys{DataDir: flagDataDir, ClusterDir: flagClusterDir, KaasVersion: flagKaasVersion}, problems)
	if err := g.Printer.Print(views.ConfigShowOutput(&v)); err != nil {
		return err
	}
	if len(v.Problems) == 0 {
		return nil
	}
	if !g.Printer.Format.Machine() {
		for _, p := range v.Problems {
			g.Warnf("%s", p)
		}
	}
	return exit.ProblemsFound("configuration problems")
}
