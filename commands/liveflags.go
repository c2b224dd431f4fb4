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

// The connection flags are internal/wire's (wire.Flags), attached with the
// common flags to every command that can talk to the brokers; help lists
// them under four headings: Connection, TLS, SASL and Profile (--profile
// and --config, which offline commands list too: a profile can name the
// volume). Each has a KAASCTL_* environment variable and a profile field;
// flags beat the environment, which beats the profile.

// liveFlag is one connection flag.
func liveFlag(f wire.Flag) cli.Flag {
	switch f.Kind {
	case wire.FlagSwitch:
		return &cli.BoolFlag{Name: f.Key, Aliases: f.Aliases, Usage: f.Usage, Category: f.Category}
	case wire.FlagList:
		return &cli.StringSliceFlag{Name: f.Key, Aliases: f.Aliases, Usage: f.Usage, Category: f.Category}
	}
	return &cli.StringFlag{Name: f.Key, Aliases: f.Aliases, Usage: f.Usage, Category: f.Category}
}

// flagInput collects the connection settings given as flags (a list
// comma-joined, a switch "true" or "false").
func flagInput(c *cli.Context) map[string]string {
	m := map[string]string{}
	for _, f := range wire.Flags() {
		if f.Key == wire.KeyCommandConfig || !completion.IsSet(c, f.Key) || !isConnFlag(c, f.Key) {
			continue
		}
		switch f.Kind {
		case wire.FlagList:
			m[f.Key] = strings.Join(c.StringSlice(f.Key), ",")
		case wire.FlagSwitch:
			m[f.Key] = strconv.FormatBool(c.Bool(f.Key))
		default:
			m[f.Key] = c.String(f.Key)
		}
	}
	return m
}

// resolveConn reads the --command-config file and resolves the connection
// settings of the flags given; a --command-config that cannot be read
// is the connection's error.
func resolveConn(c *cli.Context, ios *IOStreams) *wire.Connection {
	in := wire.ConnInput{Flags: flagInput(c)}
	var ccErr error
	if completion.IsSet(c, wire.KeyCommandConfig) && isConnFlag(c, wire.KeyCommandConfig) {
		in.CommandConfig, ccErr = wire.ReadCommandConfig(c.String(wire.KeyCommandConfig))
	}
	st := resolveConnWith(in, ios)
	if ccErr != nil {
		st.Err = ccErr
	}
	return st
}

// resolveConnWith resolves in (wire.ResolveConnection) over the run's
// environment.
func resolveConnWith(in wire.ConnInput, ios *IOStreams) *wire.Connection {
	in.Getenv, in.SoftwareVersion = ios.getenv, Version
	c := wire.ResolveConnection(in)
	return &c
}

// Conn returns the resolved connection settings (never nil).
func (g *Globals) Conn() *wire.Settings { return g.conn.Settings }

// HasBrokers reports whether a flag, variable or profile names brokers.
func (g *Globals) HasBrokers() bool { return g.conn.HasBrokers() }

// UncheckedClient is Client without the initial connection check: for a
// long-running command (the exporter) that starts while brokers are down.
func (g *Globals) UncheckedClient() (*wire.Client, error) {
	if g.conn == nil {
		return nil, errors.New("connection settings were not resolved")
	}
	return g.conn.Unchecked(g.Warnf)
}

// CheckedClient is a client that passed the connection check, with the
// seeds that did not answer.
func (g *Globals) CheckedClient(ctx context.Context) (*wire.Client, []*wire.BrokerError, error) {
	if g.conn == nil {
		return nil, nil, errors.New("connection settings were not resolved")
	}
	return g.conn.Checked(ctx, g.Warnf)
}

// Client returns a client connected to the brokers (at least one seed
// answered; unreachable seeds are warned about), or a clear error.
// The caller closes it.
func (g *Globals) Client(ctx context.Context) (*wire.Client, error) {
	cl, bad, err := g.CheckedClient(ctx)
	if err != nil {
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
	if g.conn.FileErr != nil {
		if g.conn.Explicit && !config {
			return exit.UsageErrorf("%v", g.conn.FileErr)
		}
		if !config {
			g.Warnf("%v (ignoring the file)", g.conn.FileErr)
		}
	}
	if err := g.conn.Err; err != nil && !config && (strings.HasPrefix(err.Error(), "profile ") || strings.HasPrefix(err.Error(), "--command-config")) {
		return exit.UsageErrorf("%v", err)
	}
	g.warnInsecureSettings()
	if cc := g.conn.CommandConfig; cc != nil && len(cc.Ignored) > 0 {
		g.Warnf("--command-config %s: not used by kaasctl: %s", cc.Path, strings.Join(cc.Ignored, "; "))
	}
	g.vin.ProfileDataDir = g.conn.Settings.DataDir
	g.vin.ProfileClusterDir = g.conn.Settings.ClusterDir
	g.vin.ProfileKaasVersion = g.conn.Settings.KaasVersion
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
			return ok && wire.IsCategory(cf.GetCategory())
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
	for _, f := range wire.Flags() {
		switch {
		case f.Key == wire.KeyBrokers || !completion.IsSet(c, f.Key):
		case f.Kind != wire.FlagSwitch:
			b.WriteString(" --" + f.Key + " " + shellQuoteCmd(c.String(f.Key)))
		case c.Bool(f.Key):
			b.WriteString(" --" + f.Key)
		}
	}
	return b.String()
}
