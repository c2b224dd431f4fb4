package commands

import (
	"strings"
	"testing"
)

// Table output of the write commands, pinned by golden files.
func TestWritesGolden(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	out, _, code := runVol(t, "volume", "repair", "--data-dir", vol, "--kaas-version", "0.2.18", "--now", "2026-07-23T12:00:00Z", "-o", "csv") // csv: no padding by temp-dir length
	if code != 3 {
		t.Fatalf("exit %d", code)
	}
	checkVolGolden(t, "volume-repair-damaged.csv", vol, out)

	// An offline plan for group "good": this volume has manifests and no
	// segment files, so every row's log end is unverified and refused
	// (exit 4), naming the override.
	out, errs, code := runVol(t, "offsets", "reset", "--data-dir", vol, "--kaas-version", "0.2.18", "-g", "good", "--all-topics", "--shift-by", "-5", "--offline")
	if code != 4 || !strings.Contains(errs, "--allow-unverified-log-end") {
		t.Fatalf("exit %d %s", code, errs)
	}
	checkVolGolden(t, "offsets-reset-offline-unverified.txt", vol, out)
	// With the override: planned from the manifests, unclamped, said so.
	out, errs, code = runVol(t, "offsets", "reset", "--data-dir", vol, "--kaas-version", "0.2.18", "-g", "good", "--all-topics", "--shift-by", "-5", "--offline", "--allow-unverified-log-end")
	if code != 0 || !strings.Contains(errs, "No action will be performed as the --execute option is missing") || !strings.Contains(errs, "--allow-unverified-log-end") {
		t.Fatalf("exit %d %s", code, errs)
	}
	checkVolGolden(t, "offsets-reset-offline-plan.txt", vol, out)
	out, _, _ = runVol(t, "offsets", "delete", "--data-dir", vol, "--kaas-version", "0.2.18", "-g", "good", "--topic", "orders:1,4", "--offline")
	checkVolGolden(t, "offsets-delete-offline-plan.txt", vol, out)
}
