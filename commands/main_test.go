package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// envRunAsCLI makes this test binary run as kaasctl itself, so a test that
// needs the command on a PATH (a shell script, bash completion) uses the
// binary already built for the tests instead of building another.
const envRunAsCLI = "KAASCTL_TEST_RUN_AS_CLI"

// KAASCTL_TEST_MAIN, when set, holds the arguments (separated by \x1f)
// of one kaasctl run: a real process, with real signals.
func TestMain(m *testing.M) {
	if args := os.Getenv("KAASCTL_TEST_MAIN"); args != "" {
		os.Exit(Main(append([]string{"kaasctl"}, strings.Split(args, "\x1f")...), System()))
	}
	if spec := os.Getenv(envTestConsumer); spec != "" {
		os.Exit(runTestConsumer(spec))
	}
	if os.Getenv(envRunAsCLI) == "1" {
		TuneRuntime()
		os.Exit(Main(os.Args, System()))
	}
	os.Exit(m.Run())
}

// cliOnPath returns a directory holding "kaasctl" (a link to this test
// binary) and the environment that makes it run as kaasctl.
func cliOnPath(t *testing.T) (dir string, env []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if err := os.Symlink(exe, filepath.Join(dir, "kaasctl")); err != nil {
		t.Fatal(err)
	}
	return dir, []string{envRunAsCLI + "=1", "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")}
}
