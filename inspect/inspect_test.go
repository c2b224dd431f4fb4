package inspect

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

func testAssignment() *volume.Assignment {
	return &volume.Assignment{
		Brokers: []volume.BrokerEntry{{ID: "kaas-0", Health: "alive"}, {ID: "kaas-1", Health: "alive"}, {ID: "kaas-2", Health: "dead"}, {ID: "kaas-10", Health: "alive"}},
		ConsumerGroups: []volume.GroupEntry{
			{GroupID: "e-agree", Broker: "kaas-1"}, {GroupID: "e-disagree", Broker: "kaas-10"},
			{GroupID: "e-dead", Broker: "kaas-2"}, {GroupID: "e-unknown", Broker: "kaas-9"}, {GroupID: "e-agree", Broker: "kaas-0"},
		},
	}
}

func TestBuildGroupRows(t *testing.T) {
	t.Parallel()
	rows := BuildGroupRows(GroupsInput{Assignment: testAssignment(), Files: []GroupFile{
		{Group: "plain", Path: "c/plain.json", Layout: volume.OffsetsCurrent, Format: volume.FormatPlainMap, Partitions: 2, BrokerSeesEmpty: true},
		{Group: "both", Path: "c/both.json", Layout: volume.OffsetsCurrent, Format: volume.FormatEnvelope, Partitions: 3},
		{Group: "both", Path: "l/both.json", Layout: volume.OffsetsLegacy, Format: volume.FormatEnvelope, Partitions: 9},
		{Group: "old", Path: "l/old.json", Layout: volume.OffsetsLegacy, Format: volume.FormatEnvelope, Partitions: 4},
		{Group: "bad", Path: "c/bad.json", Layout: volume.OffsetsCurrent, Corrupt: true, Problem: "truncated"},
		{Group: "a/b", Path: "c/a/b.json", Layout: volume.OffsetsCurrent, Format: volume.FormatEnvelope, Partitions: 1, NameProblems: []string{"slash"}},
		{Group: "e-disagree", Path: "c/e-disagree.json", Layout: volume.OffsetsCurrent, Format: volume.FormatEnvelope, Partitions: 1},
	}})
	got := map[string]string{}
	var order []string
	for _, r := range rows {
		order = append(order, r.Group)
		got[r.Group] = r.Coordinator + "|" + r.Tier + "|" + strings.Join(r.Sources, ",") + "|" + strings.Join(r.Issues, ",") + "|" + string(rune('0'+r.CommittedPartitions))
	}
	// coordinator|tier for the hash tier is checked against the router in
	// grouphash's own tests; here: explicit tiers, sources, issues, counts.
	want := map[string]string{
		"plain":      "kaas-0|hash-fallback|file|legacyPlainMap|2",
		"both":       "*|file,legacyFile|currentAndLegacy|3",
		"old":        "*|legacyFile|legacyDir|4",
		"bad":        "*|file|corruptFile|0",
		"a/b":        "*|file|unroundtrippableName|1",
		"e-agree":    "kaas-1|explicit|entry|duplicateEntry|0",
		"e-disagree": "kaas-10|explicit|entry,file|tiersDisagree|1",
		"e-dead":     "kaas-2|explicit|entry|entryDeadBroker,tiersDisagree|0",
		"e-unknown":  "kaas-9|explicit|entry|entryUnknownBroker,tiersDisagree|0",
	}
	for g, w := range want {
		if rest, ok := strings.CutPrefix(w, "*|"); ok {
			parts := strings.SplitN(got[g], "|", 3)
			if len(parts) != 3 || parts[2] != rest || parts[1] == "explicit" {
				t.Errorf("%s: %s, want <hash>|%s", g, got[g], rest)
			}
			delete(want, g)
		}
	}
	for g, w := range want {
		if got[g] != w {
			t.Errorf("%s: %s, want %s", g, got[g], w)
		}
	}
	if strings.Join(order, ",") != "a/b,bad,both,e-agree,e-dead,e-disagree,e-unknown,old,plain" {
		t.Errorf("order %v", order)
	}
	// Without an assignment every row says so.
	for _, r := range BuildGroupRows(GroupsInput{Files: []GroupFile{{Group: "x", Layout: volume.OffsetsCurrent}}}) {
		if r.Tier != "none" || !r.HasIssue(IssueNoAssignment) || r.Coordinator != "" {
			t.Errorf("no assignment: %+v", r)
		}
	}
	f := GroupFilter{Coordinator: "kaas-10", Tier: "explicit", Regex: regexp.MustCompile("^e-")}
	if fr := FilterGroups(rows, f); len(fr) != 1 || fr[0].Group != "e-disagree" {
		t.Errorf("filter: %+v", fr)
	}
}

