package commands

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// treeHash fingerprints every file (path, mode, content) under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s %v\n", rel, d.IsDir())
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			h.Write(b)
		}
		return nil
	})
	return fmt.Sprintf("%x", h.Sum(nil))
}

type repairDoc struct {
	DryRun     bool   `json:"dryRun"`
	Quarantine string `json:"quarantine"`
	Actions    []struct {
		Action, Path, Dest, Backup, Salvaged, Error string
		Change, Done                                bool
	} `json:"actions"`
	Changes, Conflicts, Failed int
}

func runRepair(t *testing.T, args ...string) (repairDoc, string, int) {
	t.Helper()
	out, errs, code := runVol(t, append([]string{"volume", "repair", "--now", "2026-07-23T12:00:00Z", "-o", "json"}, args...)...)
	var d repairDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("json: %v\n%s\n%s", err, out, errs)
	}
	return d, errs, code
}

func TestVolumeRepairDamaged(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	od := filepath.Join(vol, "__cluster", "__consumer_offsets")
	before := treeHash(t, vol)
	plainOld, _ := os.ReadFile(filepath.Join(od, "plain.json"))
	truncOld, _ := os.ReadFile(filepath.Join(od, "truncated.json"))

	// Dry-run: the plan, nothing changed.
	d, errs, code := runRepair(t, "--data-dir", vol, "--kaas-version", "0.2.18")
	if code != 3 || !d.DryRun || !strings.Contains(errs, "nothing was changed") {
		t.Fatalf("dry-run exit %d, dryRun %v: %s", code, d.DryRun, errs)
	}
	if treeHash(t, vol) != before {
		t.Fatal("the dry-run changed the volume")
	}
	got := map[string]string{}
	for _, a := range d.Actions {
		got[filepath.Base(a.Path)] = a.Action
	}
	want := map[string]string{
		"plain.json": "convert", "truncated.json": "quarantine", "empty.json": "quarantine", "nullofs.json": "quarantine",
		"badvals.json": "quarantine", "good.json.tmp": "remove-tmp", "slot-9.json.tmp": "remove-tmp", "manifest.json.tmp": "remove-tmp", "legacy-only.json": "migrate", "good.json": "conflict",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: action %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if d.Conflicts != 1 || d.Changes != 9 { // + slot-9.json.tmp and audit/0/manifest.json.tmp
		t.Errorf("changes %d conflicts %d", d.Changes, d.Conflicts)
	}

	// Execute.
	d, errs, code = runRepair(t, "--data-dir", vol, "--kaas-version", "0.2.18", "--execute")
	if code != 3 || d.Failed != 0 {
		t.Fatalf("execute exit %d failed %d: %s", code, d.Failed, errs)
	}
	for _, a := range d.Actions {
		if a.Change && !a.Done {
			t.Errorf("not done: %+v", a)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(od, "plain.json")); string(b) != `{"offsets":{"orders/0":12,"orders/1":7}}` {
		t.Errorf("converted plain.json: %s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(od, "legacy-only.json")); string(b) != `{"offsets":{"orders/0":70,"orders/1":11}}` {
		t.Errorf("migrated legacy-only.json: %s", b)
	}
	// Nothing deleted: the quarantine holds the old bytes, the backup the plain map.
	q := filepath.Join(d.Quarantine, "__consumer_offsets", "truncated.json")
	if b, err := os.ReadFile(q); err != nil || string(b) != string(truncOld) {
		t.Errorf("quarantined truncated.json: %v %q", err, b)
	}
	for _, a := range d.Actions {
		if a.Action == "convert" {
			if b, err := os.ReadFile(a.Backup); err != nil || string(b) != string(plainOld) {
				t.Errorf("backup of plain.json: %v %q", err, b)
			}
		}
		if a.Action == "migrate" {
			if _, err := os.Stat(a.Backup); err != nil {
				t.Errorf("legacy file not kept: %v", err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(vol, "__consumer_offsets", "good.json")); err != nil {
		t.Errorf("the conflicting legacy file must stay: %v", err)
	}

	// volume check: no error left among offset files, temp files and dirs.
	out, _, _ := runVol(t, "volume", "check", "--data-dir", vol, "--kaas-version", "0.2.18", "--now", "2026-07-23T12:00:00Z", "-o", "json")
	var rep struct {
		Findings []struct{ Severity, Code, Path string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, f := range rep.Findings {
		if f.Severity == "error" {
			left = append(left, f.Code)
			if strings.HasPrefix(f.Code, "offsets.") || strings.HasPrefix(f.Code, "volume.") {
				t.Errorf("volume check still reports %s at %s after repair", f.Code, f.Path)
			}
		}
		if f.Code == "volume.staleTmpFile" || f.Code == "offsets.legacyPlainMap" {
			t.Errorf("still reported: %s %s", f.Code, f.Path)
		}
	}
	slices.Sort(left)
	t.Logf("errors volume repair does not own (assignment, txn, fences, producer ids, manifests): %v", slices.Compact(left))

	// Idempotent: a second run changes nothing.
	after := treeHash(t, vol)
	d, _, code = runRepair(t, "--data-dir", vol, "--kaas-version", "0.2.18", "--execute")
	if d.Changes != 0 || d.Conflicts != 1 || code != 3 {
		t.Errorf("second run: exit %d, %d changes, %d conflicts: %+v", code, d.Changes, d.Conflicts, d.Actions)
	}
	if treeHash(t, vol) != after {
		t.Error("the second run changed the volume")
	}
}

// A clean volume: nothing to do, exit 0; a stale tmp younger than the
// threshold is left alone.
func TestVolumeRepairThresholdAndClean(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	d, _, _ := runRepair(t, "--data-dir", vol, "--kaas-version", "0.2.18", "--tmp-older-than", "3h")
	for _, a := range d.Actions {
		if a.Action == "remove-tmp" {
			t.Errorf("a 2h old tmp file is not older than 3h: %+v", a)
		}
	}
	_, errs, code := runVol(t, "volume", "repair", "--data-dir", vol, "--kaas-version", "0.2.18", "--tmp-older-than", "1m")
	if code != 2 || !strings.Contains(errs, "write in flight") {
		t.Errorf("--tmp-older-than 1m: exit %d %s", code, errs)
	}
	_, errs, code = runVol(t, "volume", "repair", "--data-dir", vol, "--kaas-version", "0.2.18", "--dry-run", "--execute")
	if code != 2 || !strings.Contains(errs, "only accepts one of [execute] and [dry-run]") {
		t.Errorf("both modes: exit %d %s", code, errs)
	}
	clean := t.TempDir()
	os.MkdirAll(filepath.Join(clean, "__cluster", "__consumer_offsets"), 0o755)
	os.WriteFile(filepath.Join(clean, "__cluster", "assignment.json"), []byte(`{"version":1,"brokers":[]}`), 0o644)
	os.WriteFile(filepath.Join(clean, "__cluster", "__consumer_offsets", "g.json"), []byte(`{"offsets":{"a/0":1}}`), 0o644)
	d, errs, code = runRepair(t, "--data-dir", clean, "-x")
	if code != 0 || len(d.Actions) != 0 || !strings.Contains(errs, "nothing to repair") {
		t.Errorf("clean volume: exit %d %+v %s", code, d, errs)
	}
}
