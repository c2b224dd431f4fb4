package commands

import (
	"context"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// configShowOptions is 'config show' after flag parsing.
type configShowOptions struct {
	Profile string // the profile NAME argument; "" for the settings in force
}

// settingRow is one resolved setting with where it came from.
type settingRow struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

type configShowView struct {
	Config   string       `json:"config"`
	Profile  string       `json:"profile"`
	Settings []settingRow `json:"settings"`
	Problems []string     `json:"problems"`
}

func init() {
	register(Descriptor{
		Path:  "config show",
		Usage: "show the resolved connection and volume settings and where each comes from (flag, env, profile, default); secrets masked",
		Build: configShowCmd,
	})
}

func configShowCmd() *cli.Command {
	return &cli.Command{
		Action: action(parseConfigShow, runConfigShow),
	}
}

func parseConfigShow(c *cli.Context) (configShowOptions, error) {
	name, err := optionalProfileArg(c, "config show")
	return configShowOptions{Profile: name}, err
}

func runConfigShow(_ context.Context, g *Globals, o configShowOptions) error {
	v := showView(g, namedProfile(g, o.Profile))
	t := render.NewTable("KEY", "VALUE", "SOURCE")
	for _, r := range v.Settings {
		t.Add(r.Key, r.Value, r.Source)
	}
	if err := g.Printer.Print(render.Output{Data: v, Items: v.Settings, Table: t}); err != nil {
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

// showView is every setting of st with where it came from, and the
// problems found resolving them.
func showView(g *Globals, st *connState) configShowView {
	s := st.settings
	v := configShowView{Config: s.ConfigPath, Profile: s.Profile, Settings: []settingRow{}, Problems: []string{}}
	if st.fileErr != nil {
		v.Problems = append(v.Problems, st.fileErr.Error())
	}
	if st.err != nil {
		v.Problems = append(v.Problems, st.err.Error())
	}
	add := func(key, val string, src wire.Source) {
		v.Settings = append(v.Settings, settingRow{Key: key, Value: val, Source: src.String()})
	}
	connRows(s, add)
	if p := volumeRows(g.vin, s, add); p != "" {
		v.Problems = append(v.Problems, p)
	}
	return v
}

// connRows adds the config file, the profile and every connection
// setting of s; a password is only said to be there or not.
func connRows(s *wire.Settings, add func(key, val string, src wire.Source)) {
	cfgVal := s.ConfigPath
	if cfgVal != "" && !s.ConfigExists {
		cfgVal += " (does not exist)"
	}
	add("config", cfgVal, s.ConfigSource)
	add("profile", s.Profile, s.ProfileSrc)
	src := func(k string) wire.Source { return s.Sources[k] }
	add(wire.KeyBrokers, strings.Join(s.Brokers, ","), src(wire.KeyBrokers))
	add(wire.KeyTLS, strconv.FormatBool(s.TLS.Enabled), src(wire.KeyTLS))
	add(wire.KeyTLSCA, s.TLS.CAFile, src(wire.KeyTLSCA))
	add(wire.KeyTLSCert, s.TLS.CertFile, src(wire.KeyTLSCert))
	add(wire.KeyTLSKey, s.TLS.KeyFile, src(wire.KeyTLSKey))
	add(wire.KeyTLSInsecure, strconv.FormatBool(s.TLS.InsecureSkipVerify), srcOrDefault(src(wire.KeyTLSInsecure)))
	add(wire.KeyTLSServerName, s.TLS.ServerName, src(wire.KeyTLSServerName))
	add(wire.KeySASLMechanism, s.SASL.Mechanism, src(wire.KeySASLMechanism))
	add(wire.KeySASLUser, s.SASL.User, src(wire.KeySASLUser))
	pwEnv := s.SASL.PasswordEnv
	if pwEnv != "" {
		pwEnv = wire.SafeEnvName(pwEnv)
	}
	add(wire.KeySASLPasswordEnv, pwEnv, src(wire.KeySASLPasswordEnv))
	add(wire.KeySASLPasswordFil, s.SASL.PasswordFile, src(wire.KeySASLPasswordFil))
	if s.SASL.Mechanism != "" {
		pwSrc := wire.Source{Kind: "env", Detail: wire.SafeEnvName(s.SASL.PasswordEnv)}
		if s.SASL.PasswordFile != "" {
			pwSrc = wire.Source{Kind: "file", Detail: s.SASL.PasswordFile}
		}
		add("sasl-password", s.PasswordStatus(), pwSrc)
	}
	add(wire.KeyTimeout, s.Timeout.String(), src(wire.KeyTimeout))
	add(wire.KeyMaxVersions, s.MaxVersions, src(wire.KeyMaxVersions))
}

// volumeRows adds the volume settings (from the flags and environment in
// vin and the profile of s), ranked as volume.Resolve ranks them, and the
// volume and generation they resolve to; it returns the problem when they
// do not resolve.
func volumeRows(vin volume.ResolveInput, s *wire.Settings, add func(key, val string, src wire.Source)) string {
	vin.ProfileDataDir, vin.ProfileClusterDir, vin.ProfileKaasVersion = s.DataDir, s.ClusterDir, s.KaasVersion
	dd, ddSrc := givenSetting(vin.DataDirs(), s.Profile)
	add(flagDataDir, dd, ddSrc)
	cd, cdSrc := givenSetting(vin.ClusterDirs(), s.Profile)
	add(flagClusterDir, cd, cdSrc)
	kv, kvSrc := givenSetting(vin.KaasVersions(), s.Profile)
	if kv == "" {
		kv, kvSrc = "auto", wire.Source{Kind: "default"}
	}
	add(flagKaasVersion, kv, kvSrc)
	l, err := volume.Resolve(vin)
	switch {
	case err == nil:
		add("volume", l.ClusterDir, wire.Source{Kind: "resolved", Detail: l.Source})
		add("generation", l.Gen.Label, wire.Source{Kind: l.Gen.Source, Detail: l.Gen.Evidence})
	case err != volume.ErrNoVolume:
		return "volume: " + err.Error()
	}
	return ""
}

// givenSetting is the value of a volume setting from the source that wins
// (volume.First) and that source as config show names it: the flag or
// variable, or the profile by name.
func givenSetting(gs []volume.Given, profile string) (string, wire.Source) {
	p := volume.First(gs)
	switch p.Origin {
	case "":
		return "", wire.Source{}
	case volume.OriginProfile:
		return p.Value, wire.Source{Kind: "profile", Detail: profile}
	}
	return p.Value, wire.Source{Kind: string(p.Origin), Detail: p.From}
}

func srcOrDefault(s wire.Source) wire.Source {
	if s.Kind == "" {
		return wire.Source{Kind: "default"}
	}
	return s
}
