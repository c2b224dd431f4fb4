//go:build unix

package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// insecureConfig writes a config whose profile names the volume (and a
// SASL password file) at mode 0666 in a 0777 directory, as ssh would
// refuse it.
func insecureConfig(t *testing.T, data string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	path := filepath.Join(dir, "config.yaml")
	os.WriteFile(path, []byte("current: p\nprofiles:\n  p:\n    dataDir: "+data+"\n"), 0o666)
	os.Chmod(path, 0o666)
	return path
}

// A config file others can write decides where writes go: kaasctl warns
// about it on every run and refuses to write with settings taken from it
// (exit 4, the volume untouched); the same settings as flags write.
func TestConfigWritableByOthersRefusesWrites(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	cfg := insecureConfig(t, data)
	r := runCLI(t, "", nil, "groups", "list", "--config", cfg)
	if r.Code != 0 || !strings.Contains(r.Err, cfg) || !strings.Contains(r.Err, "writable by others") {
		t.Errorf("a read with the file: exit %d\n%s", r.Code, r.Err)
	}
	before := fileHashes(t, data)
	for _, args := range [][]string{
		{"offsets", "reset", "--offline", "-g", "g", "--topic", "orders", "--to-earliest", "--execute"},
		{"offsets", "delete", "--offline", "-g", "g", "--topic", "orders", "--execute"},
		{"volume", "repair", "--execute"},
	} {
		r := runCLI(t, "", nil, append(args, "--config", cfg)...)
		if r.Code != 4 || !strings.Contains(r.Err, "writable by others") || !strings.Contains(r.Err, "dataDir") {
			t.Errorf("%v with the file: exit %d, want 4\n%s", args, r.Code, r.Err)
		}
	}
	sameHashes(t, "refused writes", before, fileHashes(t, data))
	// A dry-run writes nothing: it plans, with the warning.
	if r := runCLI(t, "", nil, "offsets", "reset", "--offline", "-g", "g", "--topic", "orders", "--to-earliest", "--config", cfg); r.Code != 0 {
		t.Errorf("dry-run: exit %d\n%s", r.Code, r.Err)
	}
	// The volume given as a flag: the file decides nothing of the write.
	r = runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-earliest", "--execute", "--config", cfg)
	if r.Code != 0 {
		t.Errorf("with --data-dir: exit %d\n%s", r.Code, r.Err)
	}
}

// A file only its owner can write, in a directory only its owner can
// write, is used without a word; a password file readable by others is
// warned about.
func TestConfigPermissions(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	os.WriteFile(path, []byte("current: p\nprofiles:\n  p:\n    dataDir: "+data+"\n"), 0o644)
	r := runCLI(t, "", nil, "offsets", "reset", "--offline", "-g", "g", "--topic", "orders", "--to-earliest", "--execute", "--config", path)
	if r.Code != 0 || strings.Contains(r.Err, "by others") {
		t.Errorf("a private config: exit %d\n%s", r.Code, r.Err)
	}
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("secret\n"), 0o644)
	os.Chmod(pw, 0o644)
	r = runCLI(t, "", nil, "groups", "list", "--data-dir", data, "--brokers", "127.0.0.1:1", "--timeout", "200ms",
		"--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-file", pw)
	if !strings.Contains(r.Err, pw) || !strings.Contains(r.Err, "readable by others") {
		t.Errorf("a password file readable by others: exit %d\n%s", r.Code, r.Err)
	}
}