func TestDescribeGroupLag(t *testing.T) {
	t.Parallel()
	of := &volume.OffsetFile{Path: "c/g.json", Format: volume.FormatEnvelope, Entries: []volume.OffsetEntry{
		{Topic: "a", Partition: 0, Offset: 10}, {Topic: "a", Partition: 1, Offset: 5}, {Topic: "a", Partition: 2, Offset: 50},
		{Topic: "b", Partition: 0, Offset: -1}, {Topic: "b", Partition: 1, Offset: 3}, {Topic: "c", Partition: 0, Offset: 7},
	}}
	seg := func(start, end int64) *volume.LogBounds {
		return &volume.LogBounds{Start: &volume.Fact{Value: start, Source: volume.SourceSegments}, End: &volume.Fact{Value: end, Source: volume.SourceSegments}}
	}
	bounds := map[string]*volume.LogBounds{
		"a/0": seg(0, 15), "a/1": seg(20, 30), "a/2": seg(0, 40), "b/0": seg(0, 9),
		"c/0": {Start: &volume.Fact{Value: 0, Source: volume.SourceManifest}, End: &volume.Fact{Value: 10, Source: volume.SourceManifest}, Fallback: "no segment files"},
	}
	lookup := func(topic string, p int32) *volume.LogBounds {
		if b, ok := bounds[topic+"/"+string(rune('0'+p))]; ok {
			return b
		}
		return &volume.LogBounds{Unknown: "no segment files in d and no manifest"}
	}
	gfiles := []GroupFileData{{Path: "c/g.json", Layout: volume.OffsetsCurrent, File: of}}
	st := stateOf("g", gfiles, lookup)
	d := DescribeGroup("g", testAssignment(), gfiles, &st)
	if d.Partitions[0].Lag == nil || *d.Partitions[0].Lag != 5 || d.Partitions[0].LogEndSource != volume.SourceSegments {
		t.Errorf("a/0: %+v", d.Partitions[0])
	}
	if !d.Partitions[1].BelowLogStart || *d.Partitions[1].Lag != 25 {
		t.Errorf("a/1 committed 5 < log start 20: %+v", d.Partitions[1])
	}
	if *d.Partitions[2].Lag != 0 || !d.Partitions[2].BeyondLogEnd || !strings.Contains(d.Partitions[2].LagNote, "OFFSET_OUT_OF_RANGE") {
		t.Errorf("a/2 committed beyond the log end: %+v", d.Partitions[2])
	}
	if d.Partitions[3].Lag != nil || !strings.Contains(d.Partitions[3].LagNote, "auto.offset.reset") {
		t.Errorf("b/0 committed -1: %+v", d.Partitions[3])
	}
	if d.Partitions[4].Lag != nil || !strings.Contains(d.Partitions[4].LagNote, "no segment files") {
		t.Errorf("b/1 unknown log: %+v", d.Partitions[4])
	}
	if d.Partitions[5].Lag == nil || *d.Partitions[5].Lag != 3 || d.Partitions[5].LogEndSource != volume.SourceManifest || !strings.Contains(d.Partitions[5].LagNote, "manifest") {
		t.Errorf("c/0 manifest fallback: %+v", d.Partitions[5])
	}
	if !d.LagKnown || d.TotalLag != 33 || d.LagUnknown != 2 || d.ManifestFallbacks != 1 || d.LagSource != LagSourceMixed || len(d.Topics) != 3 || d.Topics[0].Lag != 30 || d.Topics[1].Unknown != 2 {
		t.Errorf("totals: %d known %v unknown %d fallbacks %d source %q topics %+v", d.TotalLag, d.LagKnown, d.LagUnknown, d.ManifestFallbacks, d.LagSource, d.Topics)
	}
	if d.Coordinator.Tier != "hash" && d.Coordinator.Tier != "hash-fallback" {
		t.Errorf("coordinator %+v", d.Coordinator)
	}
	// No manifests at all.
	st2 := stateOf("g", gfiles, nil)
	d2 := DescribeGroup("g", nil, gfiles, &st2)
	if d2.LagKnown || d2.Coordinator.Tier != "none" {
		t.Errorf("no manifests, no assignment: %+v", d2)
	}
}

