package wire

import (
	"context"
	"errors"

	"github.com/kaasctl/kaasctl/internal/exit"
)

// ConnInput is what a run's connection is resolved from: the connection
// flags given, the environment, a --command-config file, a profile named
// as a command's argument, and kaasctl's version (the client's software
// version).
type ConnInput struct {
	Flags           map[string]string
	Getenv          func(string) string
	CommandConfig   *CommandConfig
	ProfileArg      string
	SoftwareVersion string
}

// Connection is a run's connection configuration, resolved.
type Connection struct {
	Settings *Settings // never nil
	Config   *Config   // the config file's profiles (nil: none read)
	// FileErr is a config file that cannot be read; the settings are then
	// resolved without it.
	FileErr error
	// Err is a setting that cannot be resolved (bad value, unknown
	// profile); the settings are then the defaults.
	Err error
	// Explicit: the user named a config file or a profile.
	Explicit bool
	// Flags are the connection flags given (ConnInput.Flags), kept so
	// that another profile can be resolved with them (config show NAME);
	// CommandConfig the --command-config file, when given.
	Flags         map[string]string
	CommandConfig *CommandConfig
}

// HasBrokers reports whether a flag, variable or profile names brokers
// (and the settings resolved).
func (c *Connection) HasBrokers() bool {
	return c != nil && c.Err == nil && len(c.Settings.Brokers) > 0
}

// Unchecked is a client of the settings that has not asked the brokers
// anything (for a long-running command that starts while they are down).
// A setting that does not resolve, a config file named that cannot be
// read and no brokers are usage errors; warn is told of a password file
// others can read.
func (c *Connection) Unchecked(warn func(format string, a ...any)) (*Client, error) {
	switch {
	case c.Err != nil:
		return nil, exit.UsageErrorf("%v", c.Err)
	case c.FileErr != nil && c.Explicit:
		return nil, exit.UsageErrorf("%v", c.FileErr)
	case len(c.Settings.Brokers) == 0:
		return nil, exit.UsageErrorf("%v", ErrNoBrokers)
	}
	if why := c.Settings.PasswordFileProblem(); why != "" {
		warn("%s", why)
	}
	return NewClient(c.Settings)
}

// Checked is Unchecked with the connection check: at least one seed
// answered (the seeds that did not are handed back), or the error.
func (c *Connection) Checked(ctx context.Context, warn func(format string, a ...any)) (*Client, []*BrokerError, error) {
	cl, err := c.Unchecked(warn)
	if err != nil {
		return nil, nil, err
	}
	_, bad, err := cl.Check(ctx)
	if err != nil {
		cl.Close()
		return nil, bad, err
	}
	return cl, bad, nil
}

// InsecureFiles are the settings files of the run that others could
// change (config.yaml, the --command-config file), each with why.
func (c *Connection) InsecureFiles() []string {
	var out []string
	if c != nil && c.Config != nil && c.Config.Insecure != "" {
		out = append(out, c.Config.Insecure)
	}
	if c != nil && c.CommandConfig != nil && c.CommandConfig.Insecure != "" {
		out = append(out, c.CommandConfig.Insecure)
	}
	return out
}

// ConfigLocation says which config file is in use and why: --config, the
// KAASCTL_CONFIG variable, else the default path.
func ConfigLocation(flags map[string]string, getenv func(string) string) (string, Source) {
	if p := flags[KeyConfig]; p != "" {
		return p, Source{Kind: "flag", Detail: "--config"}
	}
	if p := getenv(EnvName(KeyConfig)); p != "" {
		return p, Source{Kind: "env", Detail: EnvName(KeyConfig)}
	}
	if p := DefaultConfigPath(getenv); p != "" {
		return p, Source{Kind: "default"}
	}
	return "", Source{}
}

// ResolveConnection loads the config file and resolves the connection
// settings of in.
func ResolveConnection(in ConnInput) Connection {
	c := Connection{Flags: in.Flags, CommandConfig: in.CommandConfig}
	path, src := ConfigLocation(in.Flags, in.Getenv)
	c.Explicit = src.Kind == "flag" || src.Kind == "env" || in.Flags[KeyProfile] != "" || in.ProfileArg != "" || in.Getenv(EnvName(KeyProfile)) != ""
	var exists bool
	if path != "" {
		cfg, ex, err := LoadConfig(path)
		if err != nil {
			c.FileErr = err
			// Resolve without the file, so flags and env still work.
			cfg = nil
		}
		c.Config, exists = cfg, ex
	}
	s, err := Resolve(Input{Flags: in.Flags, Getenv: in.Getenv, CommandConfig: in.CommandConfig, ProfileArg: in.ProfileArg}, c.Config, path, src, exists)
	if err != nil {
		c.Err = err
		s, _ = Resolve(Input{Getenv: func(string) string { return "" }}, nil, path, src, exists)
	}
	s.SoftwareVersion = in.SoftwareVersion
	c.Settings = s
	return c
}

// ConfigFile is the config file in use and why it is that one, or a
// usage error when none can be located.
func (c *Connection) ConfigFile() (string, Source, error) {
	s := c.Settings
	if s.ConfigPath == "" {
		return "", Source{}, exit.UsageErrorf("cannot locate the config file: HOME and XDG_CONFIG_HOME are unset; pass --config FILE or set KAASCTL_CONFIG")
	}
	return s.ConfigPath, s.ConfigSource, nil
}

// EditConfig reads the config file in use for a change; a broken file is
// never overwritten (LoadConfigForEdit).
func (c *Connection) EditConfig() (string, *Config, error) {
	path, _, err := c.ConfigFile()
	if err != nil {
		return "", nil, err
	}
	cfg, err := LoadConfigForEdit(path)
	if err != nil {
		return "", nil, err
	}
	return path, cfg, nil
}

// ProfileUsageError is a change to a profile the config file at path
// does not hold, as a usage error naming the file; other errors pass
// unchanged.
func ProfileUsageError(err error, path string) error {
	var up *UnknownProfileError
	if errors.As(err, &up) {
		return exit.UsageErrorf("no profile %q in %s; known profiles: %s", up.Name, path, up.Known)
	}
	return err
}

// Secrets are what the settings hold that no log or answer may show: the
// SASL password (4 characters or more), and a --sasl-password-env that
// holds a password rather than a variable's name (getenv reads
// KAASCTL_SASL_PASSWORD_ENV when no flag gives one).
func (c *Connection) Secrets(getenv func(string) string) []string {
	var secrets []string
	envName := getenv(EnvName(KeySASLPasswordEnv))
	if c != nil {
		if v := c.Flags[KeySASLPasswordEnv]; v != "" {
			envName = v
		}
		if s := c.Settings; s != nil && s.SASL.Mechanism != "" {
			if pw, err := s.Password(); err == nil && len(pw) >= 4 {
				secrets = append(secrets, pw)
			}
		}
	}
	if envName != "" && !ConventionalEnvName(envName) {
		secrets = append(secrets, envName)
	}
	return secrets
}
