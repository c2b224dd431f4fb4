package wire

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/when"
)

// DefaultTimeout bounds every call when nothing else is configured.
const DefaultTimeout = 10 * time.Second

// DefaultPasswordEnv is where the SASL password is read from when neither a
// password env name nor a password file is configured.
const DefaultPasswordEnv = "KAASCTL_SASL_PASSWORD"

// Setting keys. Each is also the flag name, and "KAASCTL_" + the key in
// upper case with '-' → '_' is its environment variable.
const (
	KeyConfig          = "config"
	KeyProfile         = "profile"
	KeyBrokers         = "brokers"
	KeyTLS             = "tls"
	KeyTLSCA           = "tls-ca"
	KeyTLSCert         = "tls-cert"
	KeyTLSKey          = "tls-key"
	KeyTLSInsecure     = "tls-insecure-skip-verify"
	KeyTLSServerName   = "tls-server-name"
	KeySASLMechanism   = "sasl-mechanism"
	KeySASLUser        = "sasl-user"
	KeySASLPasswordEnv = "sasl-password-env"
	KeySASLPasswordFil = "sasl-password-file"
	KeyTimeout         = "timeout"
	KeyMaxVersions     = "max-versions"
)

// ConnectionKeys lists the settings resolved from flag > env > profile >
// default, in display order.
var ConnectionKeys = []string{
	KeyBrokers, KeyTLS, KeyTLSCA, KeyTLSCert, KeyTLSKey, KeyTLSInsecure, KeyTLSServerName,
	KeySASLMechanism, KeySASLUser, KeySASLPasswordEnv, KeySASLPasswordFil, KeyTimeout, KeyMaxVersions,
}

// EnvName is the environment variable of a setting key.
func EnvName(key string) string {
	return "KAASCTL_" + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
}

// Input is what the user gave for one run.
type Input struct {
	// Flags holds the flags given on the command line, by key (only those
	// actually set). Bool flags are "true" or "false".
	Flags map[string]string
	// Getenv reads the environment.
	Getenv func(string) string
	// CommandConfig is a Kafka client properties file (--command-config):
	// its settings rank just below the flags.
	CommandConfig *CommandConfig
	// ProfileArg is a profile named as a command's argument (config show
	// NAME, config check NAME): it ranks as the --profile flag does and is
	// reported as coming from the argument.
	ProfileArg string
}

func (in Input) getenv(k string) string {
	if in.Getenv == nil {
		return ""
	}
	return in.Getenv(k)
}

// Source says where a resolved value came from.
type Source struct {
	Kind   string `json:"kind"`             // flag, env, profile, default, "" (unset)
	Detail string `json:"detail,omitempty"` // --brokers, KAASCTL_BROKERS, profile name, file path
}

func (s Source) String() string {
	switch s.Kind {
	case "":
		return "-"
	case "default":
		return "default"
	}
	if s.Detail == "" {
		return s.Kind
	}
	return s.Kind + " " + s.Detail
}

// TLSSettings is the resolved TLS configuration.
type TLSSettings struct {
	Enabled            bool   `json:"enabled"`
	CAFile             string `json:"caFile,omitempty"`
	CertFile           string `json:"certFile,omitempty"`
	KeyFile            string `json:"keyFile,omitempty"`
	InsecureSkipVerify bool   `json:"insecureSkipVerify,omitempty"`
	ServerName         string `json:"serverName,omitempty"`
}

// SASLSettings is the resolved SASL configuration. It never holds the
// password; Password reads it when the client is built.
type SASLSettings struct {
	Mechanism    string `json:"mechanism,omitempty"`
	User         string `json:"user,omitempty"`
	PasswordEnv  string `json:"passwordEnv,omitempty"`
	PasswordFile string `json:"passwordFile,omitempty"`
}

