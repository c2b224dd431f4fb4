package exporter

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// soakChildEnv marks the process TestExporterMemorySoak runs in when
// soakInChild starts it.
const soakChildEnv = "KAASCTL_SOAK_CHILD"

// soakInChild runs TestExporterMemorySoak again in a child process of this
// test binary, where the heap it measures is its own, so that the test
// runs beside the package's other tests instead of before them all (alone
// it took about 10 s of the race run, the other tests waiting). It reports
// whether it did: not in the child itself, not for a KAASCTL_SOAK run
// ('make bench' runs the soak alone) and not with -short (it skips).
func soakInChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv(soakChildEnv) != "" || os.Getenv("KAASCTL_SOAK") != "" || testing.Short() {
		return false
	}
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestExporterMemorySoak$", "-test.count=1", "-test.v", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), soakChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("in a process of its own:\n%s", out)
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestExporterMemorySoak")) {
		t.Fatalf("the soak did not pass in its own process: %v", err)
	}
	return true
}
