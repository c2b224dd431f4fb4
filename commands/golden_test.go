package commands

import (
	"bytes"
	"encoding/base64"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Golden files live in testdata/golden at the repository root; after
// checking a change, rewrite them with
//
//	go test ./commands -run TestName -update
var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// checkGolden compares got with testdata/golden/NAME (rewritten with -update).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(repoRoot(t), "testdata", "golden", name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./commands -run '^%s$' -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file %s (run with -update after checking):\n--- got\n%s\n--- want\n%s", t.Name(), name, got, want)
	}
}

var (
	b64Quoted = regexp.MustCompile(`"[A-Za-z0-9+/]{16,}={0,2}"`)
	// Each repair run's quarantine dir has a random suffix.
	quarantineRun = regexp.MustCompile(`(\.kaasctl-quarantine/\d{8}T\d{6}Z)-[0-9a-f]{16}`)
)

// checkVolGolden is checkGolden for output that names a test volume: vol
// becomes $VOL (also inside the base64 form of a path that is not UTF-8)
// and quarantine dirs lose their random suffix.
func checkVolGolden(t *testing.T, name, vol, got string) {
	t.Helper()
	got = strings.ReplaceAll(got, vol, "$VOL")
	got = quarantineRun.ReplaceAllString(got, "${1}-RANDOM")
	got = b64Quoted.ReplaceAllStringFunc(got, func(q string) string {
		b, err := base64.StdEncoding.DecodeString(q[1 : len(q)-1])
		if err != nil || !strings.Contains(string(b), vol) {
			return q
		}
		return `"` + base64.StdEncoding.EncodeToString([]byte(strings.ReplaceAll(string(b), vol, "$VOL"))) + `"`
	})
	checkGolden(t, name, []byte(got))
}
