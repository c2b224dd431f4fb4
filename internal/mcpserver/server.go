// Package mcpserver serves kaasctl's read-only commands as Model Context
// Protocol tools, over stdio or streamable HTTP, on the official Go SDK.
// A kaasctl command becomes a Tool (command.go) from its path, its typed
// arguments and its document; the caller runs the command (its own flags
// and logic) for each call. This package bounds the calls
// (argument size, calls at once, time), logs each one (tool, arguments
// with secrets redacted, duration, outcome) and maps typed errors to the
// exit meanings of internal/exit.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sort"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaasctl/kaasctl/internal/exit"
)

// Defaults of the bounds.
const (
	DefaultMaxCalls        = 4
	DefaultCallTimeout     = 2 * time.Minute
	DefaultMaxRequestBytes = 1 << 20
	// MaxArgumentBytes bounds one call's arguments (JSON).
	MaxArgumentBytes = 64 << 10
)

// Options configure a Server.
type Options struct {
	Name, Version string
	// Instructions tell a client what the server is for.
	Instructions string
	// MaxCalls is how many tool calls run at once; one more is refused
	// as busy (not queued).
	MaxCalls int
	// CallTimeout bounds each call.
	CallTimeout time.Duration
	// MaxRequestBytes bounds one request: a stdio line, an HTTP body.
	MaxRequestBytes int64
	// Log gets one JSON line per call (nil: none).
	Log io.Writer
	// Redact masks secrets in every result and log line (nil: none).
	Redact func(string) string
}

// Result is what a tool's Call returns.
type Result struct {
	// Structured is the structured content (valid against the tool's
	// output schema); Text the content for clients that read text.
	Structured any
	Text       string
	// ExitCode is the command's (0 ok, 3 problems found).
	ExitCode int
}

// Tool is one tool.
type Tool struct {
	Name, Title, Description string
	// Plan marks a tool that plans a write (a dry run) and never executes it.
	Plan                      bool
	InputSchema, OutputSchema *jsonschema.Schema
	// Call runs the tool with its arguments (already valid against the
	// input schema). An error carrying an exit code (internal/exit) is
	// reported with that code's meaning.
	Call func(ctx context.Context, args json.RawMessage) (Result, error)
}

// Server is an MCP server of tools.
type Server struct {
	opt   Options
	mcp   *mcp.Server
	slots chan struct{}
	log   *slog.Logger
}

// New builds a server of tools.
func New(opt Options, tools []Tool) *Server {
	if opt.MaxCalls <= 0 {
		opt.MaxCalls = DefaultMaxCalls
	}
	if opt.CallTimeout <= 0 {
		opt.CallTimeout = DefaultCallTimeout
	}
	if opt.MaxRequestBytes <= 0 {
		opt.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opt.Redact == nil {
		opt.Redact = func(s string) string { return s }
	}
	s := &Server{opt: opt, slots: make(chan struct{}, opt.MaxCalls)}
	if opt.Log != nil {
		s.log = slog.New(slog.NewJSONHandler(opt.Log, nil))
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: opt.Name, Version: opt.Version}, &mcp.ServerOptions{Instructions: opt.Instructions})
	for _, t := range tools {
		s.add(t)
	}
	return s
}

func (s *Server) add(t Tool) {
	readOnly, destructive, closed := !t.Plan, false, false
	tool := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		Annotations: &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: readOnly || t.Plan, DestructiveHint: &destructive, IdempotentHint: true, OpenWorldHint: &closed}}
	mcp.AddTool(s.mcp, tool, func(ctx context.Context, req *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, map[string]any, error) {
		return s.call(ctx, t, req.Params.Arguments, in)
	})
}

// call runs one tool call within the bounds and logs it.
func (s *Server) call(ctx context.Context, t Tool, raw json.RawMessage, in map[string]any) (*mcp.CallToolResult, map[string]any, error) {
	start := time.Now()
	args, _ := json.Marshal(in)
	res, out, err := s.bounded(ctx, t, raw, args)
	s.logCall(t.Name, in, time.Since(start), res.ExitCode, err)
	if err != nil {
		return nil, nil, errors.New(s.opt.Redact(ErrorText(err)))
	}
	r := &mcp.CallToolResult{}
	if res.Text != "" {
		r.Content = []mcp.Content{&mcp.TextContent{Text: s.opt.Redact(res.Text)}}
	}
	return r, out, nil
}

// errBusy: every call slot is taken.
var errBusy = errors.New("busy")

func (s *Server) bounded(ctx context.Context, t Tool, raw, args json.RawMessage) (Result, map[string]any, error) {
	if len(raw) > MaxArgumentBytes {
		return Result{}, nil, exit.UsageErrorf("the arguments are %d bytes: at most %d", len(raw), MaxArgumentBytes)
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	default:
		return Result{}, nil, &exit.CodedError{Code: exit.Error, Err: fmt.Errorf("%w: %d calls are running (kaasctl mcp --max-calls %d); call again when one has ended", errBusy, s.opt.MaxCalls, s.opt.MaxCalls)}
	}
	ctx, cancel := context.WithTimeout(ctx, s.opt.CallTimeout)
	defer cancel()
	res, err := t.Call(ctx, args)
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("the call took longer than its bound of %s (kaasctl mcp --call-timeout)", s.opt.CallTimeout)
	}
	if err != nil {
		return res, nil, err
	}
	out, err := s.structured(res.Structured)
	return res, out, err
}

// structured is the result as JSON (redacted), decoded for the SDK to
// validate against the output schema.
func (s *Server) structured(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(s.opt.Redact(string(b))), &out); err != nil {
		return nil, fmt.Errorf("the result is not a JSON object after redaction: %v", err)
	}
	return out, nil
}

// Outcome names an exit code as the log and errors say it.
func Outcome(code int) string {
	switch code {
	case exit.OK:
		return "ok"
	case exit.Usage:
		return "usage"
	case exit.Problems:
		return "problems"
	case exit.Refused:
		return "refused"
	}
	return "error"
}

// ErrorText is a failed call's message: its exit meaning, code and error.
func ErrorText(err error) string {
	code := exit.Code(err)
	return fmt.Sprintf("%s (exit %d): %v", Outcome(code), code, err)
}

// secretKey matches argument names whose values are never logged.
var secretKey = regexp.MustCompile(`(?i)pass|secret|token|jaas|credential|key$`)

// logCall writes the call's log line.
func (s *Server) logCall(tool string, in map[string]any, d time.Duration, code int, err error) {
	if s.log == nil {
		return
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := make(map[string]any, len(keys))
	for _, k := range keys {
		v := in[k]
		if secretKey.MatchString(k) {
			v = "********"
		} else if b, e := json.Marshal(v); e == nil {
			v = json.RawMessage(s.opt.Redact(string(b)))
		}
		args[k] = v
	}
	outcome, msg := Outcome(code), ""
	if err != nil {
		code = exit.Code(err)
		outcome, msg = Outcome(code), s.opt.Redact(err.Error())
		if errors.Is(err, errBusy) {
			outcome = "busy"
		}
	}
	s.log.Info("mcp call", "tool", tool, "args", args, "durationMs", d.Milliseconds(), "outcome", outcome, "exitCode", code, "error", msg)
}

// MCP is the SDK server (for transports).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// ServeIO serves one client over newline-delimited JSON on r and w (the
// stdio transport) until it disconnects or ctx is done.
func (s *Server) ServeIO(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	return s.mcp.Run(ctx, &mcp.IOTransport{Reader: r, Writer: w, MaxLineLength: int(s.opt.MaxRequestBytes)})
}