func TestParseLagFilter(t *testing.T) {
	t.Parallel()
	d := &GroupDescription{TotalLag: 10, LagKnown: true}
	for expr, want := range map[string]bool{">9": true, ">10": false, ">=10": true, "<10": false, "<=10": true, "=10": true, "10": true, "11": false, "9": true,
		"==10": true, " > 9 ": true, "!=10": false, "!=3": true, "5..10": true, "11..20": false} {
		f, err := ParseLagFilter(expr)
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		if f.Match(d) != want {
			t.Errorf("%q matched %v", expr, !want)
		}
	}
	for _, bad := range []string{">", "x", ">=-", "1.5", "<>3", ">-1", "5..2", "1..", "..3", strings.Repeat("9", 70)} {
		if _, err := ParseLagFilter(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	f, _ := ParseLagFilter(">=0")
	if f.Match(&GroupDescription{}) {
		t.Error("unknown lag must never match")
	}
}

func TestBuildTxnRows(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 7, 23, 11, 0, 0, 0, time.UTC)
	slots := []*volume.TxnSlotFile{{Path: "txn_state/slot-25.json", Slot: 25, Entries: []volume.TxnEntry{
		{ID: "tx-ongoing", PID: 7, Epoch: 1, State: "Ongoing", OngoingSinceMs: since.UnixMilli(), TransactionTimeoutMs: 60000,
			Partitions: []volume.TxnTopicPartitions{{Topic: "o", Partitions: []int32{0, 3}}}},
	}}, {Path: "txn_state/slot-9.json", Slot: 9, Entries: []volume.TxnEntry{{ID: "tx-commit", PID: 8, State: "CompleteCommit"}}}}
	rows := BuildTxnRows(slots, testAssignment(), since.Add(30*time.Second))
	if len(rows) != 2 || rows[0].ID != "tx-commit" || rows[1].Overdue {
		t.Fatalf("at +30s: %+v", rows)
	}
	rows = BuildTxnRows(slots, testAssignment(), since.Add(2*time.Minute))
	r := rows[1]
	if !r.Overdue || r.OverdueByMs != 60000 || r.PartitionCount != 2 || r.ExpectedSlotFile != "slot-25.json" || r.Coordinator == "" || r.Tier == "explicit" {
		t.Errorf("at +2m: %+v", r)
	}
	if got := FilterTxns(rows, TxnFilter{Overdue: true}); len(got) != 1 || got[0].ID != "tx-ongoing" {
		t.Errorf("overdue filter %+v", got)
	}
	if got := FilterTxns(rows, TxnFilter{States: []string{"completecommit"}}); len(got) != 1 || got[0].ID != "tx-commit" {
		t.Errorf("state filter %+v", got)
	}
	if _, err := NormalizeTxnState("running"); err == nil {
		t.Error("unknown state accepted")
	}
}

func TestBuildCheckReport(t *testing.T) {
	t.Parallel()
	res := &volume.CheckResult{Findings: []volume.Finding{
		{Severity: "info", Code: "c", Path: "b"}, {Severity: "error", Code: "b", Path: "z"}, {Severity: "warning", Code: "a", Path: "a"}, {Severity: "error", Code: "a", Path: "a"},
	}}
	rep := BuildCheckReport(volume.Layout{}, res, volume.SevWarning)
	if rep.Summary.Errors != 2 || rep.Summary.Warnings != 1 || rep.Summary.Info != 1 || len(rep.Findings) != 3 {
		t.Fatalf("%+v", rep)
	}
	if rep.Findings[0].Path != "a" || rep.Findings[1].Path != "z" || rep.Findings[2].Severity != "warning" {
		t.Errorf("order %+v", rep.Findings)
	}
	if _, err := ParseSeverity("loud"); err == nil {
		t.Error("bad severity accepted")
	}
	_ = errors.New
}

func FuzzParseLagFilter(f *testing.F) {
	for _, s := range []string{">100", ">=0", "<5", "=3", "!=0", "1..9", "42", "", "..", ">>1", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lf, err := ParseLagFilter(s)
		if err != nil || lf == nil {
			return
		}
		if lf.N < 0 || (lf.Op == ".." && lf.M < lf.N) {
			t.Fatalf("%q parsed to %+v", s, lf)
		}
		if lf.Op == ">=" && !lf.Matches(lf.N) {
			t.Fatalf("%q does not match its own bound", s)
		}
	})
}

