package commands

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/views"
)

func runSandboxCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(append([]string{"kaasctl", "sandbox"}, args...), &IOStreams{In: strings.NewReader(stdin), Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	return code, out.String(), errb.String()
}

func TestSandboxCommandDrivenThroughStdin(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "vol")
	code, out, errs := runSandboxCmd(t, "help\nstatus\nstop kaas-1\nstop kaas-1\nstatus\nfrobnicate\nstart kaas-1\nquit\n",
		"--data-dir", dir, "--broker-count", "3", "--topic", "orders:4", "--control", "off")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, want := range []string{
		"kaasctl sandbox: 3 brokers running (placement rendezvous)",
		"bootstrap:   127.0.0.1:",
		"data dir:    " + dir,
		"cluster dir: " + filepath.Join(dir, "__cluster"),
		"stop kaas-N     stop a broker",
		"assignment v1, controller kaas-0 (epoch 1)",
		"stopped kaas-1: assignment.json v2 written (brokers: kaas-0, kaas-2)",
		"kaas-1 is already stopped; nothing changed",
		"started kaas-1: assignment.json v3 written (brokers: kaas-0, kaas-1, kaas-2)",
		"sandbox stopped; the volume is left in " + dir,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "kaas-1  1     127.0.0.1:") || !strings.Contains(out, "stopped") {
		t.Errorf("status table missing the stopped broker:\n%s", out)
	}
	if !strings.Contains(errs, `unknown command "frobnicate"`) {
		t.Errorf("stderr lacks the unknown-command error:\n%s", errs)
	}
	a, _, err := volume.ReadAssignment(filepath.Join(dir, "__cluster", "assignment.json"))
	if err != nil || a.AssignmentVersion != 3 || len(a.Brokers) != 3 || len(a.Partitions) != 4 {
		t.Fatalf("assignment after the session: %+v %v", a, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".kaasctl-sandbox.json")); !os.IsNotExist(err) {
		t.Fatalf("state file left behind after quit: %v", err)
	}

	// Restarting on the same volume is allowed (it is a sandbox's); the
	// version carries forward.
	code, out, errs = runSandboxCmd(t, "quit\n", "--data-dir", dir, "--control", "off", "-o", "json")
	if code != 0 {
		t.Fatalf("restart: exit %d: %s %s", code, out, errs)
	}
	var info views.SandboxInfo
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("-o json output is not one JSON object: %v\n%s", err, out)
	}
	if info.DataDir != dir || len(info.Brokers) != 3 || !strings.HasPrefix(info.Bootstrap, "127.0.0.1:") || info.TempDir {
		t.Fatalf("info = %+v", info)
	}
	a, _, _ = volume.ReadAssignment(filepath.Join(dir, "__cluster", "assignment.json"))
	if a.AssignmentVersion != 4 || a.ControllerEpoch != 2 {
		t.Fatalf("restart: version %d epoch %d, want 4 and 2", a.AssignmentVersion, a.ControllerEpoch)
	}
}

func TestSandboxRefusesARealKaasVolume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cd := filepath.Join(dir, "__cluster")
	if err := os.MkdirAll(cd, 0o755); err != nil {
		t.Fatal(err)
	}
	orig := []byte(`{"controllerEpoch":4,"assignmentVersion":57,"generatedAt":"2026-07-23T11:40:02.120000000Z","controller":"kaas-1","brokers":[],"partitions":[]}`)
	if err := os.WriteFile(filepath.Join(cd, "assignment.json"), orig, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runSandboxCmd(t, "quit\n", "--data-dir", dir, "--control", "off")
	if code != 4 || !strings.Contains(errs, "was not written by a kaasctl sandbox") {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	got, _ := os.ReadFile(filepath.Join(cd, "assignment.json"))
	if !bytes.Equal(got, orig) {
		t.Fatal("the real assignment.json was modified")
	}
}

func TestSandboxUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--placement", "random"},
		{"--broker-count", "0"},
		{"-n", "100"},
		{"--brokers", "3"},
		{"extra-arg"},
		{"--topic", "orders:x"},
		{"--cluster-dir", "/tmp"},
	} {
		code, _, errs := runSandboxCmd(t, "quit\n", append(args, "--data-dir", t.TempDir())...)
		if code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, code, errs)
		}
	}
	code, _, errs := runSandboxCmd(t, "quit\n", "--data-dir", t.TempDir(), "--topic", "../escape:3", "--control", "off")
	if code == 0 || !strings.Contains(errs, "invalid topic name") {
		t.Errorf("hostile topic name: exit %d, %s", code, errs)
	}
}

func TestSandboxHelpHasExamples(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	Main([]string{"kaasctl", "sandbox", "--help"}, &IOStreams{Out: &out, Err: &out, Getenv: func(string) string { return "" }})
	for _, want := range []string{"--demo", "--placement", "rendezvous", "Examples:", "POST", "stop kaas-N"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// sandbox refuses --cluster-dir, so neither its help nor the completion
// offers it.
func TestSandboxHidesClusterDir(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", nil, "sandbox", "--help")
	if strings.Contains(r.Out+r.Err, "--cluster-dir") || !strings.Contains(r.Out, "--data-dir") {
		t.Errorf("sandbox --help:\n%s%s", r.Out, r.Err)
	}
	r = runCLI(t, "", nil, "__complete", "sandbox", "--")
	if strings.Contains(r.Out, "--cluster-dir") || !strings.Contains(r.Out, "--data-dir") {
		t.Errorf("completion of sandbox --:\n%s", r.Out)
	}
	if r := runCLI(t, "", nil, "groups", "list", "--help"); !strings.Contains(r.Out, "--cluster-dir") {
		t.Errorf("groups list --help lost --cluster-dir:\n%s", r.Out)
	}
}

func TestSandboxQuietAndEnvIgnored(t *testing.T) {
	t.Parallel()
	real := t.TempDir()
	var out, errb bytes.Buffer
	code := Main([]string{"kaasctl", "sandbox", "-q", "--control", "off", "--broker-count", "1"}, &IOStreams{In: strings.NewReader("status\nquit\n"), Out: &out, Err: &errb,
		Getenv: func(k string) string {
			if k == "KAAS_DATA_DIR" {
				return real
			}
			return ""
		}})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if strings.Contains(out.String(), "bootstrap:") || !strings.Contains(out.String(), "assignment v1") {
		t.Fatalf("-q output:\n%s", out.String())
	}
	if ents, _ := os.ReadDir(real); len(ents) != 0 {
		t.Fatalf("the sandbox wrote into KAAS_DATA_DIR: %v", ents)
	}
}

func TestSandboxTempDirRemovedUnlessKeep(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		args := []string{"--control", "off", "--broker-count", "1", "-o", "json"}
		if keep {
			args = append(args, "--keep")
		}
		code, out, errs := runSandboxCmd(t, "quit\n", args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var info views.SandboxInfo
		if err := json.Unmarshal([]byte(out), &info); err != nil || !info.TempDir {
			t.Fatalf("info %s: %v", out, err)
		}
		_, err := os.Stat(info.DataDir)
		if keep {
			if err != nil {
				t.Fatalf("--keep: %s gone: %v", info.DataDir, err)
			}
			os.RemoveAll(info.DataDir)
		} else if !os.IsNotExist(err) {
			t.Fatalf("temporary dir %s left behind: %v", info.DataDir, err)
		}
	}
}
