package kaasctl_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// maxCommandFuncLines is the longest a function in commands/ may be, from
// its func keyword to its closing brace (function literals too).
const maxCommandFuncLines = 60

// wiringViolations lists what makes the Go files in dir more than wiring:
// a function over maxCommandFuncLines, a go statement, a sync import (the
// package's tests run without -race because it has none), or a Kafka
// protocol import (wire rounds belong in internal/wire).
func wiringViolations(fset *token.FileSet, files []*ast.File) []string {
	var out []string
	banned := map[string]string{
		"sync":                              "concurrency belongs in the package doing the work",
		"sync/atomic":                       "concurrency belongs in the package doing the work",
		"github.com/twmb/franz-go/pkg/kgo":  "wire calls belong in internal/wire",
		"github.com/twmb/franz-go/pkg/kadm": "wire calls belong in internal/wire",
		"github.com/twmb/franz-go/pkg/kmsg": "wire calls belong in internal/wire",
	}
	for _, f := range files {
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if why, ok := banned[p]; ok {
				out = append(out, fmt.Sprintf("%s: imports %s (%s)", fset.Position(im.Pos()), p, why))
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			name := "function literal"
			switch x := n.(type) {
			case *ast.GoStmt:
				out = append(out, fmt.Sprintf("%s: go statement (concurrency belongs in the package doing the work)", fset.Position(x.Pos())))
			case *ast.FuncDecl:
				body, name = x.Body, x.Name.Name
			case *ast.FuncLit:
				body = x.Body
			}
			if body != nil {
				if l := fset.Position(body.Rbrace).Line - fset.Position(n.Pos()).Line + 1; l > maxCommandFuncLines {
					out = append(out, fmt.Sprintf("%s: %s is %d lines (at most %d)", fset.Position(n.Pos()), name, l, maxCommandFuncLines))
				}
			}
			return true
		})
	}
	return out
}

func parseDir(t *testing.T, dir string) (*token.FileSet, []*ast.File) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

// commands/ is wiring: flags → options → run → render, each piece short.
func TestCommandsAreWiring(t *testing.T) {
	t.Parallel()
	fset, files := parseDir(t, "commands")
	if len(files) < 20 {
		t.Fatalf("only %d files read in commands/", len(files))
	}
	for _, v := range wiringViolations(fset, files) {
		t.Error(v)
	}
}

// The check fails on each kind of violation.
func TestCommandsAreWiringCatches(t *testing.T) {
	t.Parallel()
	long := "package p\nfunc long() {\n" + strings.Repeat("\t_ = 1\n", maxCommandFuncLines) + "}\n"
	cases := map[string]string{
		"is 62 lines":  long,
		"go statement": "package p\nfunc f() { go f() }\n",
		"imports sync": "package p\nimport \"sync\"\nvar mu sync.Mutex\n",
		"imports github.com/twmb/franz-go/pkg/kadm": "package p\nimport _ \"github.com/twmb/franz-go/pkg/kadm\"\n",
		"function literal is 62 lines":              "package p\nvar f = func() {\n" + strings.Repeat("\t_ = 1\n", maxCommandFuncLines) + "}\n",
	}
	for want, src := range cases {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := wiringViolations(fset, []*ast.File{f})
		if len(got) != 1 || !strings.Contains(got[0], want) {
			t.Errorf("%q: violations %q", want, got)
		}
	}
	fset := token.NewFileSet()
	f, _ := parser.ParseFile(fset, "ok.go", "package p\nfunc short() { _ = func() {} }\n", 0)
	if got := wiringViolations(fset, []*ast.File{f}); len(got) != 0 {
		t.Errorf("a clean file: %q", got)
	}
}
