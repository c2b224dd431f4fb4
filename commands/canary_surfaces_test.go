package commands

import (
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
)

// The probe's canary groups are left out of every surface, as its help
// promises, also once kaas gave them explicit entries (the controller
// places entries for the groups active at a recompute, canaries included)
// and while their offsets lie beyond the log end (an older probe
// committed its clock in ms): they never show, and never absorb a real
// group's finding.
func TestCanariesLeftOutOfEverySurface(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	dd := sb.Layout().DataDir
	produceOrders(t, sb, 5)
	commitAdmin(t, sb, "real-app", map[int32]int64{0: 1, 1: 1, 2: 1, 3: 1})
	if r := live(t, sb, "probe", "--data-dir", dd); r.Code != 0 {
		t.Fatalf("probe: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	// A canary as an older kaasctl left it: its offset far beyond the log end.
	var canary string
	for _, g := range sb.Status().Groups {
		if inspect.IsCanary(g) {
			canary = g
			break
		}
	}
	if canary == "" {
		t.Fatalf("no canary group after the probe: %v", sb.Status().Groups)
	}
	commitAdmin(t, sb, canary, map[int32]int64{0: 1764500000000})
	// A recompute: the controller gives the active groups (the canaries
	// too) explicit entries.
	victim := sb.BrokerIDs()[2]
	if _, err := sb.StopBroker(victim); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.StartBroker(victim); err != nil {
		t.Fatal(err)
	}
	entries := 0
	for _, e := range sb.Assignment().ConsumerGroups {
		if inspect.IsCanary(e.GroupID) {
			entries++
		}
	}
	t.Logf("%d canary entries in assignment.json", entries)
	for _, args := range [][]string{
		{"groups", "describe", "--all", "--data-dir", dd},
		{"groups", "describe", "--all", "--data-dir", dd, "-o", "json"},
		{"groups", "list", "--data-dir", dd},
		{"groups", "list", "--data-dir", dd, "-o", "json"},
		{"groups", "health", "--data-dir", dd, "--window", "300ms", "--interval", "100ms", "-o", "json"},
		{"doctor", "--data-dir", dd, "-o", "json"},
		{"doctor", "--data-dir", dd},
		{"plan", "restart", "--data-dir", dd, "-o", "json"},
		{"exporter", "--data-dir", dd, "--once"},
		{"volume", "check", "--data-dir", dd, "-o", "json"},
	} {
		r := live(t, sb, args...)
		if strings.Contains(r.Out+r.Err, inspect.CanaryPrefix) {
			t.Errorf("%s shows a canary group (exit %d):\n%s\n%s", strings.Join(args, " "), r.Code, r.Out, r.Err)
		}
	}
	// Offline too.
	for _, args := range [][]string{
		{"groups", "describe", "--all", "--data-dir", dd},
		{"groups", "list", "--data-dir", dd},
		{"doctor", "--data-dir", dd},
		{"plan", "restart", "--data-dir", dd, "--all-active", "-o", "json"},
		{"volume", "check", "--data-dir", dd},
		{"watch", "--offsets", "--once", "--data-dir", dd},
		{"watch", "--offsets", "--once", "--data-dir", dd, "-o", "json"},
		{"watch", "--once", "--data-dir", dd},
	} {
		r := runCLI(t, "", nil, args...)
		if strings.Contains(r.Out+r.Err, inspect.CanaryPrefix) {
			t.Errorf("offline %s shows a canary group (exit %d):\n%s\n%s", strings.Join(args, " "), r.Code, r.Out, r.Err)
		}
	}
}
