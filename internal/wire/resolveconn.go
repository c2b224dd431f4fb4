package wire

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
	var c Connection
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
