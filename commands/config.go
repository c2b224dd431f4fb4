package commands

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

const configUsage = "manage connection profiles in the kaasctl config file (list, use, show, set-profile, delete, path, check)"

func init() {
	registerSub("config", configUsage, configPathCmd)
	registerSub("config", configUsage, configListCmd)
	registerSub("config", configUsage, configUseCmd)
	registerSub("config", configUsage, configShowCmd)
	registerSub("config", configUsage, configSetProfileCmd)
	registerSub("config", configUsage, configDeleteCmd)
	registerSub("config", configUsage, configCheckCmd)
}

// configFile returns the config path in use, or a usage error when none can
// be located.
func configFile(g *Globals) (string, wire.Source, error) {
	s := g.conn.settings
	if s.ConfigPath == "" {
		return "", wire.Source{}, exit.UsageErrorf("cannot locate the config file: HOME and XDG_CONFIG_HOME are unset; pass --config FILE or set KAASCTL_CONFIG")
	}
	return s.ConfigPath, s.ConfigSource, nil
}

// loadForEdit reads the config for a change; a broken file is never
// overwritten.
func loadForEdit(g *Globals) (string, *wire.Config, bool, error) {
	path, _, err := configFile(g)
	if err != nil {
		return "", nil, false, err
	}
	cfg, exists, err := wire.LoadConfig(path)
	if err != nil {
		return "", nil, false, fmt.Errorf("%v; fix or move the file first (kaasctl does not overwrite a file it cannot read)", err)
	}
	return path, cfg, exists, nil
}

type configPathView struct {
	Path   string `json:"path"`
	Source string `json:"source"`
	Exists bool   `json:"exists"`
}

func configPathCmd() *cli.Command {
	return &cli.Command{
		Name:      "path",
		Usage:     "print the config file kaasctl uses and whether it exists",
		UsageText: "kaasctl config path [--config FILE]\n\nExamples:\n   kaasctl config path\n   KAASCTL_CONFIG=./team.yaml kaasctl config path",
		Action: func(c *cli.Context) error {
			g, err := globals(c)
			if err != nil {
				return err
			}
			path, src, err := configFile(g)
			if err != nil {
				return err
			}
			v := configPathView{Path: path, Source: src.String(), Exists: g.conn.settings.ConfigExists}
			return g.Printer.Print(render.Output{Data: v, Human: func(p *render.Printer) error {
				fmtf(p.Out, "%s\n", path)
				return nil
			}})
		},
	}
}

type profileRow struct {
	Name       string   `json:"name"`
	Current    bool     `json:"current"`
	Active     bool     `json:"active"`
	Brokers    []string `json:"brokers"`
	DataDir    string   `json:"dataDir"`
	ClusterDir string   `json:"clusterDir"`
	TLS        bool     `json:"tls"`
	SASL       string   `json:"sasl"`
}

type configListView struct {
	Path     string       `json:"path"`
	Exists   bool         `json:"exists"`
	Current  string       `json:"current"`
	Active   string       `json:"active"`
	Profiles []profileRow `json:"profiles"`
}

