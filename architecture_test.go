// Package kaasctl_test holds ARCHITECTURE.md's package table against the
// code: the page says which project packages each package imports, and the
// order of its rows is the layering (a package imports only packages listed
// below it).
package kaasctl_test

import (
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const modulePath = "github.com/kaasctl/kaasctl"

// archRow is one row of the package table.
type archRow struct {
	line    int      // line number in ARCHITECTURE.md
	names   []string // the packages (or plain directories) the row names
	imports []string // the project packages the row says they import
}

// parseArchTable reads the table under "## Packages".
func parseArchTable(text string) ([]archRow, error) {
	var rows []archRow
	in := false
	for i, ln := range strings.Split(text, "\n") {
		if strings.HasPrefix(ln, "## ") {
			if in {
				break
			}
			in = ln == "## Packages"
			continue
		}
		if !in || !strings.HasPrefix(ln, "|") {
			continue
		}
		cells := splitRow(ln)
		if len(cells) != 3 {
			return nil, fmt.Errorf("ARCHITECTURE.md:%d: a package row has 3 cells, this one %d", i+1, len(cells))
		}
		if cells[0] == "package" || strings.Trim(cells[0], "-") == "" {
			continue // header and separator
		}
		r := archRow{line: i + 1}
		for _, n := range strings.Split(cells[0], ",") {
			n = strings.TrimSuffix(strings.Trim(strings.TrimSpace(n), "`"), "/")
			if n == "" {
				return nil, fmt.Errorf("ARCHITECTURE.md:%d: empty package name", i+1)
			}
			r.names = append(r.names, n)
		}
		if imp := strings.TrimSpace(cells[2]); imp != "" && imp != "—" {
			for _, n := range strings.Split(imp, ",") {
				r.imports = append(r.imports, strings.TrimSpace(n))
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("ARCHITECTURE.md has no package table under '## Packages'")
	}
	return rows, nil
}

// splitRow splits a markdown table row on the pipes that are not escaped.
func splitRow(ln string) []string {
	ln = strings.TrimSpace(ln)
	ln = strings.TrimSuffix(strings.TrimPrefix(ln, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(ln); i++ {
		switch {
		case ln[i] == '\\' && i+1 < len(ln) && ln[i+1] == '|':
			cur.WriteByte('|')
			i++
		case ln[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(ln[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// projectImports returns every package of the module (relative path) and
// the project packages its non-test files import, read with go/build for
// this platform.
func projectImports(root string) (map[string][]string, error) {
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if path == root {
			return nil // this test's own package
		}
		p, err := build.Default.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return fmt.Errorf("%s: %v", path, err)
		}
		rel, _ := filepath.Rel(root, path)
		imps := []string{}
		for _, imp := range p.Imports {
			if r, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
				imps = append(imps, r)
			}
		}
		slices.Sort(imps)
		out[filepath.ToSlash(rel)] = imps
		return nil
	})
	return out, err
}

// checkArchitecture lists every way the table and the code disagree.
func checkArchitecture(rows []archRow, real map[string][]string) []string {
	var problems []string
	pos := map[string]int{} // package → row index
	for i, r := range rows {
		for _, n := range r.names {
			if _, dup := pos[n]; dup {
				problems = append(problems, fmt.Sprintf("ARCHITECTURE.md:%d: %s has two rows", r.line, n))
			}
			pos[n] = i
		}
	}
	for pkg, imps := range real {
		i, ok := pos[pkg]
		if !ok {
			problems = append(problems, fmt.Sprintf("package %s has no row in ARCHITECTURE.md's table (it imports: %s)", pkg, listOrNone(imps)))
			continue
		}
		r := rows[i]
		said := slices.Sorted(slices.Values(r.imports))
		if !slices.Equal(said, imps) {
			problems = append(problems, fmt.Sprintf("ARCHITECTURE.md:%d: %s imports %s, the table says %s", r.line, pkg, listOrNone(imps), listOrNone(said)))
		}
		for _, imp := range imps {
			if j, ok := pos[imp]; ok && j <= i {
				problems = append(problems, fmt.Sprintf("ARCHITECTURE.md:%d: %s imports %s, which is not listed below it (an upward or sideways import)", r.line, pkg, imp))
			}
		}
	}
	for _, r := range rows {
		for _, imp := range r.imports {
			if _, ok := real[imp]; !ok {
				problems = append(problems, fmt.Sprintf("ARCHITECTURE.md:%d: %q is not a package of this module", r.line, imp))
			}
		}
		if len(r.imports) > 0 {
			for _, n := range r.names {
				if _, ok := real[n]; !ok {
					problems = append(problems, fmt.Sprintf("ARCHITECTURE.md:%d: %s is not a package of this module", r.line, n))
				}
			}
		}
	}
	slices.Sort(problems)
	return problems
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "no project package"
	}
	return strings.Join(s, ", ")
}

func loadArchitecture(t *testing.T) ([]archRow, map[string][]string) {
	t.Helper()
	text, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parseArchTable(string(text))
	if err != nil {
		t.Fatal(err)
	}
	real, err := projectImports(".")
	if err != nil {
		t.Fatal(err)
	}
	return rows, real
}

// TestArchitecture: the table names every package with exactly its imports,
// and no package imports one listed above it.
func TestArchitecture(t *testing.T) {
	t.Parallel()
	rows, real := loadArchitecture(t)
	for _, p := range checkArchitecture(rows, real) {
		t.Error(p)
	}
	if len(real) < 10 {
		t.Fatalf("found only %d packages: %v", len(real), real)
	}
}

// TestArchitectureCatchesDrift edits the table the ways it goes wrong and
// expects the check to say so.
func TestArchitectureCatchesDrift(t *testing.T) {
	t.Parallel()
	rows, real := loadArchitecture(t)
	find := func(rs []archRow, name string) int {
		for i, r := range rs {
			if slices.Contains(r.names, name) {
				return i
			}
		}
		t.Fatalf("no row for %s", name)
		return -1
	}
	clone := func() []archRow {
		out := slices.Clone(rows)
		for i := range out {
			out[i].names = slices.Clone(out[i].names)
			out[i].imports = slices.Clone(out[i].imports)
		}
		return out
	}
	edits := map[string]func([]archRow) []archRow{
		"an import left out": func(rs []archRow) []archRow {
			i := find(rs, "internal/volume")
			rs[i].imports = rs[i].imports[1:]
			return rs
		},
		"an import that is not there": func(rs []archRow) []archRow {
			i := find(rs, "internal/wire")
			rs[i].imports = append(rs[i].imports, "internal/exit")
			return rs
		},
		"a package without a row": func(rs []archRow) []archRow {
			return slices.Delete(rs, find(rs, "internal/anomaly"), find(rs, "internal/anomaly")+1)
		},
		"rows out of layer order": func(rs []archRow) []archRow {
			i, j := find(rs, "inspect"), find(rs, "internal/volume")
			rs[i], rs[j] = rs[j], rs[i]
			return rs
		},
		"a package that does not exist": func(rs []archRow) []archRow {
			i := find(rs, "render")
			rs[i].imports = append(rs[i].imports, "internal/nothing")
			return rs
		},
	}
	for name, edit := range edits {
		if got := checkArchitecture(edit(clone()), real); len(got) == 0 {
			t.Errorf("%s: the check found nothing", name)
		}
	}
	// An upward import in the code (not the table): volume importing inspect.
	code := map[string][]string{}
	for k, v := range real {
		code[k] = slices.Clone(v)
	}
	code["internal/volume"] = slices.Sorted(slices.Values(append(code["internal/volume"], "inspect")))
	if got := checkArchitecture(clone(), code); len(got) < 2 {
		t.Errorf("an upward import in the code: %v", got)
	}
}
