package wire

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The profile settings that are not connection settings: the volume a
// profile names. Each is also the flag name.
const (
	KeyDataDir     = "data-dir"
	KeyClusterDir  = "cluster-dir"
	KeyKaasVersion = "kaas-version"
	// KeySASL names the whole SASL block of a profile (--unset sasl).
	KeySASL = "sasl"
)

// profileField is one profile setting by key: how to read it as the string
// a flag or variable gives, and how to set it from one ("" clears it).
type profileField struct {
	key string
	get func(*Profile) string
	set func(*Profile, string)
}

// tlsOf returns a copy of p's TLS block for a change (an empty one when
// there is none), so that a profile sharing the block is never changed.
func tlsOf(p *Profile) *TLSProfile {
	t := TLSProfile{}
	if p.TLS != nil {
		t = *p.TLS
	}
	p.TLS = &t
	return &t
}

// saslOf is tlsOf for the SASL block.
func saslOf(p *Profile) *SASLProfile {
	a := SASLProfile{}
	if p.SASL != nil {
		a = *p.SASL
	}
	p.SASL = &a
	return &a
}

func tlsGet(f func(*TLSProfile) string) func(*Profile) string {
	return func(p *Profile) string {
		if p.TLS == nil {
			return ""
		}
		return f(p.TLS)
	}
}

func saslGet(f func(*SASLProfile) string) func(*Profile) string {
	return func(p *Profile) string {
		if p.SASL == nil {
			return ""
		}
		return f(p.SASL)
	}
}

// profileFields maps every profile setting to its field, in the order
// ProfileKeys lists them. It is the one place that knows which key is
// which field: Resolve reads profiles through it and ProfileEdit writes
// them through it.
var profileFields = []profileField{
	{KeyBrokers, func(p *Profile) string { return strings.Join(p.Brokers, ",") }, func(p *Profile, v string) { p.Brokers = SplitBrokers(v) }},
	{KeyDataDir, func(p *Profile) string { return p.DataDir }, func(p *Profile, v string) { p.DataDir = v }},
	{KeyClusterDir, func(p *Profile) string { return p.ClusterDir }, func(p *Profile, v string) { p.ClusterDir = v }},
	{KeyTLS, tlsGet(func(t *TLSProfile) string {
		if t.Enabled == nil {
			return ""
		}
		return strconv.FormatBool(*t.Enabled)
	}), func(p *Profile, v string) {
		t := tlsOf(p)
		t.Enabled = nil
		if b, err := strconv.ParseBool(v); err == nil {
			t.Enabled = &b
		}
	}},
	{KeyTLSCA, tlsGet(func(t *TLSProfile) string { return t.CAFile }), func(p *Profile, v string) { tlsOf(p).CAFile = v }},
	{KeyTLSCert, tlsGet(func(t *TLSProfile) string { return t.CertFile }), func(p *Profile, v string) { tlsOf(p).CertFile = v }},
	{KeyTLSKey, tlsGet(func(t *TLSProfile) string { return t.KeyFile }), func(p *Profile, v string) { tlsOf(p).KeyFile = v }},
	{KeyTLSInsecure, tlsGet(func(t *TLSProfile) string {
		if t.InsecureSkipVerify {
			return "true"
		}
		return ""
	}), func(p *Profile, v string) { b, _ := strconv.ParseBool(v); tlsOf(p).InsecureSkipVerify = b }},
	{KeyTLSServerName, tlsGet(func(t *TLSProfile) string { return t.ServerName }), func(p *Profile, v string) { tlsOf(p).ServerName = v }},
	{KeySASL, func(*Profile) string { return "" }, func(p *Profile, v string) { p.SASL = nil }},
	{KeySASLMechanism, saslGet(func(a *SASLProfile) string { return a.Mechanism }), func(p *Profile, v string) { saslOf(p).Mechanism = v }},
	{KeySASLUser, saslGet(func(a *SASLProfile) string { return a.User }), func(p *Profile, v string) { saslOf(p).User = v }},
	{KeySASLPasswordEnv, saslGet(func(a *SASLProfile) string { return a.PasswordEnv }), func(p *Profile, v string) { saslOf(p).PasswordEnv = v }},
	{KeySASLPasswordFil, saslGet(func(a *SASLProfile) string { return a.PasswordFile }), func(p *Profile, v string) { saslOf(p).PasswordFile = v }},
	{KeyTimeout, func(p *Profile) string { return p.Timeout }, func(p *Profile, v string) { p.Timeout = v }},
	{KeyMaxVersions, func(p *Profile) string { return p.MaxVersions }, func(p *Profile, v string) { p.MaxVersions = v }},
	{KeyKaasVersion, func(p *Profile) string { return p.KaasVersion }, func(p *Profile, v string) { p.KaasVersion = v }},
}

