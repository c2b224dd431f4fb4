package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/views"
)

// aggVolume writes a volume whose assignment has n explicit entries, every
// third naming a broker that is gone, and one offset file.
func aggVolume(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	cd := filepath.Join(dir, "__cluster")
	if err := os.MkdirAll(filepath.Join(cd, "__consumer_offsets"), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(`{"controllerEpoch":1,"assignmentVersion":3,"controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"},{"id":"kaas-1","health":"alive"}],"partitions":[],"consumerGroups":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		br := "kaas-1"
		if i%3 == 0 {
			br = "kaas-gone"
		}
		fmt.Fprintf(&b, `{"groupId":"g-%04d","broker":%q,"epoch":1}`, i, br)
	}
	b.WriteString("]}")
	if err := os.WriteFile(filepath.Join(cd, "assignment.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cd, "__consumer_offsets", "g-0001.json"), []byte(`{"offsets":{"orders/0":5}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Findings are one stderr line per kind with the count and where to see
// the rest, only about the keys asked about, and -q silences them.
func TestFindingsAggregatedScopedAndQuiet(t *testing.T) {
	t.Parallel()
	dir := aggVolume(t, 3000)

	r := runCLI(t, "", nil, "whois", "--data-dir", dir, "g-0001")
	if r.Code != 0 || r.Err != "" {
		t.Errorf("whois of a key with a good entry warns about other entries: exit %d\n%s", r.Code, r.Err)
	}
	r = runCLI(t, "", nil, "whois", "--data-dir", dir, "g-0003", "g-0001")
	if r.Code != 0 || strings.Count(r.Err, "\n") != 1 || !strings.Contains(r.Err, `"g-0003"`) || !strings.Contains(r.Out, "explicit entry names kaas-gone") {
		t.Errorf("whois g-0003: want one warning about g-0003 and the answer's note: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}

	r = runCLI(t, "", nil, "groups", "list", "--data-dir", dir, "-o", "json")
	warnings := 0
	for _, l := range strings.Split(strings.TrimSpace(r.Err), "\n") {
		if strings.HasPrefix(l, "warning:") {
			warnings++
		}
	}
	if r.Code != 0 || warnings != 1 || !strings.Contains(r.Err, "(and 999 more like it: 'kaasctl volume check --data-dir "+dir+"' lists every one)") {
		t.Errorf("groups list: want one warning line counting the other 999 entries: exit %d\n%s", r.Code, r.Err)
	}
	v := decodeJSON[views.GroupsListView](t, r)
	if v.Total != 3000 || v.Sources.ExplicitCount != 3000 {
		t.Errorf("groups list: %d groups, %d entries", v.Total, v.Sources.ExplicitCount)
	}

	for _, args := range [][]string{
		{"groups", "list", "--data-dir", dir, "-q"},
		{"whois", "--data-dir", dir, "g-0003", "-q"},
		{"groups", "describe", "--data-dir", dir, "g-0003", "-q"},
	} {
		if r := runCLI(t, "", nil, args...); r.Err != "" {
			t.Errorf("%v: stderr with -q (exit %d):\n%s", args, r.Code, r.Err)
		}
	}

	// volume check still lists every finding.
	r = runCLI(t, "", nil, "volume", "check", "--data-dir", dir, "-o", "json")
	if n := strings.Count(r.Out, "assignment.entryUnknownBroker"); n != 1000 {
		t.Errorf("volume check lists %d entryUnknownBroker findings, want 1000", n)
	}
}
