package mcpserver

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
)

// A tool's call as its command runs it: the typed arguments as the
// command's flags (Args), its output as the tool's result (ResultOf), and
// the secrets kept out of the call log (Redactor).

// Args are the flags and arguments a tool's typed arguments stand for.
func Args(v reflect.Value) []string {
	var flags, pos []string
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		name, isFlag := f.Tag.Lookup("flag")
		_, isArg := f.Tag.Lookup("arg")
		var vals []string
		switch fv.Kind() {
		case reflect.Bool:
			if fv.Bool() {
				flags = append(flags, "--"+name)
			}
			continue
		case reflect.Int:
			if fv.Int() != 0 {
				vals = []string{strconv.FormatInt(fv.Int(), 10)}
			}
		case reflect.String:
			if fv.String() != "" {
				vals = []string{fv.String()}
			}
		case reflect.Slice:
			vals = fv.Interface().([]string)
		}
		for _, val := range vals {
			switch {
			case isArg:
				pos = append(pos, val)
			case isFlag:
				flags = append(flags, "--"+name+"="+val)
			}
		}
	}
	if len(pos) > 0 {
		flags = append(append(flags, "--"), pos...)
	}
	return flags
}

// Call is what a tool's call ran: the tool, its command's path, the
// command line it stands for, and whether it is a write's plan.
type Call struct {
	Tool, Path, Command string
	Plan                bool
}

// ResultOf is a call's result: the document and how the command ended,
// or its error (with the notes it wrote).
func ResultOf(t Call, doc []byte, notes string, err error) (Result, error) {
	code := exit.Code(err)
	if err != nil && code != exit.Problems {
		if n := strings.TrimSpace(notes); n != "" {
			err = &exit.CodedError{Code: code, Err: fmt.Errorf("%w\n%s", err, n)}
		}
		return Result{}, err
	}
	if !json.Valid(doc) {
		return Result{}, fmt.Errorf("%s printed no JSON document", t.Path)
	}
	out := Output{Tool: t.Tool, Command: t.Command, ExitCode: code, Outcome: Outcome(code),
		Notes: NoteLines(notes), Result: json.RawMessage(bytes.TrimSpace(doc))}
	if t.Plan {
		out.Execute = out.Command + " --execute"
	}
	return Result{Structured: out, ExitCode: code}, nil
}

// NoteLines are the lines a command wrote on stderr.
func NoteLines(s string) []string {
	out := []string{}
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Redactor masks secrets in s: each as it is, as it reads inside a JSON
// string, and as quote writes it (a shell word).
func Redactor(secrets []string, quote func(string) string) func(string) string {
	return func(s string) string {
		for _, sec := range secrets {
			s = strings.ReplaceAll(s, sec, "********")
			if q, _ := json.Marshal(sec); len(q) > 2 {
				s = strings.ReplaceAll(s, string(q[1:len(q)-1]), "********")
			}
			s = strings.ReplaceAll(s, quote(sec), "********")
		}
		return s
	}
}

// NopWriteCloser is a Writer with a Close that does nothing (standard
// output, which ServeIO must not close).
type NopWriteCloser struct{ io.Writer }

func (NopWriteCloser) Close() error { return nil }

// FitsCall refuses an observation window that cannot end within the
// call's bound (parse reads a window flag's duration).
func FitsCall(args []string, bound time.Duration, parse func(string) (time.Duration, error)) error {
	for _, a := range args {
		for _, name := range WindowFlags {
			if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
				d, err := parse(v)
				if err == nil && d+CallMargin > bound {
					return exit.UsageErrorf("--%s %s does not fit in the call's bound of %s (kaasctl mcp --call-timeout), with %s to spare", name, v, bound, CallMargin)
				}
			}
		}
	}
	return nil
}

// WindowFlags are the flags whose duration a call must fit in.
var WindowFlags = []string{"window", "drain-window"}

// CallMargin is the time a call needs besides its observation window.
const CallMargin = 15 * time.Second

// Context is the command-line context a command's parse reads: cmd,
// under app, with args parsed by its flags.
func Context(app *cli.App, cmd *cli.Command, args []string) (*cli.Context, error) {
	set := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	set.SetOutput(io.Discard)
	for _, f := range cmd.Flags {
		if err := f.Apply(set); err != nil {
			return nil, err
		}
	}
	if err := set.Parse(args); err != nil {
		return nil, exit.UsageErrorf("%v", err)
	}
	c := cli.NewContext(app, set, nil)
	c.Command = cmd
	return c, nil
}
