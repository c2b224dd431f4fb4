package commands

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// The connection flags: attached with the common flags to every command
// that can talk to the brokers (see commandFlagGroups in common.go). Each
// has a KAASCTL_* environment variable and a profile field; flags beat the
// environment, which beats the profile. Help lists them under four
// headings: Connection, TLS, SASL and Profile (--profile and --config,
// which offline commands list too: a profile can name the volume).
const (
	connCategory    = "Connection"
	tlsCategory     = "TLS"
	saslCategory    = "SASL"
	profileCategory = "Profile"
)

func liveFlags() []cli.Flag {
	const cat, tls, sasl, prof = connCategory, tlsCategory, saslCategory, profileCategory
	env := func(k string) string { return " (" + wire.EnvName(k) + ")" }
	return []cli.Flag{
		&cli.StringSliceFlag{Name: wire.KeyBrokers, Aliases: []string{"b", "bootstrap-server"}, Usage: "kaas brokers host:port, comma separated or repeated (--bootstrap-server as in Kafka's tools)" + env(wire.KeyBrokers), Category: cat},
		&cli.StringFlag{Name: commandConfigFlag, Usage: "Kafka client properties `FILE`, as kafka-consumer-groups.sh takes it: security.protocol, sasl.mechanism, sasl.jaas.config (PLAIN, SCRAM), ssl.truststore.*/ssl.keystore.* (PEM only; JKS/PKCS12 are refused); flags win over it", Category: cat},
		&cli.StringFlag{Name: wire.KeyProfile, Usage: "profile in the config file" + env(wire.KeyProfile), Category: prof},
		&cli.StringFlag{Name: wire.KeyConfig, Usage: "config file (default $XDG_CONFIG_HOME/kaasctl/config.yaml or ~/.config/kaasctl/config.yaml)" + env(wire.KeyConfig), Category: prof},
		&cli.BoolFlag{Name: wire.KeyTLS, Usage: "connect with TLS (implied by the other --tls-* flags)" + env(wire.KeyTLS), Category: tls},
		&cli.StringFlag{Name: wire.KeyTLSCA, Usage: "PEM file of the CA that signed the brokers' certificates" + env(wire.KeyTLSCA), Category: tls},
		&cli.StringFlag{Name: wire.KeyTLSCert, Usage: "PEM client certificate for mutual TLS" + env(wire.KeyTLSCert), Category: tls},
		&cli.StringFlag{Name: wire.KeyTLSKey, Usage: "PEM client key for mutual TLS" + env(wire.KeyTLSKey), Category: tls},
		&cli.BoolFlag{Name: wire.KeyTLSInsecure, Usage: "do not verify the brokers' certificates (testing only)" + env(wire.KeyTLSInsecure), Category: tls},
		&cli.StringFlag{Name: wire.KeyTLSServerName, Usage: "name to verify the brokers' certificates against" + env(wire.KeyTLSServerName), Category: tls},
		&cli.StringFlag{Name: wire.KeySASLMechanism, Usage: "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512" + env(wire.KeySASLMechanism), Category: sasl},
		&cli.StringFlag{Name: wire.KeySASLUser, Usage: "SASL user" + env(wire.KeySASLUser), Category: sasl},
		&cli.StringFlag{Name: wire.KeySASLPasswordEnv, Usage: "NAME of the environment variable holding the SASL password (default " + wire.DefaultPasswordEnv + ")" + env(wire.KeySASLPasswordEnv), Category: sasl},
		&cli.StringFlag{Name: wire.KeySASLPasswordFil, Usage: "file holding the SASL password" + env(wire.KeySASLPasswordFil), Category: sasl},
		&cli.StringFlag{Name: wire.KeyTimeout, Usage: "timeout of each broker call: 10s, 500ms, or a bare number of milliseconds as in Kafka's tools (default 10s)" + env(wire.KeyTimeout), Category: cat},
		&cli.StringFlag{Name: wire.KeyMaxVersions, Usage: "cap on request versions: " + wire.MaxVersionsHelp + env(wire.KeyMaxVersions), Category: cat},
	}
}

// commandConfigFlag names the Kafka client properties file flag.
const commandConfigFlag = "command-config"