// Settings is the resolved connection for one run.
type Settings struct {
	ConfigPath   string
	ConfigSource Source
	ConfigExists bool
	Profile      string
	ProfileSrc   Source

	Brokers     []string
	TLS         TLSSettings
	SASL        SASLSettings
	Timeout     time.Duration
	MaxVersions string

	// DataDir and ClusterDir come from the profile only; flags and
	// KAAS_* variables are resolved by the volume package.
	DataDir, ClusterDir string
	// KaasVersion is the profile's kaasVersion pin (flags and
	// KAASCTL_KAAS_VERSION are resolved by the commands).
	KaasVersion string

	// SoftwareVersion is the client software version sent in ApiVersions
	// (kaasctl's version; "dev" when empty).
	SoftwareVersion string

	// password is an inline SASL password (sasl.jaas.config of a
	// --command-config file); never printed.
	password string

	// Sources says where each key's value came from.
	Sources map[string]Source

	getenv func(string) string
}

// Resolve applies flag > environment > profile > default for every setting.
// cfg is the loaded config (nil when there is none). It returns a usage-level
// error for values that cannot be parsed, naming where they came from.
func Resolve(in Input, cfg *Config, configPath string, configSrc Source, exists bool) (*Settings, error) {
	s := &Settings{ConfigPath: configPath, ConfigSource: configSrc, ConfigExists: exists, Sources: map[string]Source{}, getenv: in.Getenv}
	if s.getenv == nil {
		s.getenv = func(string) string { return "" }
	}
	prof, err := s.pickProfile(in, cfg)
	if err != nil {
		return nil, err
	}
	r := &resolver{in: in, pv: profileValues(prof), s: s}
	if err := r.brokers(); err != nil {
		return nil, err
	}
	r.plainSettings()
	for _, step := range []func() error{r.tls, r.sasl, r.timeout, r.maxVersions} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	s.DataDir, s.ClusterDir, s.KaasVersion = prof.DataDir, prof.ClusterDir, prof.KaasVersion
	return s, nil
}

// pickProfile decides which profile the run uses (a command's argument >
// --profile > KAASCTL_PROFILE > the config's current one) and returns it:
// an empty one when none is named, an error naming the known profiles when
// the named one is not in the config.
func (s *Settings) pickProfile(in Input, cfg *Config) (*Profile, error) {
	switch {
	case in.ProfileArg != "":
		s.Profile, s.ProfileSrc = in.ProfileArg, Source{"argument", ""}
	case in.Flags[KeyProfile] != "":
		s.Profile, s.ProfileSrc = in.Flags[KeyProfile], Source{"flag", "--profile"}
	case in.getenv(EnvName(KeyProfile)) != "":
		s.Profile, s.ProfileSrc = in.getenv(EnvName(KeyProfile)), Source{"env", EnvName(KeyProfile)}
	case cfg != nil && cfg.Current != "":
		s.Profile, s.ProfileSrc = cfg.Current, Source{"config", "current"}
	}
	if s.Profile == "" {
		return &Profile{}, nil
	}
	if cfg != nil && cfg.Profiles[s.Profile] != nil {
		return cfg.Profiles[s.Profile], nil
	}
	where := s.ConfigPath
	if where == "" {
		where = "(no config file: set HOME or pass --config)"
	} else if !s.ConfigExists {
		where += " (file does not exist)"
	}
	known := "none"
	if cfg != nil && len(cfg.Profiles) > 0 {
		known = strings.Join(cfg.Names(), ", ")
	}
	return nil, fmt.Errorf("profile %q (from %s) is not defined in %s; known profiles: %s", s.Profile, s.ProfileSrc, where, known)
}

// resolver ranks each setting's sources for Resolve and fills s, one
// group of settings per method.
type resolver struct {
	in Input
	pv map[string]string // the profile's values by key
	s  *Settings
}

// val is key's value from the first source that has one: the flag, the
// --command-config file, the environment, the profile; unset otherwise.
func (r *resolver) val(key string) (string, Source) {
	if v, ok := r.in.Flags[key]; ok {
		return v, Source{"flag", "--" + key}
	}
	if cc := r.in.CommandConfig; cc != nil {
		if v, ok := cc.Settings[key]; ok {
			return v, Source{"command-config", cc.Path}
		}
	}
	if v := r.in.getenv(EnvName(key)); v != "" {
		return v, Source{"env", EnvName(key)}
	}
	if v, ok := r.pv[key]; ok && v != "" {
		return v, Source{"profile", r.s.Profile}
	}
	return "", Source{}
}

