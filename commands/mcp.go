package commands

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/helptext"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/render"
)

func init() {
	register(Descriptor{
		Path:  "mcp",
		Usage: "serve the read-only commands as Model Context Protocol tools (stdio, or streamable HTTP on loopback); writes only as plans",
		Build: leaf(mcpFlags, checkMCP, runMCP),
	})
}

// mcpFlags are mcp's flags, bound to o.
func mcpFlags(o *mcpOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "http", Usage: "serve streamable HTTP on `HOST:PORT` (loopback unless --allow-remote) instead of stdio", Destination: &o.http},
		&cli.BoolFlag{Name: "allow-remote", Usage: "let --http listen beyond loopback (anyone who reaches it reads with this process's credentials)", Destination: &o.allowRemote},
		&cli.StringFlag{Name: "log-file", Usage: "append the call log to `FILE` (default stderr)", Destination: &o.logFile},
		&cli.IntFlag{Name: "max-calls", Value: mcpserver.DefaultMaxCalls, Usage: "tool calls at once (`N`); more are refused as busy", Destination: &o.maxCalls},
		completion.DurationFlag(&o.callTimeout, "call-timeout", mcpserver.DefaultCallTimeout, "bound each call to `D`"),
		&cli.StringFlag{Name: "max-request-bytes", Value: "1MiB", Usage: "bound each request (a stdio line, an HTTP body) to `SIZE`"},
		&cli.StringFlag{Name: "journal", Usage: "the 'kaasctl watch --journal' or 'exporter --journal' `DIR` the tools read (explain's moves, takeover trace, offsets history, restores)", Destination: &o.journal},
	}
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

// checkMCP refuses arguments, a bind beyond loopback without
// --allow-remote, and bounds out of range; it reads --max-request-bytes.
func checkMCP(c *cli.Context, _ *Globals, o *mcpOptions) error {
	if c.NArg() > 0 {
		return exit.UsageErrorf("mcp takes no arguments (got %q)", c.Args().First())
	}
	if o.http != "" {
		if err := mcpserver.CheckBind(o.http, o.allowRemote); err != nil {
			return exit.UsageErrorf("%v", err)
		}
	}
	if o.maxCalls < 1 || o.callTimeout <= 0 {
		return exit.UsageErrorf("--max-calls must be at least 1 and --call-timeout positive")
	}
	n, err := flagSize(c, "max-request-bytes")
	if err != nil || n < 1<<10 {
		return exit.UsageErrorf("--max-request-bytes: %v (at least 1KiB)", errOr(err, "too small"))
	}
	o.maxRequest = n
	return nil
}

func errOr(err error, s string) any {
	if err != nil {
		return err
	}
	return s
}

func runMCP(ctx context.Context, g *Globals, o mcpOptions) error {
	if !g.HasVolume() && !g.WantsBrokers() {
		return exit.UsageErrorf("nothing to serve: give the volume (--data-dir/--cluster-dir) and/or the brokers (--brokers)")
	}
	logw, closeLog, err := mcpserver.OpenLog(o.logFile, g.IO.Err)
	if err != nil {
		return err
	}
	defer closeLog()
	cmds := mcpserver.Commands{Run: g.runForMCP, TakesFlag: mcpTakesFlag, Given: g.GivenFlags(), Journal: o.journal, CallTimeout: o.callTimeout}
	tools, err := cmds.Tools(mcpTools(g.HasBrokers()))
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

// MCPTool is a command served as a tool of 'kaasctl mcp': a read-only
// command, or a write as its dry run (Plan). Its arguments name no file,
// broker or profile: a tool reads the volume, the brokers and the journal
// 'kaasctl mcp' was started with.
type MCPTool struct {
	Name, Title, Description string
	// Input is its arguments' type (internal/mcpserver/inputs.go).
	Input any
	// Doc is the document it prints (nil: its descriptor's first);
	// LiveDoc the one it prints with brokers, when another.
	Doc, LiveDoc any
	// Plan: a write planned, never executed.
	Plan bool
}

// mcpTools are the registered commands' tools (live: the brokers are
// given, so a command prints its live document).
func mcpTools(live bool) []mcpserver.Command {
	var out []mcpserver.Command
	for _, d := range registry {
		t := d.Tool
		if t == nil {
			continue
		}
		c := mcpserver.Command{Name: t.Name, Title: t.Title, Description: t.Description, Path: d.Path, Input: t.Input, Doc: t.Doc, Plan: t.Plan}
		if c.Doc == nil {
			c.Doc = d.Docs[0].Doc
		}
		if live && t.LiveDoc != nil {
			c.Doc = t.LiveDoc
		}
		out = append(out, c)
	}
	return out
}

// mcpInstructions tell a client what the server is for
// (internal/helptext's mcp-instructions.txt).
func mcpInstructions() string {
	return strings.TrimSuffix(helptext.Page("mcp-instructions", nil), "\n")
}

// mcpRedactor masks the secrets the server's settings hold
// (wire.Connection.Secrets) in every result and log line.
func mcpRedactor(g *Globals) func(string) string {
	return mcpserver.Redactor(g.conn.Secrets(g.IO.getenv), render.ShellQuote)
}

// errMCPWrite refuses a write through the MCP server.
var errMCPWrite = exit.Refusedf("the MCP server never writes: this tool plans (dry run) and returns the command a person runs")

// mcpGlobals is the app metadata key of the Globals a tool's call runs
// its command with (globalsOf).
const mcpGlobals = "mcp-globals"

// runForMCP runs the command at path with args as a tool's call: the
// command's own action over its flags, with the server's Globals, the
// output captured as JSON, nothing to read. A plan's command refuses
// what would write (--execute, --export-rollback) before anything runs.
func (g *Globals) runForMCP(ctx context.Context, path string, args []string, out, errw io.Writer) error {
	gc := g.forCall(out, errw)
	c, err := mcpContext(path, args, gc)
	if err != nil {
		return err
	}
	if d, _ := descriptorOf(path); d.Tool != nil && d.Tool.Plan && (c.Bool("execute") || c.String("export-rollback") != "") {
		return errMCPWrite
	}
	c.Context = ctx
	return c.Command.Action(c)
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
	prepareTree(cmds)
	return completion.FindPath(cmds, strings.Fields(path))
}

// mcpTakesFlag reports whether the command at path has the flag.
func mcpTakesFlag(path, name string) bool {
	c := mcpCommand(path)
	return c != nil && completion.HasFlag(c.Flags, name)
}

// mcpContext is the command-line context the command at path runs with:
// args parsed by its flags (mcpserver.Context), g its Globals.
func mcpContext(path string, args []string, g *Globals) (*cli.Context, error) {
	cmd := mcpCommand(path)
	if cmd == nil {
		return nil, fmt.Errorf("mcp: no command %q", path)
	}
	app := &cli.App{Name: "kaasctl", Writer: g.IO.Out, ErrWriter: g.IO.Err, Metadata: map[string]any{"io": g.IO, mcpGlobals: g}}
	return mcpserver.Context(app, cmd, args)
}
