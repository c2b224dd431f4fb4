// Command racepkgs splits the module's packages for 'make test': those whose
// own (non-test) code is concurrent run under the race detector, the rest
// without it. A package is concurrent when its code starts a goroutine (a
// go statement) or imports sync, sync/atomic, errgroup or fsnotify (it shares
// state with goroutines started elsewhere). Tests of a plain package still
// exercise concurrent packages below it; those packages' own tests run with
// -race.
//
//	go run ./scripts/racepkgs            # "race" and "plain" lines of import paths
//	go run ./scripts/racepkgs -list race # only the race list, space separated
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// concurrentImports mark a package as sharing state with goroutines.
var concurrentImports = map[string]bool{
	"sync":                         true,
	"sync/atomic":                  true,
	"golang.org/x/sync/errgroup":   true,
	"github.com/fsnotify/fsnotify": true,
}

type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
}

func main() {
	list := flag.String("list", "", "print only this list (race or plain), space separated")
	flag.Parse()
	pkgs, err := listPackages(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "racepkgs:", err)
		os.Exit(1)
	}
	var race, plain []string
	for _, p := range pkgs {
		c, why, err := concurrent(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "racepkgs:", err)
			os.Exit(1)
		}
		if c {
			race = append(race, p.ImportPath)
			if *list == "" {
				fmt.Fprintf(os.Stderr, "race  %s (%s)\n", p.ImportPath, why)
			}
			continue
		}
		plain = append(plain, p.ImportPath)
	}
	switch *list {
	case "race":
		fmt.Println(strings.Join(race, " "))
	case "plain":
		fmt.Println(strings.Join(plain, " "))
	case "":
		fmt.Println("race:", strings.Join(race, " "))
		fmt.Println("plain:", strings.Join(plain, " "))
	default:
		fmt.Fprintf(os.Stderr, "racepkgs: -list %q: choose race or plain\n", *list)
		os.Exit(2)
	}
}

func listPackages(patterns []string) ([]pkg, error) {
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	out, err := exec.Command("go", append([]string{"list", "-json=ImportPath,Dir,GoFiles"}, patterns...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// concurrent reports whether p's non-test code is concurrent, and the first
// reason found (file:line).
func concurrent(p pkg) (bool, string, error) {
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		path := filepath.Join(p.Dir, name)
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return false, "", err
		}
		for _, im := range f.Imports {
			if ip, _ := strconv.Unquote(im.Path.Value); concurrentImports[ip] {
				return true, fmt.Sprintf("%s imports %s", name, ip), nil
			}
		}
		var at token.Pos
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok && at == token.NoPos {
				at = g.Pos()
			}
			return at == token.NoPos
		})
		if at != token.NoPos {
			return true, fmt.Sprintf("go statement at %s:%d", name, fset.Position(at).Line), nil
		}
	}
	return false, "", nil
}
