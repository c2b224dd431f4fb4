package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/when"
	"github.com/kaasctl/kaasctl/render"
)

// A kaasctl command served as a tool: its typed arguments become the
// command's flags (Args), the command runs in this process with the
// server's volume and brokers (Commands.Run), and its JSON document is
// the tool's result (ResultOf).

// Command is one command served as a tool.
type Command struct {
	Name, Title, Description string
	// Path is the command it runs ("groups describe").
	Path string
	// Input is its arguments' type (a struct whose fields carry the flag
	// they stand for: `flag:"name"`, or `arg:""` for positional ones).
	Input any
	// Doc is a value of the document the command prints (the result's
	// schema).
	Doc any
	// Plan: a write command planned, never executed (its dry run).
	Plan bool
}

// Commands runs the commands of the tools.
type Commands struct {
	// Run runs the command at path with args (its own flags), its
	// document (-o json) on out, its notes on errw.
	Run func(ctx context.Context, path string, args []string, out, errw io.Writer) error
	// TakesFlag reports whether the command at path has the flag name.
	TakesFlag func(path, name string) bool
	// Given are the volume and connection flags the server was started
	// with, as the command line a call stands for repeats them.
	Given string
	// Journal is the --journal DIR given to every command that takes it
	// ("": none).
	Journal string
	// CallTimeout bounds each call (an observation window must fit in it).
	CallTimeout time.Duration
}

// Tools are the commands' tools, each with its schemas and call.
func (r Commands) Tools(cmds []Command) ([]Tool, error) {
	var out []Tool
	for _, c := range cmds {
		in, err := InputSchema(reflect.TypeOf(c.Input))
		if err != nil {
			return nil, fmt.Errorf("mcp tool %s: %v", c.Name, err)
		}
		ds, err := DocumentSchema(reflect.TypeOf(c.Doc), render.SchemaVersionOf(c.Doc))
		if err == nil && render.CarriesGeneration(c.Doc) {
			err = AddMember(ds, render.GenerationField, reflect.TypeFor[volume.GenerationInfo](), "the kaas generation the run assumed")
		}
		if err != nil {
			return nil, fmt.Errorf("mcp tool %s: %v", c.Name, err)
		}
		out = append(out, Tool{Name: c.Name, Title: c.Title, Description: c.Description, Plan: c.Plan,
			InputSchema: in, OutputSchema: OutputSchema(ds, c.Plan), Call: r.call(c)})
	}
	return out, nil
}

// call is one tool's call: its typed arguments as the command's flags,
// run by the command's own functions, the output captured.
func (r Commands) call(c Command) func(context.Context, json.RawMessage) (Result, error) {
	return func(ctx context.Context, raw json.RawMessage) (Result, error) {
		in := reflect.New(reflect.TypeOf(c.Input))
		if err := json.Unmarshal(raw, in.Interface()); err != nil {
			return Result{}, exit.UsageErrorf("arguments: %v", err)
		}
		args := Args(in.Elem())
		if r.Journal != "" && r.TakesFlag(c.Path, "journal") {
			args = append(args, "--journal", r.Journal)
		}
		if err := FitsCall(args, r.CallTimeout, when.ParseDuration); err != nil {
			return Result{}, err
		}
		var stdout, stderr bytes.Buffer
		err := r.Run(ctx, c.Path, args, &stdout, &stderr)
		return ResultOf(Call{Tool: c.Name, Path: c.Path, Command: CommandLine(c.Path, r.Given, args), Plan: c.Plan}, stdout.Bytes(), stderr.String(), err)
	}
}

// OpenLog is where the call log goes: path (appended, never through a
// link), else errw; the func closes it.
func OpenLog(path string, errw io.Writer) (io.Writer, func(), error) {
	if path == "" {
		return errw, func() {}, nil
	}
	f, err := safefs.OpenAppend(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--log-file %s: %v", path, safefs.Problem(err))
	}
	return f, func() { f.Close() }, nil
}

// CommandLine is "kaasctl PATH" with the flags given to the server and a
// call's args (shell-quoted).
func CommandLine(path, given string, args []string) string {
	var b strings.Builder
	b.WriteString("kaasctl " + path + given)
	for _, a := range args {
		b.WriteString(" " + render.ShellQuote(a))
	}
	return b.String()
}
