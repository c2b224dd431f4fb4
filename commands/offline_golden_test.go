package commands

import (
	"strings"
	"testing"
)

// TestOfflineGolden runs every offline command on the test volumes and
// compares table and JSON output with golden files.
func TestOfflineGolden(t *testing.T) {
	t.Parallel()
	vols := map[string]string{}
	for _, v := range []string{"lab-phase1", "lab-phase2", "damaged"} {
		vols[v] = copyVolume(t, v)
	}
	cases := []struct {
		golden string
		vol    string
		args   []string
		code   int
	}{
		{"groups-list-lab-phase1.txt", "lab-phase1", []string{"groups", "list"}, 0},
		{"groups-list-lab-phase2.txt", "lab-phase2", []string{"groups", "list", "-o", "wide"}, 0},
		{"groups-list-lab-phase2.json", "lab-phase2", []string{"groups", "list", "-o", "json"}, 0},
		{"groups-list-damaged.txt", "damaged", []string{"groups", "list", "-o", "wide", "--kaas-version", "0.2.18"}, 0},
		{"groups-list-damaged.json", "damaged", []string{"groups", "list", "-o", "json", "--kaas-version", "0.2.18"}, 0},
		{"groups-list-damaged-issues.csv", "damaged", []string{"groups", "list", "--issues-only", "-o", "csv", "--kaas-version", "0.2.18"}, 0},
		{"groups-describe-lab-phase1.txt", "lab-phase1", []string{"groups", "describe", "lab-group", "g-beta"}, 0},
		{"groups-describe-lab-phase2.json", "lab-phase2", []string{"groups", "describe", "--all", "-o", "json"}, 0},
		{"groups-describe-damaged.txt", "damaged", []string{"groups", "describe", "lagging", "good", "plain", "truncated", "e-dead", "--kaas-version", "0.2.18"}, 0},
		{"groups-describe-damaged.json", "damaged", []string{"groups", "describe", "lagging", "plain", "-o", "json", "--kaas-version", "0.2.18"}, 0},
		{"groups-describe-damaged-topic-lagging.txt", "damaged", []string{"groups", "describe", "--all", "--topic", "orders", "--lagging-only", "--kaas-version", "0.2.18"}, 0},
		{"groups-describe-lab-phase2-summary.txt", "lab-phase2", []string{"groups", "describe", "--all", "--summary"}, 0},
		{"groups-list-damaged-topic.json", "damaged", []string{"groups", "list", "--topic", "audit", "--topic", "orders", "-o", "json", "--kaas-version", "0.2.18"}, 0},
		{"volume-check-lab-phase1.txt", "lab-phase1", []string{"volume", "check", "--now", volNow}, 0},
		{"volume-check-damaged.txt", "damaged", []string{"volume", "check", "--now", volNow, "--kaas-version", "0.2.18"}, 3},
		{"volume-check-damaged.json", "damaged", []string{"volume", "check", "--now", volNow, "-o", "json", "--kaas-version", "0.2.18"}, 3},
		{"txn-list-damaged.txt", "damaged", []string{"txn", "list", "--now", volNow, "-o", "wide"}, 1},
		{"txn-list-damaged.json", "damaged", []string{"txn", "list", "--now", volNow, "-o", "json"}, 1},
		{"txn-describe-damaged.txt", "damaged", []string{"txn", "describe", "tx-ongoing", "payments-tx-0", "--now", volNow}, 0},
		{"txn-describe-damaged.json", "damaged", []string{"txn", "describe", "tx-ongoing", "--now", volNow, "-o", "json"}, 0},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			vol := vols[c.vol]
			args := append(append([]string{}, c.args...), "--data-dir", vol)
			out, errOut, code := runVol(t, args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, c.code, errOut)
			}
			if strings.Contains(errOut, "panic") {
				t.Fatalf("stderr mentions a panic: %s", errOut)
			}
			checkVolGolden(t, c.golden, vol, out)
		})
	}
}
