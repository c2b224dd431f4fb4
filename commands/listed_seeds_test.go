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

// The fix lines of volume check and doctor run as printed: their quoted
// kaasctl commands carry the --data-dir (and --brokers) given.
func TestFixLinesCarryTheFlagsGiven(t *testing.T) {
	t.Parallel()
	dd := t.TempDir()
	writeFile(t, dd, "__cluster/assignment.json", `{"controllerEpoch":1,"assignmentVersion":1,"controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"}]}`)
	writeFile(t, dd, "__cluster/__consumer_offsets/broken.json", `{"offsets":{"t/0":`)
	want := "'kaasctl volume repair --data-dir " + dd + "'"
	for _, args := range [][]string{{"volume", "check", "--data-dir", dd, "-o", "json"}, {"doctor", "--data-dir", dd, "-o", "json"}} {
		r := runCLI(t, "", nil, args...)
		if !strings.Contains(r.Out, want) {
			t.Errorf("%v: no %s in\n%s", args, want, r.Out)
		}
	}
	r := runCLI(t, "", nil, "doctor", "--data-dir", dd, "-o", "json")
	if !strings.Contains(r.Out, `"kaasctl volume check --data-dir `+dd+` --severity warning"`) {
		t.Errorf("doctor's commands lack the volume:\n%s", r.Out)
	}
}
