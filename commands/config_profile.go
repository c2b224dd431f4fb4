package commands

import (
	"context"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

// configUseOptions is 'config use' after flag parsing.
type configUseOptions struct {
	Name string // the profile to make current
}

func init() {
	register(Descriptor{
		Path:    "config delete",
		Usage:   "delete profile NAME (clears 'current' when it named it)",
		Aliases: []string{"rm"},
		Build:   leaf(nil, checkConfigDelete, runConfigDelete),
	})
	register(Descriptor{
		Path:  "config set-profile",
		Usage: "create or update profile NAME from the flags given (--brokers, --data-dir, --cluster-dir, --kaas-version, --tls-*, --sasl-*, --timeout, --max-versions)",
		Build: leaf(setProfileFlags, checkConfigSetProfile, runConfigSetProfile),
	})
	register(Descriptor{
		Path:  "config use",
		Usage: "make NAME the current profile (used when neither --profile nor KAASCTL_PROFILE is given)",
		Build: leaf(nil, checkConfigUse, runConfigUse),
	})
}

// checkConfigUse reads the profile NAME.
func checkConfigUse(c *cli.Context, _ *Globals, o *configUseOptions) error {
	var err error
	o.Name, err = profileNameArg(c, "config use")
	return err
}

func runConfigUse(_ context.Context, g *Globals, o configUseOptions) error {
	path, cfg, err := g.conn.EditConfig()
	if err != nil {
		return err
	}
	if err := cfg.UseProfile(o.Name); err != nil {
		return wire.ProfileUsageError(err, path)
	}
	if err := wire.SaveConfig(path, cfg); err != nil {
		return err
	}
	g.Notef("current profile is now %q (%s)", o.Name, path)
	return nil
}

// configDeleteOptions is 'config delete' after flag parsing.
type configDeleteOptions struct {
	Name string // the profile to delete
}

// checkConfigDelete reads the profile NAME.
func checkConfigDelete(c *cli.Context, _ *Globals, o *configDeleteOptions) error {
	var err error
	o.Name, err = profileNameArg(c, "config delete")
	return err
}

func runConfigDelete(_ context.Context, g *Globals, o configDeleteOptions) error {
	path, cfg, err := g.conn.EditConfig()
	if err != nil {
		return err
	}
	wasCurrent, err := cfg.DeleteProfile(o.Name)
	if err != nil {
		return wire.ProfileUsageError(err, path)
	}
	if wasCurrent {
		g.Notef("%q was the current profile; none is current now ('kaasctl config use NAME')", o.Name)
	}
	if err := wire.SaveConfig(path, cfg); err != nil {
		return err
	}
	g.Notef("profile %q deleted from %s", o.Name, path)
	return nil
}

// configSetProfileOptions is 'config set-profile' after flag parsing.
type configSetProfileOptions struct {
	Name string           // the profile to create or update
	Edit wire.ProfileEdit // the settings to remove and to set, checked
	Use  bool             // also make it the current profile
}

// setProfileFlags are config set-profile's own flags (the settings are
// the common flags), bound to o.
func setProfileFlags(o *configSetProfileOptions) []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "use", Usage: "also make it the current profile", Destination: &o.Use},
		&cli.StringSliceFlag{Name: "unset", Usage: "remove settings from the profile: " + strings.Join(wire.ProfileKeys, ", ")},
	}
}

// checkConfigSetProfile reads the profile NAME and the settings given.
func checkConfigSetProfile(c *cli.Context, _ *Globals, o *configSetProfileOptions) error {
	var err error
	if o.Name, err = profileNameArg(c, "config set-profile"); err != nil {
		return err
	}
	if err := wire.ValidateProfileName(o.Name); err != nil {
		return exit.UsageErrorf("%v", err)
	}
	if completion.IsSet(c, wire.KeyProfile) {
		return exit.UsageErrorf("--profile has no meaning here; the profile is NAME")
	}
	o.Edit, err = profileEditFlags(c)
	return err
}

// profileEditFlags reads the profile settings given as flags (and
// --unset) into a checked edit.
func profileEditFlags(c *cli.Context) (wire.ProfileEdit, error) {
	e := wire.ProfileEdit{Unset: c.StringSlice("unset"), Set: map[string]string{}}
	for _, k := range wire.ProfileKeys {
		if !completion.IsSet(c, k) {
			continue
		}
		switch k {
		case wire.KeyBrokers:
			e.Set[k] = strings.Join(c.StringSlice(k), ",")
		case wire.KeyTLS, wire.KeyTLSInsecure:
			e.Set[k] = strconv.FormatBool(c.Bool(k))
		case flagKaasVersion:
			v := strings.TrimSpace(c.String(k))
			gen, err := volume.ParseKaasVersion(v)
			if err != nil {
				return e, exit.UsageErrorf("--kaas-version: %v", err)
			}
			if gen == volume.GenUnknown {
				v = "" // auto: detect
			}
			e.Set[k] = v
		default:
			e.Set[k] = c.String(k)
		}
	}
	if err := e.Check(); err != nil {
		return e, exit.UsageErrorf("%v", err)
	}
	return e, nil
}

func runConfigSetProfile(_ context.Context, g *Globals, o configSetProfileOptions) error {
	path, cfg, err := g.conn.EditConfig()
	if err != nil {
		return err
	}
	p, created, err := cfg.SetProfile(o.Name, o.Edit, o.Use)
	if err != nil {
		return exit.UsageErrorf("%v", err)
	}
	if err := wire.SaveConfig(path, cfg); err != nil {
		return err
	}
	verb := "updated"
	if created {
		verb = "created"
	}
	g.Notef("profile %q %s in %s", o.Name, verb, path)
	v := views.SetProfileView{Path: path, Name: o.Name, Created: created, Current: cfg.Current == o.Name, Profile: p}
	return g.Printer.Print(render.Output{Data: v, Human: func(*render.Printer) error { return nil }})
}