// boolVal is val read as a boolean (false when unset).
func (r *resolver) boolVal(key string) (bool, Source, error) {
	v, src := r.val(key)
	if src.Kind == "" {
		return false, src, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, src, fmt.Errorf("%s: %q is not true or false (from %s)", key, v, src)
	}
	return b, src, nil
}

// brokers resolves the seed brokers, each checked to be host:port.
func (r *resolver) brokers() error {
	v, src := r.val(KeyBrokers)
	r.s.Brokers, r.s.Sources[KeyBrokers] = SplitBrokers(v), src
	for _, b := range r.s.Brokers {
		if err := ValidateBroker(b); err != nil {
			return fmt.Errorf("brokers (from %s): %v", src, err)
		}
	}
	return nil
}

// plainSettings resolves the settings taken as they are: TLS files and server
// name, SASL user and where its password is.
func (r *resolver) plainSettings() {
	s := r.s
	strKeys := map[string]*string{
		KeyTLSCA: &s.TLS.CAFile, KeyTLSCert: &s.TLS.CertFile, KeyTLSKey: &s.TLS.KeyFile, KeyTLSServerName: &s.TLS.ServerName,
		KeySASLUser: &s.SASL.User, KeySASLPasswordEnv: &s.SASL.PasswordEnv, KeySASLPasswordFil: &s.SASL.PasswordFile,
	}
	for k, p := range strKeys {
		*p, s.Sources[k] = r.val(k)
	}
}

// tls resolves whether TLS is on: as set, else implied by any other TLS
// setting; a client certificate needs its key and the key its certificate.
func (r *resolver) tls() error {
	s := r.s
	var err error
	if s.TLS.InsecureSkipVerify, s.Sources[KeyTLSInsecure], err = r.boolVal(KeyTLSInsecure); err != nil {
		return err
	}
	tlsOn, tlsSrc, err := r.boolVal(KeyTLS)
	if err != nil {
		return err
	}
	if tlsSrc.Kind != "" {
		s.TLS.Enabled, s.Sources[KeyTLS] = tlsOn, tlsSrc
	} else if s.TLS.CAFile != "" || s.TLS.CertFile != "" || s.TLS.KeyFile != "" || s.TLS.InsecureSkipVerify || s.TLS.ServerName != "" {
		s.TLS.Enabled, s.Sources[KeyTLS] = true, Source{"implied", "by the other tls settings"}
	} else {
		s.Sources[KeyTLS] = Source{"default", ""}
	}
	if (s.TLS.CertFile == "") != (s.TLS.KeyFile == "") {
		return errors.New("TLS client authentication needs both --tls-cert and --tls-key (or tls.certFile and tls.keyFile)")
	}
	return nil
}

// sasl resolves the SASL mechanism; with one set, it needs a user and
// exactly one place for the password (saslPassword); without one, a user
// is an error.
func (r *resolver) sasl() error {
	s := r.s
	mech, msrc := r.val(KeySASLMechanism)
	s.Sources[KeySASLMechanism] = msrc
	if mech == "" {
		if s.SASL.User != "" {
			return fmt.Errorf("--sasl-user (from %s) needs --sasl-mechanism PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", s.Sources[KeySASLUser])
		}
		return nil
	}
	m, err := NormalizeMechanism(mech)
	if err != nil {
		return fmt.Errorf("sasl-mechanism (from %s): %v", msrc, err)
	}
	s.SASL.Mechanism = m
	if s.SASL.User == "" {
		return fmt.Errorf("SASL %s needs a user: pass --sasl-user or set %s", m, EnvName(KeySASLUser))
	}
	return r.saslPassword()
}