// ProfileKeys are the settings a profile holds, by flag name, as
// 'config set-profile --unset' takes them: "tls" and "sasl" remove the
// whole block.
var ProfileKeys = func() []string {
	out := make([]string, len(profileFields))
	for i, f := range profileFields {
		out[i] = f.key
	}
	return out
}()

func fieldOf(key string) (profileField, bool) {
	for _, f := range profileFields {
		if f.key == key {
			return f, true
		}
	}
	return profileField{}, false
}

// ProfileEdit is a change to one profile: settings removed, then settings
// set, each by its key (the flag name).
type ProfileEdit struct {
	// Unset lists the keys to remove, in the order given.
	Unset []string
	// Set holds the values given, by key: bools as "true" or "false",
	// brokers comma separated, the kaas version already checked by the
	// caller ("" for auto).
	Set map[string]string
}

// Check refuses an edit that names an unknown setting or gives a value
// that does not parse; the error names the flag.
func (e ProfileEdit) Check() error {
	for _, k := range e.Unset {
		if _, ok := fieldOf(k); !ok {
			return fmt.Errorf("--unset %q: not a profile setting; use one of %s", k, strings.Join(ProfileKeys, ", "))
		}
	}
	for k := range e.Set {
		if f, ok := fieldOf(k); !ok || f.key == KeySASL {
			return fmt.Errorf("--%s: not a profile setting", k)
		}
	}
	for _, k := range []string{KeyTLS, KeyTLSInsecure} {
		if v, ok := e.Set[k]; ok {
			if _, err := strconv.ParseBool(v); err != nil {
				return fmt.Errorf("--%s: %q is not true or false", k, v)
			}
		}
	}
	if v, ok := e.Set[KeySASLMechanism]; ok {
		if _, err := NormalizeMechanism(v); err != nil {
			return err
		}
	}
	if v, ok := e.Set[KeySASLPasswordEnv]; ok && !ConventionalEnvName(v) {
		return errors.New("--sasl-password-env takes the NAME of an environment variable (like KAAS_PASSWORD), never the password; the value given does not look like a variable name and is not saved (or shown)")
	}
	if v, ok := e.Set[KeyTimeout]; ok {
		if _, err := ParseTimeout(v); err != nil {
			return fmt.Errorf("--timeout: %v", err)
		}
	}
	if v, ok := e.Set[KeyMaxVersions]; ok {
		if _, err := ParseMaxVersions(v); err != nil {
			return fmt.Errorf("--max-versions: %v", err)
		}
	}
	return nil
}

// Apply returns p with the edit applied; p and the blocks it points to are
// not changed. The SASL mechanism is stored in its canonical spelling, and
// a TLS or SASL block left with nothing set is removed.
func (e ProfileEdit) Apply(p Profile) (Profile, error) {
	if err := e.Check(); err != nil {
		return p, err
	}
	for _, k := range e.Unset {
		f, _ := fieldOf(k)
		switch {
		case k == KeyTLS:
			p.TLS = nil
		case strings.HasPrefix(k, "tls-") && p.TLS == nil, strings.HasPrefix(k, "sasl-") && p.SASL == nil:
			// nothing to remove
		default:
			f.set(&p, "")
		}
	}
	for _, f := range profileFields { // in a fixed order
		v, ok := e.Set[f.key]
		if !ok {
			continue
		}
		if f.key == KeySASLMechanism {
			v, _ = NormalizeMechanism(v)
		}
		f.set(&p, v)
	}
	if p.TLS != nil && *p.TLS == (TLSProfile{}) {
		p.TLS = nil
	}
	if p.SASL != nil && *p.SASL == (SASLProfile{}) {
		p.SASL = nil
	}
	return p, nil
}

