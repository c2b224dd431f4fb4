// Package wire is kaasctl's connection to kaas brokers over the Kafka
// protocol: the connection settings (flags, KAASCTL_* environment, profiles in
// config.yaml), a franz-go client built from them with TLS, SASL, a timeout
// and a request-version cap matching what kaas serves, and the live data
// layer (ListGroups from every broker, batched FindCoordinator,
// DescribeGroups and explicit-partition OffsetFetch per coordinator, one
// ListOffsets round) returning plain data structs. Nothing here prints.
package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/kaasctl/kaasctl/internal/safefs"
)

// MaxConfigBytes bounds the config file kaasctl will read.
const MaxConfigBytes = 1 << 20

// Config is the content of config.yaml.
type Config struct {
	// Current names the profile used when neither --profile nor
	// KAASCTL_PROFILE chooses one.
	Current  string              `yaml:"current,omitempty" json:"current"`
	Profiles map[string]*Profile `yaml:"profiles,omitempty" json:"profiles"`
	// Insecure says why others could change the file as it was read (it
	// or a directory above it writable by others, or owned by another
	// user: safefs.OthersCanChange), "" when they cannot. kaasctl warns,
	// and refuses to write with settings taken from it.
	Insecure string `yaml:"-" json:"-"`
}

// Profile is one named set of connection and volume settings.
type Profile struct {
	DataDir     string       `yaml:"dataDir,omitempty" json:"dataDir,omitempty"`
	ClusterDir  string       `yaml:"clusterDir,omitempty" json:"clusterDir,omitempty"`
	Brokers     BrokerList   `yaml:"brokers,omitempty" json:"brokers,omitempty"`
	TLS         *TLSProfile  `yaml:"tls,omitempty" json:"tls,omitempty"`
	SASL        *SASLProfile `yaml:"sasl,omitempty" json:"sasl,omitempty"`
	Timeout     string       `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	MaxVersions string       `yaml:"maxVersions,omitempty" json:"maxVersions,omitempty"`
	// KaasVersion pins the kaas generation of the profile's volume (as
	// --kaas-version; validated by the commands, which know the versions).
	KaasVersion string `yaml:"kaasVersion,omitempty" json:"kaasVersion,omitempty"`
}

// TLSProfile is a profile's TLS block. Any field set turns TLS on unless
// Enabled is explicitly false.
type TLSProfile struct {
	Enabled            *bool  `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	CAFile             string `yaml:"caFile,omitempty" json:"caFile,omitempty"`
	CertFile           string `yaml:"certFile,omitempty" json:"certFile,omitempty"`
	KeyFile            string `yaml:"keyFile,omitempty" json:"keyFile,omitempty"`
	InsecureSkipVerify bool   `yaml:"insecureSkipVerify,omitempty" json:"insecureSkipVerify,omitempty"`
	ServerName         string `yaml:"serverName,omitempty" json:"serverName,omitempty"`
}

// SASLProfile is a profile's SASL block. The password itself is never stored
// in the config: it comes from the environment variable PasswordEnv or from
// the file PasswordFile.
type SASLProfile struct {
	Mechanism    string `yaml:"mechanism,omitempty" json:"mechanism,omitempty"`
	User         string `yaml:"user,omitempty" json:"user,omitempty"`
	PasswordEnv  string `yaml:"passwordEnv,omitempty" json:"passwordEnv,omitempty"`
	PasswordFile string `yaml:"passwordFile,omitempty" json:"passwordFile,omitempty"`
}

// BrokerList accepts both a YAML sequence and one comma-separated string.
type BrokerList []string

// UnmarshalYAML implements yaml.Unmarshaler.
func (b *BrokerList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			*b = nil
			return nil
		}
		*b = SplitBrokers(n.Value)
		return nil
	case yaml.SequenceNode:
		var out []string
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: brokers: each entry must be a host:port string", c.Line)
			}
			out = append(out, SplitBrokers(c.Value)...)
		}
		*b = out
		return nil
	}
	return fmt.Errorf("line %d: brokers: want a list of host:port or one comma-separated string", n.Line)
}

// SplitBrokers splits a comma (or whitespace) separated broker list,
// dropping empty entries.
func SplitBrokers(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	if len(f) == 0 {
		return nil
	}
	return f
}

