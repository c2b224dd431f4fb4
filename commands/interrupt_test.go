package commands

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A bulk reset executed offline over many groups, interrupted by a real
// SIGINT or SIGTERM once the first group is written: the group in flight
// is finished, nothing more is written, every group has a line on stderr
// and in the --export-rollback file, every file is either untouched or
// fully written and verified, and no temp file is left. A temp file an
// earlier, killed run left is removed by the next run; one that another
// process is writing (locked) is not.
func TestBulkResetInterrupted(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			const groups = 300
			data := t.TempDir()
			od := filepath.Join(data, "__cluster", "__consumer_offsets")
			writeFile(t, data, "__cluster/assignment.json", `{"version":1,"brokers":[]}`)
			writeFile(t, data, "orders/0/manifest.json", `{"epoch":1,"highWatermark":50,"logStartOffset":0}`)
			for i := range groups {
				writeFile(t, od, fmt.Sprintf("g-%04d.json", i), `{"offsets":{"orders/0":5}}`)
			}
			rollback := filepath.Join(t.TempDir(), "rollback.csv")
			args := []string{"offsets", "reset", "--offline", "--data-dir", data, "--all-groups", "--topic", "orders:0", "--to-offset", "7", "--allow-unverified-log-end", "--execute", "--export-rollback", rollback}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "KAASCTL_TEST_MAIN="+strings.Join(args, "\x1f"))
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout = io.Discard
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Signal once the first group's line is out.
			var lines []string
			sc := bufio.NewScanner(stderr)
			signalled := false
			for sc.Scan() {
				lines = append(lines, sc.Text())
				if !signalled && strings.Contains(sc.Text(), "[1/300] group 'g-0000': written") {
					if err := cmd.Process.Signal(sig); err != nil {
						t.Fatal(err)
					}
					signalled = true
				}
			}
			err = cmd.Wait()
			stderrText := strings.Join(lines, "\n")
			if !signalled {
				t.Fatalf("no first group line:\n%s", stderrText)
			}
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 1 {
				t.Fatalf("exit %v, want 1\n%s", err, stderrText)
			}
			if !strings.Contains(stderrText, sig.String()+": stopping after the group that was being written") || !strings.Contains(stderrText, "interrupted: ") {
				t.Errorf("stderr does not say it was interrupted:\n%s", stderrText)
			}
			lineRE := regexp.MustCompile(`^kaasctl: \[(\d+)/300\] group '(g-\d{4})': (.*)$`)
			written, interrupted := map[string]bool{}, 0
			for _, l := range lines {
				m := lineRE.FindStringSubmatch(l)
				switch {
				case m == nil:
				case strings.HasPrefix(m[3], "written (1 partition(s) verified in the file)"):
					written[m[2]] = true
				case m[3] == "not written (interrupted)":
					interrupted++
				default:
					t.Errorf("line %q", l)
				}
			}
			if len(written) == 0 || len(written) == groups || len(written)+interrupted != groups {
				t.Errorf("%d written + %d interrupted lines, want every one of %d groups, some of each", len(written), interrupted, groups)
			}
			// The files agree with the lines: written → 7, else untouched.
			for i := range groups {
				name := fmt.Sprintf("g-%04d", i)
				got, err := os.ReadFile(filepath.Join(od, name+".json"))
				want := `{"offsets":{"orders/0":5}}`
				if written[name] {
					want = `{"offsets":{"orders/0":7}}`
				}
				if err != nil || string(got) != want {
					t.Errorf("%s: %s %v, want %s", name, got, err, want)
				}
			}
			temps, _ := filepath.Glob(filepath.Join(od, ".*.tmp"))
			if len(temps) != 0 {
				t.Errorf("temp files left: %v", temps)
			}
			// The rollback file records each group as it finished.
			rb, _ := os.ReadFile(rollback)
			if n := strings.Count(string(rb), "': written ("); n != len(written) {
				t.Errorf("rollback file records %d written groups, want %d:\n%.3000s", n, len(written), rb)
			}

			// The next run removes a temp file a killed run left, and
			// keeps one another process is writing.
			stale := filepath.Join(od, ".g-0299.json.kaasctl-0123456789abcdef.tmp")
			writeFile(t, od, filepath.Base(stale), `{"offsets":{`)
			busy := filepath.Join(od, ".g-0298.json.kaasctl-fedcba9876543210.tmp")
			bf := writeFile(t, od, filepath.Base(busy), `{"offsets":{`)
			hold, err := os.Open(bf)
			if err != nil {
				t.Fatal(err)
			}
			defer hold.Close()
			if err := syscall.Flock(int(hold.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				t.Fatal(err)
			}
			other := filepath.Join(od, ".notes.tmp") // not kaasctl's
			writeFile(t, od, filepath.Base(other), "x")
			deadline := time.Now().Add(time.Minute)
			r := runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g-0299", "--topic", "orders:0", "--to-offset", "7", "--allow-unverified-log-end", "--execute")
			if r.Code != 0 || time.Now().After(deadline) {
				t.Fatalf("rerun: exit %d\n%s", r.Code, r.Err)
			}
			if _, err := os.Stat(stale); err == nil || !strings.Contains(r.Err, "removed 1 temp file(s) an interrupted kaasctl left") {
				t.Errorf("the stale temp file is still there (or not reported):\n%s", r.Err)
			}
			for _, keep := range []string{busy, other} {
				if _, err := os.Stat(keep); err != nil {
					t.Errorf("%s removed: %v", keep, err)
				}
			}
		})
	}
}
