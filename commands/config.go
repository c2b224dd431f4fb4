package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:  "config path",
		Usage: "print the config file kaasctl uses and whether it exists",
		Build: leaf(nil, nil, runConfigPath),
	})
	register(Descriptor{
		Path:    "config list",
		Usage:   "list the profiles; * marks the one in use",
		Aliases: []string{"ls"},
		Build:   leaf(nil, nil, runConfigList),
	})
}

// profileNameArg is the one profile NAME a config subcommand takes, or a
// usage error naming cmd.
func profileNameArg(c *cli.Context, cmd string) (string, error) {
	if c.NArg() != 1 {
		return "", exit.UsageErrorf("%s takes exactly one profile name", cmd)
	}
	return c.Args().First(), nil
}

// optionalProfileArg is the profile NAME config show and check may take
// ("" for the settings in force); a NAME and a different --profile are a
// usage error.
func optionalProfileArg(c *cli.Context, cmd string) (string, error) {
	switch c.NArg() {
	case 0:
		return "", nil
	case 1:
	default:
		return "", exit.UsageErrorf("%s takes at most one profile name", cmd)
	}
	name := c.Args().First()
	if p := c.String(wire.KeyProfile); completion.IsSet(c, wire.KeyProfile) && p != name {
		return "", exit.UsageErrorf("%s %s --profile %s: two different profiles; name one", cmd, name, p)
	}
	return name, nil
}

// namedProfile resolves the connection settings of config show/check: of
// the profile name when one is given (the flags given still win over its
// values), else those in force.
func namedProfile(g *Globals, name string) *wire.Connection {
	if name == "" {
		return g.conn
	}
	return resolveConnWith(wire.ConnInput{Flags: g.conn.Flags, ProfileArg: name}, g.IO)
}

// configPathOptions is 'config path' after flag parsing: it has no flags
// of its own (and, as always, ignores arguments).
type configPathOptions struct{}

func runConfigPath(_ context.Context, g *Globals, _ configPathOptions) error {
	path, src, err := g.conn.ConfigFile()
	if err != nil {
		return err
	}
	return g.Printer.Print(views.ConfigPathOutput(views.ConfigPathView{Path: path, Source: src.String(), Exists: g.conn.Settings.ConfigExists}))
}

// configListOptions is 'config list' after flag parsing: it has no flags
// of its own (and, as always, ignores arguments).
type configListOptions struct{}

func runConfigList(_ context.Context, g *Globals, _ configListOptions) error {
	path, _, err := g.conn.ConfigFile()
	if err != nil {
		return err
	}
	cfg, exists, err := wire.LoadConfig(path)
	if err != nil {
		return err
	}
	active := ""
	if g.conn.Err == nil {
		active = g.conn.Settings.Profile
	}
	v := views.NewConfigList(path, exists, cfg, active)
	if len(v.Profiles) == 0 && !g.Printer.Format.Machine() {
		g.Notef("no profiles in %s; create one with 'kaasctl config set-profile NAME --brokers HOST:PORT'", path)
	}
	return g.Printer.Print(views.ConfigListOutput(&v))
}
