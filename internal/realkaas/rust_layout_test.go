//go:build realkaas && unix

package realkaas

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The 0.2.18 layout with a legacy offsets dir left over
// (DATA/__consumer_offsets, where Rust ≤ 0.2.15 kept them): the brokers read
// only CD/__consumer_offsets, so a consumer resumes from the file there,
// and a group whose only file is in the legacy dir starts from
// auto.offset.reset. kaasctl pinned to 0.2.18 reads the same files.
func TestRustLegacyOffsetsDir(t *testing.T) {
	t.Parallel()
	c := newRustCluster(t, "orders:3")
	produce(t, c, "orders", 3, 30)
	cs := startConsumer(t, c, "g-leg", "orders")
	waitPositions(t, all("orders", 3, 30), cs)
	cs.stop()
	termAll(t, c)
	l := layoutOf(t, c)
	legacy := l.DataOffsetsPath()
	if err := os.MkdirAll(legacy, 0o755); err != nil {
		t.Fatal(err)
	}
	for g, off := range map[string]int{"g-leg": 10, "g-old": 5} {
		b := fmt.Sprintf(`{"offsets":{"orders/0":%d,"orders/1":%d,"orders/2":%d}}`, off, off, off)
		if err := os.WriteFile(filepath.Join(legacy, g+".json"), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What kaasctl says before the brokers start: without a pin the volume
	// has group files in both dirs; pinned, the legacy dir is not read.
	r := kaasctl(t, "volume", "check", "--data-dir", c.Data, "-o", "json")
	t.Logf("volume check, not pinned: exit %d\n%s", r.code, r.stderr)
	pinned := decode[checkView](t, kaasctl(t, "volume", "check", "--data-dir", c.Data, "--kaas-version", "0.2.18", "-o", "json"))
	legacyNamed := false
	for _, f := range pinned.Findings {
		if strings.Contains(f.Path, legacy) {
			legacyNamed = true
			t.Logf("volume check --kaas-version 0.2.18: %s %s %s: %s", f.Severity, f.Code, f.Path, f.Message)
		}
	}
	if !legacyNamed {
		t.Errorf("volume check --kaas-version 0.2.18 says nothing of the legacy dir %s: %+v", legacy, pinned.Findings)
	}
	od := decode[struct {
		Groups []struct {
			Group      string   `json:"group"`
			Sources    []string `json:"sources"`
			Issues     []string `json:"issues"`
			Partitions []struct {
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
				Committed int64  `json:"committed"`
			} `json:"partitions"`
		} `json:"groups"`
	}](t, ok(t, "groups", "describe", "g-leg", "g-old", "--data-dir", c.Data, "--kaas-version", "0.2.18", "-o", "json"))
	offline := map[string]string{}
	for _, g := range od.Groups {
		var parts []string
		for _, p := range g.Partitions {
			parts = append(parts, fmt.Sprintf("%s/%d=%d", p.Topic, p.Partition, p.Committed))
		}
		offline[g.Group] = strings.Join(parts, " ") + " sources " + strings.Join(g.Sources, ",") + " issues " + strings.Join(g.Issues, ",")
	}
	t.Logf("groups describe offline, pinned 0.2.18: %v", offline)
	if !strings.HasPrefix(offline["g-leg"], "orders/0=30 orders/1=30 orders/2=30 sources file,legacyFile") {
		t.Errorf("kaasctl reads g-leg as %q; the brokers read CD/__consumer_offsets/g-leg.json (30)", offline["g-leg"])
	}
	// g-old's only file is one no 0.2.18 broker reads: kaasctl names it
	// legacy (its lag is the read model's, issue 32: rust_readmodel_test.go).
	if !strings.Contains(offline["g-old"], "sources legacyFile") || !strings.Contains(offline["g-old"], "legacyDir") {
		t.Errorf("kaasctl does not mark g-old as legacy-only: %q", offline["g-old"])
	}
	startAll(t, c)
	produce(t, c, "orders", 3, 1)
	resumeAt(t, c, "g-leg with a legacy file at 10", "g-leg", all("orders", 3, 30), "orders")
	resumeAt(t, c, "g-old only in the legacy dir", "g-old", all("orders", 3, 0), "orders")
}
