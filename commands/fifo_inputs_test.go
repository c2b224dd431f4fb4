//go:build unix

package commands

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO given as a configuration input is refused at once with an error
// naming it; nothing blocks in open. A command still blocked at the
// deadline fails the test (and the FIFO is then opened for writing, so the
// stuck open returns and the suite goes on).
func TestConfigInputFIFOsNeverHang(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	cases := []struct{ name, flag string }{
		{"command-config", "--command-config"},
		{"sasl-password-file", "--sasl-password-file"},
		{"tls-ca", "--tls-ca"},
		{"tls-cert", "--tls-cert"},
		{"config", "--config"},
		{"from-file", "--from-file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fifo := filepath.Join(t.TempDir(), c.name+".fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			var args []string
			switch c.name {
			case "from-file":
				args = []string{"offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--from-file", fifo}
			case "sasl-password-file":
				args = []string{"groups", "list", "-b", "127.0.0.1:1", "--timeout", "1s", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", c.flag, fifo}
			case "tls-cert":
				key := writeFile(t, t.TempDir(), "key.pem", "not a key")
				args = []string{"groups", "list", "-b", "127.0.0.1:1", "--timeout", "1s", c.flag, fifo, "--tls-key", key}
			default:
				args = []string{"groups", "list", "-b", "127.0.0.1:1", "--timeout", "1s", c.flag, fifo}
			}
			done := make(chan cliResult, 1)
			go func() { done <- runCLI(t, "", nil, args...) }()
			var r cliResult
			select {
			case r = <-done:
			case <-time.After(15 * time.Second):
				// Unblock the open for the rest of the suite.
				if w, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
					w.Close()
				}
				t.Fatalf("kaasctl %s blocked on the FIFO %s", strings.Join(args, " "), fifo)
			}
			if r.Code == 0 || !strings.Contains(r.Err, fifo) || !strings.Contains(r.Err, "FIFO") || !strings.Contains(r.Err, "not a regular file") {
				t.Errorf("%s FIFO: exit %d, want an error naming %s as a FIFO:\n%s", c.flag, r.Code, fifo, r.Err)
			}
		})
	}
}

// --from-file - reads standard input (the documented way to pipe a plan).
func TestFromFileDashIsStdin(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	r := runCLI(t, "orders,0,7\n", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--from-file", "-", "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Out, `"orders"`) || !strings.Contains(r.Out, "7") {
		t.Fatalf("--from-file -: exit %d\n%s%s", r.Code, r.Out, r.Err)
	}
}
