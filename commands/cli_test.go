package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cliResult is what one kaasctl run printed.
type cliResult struct {
	Out, Err string
	Code     int
}

// runCLI runs kaasctl in-process with the given stdin and environment.
func runCLI(t testing.TB, stdin string, env map[string]string, args ...string) cliResult {
	t.Helper()
	return runCLIAt(t, nil, stdin, env, args...)
}

// runCLIAt is runCLI with the clock pinned (nil: the real clock).
func runCLIAt(t testing.TB, now func() time.Time, stdin string, env map[string]string, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	ios := &IOStreams{
		In:     strings.NewReader(stdin),
		Out:    &out,
		Err:    &errb,
		Getenv: func(k string) string { return env[k] },
		Now:    now,
	}
	code := Main(append([]string{"kaasctl"}, args...), ios)
	return cliResult{Out: out.String(), Err: errb.String(), Code: code}
}

// golden compares got with testdata/golden/NAME (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	checkGolden(t, name, []byte(got))
}

// repoTestdata is the repository's top-level testdata dir.
func repoTestdata(parts ...string) string {
	return filepath.Join(append([]string{"..", "testdata"}, parts...)...)
}

// writeFile writes a file under dir, creating parents.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