// saslPassword decides where the SASL password is read from: of a password
// env and a password file, the higher-ranked one (both at one rank is an
// error); the --command-config file's inline password when its user is the
// one in use and no flag names another place; else DefaultPasswordEnv.
func (r *resolver) saslPassword() error {
	s := r.s
	if s.SASL.PasswordEnv != "" && s.SASL.PasswordFile != "" {
		es, fs := s.Sources[KeySASLPasswordEnv], s.Sources[KeySASLPasswordFil]
		switch {
		case rank(es) < rank(fs):
			s.SASL.PasswordFile, s.Sources[KeySASLPasswordFil] = "", Source{}
		case rank(fs) < rank(es):
			s.SASL.PasswordEnv, s.Sources[KeySASLPasswordEnv] = "", Source{}
		default:
			return fmt.Errorf("give either a SASL password env (%s) or a password file (%s), not both", es, fs)
		}
	}
	cc := r.in.CommandConfig
	if cc != nil && cc.password != "" && s.Sources[KeySASLUser].Kind == "command-config" &&
		s.Sources[KeySASLPasswordEnv].Kind != "flag" && s.Sources[KeySASLPasswordFil].Kind != "flag" {
		// The password of the file's sasl.jaas.config goes with its user.
		s.password = cc.password
		s.SASL.PasswordEnv, s.SASL.PasswordFile = "", ""
		s.Sources[KeySASLPasswordEnv], s.Sources[KeySASLPasswordFil] = Source{"command-config", cc.Path}, Source{}
	} else if s.SASL.PasswordEnv == "" && s.SASL.PasswordFile == "" {
		s.SASL.PasswordEnv, s.Sources[KeySASLPasswordEnv] = DefaultPasswordEnv, Source{"default", ""}
	}
	if s.SASL.PasswordEnv != "" && !validEnvName(s.SASL.PasswordEnv) {
		return fmt.Errorf("sasl-password-env (from %s) is not an environment variable name: it names the variable holding the password, never the password itself (value not shown)", s.Sources[KeySASLPasswordEnv])
	}
	return nil
}

// timeout resolves the per-call timeout (DefaultTimeout when unset).
func (r *resolver) timeout() error {
	v, src := r.val(KeyTimeout)
	if src.Kind == "" {
		r.s.Timeout, r.s.Sources[KeyTimeout] = DefaultTimeout, Source{"default", ""}
		return nil
	}
	d, err := ParseTimeout(v)
	if err != nil {
		return fmt.Errorf("timeout (from %s): %v", src, err)
	}
	r.s.Timeout, r.s.Sources[KeyTimeout] = d, src
	return nil
}

// maxVersions resolves the API version cap ("kaas" when unset), checked
// to parse.
func (r *resolver) maxVersions() error {
	v, src := r.val(KeyMaxVersions)
	if src.Kind == "" {
		v, src = "kaas", Source{"default", ""}
	}
	if _, err := ParseMaxVersions(v); err != nil {
		return fmt.Errorf("max-versions (from %s): %v", src, err)
	}
	r.s.MaxVersions, r.s.Sources[KeyMaxVersions] = v, src
	return nil
}

func rank(s Source) int {
	switch s.Kind {
	case "flag":
		return 0
	case "env":
		return 1
	case "profile":
		return 2
	}
	return 3
}

// profileValues is a profile's settings by key, as a flag would give them
// ("" when unset).
func profileValues(p *Profile) map[string]string {
	m := make(map[string]string, len(profileFields))
	for _, f := range profileFields {
		m[f.key] = f.get(p)
	}
	return m
}

// ParseTimeout accepts a duration with a unit ("10s", "1m30s", "500ms")
// or, as Kafka's tools mean --timeout, a bare number of milliseconds
// ("5000"), between 1ms and 1h. A bare number under 100 is refused: it is
// almost certainly meant as seconds.
func ParseTimeout(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := when.ParseDuration(s)
	if err != nil || s == "0" {
		n, nerr := strconv.ParseInt(s, 10, 64)
		if nerr != nil {
			return 0, fmt.Errorf("%q is not a duration like 10s, 1m or 500ms, nor a number of milliseconds like 5000", s)
		}
		if n < 100 && n > 0 {
			return 0, fmt.Errorf("%q: a bare number is milliseconds (as in Kafka's tools), and %d ms is too short to reach a broker; write %ds for seconds", s, n, n)
		}
		if n > int64(time.Hour/time.Millisecond) || n <= 0 {
			return 0, fmt.Errorf("%q milliseconds is out of range (1ms..1h)", s)
		}
		d = time.Duration(n) * time.Millisecond
	}
	if d < time.Millisecond || d > time.Hour {
		return 0, fmt.Errorf("%q is out of range (1ms..1h)", s)
	}
	return d, nil
}

