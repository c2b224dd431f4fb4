package commands

import (
	"strings"
	"testing"
)

// The offsets delete cache warning names the coordinator as kaas does
// (kaas-N from assignment.json), not "broker node N".
func TestOffsetsDeleteCacheWarningNamesBroker(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 5)
	commitAdmin(t, sb, "cached", map[int32]int64{0: 1, 1: 1})
	r := live(t, sb, "offsets", "delete", "--data-dir", sb.Layout().DataDir, "-g", "cached", "--topic", "orders:1", "--execute")
	co := sb.Coordinator("cached")
	if r.Code != 3 || !strings.Contains(r.Err, "coordinator, broker "+co+" (node ") || strings.Contains(r.Err, "broker node") {
		t.Fatalf("exit %d (want 3, the cache warning naming %s)\n%s", r.Code, co, r.Err)
	}
}

// The whois --live header names only the brokers that answered, not a
// seed that is down.
func TestWhoisLiveHeaderOnlyAnsweringBrokers(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	dead := freeAddr(t) // closed: connection refused
	up := sb.Bootstrap()[0]
	r := runCLI(t, "", map[string]string{"KAASCTL_TIMEOUT": "3s"}, "whois", "--live", "--data-dir", sb.Layout().DataDir, "--brokers", dead+","+up, "orders-app")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	head, _, _ := strings.Cut(r.Out, "\n")
	if !strings.Contains(head, "answered by "+up) || strings.Contains(head, dead) {
		t.Fatalf("header %q: want only %s (not %s)", head, up, dead)
	}
	// Streaming keys from stdin: the same.
	r = runCLI(t, "orders-app\nbilling\n", map[string]string{"KAASCTL_TIMEOUT": "3s"}, "whois", "--live", "--data-dir", sb.Layout().DataDir, "--brokers", dead+","+up, "-")
	if r.Code != 0 || !strings.Contains(r.Out, up) || strings.Contains(r.Out, dead) {
		t.Fatalf("stdin: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
}