// isConnCategory reports whether a flag category is one of the connection
// flags' headings.
func isConnCategory(cat string) bool {
	return cat == connCategory || cat == tlsCategory || cat == saslCategory || cat == profileCategory
}

// connState is the connection configuration resolved for one run.
type connState struct {
	// cc is the --command-config file, when given.
	cc       *wire.CommandConfig
	settings *wire.Settings
	cfg      *wire.Config
	// fileErr is a config file that cannot be read; it stops every
	// command when the user named the file or a profile, and is a warning
	// otherwise (the settings are then resolved without the file).
	fileErr error
	// err is a setting that cannot be resolved (bad value, unknown
	// profile); it stops every command that needs the brokers.
	err      error
	explicit bool // the user named a config file or a profile
	// flags is the connection flags given (flagInput), kept so that a run
	// function can resolve another profile with them (config show NAME).
	flags map[string]string
}

// flagInput collects the connection flags actually given.
func flagInput(c *cli.Context) map[string]string {
	m := map[string]string{}
	for _, k := range append([]string{wire.KeyConfig, wire.KeyProfile}, wire.ConnectionKeys...) {
		if !isSet(c, k) || !isConnFlag(c, k) {
			continue
		}
		switch k {
		case wire.KeyBrokers:
			m[k] = strings.Join(c.StringSlice(k), ",")
		case wire.KeyTLS, wire.KeyTLSInsecure:
			m[k] = strconv.FormatBool(c.Bool(k))
		default:
			m[k] = c.String(k)
		}
	}
	return m
}

// resolveConn loads the config file and resolves the connection settings.
func resolveConn(c *cli.Context, ios *IOStreams) *connState {
	flags := flagInput(c)
	var cc *wire.CommandConfig
	var ccErr error
	if isSet(c, commandConfigFlag) && isConnFlag(c, commandConfigFlag) {
		cc, ccErr = wire.ReadCommandConfig(c.String(commandConfigFlag))
	}
	st := resolveConnFrom(flags, ios, cc)
	if ccErr != nil {
		st.err = ccErr
	}
	return st
}

func resolveConnFrom(flags map[string]string, ios *IOStreams, cc ...*wire.CommandConfig) *connState {
	var c *wire.CommandConfig
	if len(cc) > 0 {
		c = cc[0]
	}
	return resolveConnArg(flags, ios, c, "")
}

// resolveConnArg resolves the connection (wire.ResolveConnection);
// profileArg is a profile named as the command's argument (config
// show/check NAME).
func resolveConnArg(flags map[string]string, ios *IOStreams, cc *wire.CommandConfig, profileArg string) *connState {
	r := wire.ResolveConnection(wire.ConnInput{Flags: flags, Getenv: ios.getenv, CommandConfig: cc, ProfileArg: profileArg, SoftwareVersion: Version})
	return &connState{cc: cc, flags: flags, settings: r.Settings, cfg: r.Config, fileErr: r.FileErr, err: r.Err, explicit: r.Explicit}
}

// Conn returns the resolved connection settings (never nil).
func (g *Globals) Conn() *wire.Settings { return g.conn.settings }

// HasBrokers reports whether a flag, variable or profile names brokers.
func (g *Globals) HasBrokers() bool {
	return g.conn != nil && g.conn.err == nil && len(g.conn.settings.Brokers) > 0
}

// UncheckedClient is Client without the initial connection check: for a
// long-running command (the exporter) that starts while brokers are down.
func (g *Globals) UncheckedClient() (*wire.Client, error) {
	if g.conn == nil {
		return nil, errors.New("connection settings were not resolved")
	}
	if g.conn.err != nil {
		return nil, exit.UsageErrorf("%v", g.conn.err)
	}
	if g.conn.fileErr != nil && g.conn.explicit {
		return nil, exit.UsageErrorf("%v", g.conn.fileErr)
	}
	if len(g.conn.settings.Brokers) == 0 {
		return nil, exit.UsageErrorf("%v", wire.ErrNoBrokers)
	}
	g.warnPasswordFile(g.conn.settings)
	return wire.NewClient(g.conn.settings)
}