// NormalizeMechanism maps user spellings to PLAIN, SCRAM-SHA-256 or
// SCRAM-SHA-512.
func NormalizeMechanism(m string) (string, error) {
	u := strings.ToUpper(strings.TrimSpace(m))
	u = strings.ReplaceAll(u, "_", "-")
	switch u {
	case "PLAIN":
		return "PLAIN", nil
	case "SCRAM-SHA-256", "SCRAM-SHA256", "SHA-256", "SCRAM256", "SCRAM-256":
		return "SCRAM-SHA-256", nil
	case "SCRAM-SHA-512", "SCRAM-SHA512", "SHA-512", "SCRAM512", "SCRAM-512":
		return "SCRAM-SHA-512", nil
	}
	return "", fmt.Errorf("unknown SASL mechanism %q: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", m)
}

// ValidateBroker checks one host:port.
func ValidateBroker(b string) error {
	host, port, err := net.SplitHostPort(b)
	if err != nil {
		return fmt.Errorf("%q is not host:port (for example kaas-0.kaas:9092)", b)
	}
	if host == "" {
		return fmt.Errorf("%q has no host", b)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("%q: port %q is not 1..65535", b, port)
	}
	for _, r := range host {
		if r < 0x21 || r == 0x7f {
			return fmt.Errorf("%q: host holds a control character or space", b)
		}
	}
	return nil
}

// MaxPasswordBytes bounds a password file.
const MaxPasswordBytes = 64 << 10

// Password reads the SASL password from its env variable or file. The error
// names the variable or file, never the value.
func (s *Settings) Password() (string, error) {
	if s.password != "" {
		return s.password, nil
	}
	if s.SASL.PasswordFile != "" {
		b, err := readUserFile("SASL password file", s.SASL.PasswordFile, MaxPasswordBytes)
		if err != nil {
			return "", err
		}
		p := strings.TrimRight(string(b), "\r\n")
		if p == "" {
			return "", fmt.Errorf("SASL password file %s is empty", s.SASL.PasswordFile)
		}
		return p, nil
	}
	name := s.SASL.PasswordEnv
	if name == "" {
		name = DefaultPasswordEnv
	}
	p := s.getenv(name)
	if p == "" {
		return "", fmt.Errorf("SASL password: environment variable %s is empty or unset (or use --sasl-password-file)", SafeEnvName(name))
	}
	return p, nil
}

// ConventionalEnvName reports whether s looks like an environment variable
// name as people write them (upper case, digits, underscores).
func ConventionalEnvName(s string) bool {
	if s == "" || len(s) > 256 || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, r := range s {
		if r != '_' && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// SafeEnvName is the password variable's name for display. A name that
// does not look like a variable name may be a password typed in the wrong
// place, so it is not shown.
func SafeEnvName(s string) string {
	if ConventionalEnvName(s) {
		return s
	}
	return "(name hidden: it does not look like a variable name; did you pass the password itself?)"
}

// PasswordFileProblem says when the SASL password file in use can be
// read by others (mode and fix), or "".
func (s *Settings) PasswordFileProblem() string {
	if s.SASL.Mechanism == "" || s.password != "" || s.SASL.PasswordFile == "" {
		return ""
	}
	if why := safefs.ReadableByOthers(s.SASL.PasswordFile); why != "" {
		return "SASL password file " + why
	}
	return ""
}

// PasswordStatus describes, without revealing it, whether a password is
// available.
func (s *Settings) PasswordStatus() string {
	if s.SASL.Mechanism == "" {
		return ""
	}
	if s.password != "" {
		return "******** (sasl.jaas.config of the --command-config file)"
	}
	if s.SASL.PasswordFile != "" {
		if st, err := os.Stat(s.SASL.PasswordFile); err != nil {
			return "(file unreadable)"
		} else if st.Mode().Perm()&0o077 != 0 {
			return "******** (file readable by others: chmod 600)"
		}
		return "********"
	}
	if _, err := s.Password(); err != nil {
		return "(not set)"
	}
	if !ConventionalEnvName(s.SASL.PasswordEnv) {
		return "******** (check sasl-password-env: it does not look like a variable name)"
	}
	return "********"
}