// TestGroupRowSetWalk: the set walks the same rows BuildGroupRows returns,
// in order, reusing one row (so the copies BuildGroupRows keeps are its
// own), and stops when told.
func TestGroupRowSetWalk(t *testing.T) {
	t.Parallel()
	in := GroupsInput{Assignment: testAssignment(), Extra: []string{"live-only", "e-dead"}, Files: []GroupFile{
		{Group: "both", Path: "c/both.json", Layout: volume.OffsetsCurrent, Format: volume.FormatEnvelope, Partitions: 3},
		{Group: "both", Path: "l/both.json", Layout: volume.OffsetsLegacy, Format: volume.FormatEnvelope, Partitions: 9},
		{Group: "e-dead", Path: "c/e-dead.json", Layout: volume.OffsetsCurrent, Format: volume.FormatPlainMap, BrokerSeesEmpty: true},
	}}
	rows := BuildGroupRows(in)
	set := NewGroupRowSet(in)
	if set.Len() != len(rows) || len(rows) != 6 {
		t.Fatalf("Len %d, rows %d, want 6", set.Len(), len(rows))
	}
	var seen []*GroupRow
	i := 0
	set.Each(func(r *GroupRow) bool {
		w := rows[i]
		if r.Group != w.Group || r.Coordinator != w.Coordinator || strings.Join(r.Sources, ",") != strings.Join(w.Sources, ",") ||
			strings.Join(r.Issues, ",") != strings.Join(w.Issues, ",") || strings.Join(r.Files, ",") != strings.Join(w.Files, ",") {
			t.Errorf("row %d: walked %+v, built %+v", i, *r, w)
		}
		seen = append(seen, r)
		i++
		return true
	})
	if seen[0] != seen[len(seen)-1] {
		t.Error("Each should reuse one row")
	}
	// The built rows do not share the walk's slices.
	if rows[0].Group != "both" || strings.Join(rows[0].Files, ",") != "c/both.json,l/both.json" || strings.Join(rows[0].Issues, ",") != "currentAndLegacy" {
		t.Errorf("both: %+v", rows[0])
	}
	if r := rows[1]; r.Group != "e-agree" || strings.Join(r.Issues, ",") != "duplicateEntry" {
		t.Errorf("e-agree: %+v", r)
	}
	if r := rows[2]; r.Group != "e-dead" || strings.Join(r.Sources, ",") != "entry,file" || !r.HasIssue(IssueLegacyPlainMap) {
		t.Errorf("e-dead: %+v", r)
	}
	if r := rows[5]; r.Group != "live-only" || len(r.Sources) != 0 || len(r.Files) != 0 {
		t.Errorf("live-only: %+v", r)
	}
	n := 0
	set.Each(func(*GroupRow) bool { n++; return n < 3 })
	if n != 3 {
		t.Errorf("Each went on after false: %d calls", n)
	}
}

// The canary rule: selections, group rows, matchers and the volume's
// findings leave the probe's groups out; a canary named is kept.
func TestCanariesLeftOut(t *testing.T) {
	t.Parallel()
	c := CanaryPrefix + "kaas-0-0"
	if got := SelectGroups([]string{"a", c}, nil, true, nil); len(got) != 1 {
		t.Errorf("SelectGroups --all: %v", got)
	}
	if got := SelectGroups(nil, []string{c}, false, nil); len(got) != 1 {
		t.Errorf("SelectGroups by name: %v", got)
	}
	m := GroupMatcher([]string{"__*"})
	if m(c) || !GroupMatcher([]string{c})(c) || GroupMatcher(nil)(c) || !m("__x") {
		t.Error("GroupMatcher: a canary matched a glob or no pattern, or not its name")
	}
	a := &volume.Assignment{Brokers: []volume.BrokerEntry{{ID: "kaas-0", Health: "alive"}}, ConsumerGroups: []volume.GroupEntry{{GroupID: c, Broker: "kaas-0"}, {GroupID: "real", Broker: "kaas-0"}}}
	if rows := BuildGroupRows(GroupsInput{Assignment: a}); len(rows) != 1 || rows[0].Group != "real" {
		t.Errorf("rows from entries: %+v", rows)
	}
	fs := []volume.Finding{{Code: "x", Path: "/d/__consumer_offsets/" + c + ".json"}, {Code: "y", Path: "/d/__consumer_offsets/real.json"}}
	if got := WithoutCanaryFindings(fs); len(got) != 1 || got[0].Code != "y" || len(fs) != 2 {
		t.Errorf("findings: %+v", got)
	}
}

// A fix's quoted kaasctl commands get the operator's flags, once.
func TestFixWithFlags(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"run 'kaasctl volume repair' to quarantine it":                         "run 'kaasctl volume repair --data-dir /d' to quarantine it",
		"'kaasctl volume check' then 'kaasctl whois --txn ID'":                 "'kaasctl volume check --data-dir /d' then 'kaasctl whois --txn ID --data-dir /d'",
		"already 'kaasctl volume check --data-dir /d'":                         "already 'kaasctl volume check --data-dir /d'",
		"no command here; an 'unclosed kaasctl":                                "no command here; an 'unclosed kaasctl",
		"'kaasctl offsets reset --from-file' (unclosed after: 'kaasctl volume": "'kaasctl offsets reset --from-file --data-dir /d' (unclosed after: 'kaasctl volume",
	} {
		if got := FixWithFlags(in, " --data-dir /d"); got != want {
			t.Errorf("%q:\n got %q\nwant %q", in, got, want)
		}
	}
}