func configListCmd() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Aliases:   []string{"ls"},
		Usage:     "list the profiles; * marks the one in use",
		UsageText: "kaasctl config list [-o json]\n\nExamples:\n   kaasctl config list\n   kaasctl config list -o json | jq -r '.profiles[].name'",
		Action: func(c *cli.Context) error {
			g, err := globals(c)
			if err != nil {
				return err
			}
			path, _, err := configFile(g)
			if err != nil {
				return err
			}
			cfg, exists, err := wire.LoadConfig(path)
			if err != nil {
				return err
			}
			active := ""
			if g.conn.err == nil {
				active = g.conn.settings.Profile
			}
			v := configListView{Path: path, Exists: exists, Current: cfg.Current, Active: active, Profiles: []profileRow{}}
			t := render.NewTable("CURRENT", "NAME", "BROKERS", "DATA-DIR", "CLUSTER-DIR+", "TLS", "SASL")
			for _, name := range cfg.Names() {
				p := cfg.Profiles[name]
				r := profileRow{Name: name, Current: name == cfg.Current, Active: name == active, Brokers: p.Brokers, DataDir: p.DataDir, ClusterDir: p.ClusterDir}
				if r.Brokers == nil {
					r.Brokers = []string{}
				}
				if p.TLS != nil {
					r.TLS = p.TLS.Enabled == nil || *p.TLS.Enabled
				}
				if p.SASL != nil {
					r.SASL = p.SASL.Mechanism
				}
				v.Profiles = append(v.Profiles, r)
				mark := ""
				if r.Active {
					mark = "*"
				}
				t.Add(mark, name, strings.Join(r.Brokers, ","), r.DataDir, r.ClusterDir, yesNo(r.TLS), r.SASL)
			}
			if len(v.Profiles) == 0 && !g.Printer.Format.Machine() {
				g.Notef("no profiles in %s; create one with 'kaasctl config set-profile NAME --brokers HOST:PORT'", path)
			}
			return g.Printer.Print(render.Output{Data: v, Items: v.Profiles, Table: t})
		},
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func configUseCmd() *cli.Command {
	return &cli.Command{
		Name:      "use",
		Usage:     "make NAME the current profile (used when neither --profile nor KAASCTL_PROFILE is given)",
		UsageText: "kaasctl config use NAME\n\nExamples:\n   kaasctl config use prod\n   kaasctl config use staging && kaasctl groups list",
		Action: func(c *cli.Context) error {
			g, name, err := profileNameArg(c, "config use")
			if err != nil {
				return err
			}
			path, cfg, err := loadExistingProfile(g, name)
			if err != nil {
				return err
			}
			cfg.Current = name
			if err := wire.SaveConfig(path, cfg); err != nil {
				return err
			}
			g.Notef("current profile is now %q (%s)", name, path)
			return nil
		},
	}
}

// profileNameArg starts a config subcommand that takes exactly one profile
// NAME: the globals and NAME, or a usage error naming cmd.
func profileNameArg(c *cli.Context, cmd string) (*Globals, string, error) {
	g, err := globals(c)
	if err != nil {
		return nil, "", err
	}
	if c.NArg() != 1 {
		return nil, "", exit.UsageErrorf("%s takes exactly one profile name", cmd)
	}
	return g, c.Args().First(), nil
}

// loadExistingProfile reads the config for a change to profile name, which
// must be in it.
func loadExistingProfile(g *Globals, name string) (string, *wire.Config, error) {
	path, cfg, _, err := loadForEdit(g)
	if err != nil {
		return "", nil, err
	}
	if _, ok := cfg.Profiles[name]; !ok {
		return "", nil, exit.UsageErrorf("no profile %q in %s; known profiles: %s", name, path, knownProfiles(cfg))
	}
	return path, cfg, nil
}

func knownProfiles(cfg *wire.Config) string {
	if len(cfg.Profiles) == 0 {
		return "none"
	}
	return strings.Join(cfg.Names(), ", ")
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

func configShowCmd() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show the resolved connection and volume settings and where each comes from (flag, env, profile, default); secrets masked",
		UsageText: "kaasctl config show [NAME] [--brokers ...]\n\nExamples:\n   kaasctl config show            # the settings in force, with where each comes from\n   kaasctl config show prod -o json",
		Action: func(c *cli.Context) error {
			g, err := globals(c)
			if err != nil {
				return err
			}
			st, err := namedProfile(c, g, "config show")
			if err != nil {
				return err
			}
			v := showView(g, st)
			t := render.NewTable("KEY", "VALUE", "SOURCE")
			for _, r := range v.Settings {
				t.Add(r.Key, r.Value, r.Source)
			}
			err = g.Printer.Print(render.Output{Data: v, Items: v.Settings, Table: t})
			if err != nil {
				return err
			}
			if len(v.Problems) > 0 {
				if !g.Printer.Format.Machine() {
					for _, p := range v.Problems {
						g.Warnf("%s", p)
					}
				}
				return exit.ProblemsFound("configuration problems")
			}
			return nil
		},
	}
}