// ConfigError is a config file that cannot be used.
type ConfigError struct {
	Path    string
	Problem string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("config %s: %s", e.Path, e.Problem) }

// ParseConfig decodes config.yaml. Unknown keys are errors (a typo in a
// profile must not silently connect somewhere else), as is any attempt to
// store a password in the file.
func ParseConfig(path string, data []byte) (*Config, error) {
	cfg := &Config{}
	if len(data) > MaxConfigBytes {
		return nil, &ConfigError{path, fmt.Sprintf("file is %d bytes, more than the %d kaasctl reads", len(data), MaxConfigBytes)}
	}
	if !utf8.Valid(data) {
		return nil, &ConfigError{path, "not valid UTF-8"}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		cfg.Profiles = map[string]*Profile{}
		return cfg, nil
	}
	if err := rejectPasswords(data); err != nil {
		return nil, &ConfigError{path, err.Error()}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil {
		return nil, &ConfigError{path, cleanYAMLError(err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &ConfigError{path, "holds more than one YAML document"}
	}
	if cfg.Profiles == nil {
		cfg.Profiles = map[string]*Profile{}
	}
	for name, p := range cfg.Profiles {
		if err := ValidateProfileName(name); err != nil {
			return nil, &ConfigError{path, err.Error()}
		}
		if p == nil {
			cfg.Profiles[name] = &Profile{}
			continue
		}
		if err := p.Validate(); err != nil {
			return nil, &ConfigError{path, fmt.Sprintf("profile %q: %v", name, err)}
		}
	}
	if cfg.Current != "" {
		if _, ok := cfg.Profiles[cfg.Current]; !ok {
			return nil, &ConfigError{path, fmt.Sprintf("current profile %q is not defined under profiles (known: %s)", cfg.Current, strings.Join(cfg.Names(), ", "))}
		}
	}
	return cfg, nil
}

// rejectPasswords refuses a config that holds a password value anywhere.
func rejectPasswords(data []byte) error {
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return errors.New(cleanYAMLError(err))
	}
	var walk func(*yaml.Node) error
	walk = func(n *yaml.Node) error {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := strings.ToLower(n.Content[i].Value)
				if k == "password" || k == "pass" || k == "passwd" || k == "pwd" || k == "secret" || k == "token" {
					return fmt.Errorf("line %d: %q: passwords are never stored in the config; use sasl.passwordEnv (an environment variable name) or sasl.passwordFile", n.Content[i].Line, n.Content[i].Value)
				}
			}
		}
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(&n)
}

// yamlValue matches the values yaml.v3 quotes in its errors; they are not
// repeated, in case a secret sits in the wrong field.
var yamlValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`[^`]*`") })

func cleanYAMLError(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	s = yamlValue().ReplaceAllString(s, "a value")
	s = strings.ReplaceAll(s, "unmarshal errors:\n  ", "")
	s = strings.ReplaceAll(s, "\n  ", "; ")
	s = strings.ReplaceAll(s, "in type wire.", "in ")
	return s
}

// ValidateProfileName accepts names a user can type and a file can hold.
func ValidateProfileName(name string) error {
	if name == "" {
		return errors.New("profile name is empty")
	}
	if len(name) > 128 {
		return fmt.Errorf("profile name is %d bytes long; at most 128", len(name))
	}
	for _, r := range name {
		ok := r == '-' || r == '_' || r == '.' || r == '@' || r == ':' || r == '/' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return fmt.Errorf("profile name %q: use letters, digits and - _ . @ : / only", name)
		}
	}
	return nil
}

// Validate checks a profile's values.
func (p *Profile) Validate() error {
	for _, b := range p.Brokers {
		if err := ValidateBroker(b); err != nil {
			return fmt.Errorf("brokers: %v", err)
		}
	}
	if p.Timeout != "" {
		if _, err := ParseTimeout(p.Timeout); err != nil {
			return fmt.Errorf("timeout: %v", err)
		}
	}
	if p.MaxVersions != "" {
		if _, err := ParseMaxVersions(p.MaxVersions); err != nil {
			return fmt.Errorf("maxVersions: %v", err)
		}
	}
	if p.SASL != nil && p.SASL.Mechanism != "" {
		if _, err := NormalizeMechanism(p.SASL.Mechanism); err != nil {
			return fmt.Errorf("sasl.mechanism: %v", err)
		}
	}
	if p.SASL != nil && p.SASL.PasswordEnv != "" && !validEnvName(p.SASL.PasswordEnv) {
		return errors.New("sasl.passwordEnv is not an environment variable name: it names the variable holding the password, never the password itself (value not shown)")
	}
	return nil
}

func validEnvName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i, r := range s {
		if r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}

// Names lists the profile names, sorted.
func (c *Config) Names() []string {
	var out []string
	for n := range c.Profiles {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// LoadConfig reads the config at path. A missing file is an empty config
// (exists=false), not an error.
func LoadConfig(path string) (cfg *Config, exists bool, err error) {
	// Never blocking on a FIFO; a directory, FIFO, device or socket is refused.
	f, _, err := safefs.OpenFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{Profiles: map[string]*Profile{}}, false, nil
	}
	var ke *safefs.KindError
	if errors.As(err, &ke) {
		return nil, true, &ConfigError{path, safefs.Problem(err)}
	}
	if err != nil {
		return nil, false, &ConfigError{path, fmt.Sprintf("cannot open: %v", unwrapPathErr(err))}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, true, &ConfigError{path, fmt.Sprintf("cannot read: %v", unwrapPathErr(err))}
	}
	cfg, err = ParseConfig(path, data)
	if cfg != nil {
		cfg.Insecure = safefs.OthersCanChange(path)
	}
	return cfg, true, err
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Marshal renders the config as YAML with a header comment.
func (c *Config) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# kaasctl configuration (written by 'kaasctl config'). Passwords are never stored here:\n")
	buf.WriteString("# a profile names an environment variable (sasl.passwordEnv) or a file (sasl.passwordFile).\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// LoadConfigForEdit reads the config at path for a change (LoadConfig); a
// file it cannot read is an error saying so, as a broken file is never
// overwritten.
func LoadConfigForEdit(path string) (*Config, error) {
	cfg, _, err := LoadConfig(path)
	if err != nil {
		return nil, fmt.Errorf("%v; fix or move the file first (kaasctl does not overwrite a file it cannot read)", err)
	}
	return cfg, nil
}

// SaveConfig writes cfg to path atomically: the directory is created with
// mode 0700 when missing, the file is written to a unique temp file with
// mode 0600, synced, renamed over path, and the directory is synced.
func SaveConfig(path string, cfg *Config) error {
	data, err := cfg.Marshal()
	if err != nil {
		return &ConfigError{path, fmt.Sprintf("cannot encode: %v", err)}
	}
	if _, err := ParseConfig(path, data); err != nil {
		return fmt.Errorf("refusing to write a config kaasctl could not read back: %w", err)
	}
	// A symlinked config (dotfiles) is updated where it points, not
	// replaced by a regular file.
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return &ConfigError{path, fmt.Sprintf("is a symlink that does not resolve: %v", unwrapPathErr(err))}
		}
		path = target
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return &ConfigError{path, fmt.Sprintf("cannot create directory %s: %v", dir, unwrapPathErr(err))}
	}
	tmp, err := os.CreateTemp(dir, ".config.yaml.*.tmp")
	if err != nil {
		return &ConfigError{path, fmt.Sprintf("cannot create a temp file in %s: %v", dir, unwrapPathErr(err))}
	}
	tmpName := tmp.Name()
	fail := func(what string, err error) error {
		tmp.Close()
		os.Remove(tmpName)
		return &ConfigError{path, fmt.Sprintf("%s: %v", what, unwrapPathErr(err))}
	}
	if err := tmp.Chmod(0o600); err != nil {
		return fail("cannot set mode 0600", err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail("cannot write", err)
	}
	if err := tmp.Sync(); err != nil {
		return fail("cannot sync", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmpName)
		return &ConfigError{path, fmt.Sprintf("cannot close temp file: %v", err)}
	}
	if err := os.Rename(tmpName, path); err != nil {
		os.Remove(tmpName)
		return &ConfigError{path, fmt.Sprintf("cannot replace: %v", err)}
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// DefaultConfigPath is where the config lives when neither --config nor
// KAASCTL_CONFIG names it: $XDG_CONFIG_HOME/kaasctl/config.yaml, else
// $HOME/.config/kaasctl/config.yaml. It is "" when neither variable is set.
func DefaultConfigPath(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "kaasctl", "config.yaml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "kaasctl", "config.yaml")
	}
	return ""
}
