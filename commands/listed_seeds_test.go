package commands

import (
	"strings"
	"testing"
)

// groups list with three brokers given and one of them down (kaas drops it
// from its metadata) says 2 of 3 answered and names the third, instead of
// "2 of 2 answered".
func TestGroupsListCountsEverySeedGiven(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	commitAdmin(t, sb, "counted", map[int32]int64{0: 1})
	victim := sb.BrokerIDs()[2]
	addr, _ := sb.Addr(victim)
	if _, err := sb.StopBroker(victim); err != nil {
		t.Fatal(err)
	}
	var seeds []string
	for _, id := range sb.BrokerIDs() {
		a, _ := sb.Addr(id)
		seeds = append(seeds, a)
	}
	env := map[string]string{"KAASCTL_BROKERS": strings.Join(seeds, ","), "KAASCTL_TIMEOUT": "2s"}
	r := runCLI(t, "", env, "groups", "list", "--data-dir", sb.Layout().DataDir)
	if r.Code != 0 || !strings.Contains(r.Out, "(2 of 3 answered); unreachable: "+addr) {
		t.Errorf("exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	if !strings.Contains(r.Err, "out of the cluster (down)") {
		t.Errorf("no note on the down address:\n%s", r.Err)
	}
}