// SetProfile applies e to profile name (created when cfg has none of that
// name), checks the result, and makes it current when use is set or when
// it is the only profile and none is current. It returns the profile as
// saved and whether it was created.
func (cfg *Config) SetProfile(name string, e ProfileEdit, use bool) (*Profile, bool, error) {
	if err := ValidateProfileName(name); err != nil {
		return nil, false, err
	}
	old, existed := cfg.Profiles[name]
	if !existed {
		old = &Profile{}
	}
	p, err := e.Apply(*old)
	if err != nil {
		return nil, false, err
	}
	if err := p.Validate(); err != nil {
		return nil, false, fmt.Errorf("profile %q: %v", name, err)
	}
	if cfg.Profiles == nil {
		cfg.Profiles = map[string]*Profile{}
	}
	cfg.Profiles[name] = &p
	if use || cfg.Current == "" && len(cfg.Profiles) == 1 {
		cfg.Current = name
	}
	return &p, !existed, nil
}

// DeleteProfile removes profile name, clearing Current when it named it
// (reported by wasCurrent). A profile cfg does not hold is an error
// listing the known ones.
func (cfg *Config) DeleteProfile(name string) (wasCurrent bool, err error) {
	if err := cfg.HasProfile(name); err != nil {
		return false, err
	}
	delete(cfg.Profiles, name)
	if cfg.Current == name {
		cfg.Current = ""
		return true, nil
	}
	return false, nil
}

// UseProfile makes name the current profile; a profile cfg does not hold
// is an error listing the known ones.
func (cfg *Config) UseProfile(name string) error {
	if err := cfg.HasProfile(name); err != nil {
		return err
	}
	cfg.Current = name
	return nil
}

// HasProfile returns nil when cfg holds profile name, else an error naming
// the known profiles.
func (cfg *Config) HasProfile(name string) error {
	if _, ok := cfg.Profiles[name]; ok {
		return nil
	}
	known := "none"
	if len(cfg.Profiles) > 0 {
		known = strings.Join(cfg.Names(), ", ")
	}
	return &UnknownProfileError{Name: name, Known: known}
}

// UnknownProfileError is a profile named for a change that the config
// does not hold.
type UnknownProfileError struct {
	Name  string
	Known string // the known profiles, comma separated, or "none"
}

func (e *UnknownProfileError) Error() string {
	return fmt.Sprintf("no profile %q; known profiles: %s", e.Name, e.Known)
}

// ConnCheck is what 'config check' learns from the brokers: which seeds
// answered, which did not and why, the brokers in the cluster's metadata,
// and the request-version caps in force.
type ConnCheck struct {
	Answered []string
	Failed   []*BrokerError
	Brokers  []Broker
	Caps     []VersionCap
}

// CheckConnection connects with s, reaches every seed broker and lists the
// cluster's brokers. It fails when no seed answers (with every seed's
// reason) or the metadata request fails.
func CheckConnection(ctx context.Context, s *Settings) (*ConnCheck, error) {
	if len(s.Brokers) == 0 {
		return nil, ErrNoBrokers
	}
	cl, err := NewClient(s)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ok, bad, err := cl.Check(ctx)
	if err != nil {
		return nil, err
	}
	cc := &ConnCheck{Answered: ok, Failed: bad, Caps: GroupAPICaps(cl.Versions)}
	if cc.Brokers, err = cl.Brokers(ctx); err != nil {
		return nil, err
	}
	return cc, nil
}
