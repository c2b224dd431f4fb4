package commands

import (
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/views"
)

// Habits of kafka-consumer-groups.sh, rpk and kcl, each accepted or
// pointed at what kaasctl does instead.
func TestGroupsHabits(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	dd := sb.Layout().DataDir
	produceOrders(t, sb, 10)
	commitAdmin(t, sb, "habits", map[int32]int64{0: 3, 1: 10})

	// --group G is the positional form.
	byFlag := live(t, sb, "groups", "describe", "--group", "habits", "--data-dir", dd, "-o", "json")
	byArg := live(t, sb, "groups", "describe", "habits", "--data-dir", dd, "-o", "json")
	if byFlag.Code != 0 || decodeJSON[views.GroupsDescribeLiveView](t, byFlag).Groups[0].Group != "habits" || len(decodeJSON[views.GroupsDescribeLiveView](t, byArg).Groups) != 1 {
		t.Errorf("--group: exit %d %s", byFlag.Code, byFlag.Err)
	}
	// --offsets, --members, --state: one table each, as kafka-consumer-groups.sh prints them.
	for view, header := range map[string]string{
		"--offsets": "GROUP   TOPIC   PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID  HOST  CLIENT-ID",
		"--members": "GROUP  CONSUMER-ID  HOST  CLIENT-ID  #PARTITIONS",
		"--state":   "GROUP   COORDINATOR (ID)",
	} {
		r := live(t, sb, "groups", "describe", "habits", "--data-dir", dd, view)
		if r.Code != 0 || !strings.HasPrefix(strings.TrimSpace(r.Out), strings.Fields(header)[0]) || !strings.Contains(strings.Join(strings.Fields(r.Out), " "), strings.Join(strings.Fields(header), " ")) {
			t.Errorf("%s: exit %d\n%s\n%s", view, r.Code, r.Out, r.Err)
		}
	}
	r := live(t, sb, "groups", "describe", "habits", "--data-dir", dd, "--offsets")
	if !strings.Contains(strings.Join(strings.Fields(r.Out), " "), "habits orders 0 3 10 7") {
		t.Errorf("--offsets row of orders/0:\n%s", r.Out)
	}
	if r := live(t, sb, "groups", "describe", "habits", "--offsets", "--state"); r.Code != 2 {
		t.Errorf("two views: exit %d", r.Code)
	}
	if r := runCLI(t, "", nil, "groups", "describe", "habits", "--data-dir", dd, "--members"); r.Code != 2 || !strings.Contains(r.Err, "give --brokers") {
		t.Errorf("--members offline: exit %d %s", r.Code, r.Err)
	}
	// lag: the offsets view, every group without a name.
	if r := live(t, sb, "lag", "--data-dir", dd); r.Code != 0 || !strings.Contains(r.Out, "CURRENT-OFFSET") || !strings.Contains(r.Out, "habits") {
		t.Errorf("lag: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	if r := live(t, sb, "lag", "habits", "--lagging-only", "-o", "csv"); r.Code != 0 || strings.Count(strings.TrimSpace(r.Out), "\n") != 1 {
		t.Errorf("lag --lagging-only -o csv: exit %d\n%s", r.Code, r.Out)
	}
	// groups delete points at offsets delete.
	if r := runCLI(t, "", nil, "groups", "delete", "habits"); r.Code != 2 || !strings.Contains(r.Err, "kaasctl offsets delete --group habits --topic") {
		t.Errorf("groups delete: exit %d %s", r.Code, r.Err)
	}
}