// namedProfile resolves the connection settings of config show/check: of
// the profile NAME when one is given (flags still win over its values),
// else those in force.
func namedProfile(c *cli.Context, g *Globals, cmd string) (*connState, error) {
	switch c.NArg() {
	case 0:
		return g.conn, nil
	case 1:
	default:
		return nil, exit.UsageErrorf("%s takes at most one profile name", cmd)
	}
	name := c.Args().First()
	if p := c.String(wire.KeyProfile); c.IsSet(wire.KeyProfile) && p != name {
		return nil, exit.UsageErrorf("%s %s --profile %s: two different profiles; name one", cmd, name, p)
	}
	return resolveConnArg(flagInput(c), g.IO, nil, name), nil
}

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
	cfgSrc := s.ConfigSource
	cfgVal := s.ConfigPath
	if cfgVal != "" && !s.ConfigExists {
		cfgVal += " (does not exist)"
	}
	add("config", cfgVal, cfgSrc)
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
	dd, ddSrc := dirSetting(g.vin.DataDirFlag, "--data-dir", g.vin.EnvDataDir, "KAAS_DATA_DIR", s.DataDir, s.Profile)
	add("data-dir", dd, ddSrc)
	cd, cdSrc := dirSetting(g.vin.ClusterDirFlag, "--cluster-dir", g.vin.EnvClusterDir, "KAAS_CLUSTER_DIR", s.ClusterDir, s.Profile)
	add("cluster-dir", cd, cdSrc)
	kv, kvSrc := dirSetting(g.vin.KaasVersionFlag, "--kaas-version", g.vin.EnvKaasVersion, envKaasVersion, s.KaasVersion, s.Profile)
	if kv == "" {
		kv, kvSrc = "auto", wire.Source{Kind: "default"}
	}
	add(flagKaasVersion, kv, kvSrc)
	vin := g.vin
	vin.ProfileDataDir, vin.ProfileClusterDir, vin.ProfileKaasVersion = s.DataDir, s.ClusterDir, s.KaasVersion
	if l, err := volume.Resolve(vin); err == nil {
		add("volume", l.ClusterDir, wire.Source{Kind: "resolved", Detail: l.Source})
		add("generation", l.Gen.Label, wire.Source{Kind: l.Gen.Source, Detail: l.Gen.Evidence})
	} else if err != volume.ErrNoVolume {
		v.Problems = append(v.Problems, "volume: "+err.Error())
	}
	return v
}

// dirSetting picks a volume directory setting the way config show reports
// it: the flag, else the environment variable, else the profile's value,
// with where it came from (no source when none is set).
func dirSetting(flagVal, flagName, envVal, envName, profileVal, profile string) (string, wire.Source) {
	v, src := flagVal, wire.Source{Kind: "flag", Detail: flagName}
	if v == "" {
		v, src = envVal, wire.Source{Kind: "env", Detail: envName}
	}
	if v == "" && profileVal != "" {
		v, src = profileVal, wire.Source{Kind: "profile", Detail: profile}
	}
	if v == "" {
		src = wire.Source{}
	}
	return v, src
}

func srcOrDefault(s wire.Source) wire.Source {
	if s.Kind == "" {
		return wire.Source{Kind: "default"}
	}
	return s
}

type setProfileView struct {
	Path    string        `json:"path"`
	Name    string        `json:"name"`
	Created bool          `json:"created"`
	Current bool          `json:"current"`
	Profile *wire.Profile `json:"profile"`
}

// profileFields are the keys set-profile writes, with the flag names.
var unsetKeys = []string{"brokers", "data-dir", "cluster-dir", "tls", "tls-ca", "tls-cert", "tls-key", "tls-insecure-skip-verify", "tls-server-name",
	"sasl", "sasl-mechanism", "sasl-user", "sasl-password-env", "sasl-password-file", "timeout", "max-versions", "kaas-version"}

