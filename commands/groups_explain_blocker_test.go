package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/views"
)

// explainWhy runs groups explain over a window of the why volume and
// parses its verdicts.
func explainWhy(t *testing.T, v *whyVolume) (map[string]inspect.Verdict, cliResult) {
	t.Helper()
	// groups explain observes at the wall clock (no --now): the open
	// transaction planted Ongoing in July is overdue by now.
	r := runCLI(t, "", nil, "groups", "explain", "--data-dir", v.dir, "--kaas-version", "0.2.18", "--window", "400ms", "--interval", "200ms", "-o", "json")
	var doc views.GroupsExplainView
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", r.Code, err, r.Out, r.Err)
	}
	return verdictsByGroup(doc), r
}

// The verdict's blocker slot holds the read model's blocker of each
// group's stuck partition (what groups describe --why names): its kind,
// its transaction, and its fix as the next command; a corrupt batch's
// reset, run as printed, plans and writes nothing, and with --execute
// moves the group past it, after which no blocker is left.
func TestGroupsExplainNamesTheBlocker(t *testing.T) {
	t.Parallel()
	v := plantWhyVolume(t)
	vds, r := explainWhy(t, v)
	if r.Code != 3 {
		t.Fatalf("exit %d, want 3\n%s", r.Code, r.Err)
	}
	want := map[string]string{"g-reaped": inspect.BlockReapedNoMarkers, "g-marker": inspect.BlockMarkersPending, "g-open": inspect.BlockOverdueTxn, "g-corrupt": inspect.BlockCorruptBatch}
	for g, kind := range want {
		vd := vds[g]
		if vd.Blocker == nil || vd.Blocker.Kind != kind || vd.BlockedPartitions != 1 || vd.Severity != inspect.VerdictPage || vd.Next == nil {
			t.Fatalf("%s: blocker %+v, %d blocked, severity %s, next %+v; want %s", g, vd.Blocker, vd.BlockedPartitions, vd.Severity, vd.Next, kind)
		}
		if !strings.Contains(vd.Blocker.Assumes, "0.2.18") || !strings.Contains(vd.Next.Command, "--data-dir "+v.dir) {
			t.Errorf("%s: assumes %q, next %q: the generation and the flags given", g, vd.Blocker.Assumes, vd.Next.Command)
		}
	}
	if b := vds["g-open"].Blocker; b.Transaction != "pay-open" || !strings.Contains(vds["g-open"].Next.Command, "groups describe") || !strings.Contains(vds["g-open"].Next.Command, "--why g-open") {
		t.Errorf("g-open: transaction %q, next %q", b.Transaction, vds["g-open"].Next.Command)
	}
	if vd := vds["g-fine"]; vd.Blocker != nil || vd.BlockedPartitions != 0 {
		t.Errorf("g-fine is caught up: %+v", vd.Blocker)
	}
	next := vds["g-corrupt"].Next.Command
	if !strings.Contains(next, "offsets reset") || !strings.Contains(next, "--topic orders:3 --to-offset 7") || strings.Contains(next, "--execute") {
		t.Fatalf("g-corrupt's next command %q: the reset past the batch, as a dry run", next)
	}
	file := filepath.Join(v.l.LiveOffsetsDirOf(v.l.Gen.Gen), "g-corrupt.json")
	before, _ := os.ReadFile(file)
	if r := runPrinted(t, next); r.Code != 0 {
		t.Fatalf("%s: exit %d\n%s\n%s", next, r.Code, r.Out, r.Err)
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Fatalf("the dry run wrote %s", file)
	}
	if r := runPrinted(t, next+" --execute"); r.Code != 0 {
		t.Fatalf("%s --execute: exit %d\n%s\n%s", next, r.Code, r.Out, r.Err)
	}
	vds, _ = explainWhy(t, v)
	if vd := vds["g-corrupt"]; vd.Blocker != nil {
		t.Errorf("after the reset past the batch: blocker %+v", vd.Blocker)
	}
}

// Observing once (--window 0), the verdict names the blockers describe
// --why names without a window; no BLOCKED condition comes of them.
func TestGroupsExplainBlockerAtOnce(t *testing.T) {
	t.Parallel()
	v := plantWhyVolume(t)
	r := runCLI(t, "", nil, "groups", "explain", "--data-dir", v.dir, "--kaas-version", "0.2.18", "--window", "0", "-o", "json", "g-corrupt", "g-reaped", "g-fine")
	var doc views.GroupsExplainView
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil || r.Code != 3 {
		t.Fatalf("exit %d: %v\n%s", r.Code, err, r.Err)
	}
	vds := verdictsByGroup(doc)
	for g, kind := range map[string]string{"g-corrupt": inspect.BlockCorruptBatch, "g-reaped": inspect.BlockReapedNoMarkers} {
		vd := vds[g]
		if vd.Blocker == nil || vd.Blocker.Kind != kind || vd.Next == nil {
			t.Errorf("%s: blocker %+v next %+v, want %s", g, vd.Blocker, vd.Next, kind)
		}
		for _, f := range vd.Findings {
			if f.Code == inspect.HealthBlocked {
				t.Errorf("%s: one observation is no BLOCKED condition: %+v", g, f)
			}
		}
	}
	if vd := vds["g-fine"]; vd.Blocker != nil || vd.BlockedPartitions != 0 {
		t.Errorf("g-fine: %+v", vd)
	}
}
