package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/helptext"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/when"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

func init() {
	register(Descriptor{
		Path:  "mcp",
		Usage: "serve the read-only commands as Model Context Protocol tools (stdio, or streamable HTTP on loopback); writes only as plans",
		Build: func() *cli.Command {
			return &cli.Command{
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "http", Usage: "serve streamable HTTP on `HOST:PORT` (loopback unless --allow-remote) instead of stdio"},
					&cli.BoolFlag{Name: "allow-remote", Usage: "let --http listen beyond loopback (anyone who reaches it reads with this process's credentials)"},
					&cli.StringFlag{Name: "log-file", Usage: "append the call log to `FILE` (default stderr)"},
					&cli.IntFlag{Name: "max-calls", Value: mcpserver.DefaultMaxCalls, Usage: "tool calls at once (`N`); more are refused as busy"},
					durationFlag("call-timeout", mcpserver.DefaultCallTimeout, "bound each call to `D`"),
					&cli.StringFlag{Name: "max-request-bytes", Value: "1MiB", Usage: "bound each request (a stdio line, an HTTP body) to `SIZE`"},
					&cli.StringFlag{Name: "journal", Usage: "the 'kaasctl watch --journal' or 'exporter --journal' `DIR` the tools read (explain's moves, takeover trace, offsets history, restores)"},
				},
				Action: action(parseMCP, runMCP),
			}
		},
	})
}

// mcpOptions is 'mcp' after flag parsing.
type mcpOptions struct {
	http        string
	allowRemote bool
	logFile     string
	maxCalls    int
	callTimeout time.Duration
	maxRequest  int64
	journal     string
	listener    net.Listener // set by tests instead of http
}

func parseMCP(c *cli.Context) (mcpOptions, error) {
	o := mcpOptions{http: c.String("http"), allowRemote: c.Bool("allow-remote"), logFile: c.String("log-file"), maxCalls: c.Int("max-calls"),
		callTimeout: flagDuration(c, "call-timeout"), journal: c.String("journal")}
	if c.NArg() > 0 {
		return o, exit.UsageErrorf("mcp takes no arguments (got %q)", c.Args().First())
	}
	if o.http != "" {
		if err := mcpserver.CheckBind(o.http, o.allowRemote); err != nil {
			return o, exit.UsageErrorf("%v", err)
		}
	}
	if o.maxCalls < 1 || o.callTimeout <= 0 {
		return o, exit.UsageErrorf("--max-calls must be at least 1 and --call-timeout positive")
	}
	n, err := flagSize(c, "max-request-bytes")
	if err != nil || n < 1<<10 {
		return o, exit.UsageErrorf("--max-request-bytes: %v (at least 1KiB)", errOr(err, "too small"))
	}
	o.maxRequest = n
	return o, nil
}

func errOr(err error, s string) any {
	if err != nil {
		return err
	}
	return s
}

func runMCP(ctx context.Context, g *Globals, o mcpOptions) error {
	if !g.HasVolume() && !wantsBrokers(g) {
		return exit.UsageErrorf("nothing to serve: give the volume (--data-dir/--cluster-dir) and/or the brokers (--brokers)")
	}
	logw, closeLog, err := mcpLog(g, o.logFile)
	if err != nil {
		return err
	}
	defer closeLog()
	tools, err := mcpServerTools(g, o)
	if err != nil {
		return err
	}
	srv := mcpserver.New(mcpserver.Options{Name: "kaasctl", Version: versionString(), Instructions: mcpInstructions(),
		MaxCalls: o.maxCalls, CallTimeout: o.callTimeout, MaxRequestBytes: o.maxRequest, Log: logw, Redact: mcpRedactor(g)}, tools)
	ctx, stop := untilSignal(ctx)
	defer stop()
	if o.http == "" && o.listener == nil {
		g.Notef("mcp: serving %d tools on stdin/stdout (%s)", len(tools), g.Generation().Short())
		return srv.ServeIO(ctx, io.NopCloser(g.IO.In), mcpserver.NopWriteCloser{Writer: g.IO.Out})
	}
	ln := o.listener
	if ln == nil {
		if ln, err = net.Listen("tcp", o.http); err != nil {
			return fmt.Errorf("mcp: %v", err)
		}
	}
	g.Notef("mcp: serving %d tools at http://%s%s", len(tools), ln.Addr(), mcpserver.Path)
	return srv.ServeHTTP(ctx, ln)
}

// mcpInstructions tell a client what the server is for
// (internal/helptext's mcp-instructions.txt).
func mcpInstructions() string {
	return strings.TrimSuffix(helptext.Page("mcp-instructions", nil), "\n")
}

// mcpLog is where the call log goes: --log-file (appended, never through
// a link), else stderr.
func mcpLog(g *Globals, path string) (io.Writer, func(), error) {
	if path == "" {
		return g.IO.Err, func() {}, nil
	}
	f, err := safefs.OpenAppend(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--log-file %s: %v", path, safefs.Problem(err))
	}
	return f, func() { f.Close() }, nil
}