func configSetProfileCmd() *cli.Command {
	return &cli.Command{
		Name:  "set-profile",
		Usage: "create or update profile NAME from the flags given (--brokers, --data-dir, --cluster-dir, --kaas-version, --tls-*, --sasl-*, --timeout, --max-versions)",
		UsageText: "kaasctl config set-profile NAME [--brokers HOST:PORT,...] [--data-dir DIR] [--sasl-mechanism M --sasl-user U --sasl-password-env VAR] [--use]\n" +
			"   passwords are never stored: --sasl-password-env names a variable, --sasl-password-file a file\n\n" +
			"Examples:\n" +
			"   kaasctl config set-profile prod --brokers kaas-0.kaas:9092,kaas-1.kaas:9092 --data-dir /mnt/kaas --use\n" +
			"   kaasctl config set-profile prod --sasl-mechanism SCRAM-SHA-512 --sasl-user ops --sasl-password-env KAAS_OPS_PASSWORD",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "use", Usage: "also make it the current profile"},
			&cli.StringSliceFlag{Name: "unset", Usage: "remove settings from the profile: " + strings.Join(unsetKeys, ", ")},
		},
		Action: func(c *cli.Context) error {
			g, name, err := profileNameArg(c, "config set-profile")
			if err != nil {
				return err
			}
			if err := wire.ValidateProfileName(name); err != nil {
				return exit.UsageErrorf("%v", err)
			}
			if c.IsSet(wire.KeyProfile) {
				return exit.UsageErrorf("--profile has no meaning here; the profile is NAME")
			}
			path, cfg, _, err := loadForEdit(g)
			if err != nil {
				return err
			}
			p, existed := cfg.Profiles[name]
			if !existed {
				p = &wire.Profile{}
			}
			cp := *p
			if err := applyProfileFlags(c, &cp); err != nil {
				return err
			}
			if err := cp.Validate(); err != nil {
				return exit.UsageErrorf("profile %q: %v", name, err)
			}
			cfg.Profiles[name] = &cp
			if c.Bool("use") || cfg.Current == "" && len(cfg.Profiles) == 1 {
				cfg.Current = name
			}
			if err := wire.SaveConfig(path, cfg); err != nil {
				return err
			}
			verb := "updated"
			if !existed {
				verb = "created"
			}
			g.Notef("profile %q %s in %s", name, verb, path)
			v := setProfileView{Path: path, Name: name, Created: !existed, Current: cfg.Current == name, Profile: &cp}
			return g.Printer.Print(render.Output{Data: v, Human: func(*render.Printer) error { return nil }})
		},
	}
}

