package commands

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/views"
)

func mustJSON[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	return v
}

func TestGroupsListDamagedFlags(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	out, errOut, code := runVol(t, "groups", "list", "--data-dir", vol, "--kaas-version", "0.2.18", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	v := mustJSON[views.GroupsListView](t, out)
	rows := map[string]inspect.GroupRow{}
	for _, r := range v.Groups {
		rows[r.Group] = r
	}
	want := map[string][]string{
		"plain":       {inspect.IssueLegacyPlainMap},
		"truncated":   {inspect.IssueCorruptFile},
		"empty":       {inspect.IssueCorruptFile},
		"nullofs":     {inspect.IssueCorruptFile},
		"badvals":     {inspect.IssueCorruptFile},
		"legacy-only": {inspect.IssueLegacyDir},
		"good":        {inspect.IssueCurrentAndLegacy},
		"e-dead":      {inspect.IssueEntryDeadBroker, inspect.IssueTiersDisagree},
		"e-unknown":   {inspect.IssueEntryUnknownBroker, inspect.IssueTiersDisagree},
		"e-disagree":  {inspect.IssueTiersDisagree},
		"e-agree":     {inspect.IssueDuplicateEntry},
		"team/a":      {inspect.IssueUnroundtrippableName},
		longGroup:     {inspect.IssueUnroundtrippableName},
		"lagging":     nil,
	}
	for g, issues := range want {
		r, ok := rows[g]
		if !ok {
			t.Errorf("group %.40q missing from groups list", g)
			continue
		}
		if strings.Join(r.Issues, ",") != strings.Join(issues, ",") {
			t.Errorf("group %.40q issues %v, want %v", g, r.Issues, issues)
		}
	}
	if r := rows["e-disagree"]; r.Coordinator != "kaas-10" || r.Tier != "explicit" || r.HashCoordinator != "kaas-0" || strings.Join(r.Sources, ",") != "entry,file" {
		t.Errorf("e-disagree row %+v", r)
	}
	if r := rows["plain"]; r.Tier != "hash-fallback" || r.Coordinator != "kaas-0" || r.CommittedPartitions != 2 {
		t.Errorf("plain row %+v", r)
	}
	if r := rows["good"]; r.CommittedPartitions != 3 || len(r.Files) != 2 {
		t.Errorf("good row: the current file (3 partitions) must win over the legacy one: %+v", r)
	}
	if v.Total != len(v.Groups) || v.Total != 15 {
		t.Errorf("total %d, shown %d groups; want 15", v.Total, len(v.Groups))
	}

	// Filters.
	filtered := func(args ...string) []string {
		out, errOut, code := runVol(t, append([]string{"groups", "list", "--data-dir", vol, "--kaas-version", "0.2.18", "-o", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var names []string
		for _, r := range mustJSON[views.GroupsListView](t, out).Groups {
			names = append(names, r.Group)
		}
		return names
	}
	if got := strings.Join(filtered("--coordinator", "kaas-10", "--tier", "explicit"), ","); got != "e-disagree" {
		t.Errorf("--coordinator kaas-10 --tier explicit = %q", got)
	}
	if got := strings.Join(filtered("--regex", "^e-d"), ","); got != "e-dead,e-disagree" {
		t.Errorf("--regex ^e-d = %q", got)
	}
	if got := strings.Join(filtered("--issue", "legacyPlainMap"), ","); got != "plain" {
		t.Errorf("--issue legacyPlainMap = %q", got)
	}
	if got := filtered("--issues-only"); len(got) != 14 {
		t.Errorf("--issues-only gave %d groups, want 14 (all but lagging): %v", len(got), got)
	}
}

func TestGroupsListLabMatchesFindCoordinator(t *testing.T) {
	t.Parallel()
	// FindCoordinator answers captured on the lab cluster (api-findcoordinator.txt,
	// phase2-poll-after-kill-skafka-1.txt): node N is skafka-N.
	want := map[string]map[string]string{
		"lab-phase1": {"lab-group": "skafka-1", "g-beta": "skafka-0", "g-gamma": "skafka-2"},
		"lab-phase2": {"lab-group": "skafka-0", "g-beta": "skafka-2", "g-gamma": "skafka-0"},
	}
	for vname, groups := range want {
		vol := copyVolume(t, vname)
		out, errOut, code := runVol(t, "groups", "list", "--data-dir", vol, "-o", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", vname, code, errOut)
		}
		for _, r := range mustJSON[views.GroupsListView](t, out).Groups {
			if w, ok := groups[r.Group]; !ok || r.Coordinator != w {
				t.Errorf("%s: %s coordinated by %q, FindCoordinator said %q", vname, r.Group, r.Coordinator, w)
			}
			// A Go-generation volume: DATA/__consumer_offsets is the live
			// dir, so these are plain "file" rows without any issue.
			if len(r.Issues) != 0 || !slices.Contains(r.Sources, inspect.SourceFile) || slices.Contains(r.Sources, inspect.SourceLegacyFile) || r.CommittedPartitions != 6 {
				t.Errorf("%s: %s: sources %v issues %v partitions %d; want file, none, 6", vname, r.Group, r.Sources, r.Issues, r.CommittedPartitions)
			}
		}
	}
}

func TestGroupsDescribeLag(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	out, errOut, code := runVol(t, "groups", "describe", "good", "lagging", "--data-dir", vol, "--kaas-version", "0.2.18", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	v := mustJSON[views.GroupsDescribeView](t, out)
	if len(v.Groups) != 2 {
		t.Fatalf("%d groups", len(v.Groups))
	}
	good, lagging := v.Groups[0], v.Groups[1]
	// orders has four partition dirs and good commits on two of them: the
	// other two are shown without an offset, their lag unknown.
	if !good.LagKnown || good.TotalLag != 22 || good.LagUnknown != 3 {
		t.Errorf("good: lag %d known %v unknown %d; want 22 (audit/0 2 + orders/0 20) with orders/1 (no log end), orders/2 and orders/3 (no commit) unknown", good.TotalLag, good.LagKnown, good.LagUnknown)
	}
	// This volume has manifests and no segment files: every log end is the
	// manifest's, and the source says so.
	if good.LagSource != inspect.LagSourceManifest || good.ManifestFallbacks != 2 {
		t.Errorf("lag source %q (%d manifest fallbacks) must say the manifest was used", good.LagSource, good.ManifestFallbacks)
	}
	var below *inspect.PartitionOffset
	for i, p := range lagging.Partitions {
		if p.Topic == "orders" && p.Partition == 0 {
			below = &lagging.Partitions[i]
		}
		if p.Topic == "missing-topic" && (p.Lag != nil || !strings.Contains(p.LagNote, "no partition dir")) {
			t.Errorf("missing manifest: lag %v note %q", p.Lag, p.LagNote)
		}
	}
	if below == nil || !below.BelowLogStart || below.Lag == nil || *below.Lag != 80 || !strings.Contains(below.LagNote, "below log start") {
		t.Errorf("orders/0 committed 20 < log start 50: %+v", below)
	}

	// --lag filters on the total.
	for expr, want := range map[string]string{">50": "lagging", "<=22": "good", "=22": "good", "22": "good,lagging", "!=22": "lagging", "0..22": "good", ">1000": ""} {
		out, errOut, code := runVol(t, "groups", "describe", "--regex", "^(good|lagging)$", "--lag", expr, "--data-dir", vol, "--kaas-version", "0.2.18", "-o", "json")
		if code != 0 {
			t.Fatalf("--lag %s: exit %d: %s", expr, code, errOut)
		}
		var names []string
		for _, g := range mustJSON[views.GroupsDescribeView](t, out).Groups {
			names = append(names, g.Group)
		}
		if strings.Join(names, ",") != want {
			t.Errorf("--lag %s selected %v, want %q", expr, names, want)
		}
	}
}

func TestOfflineUsageErrors(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "lab-phase1")
	for _, args := range [][]string{
		{"groups", "describe"},
		{"groups", "describe", "g", "--all"},
		{"groups", "describe", "--all", "--lag", ">x"},
		{"groups", "list", "--tier", "bogus"},
		{"groups", "list", "--regex", "("},
		{"groups", "list", "--issue", "nope"},
		{"volume", "check", "--severity", "loud"},
		{"txn", "list", "--state", "Running"},
		{"txn", "list", "--now", "yesterday"},
		{"txn", "describe"},
	} {
		_, errOut, code := runVol(t, append(args, "--data-dir", vol)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage); stderr %s", args, code, errOut)
		}
	}
	if _, _, code := runVol(t, "groups", "list"); code != 2 {
		t.Errorf("groups list without a volume: exit %d, want 2", code)
	}
	if _, errOut, code := runVol(t, "groups", "describe", "nobody", "--data-dir", vol); code != 1 || !strings.Contains(errOut, `"nobody"`) {
		t.Errorf("describe of an unknown group: exit %d, stderr %q; want 1 naming the group", code, errOut)
	}
}

func TestVolumeCheckDamaged(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	out, _, code := runVol(t, "volume", "check", "--data-dir", vol, "--kaas-version", "0.2.18", "--now", volNow, "-o", "json")
	if code != 3 {
		t.Fatalf("exit %d, want 3", code)
	}
	rep := mustJSON[inspect.CheckReport](t, out)
	codes := map[string]bool{}
	for _, f := range rep.Findings {
		codes[f.Code] = true
		if f.Severity == "" || f.Path == "" || f.Message == "" {
			t.Errorf("incomplete finding %+v", f)
		}
	}
	for _, c := range []string{"offsets.legacyPlainMap", "offsets.corruptFile", "offsets.badValue", "offsets.badKey", "offsets.groupInSubdirectory",
		"offsets.unroundtrippableName", "offsets.currentAndLegacyFile", "volume.legacyOffsetsDir", "volume.staleTmpFile", "volume.unknownFile",
		"assignment.entryDeadBroker", "assignment.entryUnknownBroker", "assignment.duplicateEntry",
		"txn.unknownState", "txn.wrongSlot", "txn.corruptSlot", "txn.badSlotFileName",
		"fences.badEntry", "fences.corruptFile", "markers.pending", "markers.nameMismatch",
		"producerIds.corruptFile", "producerIds.badValue", "manifest.badRange", "manifest.corruptFile", "manifest.missing"} {
		if !codes[c] {
			t.Errorf("volume check did not report %s", c)
		}
	}
	if rep.Summary.Errors == 0 || rep.Summary.Checked["offsets"] != 13 {
		t.Errorf("summary %+v", rep.Summary)
	}
	// --severity error keeps only errors but still exits 3 and counts all.
	out, _, code = runVol(t, "volume", "check", "--data-dir", vol, "--kaas-version", "0.2.18", "--now", volNow, "-o", "json", "--severity", "error")
	r2 := mustJSON[inspect.CheckReport](t, out)
	if code != 3 || r2.Summary.Errors != rep.Summary.Errors || r2.Summary.Warnings != rep.Summary.Warnings {
		t.Errorf("--severity error: exit %d summary %+v", code, r2.Summary)
	}
	for _, f := range r2.Findings {
		if f.Severity != "error" {
			t.Errorf("--severity error showed %+v", f)
		}
	}
	// The lab volumes have no error.
	if _, _, code := runVol(t, "volume", "check", "--data-dir", copyVolume(t, "lab-phase2"), "--now", volNow); code != 0 {
		t.Errorf("lab-phase2 check: exit %d, want 0", code)
	}
}

func TestTxnFilters(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	ids := func(args ...string) string {
		out, _, _ := runVol(t, append([]string{"txn", "list", "--data-dir", vol, "--now", volNow, "-o", "json"}, args...)...)
		var names []string
		for _, r := range mustJSON[views.TxnListView](t, out).Transactions {
			names = append(names, r.ID)
		}
		return strings.Join(names, ",")
	}
	if got := ids("--overdue"); got != "tx-ongoing" {
		t.Errorf("--overdue = %q", got)
	}
	if got := ids("--state", "ongoing"); got != "payments-tx-0,tx-ongoing" {
		t.Errorf("--state ongoing = %q", got)
	}
	if got := ids("--state", "CompleteCommit,CompleteAbort"); got != "tx-abort,tx-commit" {
		t.Errorf("--state CompleteCommit,CompleteAbort = %q", got)
	}
	// Not overdue an hour earlier.
	if got := ids("--overdue", "--now", "2026-07-23T11:00:30Z"); got != "" {
		t.Errorf("--overdue at 11:00:30 = %q, want none", got)
	}
	out, errOut, code := runVol(t, "txn", "describe", "tx-corrupt", "--data-dir", vol, "--now", volNow)
	if code != 1 || !strings.Contains(errOut, "slot-11.json could not be decoded") {
		t.Errorf("describe of an id in a corrupt slot: exit %d, out %q, err %q", code, out, errOut)
	}
}

func TestOfflineMachineFormats(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	for _, args := range [][]string{
		{"groups", "list"}, {"groups", "describe", "--all"}, {"volume", "check", "--now", volNow}, {"txn", "list", "--now", volNow},
	} {
		for _, f := range []string{"jsonl", "yaml", "csv", "json"} {
			out, errOut, code := runVol(t, append(append([]string{}, args...), "--data-dir", vol, "--kaas-version", "0.2.18", "-o", f)...)
			if code == 2 || strings.Contains(errOut, "no csv form") {
				t.Fatalf("%v -o %s: exit %d: %s", args, f, code, errOut)
			}
			switch f {
			case "jsonl":
				lines := strings.Split(strings.TrimSpace(out), "\n")
				for _, l := range lines {
					var m map[string]any
					if err := json.Unmarshal([]byte(l), &m); err != nil {
						t.Errorf("%v jsonl line %q: %v", args, l, err)
					}
				}
				if len(lines) < 3 {
					t.Errorf("%v jsonl: %d lines", args, len(lines))
				}
			case "yaml":
				var m map[string]any
				if err := yaml.Unmarshal([]byte(out), &m); err != nil || len(m) == 0 {
					t.Errorf("%v yaml: %v", args, err)
				}
			case "json":
				// Unknown numbers (lag without a manifest) are null; lists never are.
				for _, l := range strings.Split(out, "\n") {
					if strings.Contains(l, ": null") && !strings.Contains(l, `"lag"`) && !strings.Contains(l, `"logStartOffset"`) && !strings.Contains(l, `"highWatermark"`) {
						t.Errorf("%v json has a null: %s", args, l)
					}
				}
			case "csv":
				if n := strings.Count(out, "\n"); n < 3 {
					t.Errorf("%v csv: %d lines", args, n)
				}
			}
		}
	}
}

func TestOfflineClusterDirOnly(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	cd := vol + "/__cluster"
	// Explicit cluster dir plus data dir: same answer as --data-dir alone.
	a, _, _ := runVol(t, "groups", "list", "--data-dir", vol, "-o", "json")
	b, _, _ := runVol(t, "groups", "list", "--cluster-dir", cd, "--data-dir", vol, "-o", "json")
	if a != b {
		t.Errorf("--cluster-dir + --data-dir differs from --data-dir")
	}
	// Cluster dir only: no legacy dir, no manifests, lag unknown and said so.
	out, errOut, code := runVol(t, "groups", "describe", "good", "--cluster-dir", cd, "-o", "json")
	if code != 0 || !strings.Contains(errOut, "--data-dir") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	d := mustJSON[views.GroupsDescribeView](t, out).Groups[0]
	if d.LagKnown || len(d.Partitions) != 3 || d.Partitions[0].Lag != nil || !strings.Contains(d.Partitions[0].LagNote, "data dir is unknown") {
		t.Errorf("cluster dir only: %+v", d)
	}
	if strings.Join(d.Sources, ",") != "file" {
		t.Errorf("without the data dir the legacy file is not visible: sources %v", d.Sources)
	}
}
