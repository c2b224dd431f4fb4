package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 6's acceptance, on the generation it is about: a volume upgraded to
// Rust 0.2.18 (pinned: the Go-era DATA/__consumer_offsets is left over
// beside the live CD one) with the damage 'volume repair' exists for (a
// plain-map file, a torn file, a stale temp file, the legacy offsets dir)
// comes out of repair with 'volume check' reporting no error and no
// warning, and a second repair does nothing.
func TestVolumeRepairThenCheckIsClean(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "lab-phase1") // Go-era layout: offsets in DATA/__consumer_offsets
	cd := filepath.Join(vol, "__cluster", "__consumer_offsets")
	if err := os.MkdirAll(cd, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(cd, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("plain.json", `{"lab-events/0":12,"lab-events/1":7}`)
	write("torn.json", `{"offsets":{"lab-events/0":1`)
	write("old.json.tmp", `{}`)
	old := time.Now().Add(-3 * time.Hour)
	os.Chtimes(filepath.Join(cd, "old.json.tmp"), old, old)

	out, _, code := runVol(t, "volume", "check", "--data-dir", vol, "--kaas-version", "0.2.18")
	if code != 3 || !strings.Contains(out, "offsets.legacyPlainMap") || !strings.Contains(out, "offsets.corruptFile") {
		t.Fatalf("before repair: exit %d\n%s", code, out)
	}
	if out, errOut, code := runVol(t, "volume", "repair", "--data-dir", vol, "--kaas-version", "0.2.18", "--execute"); code != 0 {
		t.Fatalf("repair: exit %d\n%s\n%s", code, out, errOut)
	}
	out, _, code = runVol(t, "volume", "check", "--data-dir", vol, "--kaas-version", "0.2.18", "--severity", "warning")
	if code != 0 || !strings.Contains(out, "0 errors, 0 warnings") {
		t.Fatalf("after repair: exit %d\n%s", code, out)
	}
	// The converted file kept its offsets, and the legacy groups moved in.
	for _, g := range []string{"plain", "lab-group", "g-beta", "g-gamma"} {
		r := runCLI(t, "", nil, "groups", "describe", g, "--data-dir", vol, "--kaas-version", "0.2.18", "-o", "json")
		if r.Code != 0 || !strings.Contains(r.Out, `"committed"`) {
			t.Errorf("%s after repair: exit %d %s", g, r.Code, r.Err)
		}
	}
	if out, _, code := runVol(t, "volume", "repair", "--data-dir", vol, "--kaas-version", "0.2.18", "--execute", "-o", "json"); code != 0 || !strings.Contains(out, `"actions": []`) {
		t.Errorf("second repair: exit %d\n%s", code, out)
	}
}