func applyProfileFlags(c *cli.Context, p *wire.Profile) error {
	for _, k := range c.StringSlice("unset") {
		switch k {
		case "brokers":
			p.Brokers = nil
		case "data-dir":
			p.DataDir = ""
		case "cluster-dir":
			p.ClusterDir = ""
		case "tls":
			p.TLS = nil
		case "tls-ca", "tls-cert", "tls-key", "tls-insecure-skip-verify", "tls-server-name":
			if p.TLS != nil {
				t := *p.TLS
				switch k {
				case "tls-ca":
					t.CAFile = ""
				case "tls-cert":
					t.CertFile = ""
				case "tls-key":
					t.KeyFile = ""
				case "tls-insecure-skip-verify":
					t.InsecureSkipVerify = false
				case "tls-server-name":
					t.ServerName = ""
				}
				p.TLS = &t
			}
		case "sasl":
			p.SASL = nil
		case "sasl-mechanism", "sasl-user", "sasl-password-env", "sasl-password-file":
			if p.SASL != nil {
				a := *p.SASL
				switch k {
				case "sasl-mechanism":
					a.Mechanism = ""
				case "sasl-user":
					a.User = ""
				case "sasl-password-env":
					a.PasswordEnv = ""
				case "sasl-password-file":
					a.PasswordFile = ""
				}
				p.SASL = &a
			}
		case "timeout":
			p.Timeout = ""
		case "max-versions":
			p.MaxVersions = ""
		case "kaas-version":
			p.KaasVersion = ""
		default:
			return exit.UsageErrorf("--unset %q: not a profile setting; use one of %s", k, strings.Join(unsetKeys, ", "))
		}
	}
	if c.IsSet(wire.KeyBrokers) {
		p.Brokers = wire.SplitBrokers(strings.Join(c.StringSlice(wire.KeyBrokers), ","))
	}
	if c.IsSet(flagDataDir) {
		p.DataDir = c.String(flagDataDir)
	}
	if c.IsSet(flagClusterDir) {
		p.ClusterDir = c.String(flagClusterDir)
	}
	if c.IsSet(flagKaasVersion) {
		v := strings.TrimSpace(c.String(flagKaasVersion))
		gen, err := volume.ParseKaasVersion(v)
		if err != nil {
			return exit.UsageErrorf("--kaas-version: %v", err)
		}
		if gen == volume.GenUnknown {
			v = "" // auto: detect
		}
		p.KaasVersion = v
	}
	tls := wire.TLSProfile{}
	if p.TLS != nil {
		tls = *p.TLS
	}
	tlsTouched := false
	if c.IsSet(wire.KeyTLS) {
		b := c.Bool(wire.KeyTLS)
		tls.Enabled, tlsTouched = &b, true
	}
	for k, dst := range map[string]*string{wire.KeyTLSCA: &tls.CAFile, wire.KeyTLSCert: &tls.CertFile, wire.KeyTLSKey: &tls.KeyFile, wire.KeyTLSServerName: &tls.ServerName} {
		if c.IsSet(k) {
			*dst, tlsTouched = c.String(k), true
		}
	}
	if c.IsSet(wire.KeyTLSInsecure) {
		tls.InsecureSkipVerify, tlsTouched = c.Bool(wire.KeyTLSInsecure), true
	}
	if tlsTouched {
		p.TLS = &tls
	}
	if p.TLS != nil && *p.TLS == (wire.TLSProfile{}) {
		p.TLS = nil
	}
	sasl := wire.SASLProfile{}
	if p.SASL != nil {
		sasl = *p.SASL
	}
	saslTouched := false
	if c.IsSet(wire.KeySASLMechanism) {
		m, err := wire.NormalizeMechanism(c.String(wire.KeySASLMechanism))
		if err != nil {
			return exit.UsageErrorf("%v", err)
		}
		sasl.Mechanism, saslTouched = m, true
	}
	for k, dst := range map[string]*string{wire.KeySASLUser: &sasl.User, wire.KeySASLPasswordEnv: &sasl.PasswordEnv, wire.KeySASLPasswordFil: &sasl.PasswordFile} {
		if c.IsSet(k) {
			*dst, saslTouched = c.String(k), true
		}
	}
	if c.IsSet(wire.KeySASLPasswordEnv) && !wire.ConventionalEnvName(sasl.PasswordEnv) {
		return exit.UsageErrorf("--sasl-password-env takes the NAME of an environment variable (like KAAS_PASSWORD), never the password; the value given does not look like a variable name and is not saved (or shown)")
	}
	if saslTouched {
		p.SASL = &sasl
	}
	if p.SASL != nil && *p.SASL == (wire.SASLProfile{}) {
		p.SASL = nil
	}
	if c.IsSet(wire.KeyTimeout) {
		if _, err := wire.ParseTimeout(c.String(wire.KeyTimeout)); err != nil {
			return exit.UsageErrorf("--timeout: %v", err)
		}
		p.Timeout = c.String(wire.KeyTimeout)
	}
	if c.IsSet(wire.KeyMaxVersions) {
		if _, err := wire.ParseMaxVersions(c.String(wire.KeyMaxVersions)); err != nil {
			return exit.UsageErrorf("--max-versions: %v", err)
		}
		p.MaxVersions = c.String(wire.KeyMaxVersions)
	}
	return nil
}

