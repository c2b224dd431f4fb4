package views

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// SettingRow is one resolved setting with where it came from.
type SettingRow struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// ConfigShowView is the machine document of 'config show'.
type ConfigShowView struct {
	Config   string       `json:"config"`
	Profile  string       `json:"profile"`
	Settings []SettingRow `json:"settings"`
	Problems []string     `json:"problems"`
}

// VolumeKeys are the names config show gives the volume settings (the
// flags' names).
type VolumeKeys struct{ DataDir, ClusterDir, KaasVersion string }

// NewConfigShow is every setting of s with where it came from (the volume
// settings from the flags and environment in vin and the profile of s),
// and the problems found resolving them (problems: those found before).
func NewConfigShow(s *wire.Settings, vin volume.ResolveInput, keys VolumeKeys, problems []string) ConfigShowView {
	v := ConfigShowView{Config: s.ConfigPath, Profile: s.Profile, Settings: []SettingRow{}, Problems: append([]string{}, problems...)}
	add := func(key, val string, src wire.Source) {
		v.Settings = append(v.Settings, SettingRow{Key: key, Value: val, Source: src.String()})
	}
	connRows(s, add)
	if p := volumeRows(vin, s, keys, add); p != "" {
		v.Problems = append(v.Problems, p)
	}
	return v
}

// ConfigShowOutput is the settings, a row each.
func ConfigShowOutput(v *ConfigShowView) render.Output {
	t := render.NewTable("KEY", "VALUE", "SOURCE")
	for _, r := range v.Settings {
		t.Add(r.Key, r.Value, r.Source)
	}
	return render.Output{Data: *v, Items: v.Settings, Table: t}
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
func volumeRows(vin volume.ResolveInput, s *wire.Settings, keys VolumeKeys, add func(key, val string, src wire.Source)) string {
	vin.ProfileDataDir, vin.ProfileClusterDir, vin.ProfileKaasVersion = s.DataDir, s.ClusterDir, s.KaasVersion
	dd, ddSrc := givenSetting(vin.DataDirs(), s.Profile)
	add(keys.DataDir, dd, ddSrc)
	cd, cdSrc := givenSetting(vin.ClusterDirs(), s.Profile)
	add(keys.ClusterDir, cd, cdSrc)
	kv, kvSrc := givenSetting(vin.KaasVersions(), s.Profile)
	if kv == "" {
		kv, kvSrc = "auto", wire.Source{Kind: "default"}
	}
	add(keys.KaasVersion, kv, kvSrc)
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

// ConfigPathView is the machine document of 'config path'.
type ConfigPathView struct {
	Path   string `json:"path"`
	Source string `json:"source"`
	Exists bool   `json:"exists"`
}

// ConfigPathOutput is the path, alone on its line for people.
func ConfigPathOutput(v ConfigPathView) render.Output {
	return render.Output{Data: v, Human: func(p *render.Printer) error {
		fmt.Fprintf(p.Out, "%s\n", v.Path)
		return nil
	}}
}

// ProfileRow is one profile of the config file.
type ProfileRow struct {
	Name       string   `json:"name"`
	Current    bool     `json:"current"`
	Active     bool     `json:"active"`
	Brokers    []string `json:"brokers"`
	DataDir    string   `json:"dataDir"`
	ClusterDir string   `json:"clusterDir"`
	TLS        bool     `json:"tls"`
	SASL       string   `json:"sasl"`
}

// ConfigListView is the machine document of 'config list'.
type ConfigListView struct {
	Path     string       `json:"path"`
	Exists   bool         `json:"exists"`
	Current  string       `json:"current"`
	Active   string       `json:"active"`
	Profiles []ProfileRow `json:"profiles"`
}

// NewConfigList is the profiles of cfg (at path), by name; active is the
// profile in use.
func NewConfigList(path string, exists bool, cfg *wire.Config, active string) ConfigListView {
	v := ConfigListView{Path: path, Exists: exists, Current: cfg.Current, Active: active, Profiles: []ProfileRow{}}
	for _, name := range cfg.Names() {
		p := cfg.Profiles[name]
		r := ProfileRow{Name: name, Current: name == cfg.Current, Active: name == active, Brokers: p.Brokers, DataDir: p.DataDir, ClusterDir: p.ClusterDir}
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
	}
	return v
}

// ConfigListOutput is the profiles, a row each.
func ConfigListOutput(v *ConfigListView) render.Output {
	t := render.NewTable("CURRENT", "NAME", "BROKERS", "DATA-DIR", "CLUSTER-DIR+", "TLS", "SASL")
	for _, r := range v.Profiles {
		mark := ""
		if r.Active {
			mark = "*"
		}
		t.Add(mark, r.Name, strings.Join(r.Brokers, ","), r.DataDir, r.ClusterDir, yesNo(r.TLS), r.SASL)
	}
	return render.Output{Data: *v, Items: v.Profiles, Table: t}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// SetProfileView is the machine document of 'config set-profile'.
type SetProfileView struct {
	Path    string        `json:"path"`
	Name    string        `json:"name"`
	Created bool          `json:"created"`
	Current bool          `json:"current"`
	Profile *wire.Profile `json:"profile"`
}

// SeedCheck is one seed broker's answer to config check.
type SeedCheck struct {
	Broker string `json:"broker"`
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
	Stage  string `json:"stage,omitempty"` // the connection stage that failed first
	Fix    string `json:"fix,omitempty"`
}

// ConfigCheckView is the machine document of 'config check'.
type ConfigCheckView struct {
	Profile     string            `json:"profile"`
	Seeds       []SeedCheck       `json:"seeds"`
	Brokers     []wire.Broker     `json:"brokers"`
	MaxVersions string            `json:"maxVersions"`
	Caps        []wire.VersionCap `json:"caps"`
	TLS         bool              `json:"tls"`
	SASL        string            `json:"sasl"`
}

// NewConfigCheck is 'config check's answer: the settings checked, each
// seed with its answer, and the cluster's brokers.
func NewConfigCheck(s *wire.Settings, cc *wire.ConnCheck) ConfigCheckView {
	v := ConfigCheckView{Profile: s.Profile, Seeds: []SeedCheck{}, Brokers: cc.Brokers, MaxVersions: s.MaxVersions, Caps: cc.Caps, TLS: s.TLS.Enabled, SASL: s.SASL.Mechanism}
	for _, a := range cc.Answered {
		v.Seeds = append(v.Seeds, SeedCheck{Broker: a, OK: true})
	}
	for _, b := range cc.Failed {
		v.Seeds = append(v.Seeds, SeedCheck{Broker: b.Broker, Error: b.Error(), Stage: string(b.Stage), Fix: b.Fix})
	}
	return v
}

// ConfigCheckOutput is the cluster's brokers, then each seed.
func ConfigCheckOutput(v *ConfigCheckView) render.Output {
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
	return render.Output{Data: *v, Items: v.Seeds, Table: t}
}