// Client returns a client connected to the brokers (at least one seed
// answered; unreachable seeds are warned about), or a clear error.
// The caller closes it.
func (g *Globals) Client(ctx context.Context) (*wire.Client, error) {
	cl, err := g.UncheckedClient()
	if err != nil {
		return nil, err
	}
	_, bad, err := cl.Check(ctx)
	if err != nil {
		cl.Close()
		return nil, err
	}
	for _, b := range bad {
		g.Warnf("%v", b)
	}
	return cl, nil
}

// applyConn feeds the profile's volume dirs to the volume resolver and
// reports config problems for commands that do not need the brokers.
// A broken config file or an unknown profile stops the command when the
// user named them; other setting errors wait for Client, so offline
// commands still run.
func (g *Globals) applyConn(c *cli.Context) error {
	g.conn = resolveConn(c, g.IO)
	config := isConfigCommand(c)
	if g.conn.fileErr != nil {
		if g.conn.explicit && !config {
			return exit.UsageErrorf("%v", g.conn.fileErr)
		}
		if !config {
			g.Warnf("%v (ignoring the file)", g.conn.fileErr)
		}
	}
	if g.conn.err != nil && !config && (strings.HasPrefix(g.conn.err.Error(), "profile ") || strings.HasPrefix(g.conn.err.Error(), "--command-config")) {
		return exit.UsageErrorf("%v", g.conn.err)
	}
	g.warnInsecureSettings()
	if cc := g.conn.cc; cc != nil && len(cc.Ignored) > 0 {
		g.Warnf("--command-config %s: not used by kaasctl: %s", cc.Path, strings.Join(cc.Ignored, "; "))
	}
	g.vin.ProfileDataDir = g.conn.settings.DataDir
	g.vin.ProfileClusterDir = g.conn.settings.ClusterDir
	g.vin.ProfileKaasVersion = g.conn.settings.KaasVersion
	return nil
}

func isConfigCommand(c *cli.Context) bool {
	for _, l := range c.Lineage() {
		if l.Command != nil && l.Command.Name == "config" {
			return true
		}
	}
	return false
}

// appendMissing adds the common flags a command does not define itself
// (completion.AppendMissing: a command's own flag wins a name).
func appendMissing(own, common []cli.Flag) []cli.Flag { return completion.AppendMissing(own, common) }

// isConnFlag reports whether the command's flag called name is one of the
// connection flags (and not a command's own flag of the same name).
func isConnFlag(c *cli.Context, name string) bool {
	if c.Command == nil {
		return true
	}
	for _, f := range c.Command.Flags {
		for _, n := range completion.FlagNames(f) {
			if n != name {
				continue
			}
			cf, ok := f.(cli.CategorizableFlag)
			return ok && isConnCategory(cf.GetCategory())
		}
	}
	return false
}

// connFlagsText is the connection flags the user gave on the command line,
// for the fix lines a command prints: " --brokers a:9092,b:9092 --tls-ca
// ca.pem --sasl-user ops ..." (shell-quoted), so a printed command runs as
// printed. The brokers are the ones in effect (flag, environment or
// profile); the rest only when given as flags (the environment and the
// profile reach the printed command the same way). A password never is a
// flag value: only the name of its variable or file.
func connFlagsText(c *cli.Context, g *Globals) string {
	var b strings.Builder
	if bs := g.Conn().Brokers; len(bs) > 0 {
		b.WriteString(" --brokers " + shellQuoteCmd(strings.Join(bs, ",")))
	}
	for _, name := range []string{commandConfigFlag, wire.KeyProfile, wire.KeyConfig, wire.KeyTLS, wire.KeyTLSCA, wire.KeyTLSCert, wire.KeyTLSKey,
		wire.KeyTLSInsecure, wire.KeyTLSServerName, wire.KeySASLMechanism, wire.KeySASLUser, wire.KeySASLPasswordEnv, wire.KeySASLPasswordFil,
		wire.KeyTimeout, wire.KeyMaxVersions} {
		if !isSet(c, name) {
			continue
		}
		switch name {
		case wire.KeyTLS, wire.KeyTLSInsecure:
			if c.Bool(name) {
				b.WriteString(" --" + name)
			}
		default:
			b.WriteString(" --" + name + " " + shellQuoteCmd(c.String(name)))
		}
	}
	return b.String()
}