// mcpRedactor masks the secrets the server's settings hold: the SASL
// password, and a --sasl-password-env that holds a password rather than
// a variable's name.
func mcpRedactor(g *Globals) func(string) string {
	var secrets []string
	envName := g.IO.getenv(wire.EnvName(wire.KeySASLPasswordEnv))
	if g.conn != nil {
		if v := g.conn.flags[wire.KeySASLPasswordEnv]; v != "" {
			envName = v
		}
		if s := g.conn.settings; s != nil && s.SASL.Mechanism != "" {
			if pw, err := s.Password(); err == nil && len(pw) >= 4 {
				secrets = append(secrets, pw)
			}
		}
	}
	if envName != "" && !wire.ConventionalEnvName(envName) {
		secrets = append(secrets, envName)
	}
	return mcpserver.Redactor(secrets, render.ShellQuote)
}

// errMCPWrite refuses a write through the MCP server.
var errMCPWrite = exit.Refusedf("the MCP server never writes: this tool plans (dry run) and returns the command a person runs")

// mcpServerTools builds each tool's schemas and call.
func mcpServerTools(g *Globals, o mcpOptions) ([]mcpserver.Tool, error) {
	var out []mcpserver.Tool
	for _, t := range mcpTools() {
		in, err := mcpserver.InputSchema(reflect.TypeOf(t.input))
		if err != nil {
			return nil, fmt.Errorf("mcp tool %s: %v", t.name, err)
		}
		doc := t.doc
		if t.liveDoc != nil && g.HasBrokers() {
			doc = t.liveDoc
		}
		ds, err := mcpserver.DocumentSchema(reflect.TypeOf(doc), render.SchemaVersionOf(doc))
		if err == nil && render.CarriesGeneration(doc) {
			err = mcpserver.AddMember(ds, render.GenerationField, reflect.TypeFor[volume.GenerationInfo](), "the kaas generation the run assumed")
		}
		if err != nil {
			return nil, fmt.Errorf("mcp tool %s: %v", t.name, err)
		}
		out = append(out, mcpserver.Tool{Name: t.name, Title: t.title, Description: t.description, Plan: t.plan,
			InputSchema: in, OutputSchema: mcpserver.OutputSchema(ds, t.plan), Call: mcpCall(g, o, t)})
	}
	return out, nil
}

// mcpCall is one tool's call: its typed arguments as the command's flags,
// parsed and run by the command's own functions with the server's
// Globals, the output captured.
func mcpCall(g *Globals, o mcpOptions, t mcpTool) func(context.Context, json.RawMessage) (mcpserver.Result, error) {
	return func(ctx context.Context, raw json.RawMessage) (mcpserver.Result, error) {
		in := reflect.New(reflect.TypeOf(t.input))
		if err := json.Unmarshal(raw, in.Interface()); err != nil {
			return mcpserver.Result{}, exit.UsageErrorf("arguments: %v", err)
		}
		args := mcpserver.Args(in.Elem())
		if o.journal != "" && mcpTakesFlag(t.path, "journal") {
			args = append(args, "--journal", o.journal)
		}
		if err := mcpserver.FitsCall(args, o.callTimeout, when.ParseDuration); err != nil {
			return mcpserver.Result{}, err
		}
		var stdout, stderr bytes.Buffer
		gc := g.forCall(&stdout, &stderr)
		c, err := mcpContext(t.path, args, gc)
		if err == nil {
			err = t.run(ctx, gc, c)
		}
		return mcpserver.ResultOf(mcpserver.Call{Tool: t.name, Path: t.path, Command: mcpCommandLine(g, t.path, args), Plan: t.plan},
			stdout.Bytes(), stderr.String(), err)
	}
}

// mcpCommandLine is the command line a call stands for.
func mcpCommandLine(g *Globals, path string, args []string) string {
	var b strings.Builder
	b.WriteString("kaasctl " + path + g.GivenFlags())
	for _, a := range args {
		b.WriteString(" " + render.ShellQuote(a))
	}
	return b.String()
}

// forCall is g for one call: its output captured as JSON, nothing to read.
func (g *Globals) forCall(out, errw io.Writer) *Globals {
	c := *g
	ios := *g.IO
	ios.In, ios.Out, ios.Err, ios.OutTTY, ios.ErrTTY, ios.Process = strings.NewReader(""), out, errw, false, false, false
	c.IO, c.Quiet = &ios, false
	c.Printer = &render.Printer{Format: render.JSON, Out: out, Err: errw}
	c.Printer.Generation = c.generationDoc
	return &c
}

// mcpCommand is a fresh command at path, prepared as the app prepares it
// (its common flags attached).
func mcpCommand(path string) *cli.Command {
	cmds := buildCommands()
	for _, c := range cmds {
		prepare(c, nil)
	}
	return completion.FindPath(cmds, strings.Fields(path))
}

// mcpTakesFlag reports whether the command at path has the flag.
func mcpTakesFlag(path, name string) bool {
	c := mcpCommand(path)
	return c != nil && completion.HasFlag(c.Flags, name)
}

// mcpContext is the command-line context a command's parse reads: the
// command at path with args parsed by its flags (mcpserver.Context).
func mcpContext(path string, args []string, g *Globals) (*cli.Context, error) {
	cmd := mcpCommand(path)
	if cmd == nil {
		return nil, fmt.Errorf("mcp: no command %q", path)
	}
	app := &cli.App{Name: "kaasctl", Writer: g.IO.Out, ErrWriter: g.IO.Err, Metadata: map[string]any{"io": g.IO}}
	return mcpserver.Context(app, cmd, args)
}