func configDeleteCmd() *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Aliases:   []string{"rm"},
		Usage:     "delete profile NAME (clears 'current' when it named it)",
		UsageText: "kaasctl config delete NAME\n\nExamples:\n   kaasctl config delete old-lab",
		Action: func(c *cli.Context) error {
			g, name, err := profileNameArg(c, "config delete")
			if err != nil {
				return err
			}
			path, cfg, err := loadExistingProfile(g, name)
			if err != nil {
				return err
			}
			delete(cfg.Profiles, name)
			if cfg.Current == name {
				cfg.Current = ""
				g.Notef("%q was the current profile; none is current now ('kaasctl config use NAME')", name)
			}
			if err := wire.SaveConfig(path, cfg); err != nil {
				return err
			}
			g.Notef("profile %q deleted from %s", name, path)
			return nil
		},
	}
}

type seedCheck struct {
	Broker string `json:"broker"`
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
	Stage  string `json:"stage,omitempty"` // the connection stage that failed first
	Fix    string `json:"fix,omitempty"`
}

type configCheckView struct {
	Profile     string            `json:"profile"`
	Seeds       []seedCheck       `json:"seeds"`
	Brokers     []wire.Broker     `json:"brokers"`
	MaxVersions string            `json:"maxVersions"`
	Caps        []wire.VersionCap `json:"caps"`
	TLS         bool              `json:"tls"`
	SASL        string            `json:"sasl"`
}

func configCheckCmd() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "connect with the resolved settings: reach every seed broker, list the cluster's brokers, show the request-version cap",
		UsageText: "kaasctl config check [NAME] [--brokers HOST:PORT,...] [--profile NAME]\n\nExamples:\n   kaasctl config check prod     # profile prod, whichever is current\n   kaasctl config check --profile prod\n   kaasctl config check -b kaas-0:9092,kaas-1:9092 --tls-ca ca.pem",
		ArgsUsage: "[NAME]",
		Action: func(c *cli.Context) error {
			g, err := globals(c)
			if err != nil {
				return err
			}
			st, err := namedProfile(c, g, "config check")
			if err != nil {
				return err
			}
			if st.fileErr != nil && st.explicit {
				return exit.UsageErrorf("%v", st.fileErr)
			}
			if st.err != nil {
				return exit.UsageErrorf("%v", st.err)
			}
			s := st.settings
			if len(s.Brokers) == 0 {
				return exit.UsageErrorf("%v", wire.ErrNoBrokers)
			}
			cl, err := wire.NewClient(s)
			if err != nil {
				return err
			}
			defer cl.Close()
			ok, bad, err := cl.Check(c.Context)
			if err != nil {
				return err
			}
			v := configCheckView{Profile: s.Profile, Seeds: []seedCheck{}, MaxVersions: s.MaxVersions, Caps: wire.GroupAPICaps(cl.Versions), TLS: s.TLS.Enabled, SASL: s.SASL.Mechanism}
			for _, a := range ok {
				v.Seeds = append(v.Seeds, seedCheck{Broker: a, OK: true})
			}
			for _, b := range bad {
				v.Seeds = append(v.Seeds, seedCheck{Broker: b.Broker, Error: b.Error(), Stage: string(b.Stage), Fix: b.Fix})
			}
			if v.Brokers, err = cl.Brokers(c.Context); err != nil {
				return err
			}
			t := render.NewTable("NODE", "BROKER", "STATUS")
			for _, b := range v.Brokers {
				t.Add(strconv.Itoa(int(b.NodeID)), b.Addr(), "in cluster metadata")
			}
			for _, sc := range v.Seeds {
				st := "seed answered"
				if !sc.OK {
					st = sc.Error
				}
				t.Add("seed", sc.Broker, st)
			}
			if err := g.Printer.Print(render.Output{Data: v, Items: v.Seeds, Table: t}); err != nil {
				return err
			}
			if len(bad) > 0 {
				return exit.ProblemsFound("%d of %d seed brokers did not answer", len(bad), len(v.Seeds))
			}
			return nil
		},
	}
}
