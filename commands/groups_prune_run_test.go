package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/views"
)

// runGroupsPrune called directly, offline: a dry run plans, an execute
// removes the file, and a plan over the cap is refused before anything is
// written.
func TestRunGroupsPruneDirect(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	file := filepath.Join(cd, "__consumer_offsets", "g.json")
	old := time.Now().Add(-10 * 24 * time.Hour)
	os.Chtimes(file, old, old)
	ask := inspect.PruneAsk{Empty: true, MinAge: 7 * 24 * time.Hour, AgeFrom: inspect.AgeMtime, Now: time.Now()}
	g, out, errb := directGlobals(t, time.Now(), "--data-dir", data, "--kaas-version", "0.2.18", "-o", "json")
	o := pruneOptions{mode: writeMode{offline: true}, ask: ask, maxGroups: 10}
	if err := runGroupsPrune(context.Background(), g, o); err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	if v := decodeOut[views.GroupsPruneView](t, out); v.Mode != "dry-run" || v.Path != "offline" || v.Summary.Remove != 1 || v.Groups[0].Group != "g" {
		t.Fatalf("view %+v", v)
	}
	o.maxGroups = 1
	o.mode.execute = true
	g, out, errb = directGlobals(t, time.Now(), "--data-dir", data, "--kaas-version", "0.2.18", "-o", "json")
	if err := runGroupsPrune(context.Background(), g, o); err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	if _, err := os.Lstat(file); !os.IsNotExist(err) {
		t.Fatalf("g.json still there: %v\n%s", err, out)
	}
	writeFile(t, cd, "__consumer_offsets/a.json", `{"offsets":{"orders/0":5}}`)
	writeFile(t, cd, "__consumer_offsets/b.json", `{"offsets":{"orders/0":5}}`)
	for _, n := range []string{"a", "b"} {
		os.Chtimes(filepath.Join(cd, "__consumer_offsets", n+".json"), old, old)
	}
	g, _, _ = directGlobals(t, time.Now(), "--data-dir", data, "--kaas-version", "0.2.18", "-o", "json")
	if err := runGroupsPrune(context.Background(), g, o); exit.Code(err) != exit.Refused || !strings.Contains(err.Error(), "--max-groups 2") {
		t.Fatalf("over the cap: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(cd, "__consumer_offsets", "a.json")); err != nil {
		t.Errorf("a.json removed over the cap: %v", err)
	}
}

// The table of an offline prune of the damaged test volume (corrupt,
// plain-map, legacy and oddly named files among ordinary ones), pinned.
func TestPruneGolden(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	now, _ := time.Parse(time.RFC3339, volNow)
	r := runCLIAt(t, func() time.Time { return now }, "", nil, "groups", "prune", "--data-dir", vol, "--kaas-version", "0.2.18", "--offline",
		"--empty-for", "1h", "--deleted-topics", "--recreated-topics", "--canaries")
	// Ids kaas cannot round-trip and a file it cannot decode are refused.
	if r.Code != 4 {
		t.Fatalf("exit %d, want 4\n%s", r.Code, r.Err)
	}
	checkVolGolden(t, "groups-prune-damaged.txt", vol, r.Out)
}
