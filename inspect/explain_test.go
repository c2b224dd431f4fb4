package inspect

import (
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

func explainOf(in ExplainInput) Verdict {
	if in.Group == "" {
		in.Group = "orders-app"
	}
	in.Commands = ExplainCommands{Flags: " --data-dir /data --brokers kaas-0:9092", VolumeFlags: " --data-dir /data"}
	in.Gen = volume.GenerationInfo{Name: "go", Label: "kaas Go", Source: "detected"}
	return Explain(in)
}

// Each condition, incident, forecast and routing issue gives its severity
// and its command, filled in with the flags given; the worst is the next
// step and the verdict's severity.
func TestExplainRules(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	stop := &GroupHealth{State: HealthStop, Conditions: []string{HealthStop}, Samples: 7, From: t0, To: t0.Add(30 * time.Second),
		Evidence: []HealthEvidence{{State: HealthStop, Partition: "orders/1", Before: 5, After: 5, Since: t0, Detail: "no commit for 30s; lag 15"}}}
	for _, tc := range []struct {
		name     string
		in       ExplainInput
		severity string
		next     string
		codes    []string
	}{
		{"ok", ExplainInput{Health: &GroupHealth{State: HealthOK, Conditions: []string{HealthOK}}, Lag: VerdictLag{Known: true}}, VerdictOK, "", nil},
		{"stop", ExplainInput{Health: stop}, VerdictPage, "kaasctl groups describe --data-dir /data --brokers kaas-0:9092 --members orders-app", []string{HealthStop}},
		{"stale end", ExplainInput{Incidents: []ExplainIncident{
			{"orders/2", PartitionIncident{IncPastServedEnd, "committed 210 is beyond the log end its leader serves 180"}},
			{"orders/2", PartitionIncident{IncServedBehind, "served 180, segments 212"}},
		}}, VerdictPage, "kaasctl doctor --data-dir /data --brokers kaas-0:9092", []string{IncServedBehind, IncPastServedEnd}},
		{"below log start", ExplainInput{Incidents: []ExplainIncident{
			{"orders/0", PartitionIncident{IncBelowLogStart, "committed 3 is below log start 10"}},
			{"orders/2", PartitionIncident{IncBelowLogStart, "committed 4 is below log start 10"}},
			{"other/1", PartitionIncident{IncBelowLogStart, "committed 4 is below log start 9"}},
		}}, VerdictPage, "kaasctl offsets reset --data-dir /data --brokers kaas-0:9092 --group orders-app --topic orders:0,2 --to-earliest", []string{IncBelowLogStart}},
		{"not draining", ExplainInput{Health: &GroupHealth{Conditions: []string{HealthOK}, Drain: &DrainEstimate{Known: true, NotDraining: true, Lag: 40}}},
			VerdictWarning, "kaasctl groups describe --data-dir /data --brokers kaas-0:9092 --members orders-app", []string{ExplainNotDraining}},
		{"retention soon", ExplainInput{Health: &GroupHealth{Conditions: []string{HealthOK}, Retention: &RetentionForecast{Known: true, Seconds: 7200, Partition: "orders/3"}}},
			VerdictWarning, "kaasctl groups describe --data-dir /data --brokers kaas-0:9092 orders-app", []string{ExplainRetention}},
		{"retention breached", ExplainInput{Health: &GroupHealth{Conditions: []string{HealthOK}, Retention: &RetentionForecast{Known: true, Breached: true, Partition: "orders/3"}}},
			VerdictPage, "kaasctl groups describe --data-dir /data --brokers kaas-0:9092 orders-app", []string{ExplainRetention}},
		{"coordinator disagrees", ExplainInput{Row: GroupRow{Coordinator: "kaas-1", Issues: []string{IssueWireMismatch, IssueTiersDisagree}, Live: &GroupLive{WireCoordinator: "kaas-2"}}},
			VerdictWarning, "kaasctl whois --data-dir /data --brokers kaas-0:9092 --live orders-app", []string{IssueWireMismatch}},
		{"file", ExplainInput{Health: &GroupHealth{Conditions: []string{HealthErr}, Evidence: []HealthEvidence{{State: HealthErr, File: "/data/__cluster/__consumer_offsets/orders-app.json", Detail: "corrupt"}}}},
			VerdictWarning, "kaasctl volume check --data-dir /data", []string{HealthErr}},
		{"blocker", ExplainInput{Health: stop, Blockers: []PartitionBlocker{
			{Topic: "orders", Partition: 2, Committed: 9, Lag: 3, Kind: BlockNone, Detail: "no blocker found"},
			{Topic: "orders", Partition: 1, Committed: 5, Lag: 40, Kind: BlockCorruptBatch, Detail: "the batch holding offset 5 is corrupt", Fix: "move the group past it",
				FixCommand: "kaasctl offsets reset --data-dir /data --group orders-app --topic orders:1 --to-offset 7 --execute --offline", Assumes: "kaas Rust 0.2.18"},
			{Topic: "orders", Partition: 0, Committed: 5, Lag: 4, Kind: BlockOpenTxn, Detail: "a transaction holds the LSO", Txn: &BlockingTxn{TransactionalID: "pay-1"}},
		}}, VerdictPage, "kaasctl offsets reset --data-dir /data --group orders-app --topic orders:1 --to-offset 7 --offline", []string{HealthStop, BlockCorruptBatch}},
		{"blocked, no fix command", ExplainInput{Health: &GroupHealth{Conditions: []string{HealthBlocked}, Evidence: []HealthEvidence{{State: HealthBlocked, Partition: "orders/0", Detail: "openTransaction: held"}}},
			Blockers: []PartitionBlocker{{Topic: "orders", Partition: 0, Committed: 5, Lag: 4, Kind: BlockOpenTxn, Detail: "a transaction holds the LSO", Txn: &BlockingTxn{TransactionalID: "pay-1"}}}},
			VerdictPage, "kaasctl groups describe --data-dir /data --brokers kaas-0:9092 --why orders-app", []string{HealthBlocked, BlockOpenTxn}},
	} {
		v := explainOf(tc.in)
		next := ""
		if v.Next != nil {
			next = v.Next.Command
		}
		var codes []string
		for _, f := range v.Findings {
			codes = append(codes, f.Code)
			if f.Severity == "" || f.Kind == "" || f.Command == "" {
				t.Errorf("%s: finding %+v lacks its rule", tc.name, f)
			}
		}
		if v.Severity != tc.severity || next != tc.next || strings.Join(codes, ",") != strings.Join(tc.codes, ",") {
			t.Errorf("%s: severity %s next %q codes %v\nwant %s %q %v", tc.name, v.Severity, next, codes, tc.severity, tc.next, tc.codes)
		}
		if v.Findings == nil || v.Moves == nil || v.Assumes == "" || v.Summary == "" {
			t.Errorf("%s: verdict %+v", tc.name, v)
		}
	}
}

// The summary names the worst finding and the lag; a group id that looks
// like a flag is passed after "--"; every rule has a command (a blocker
// brings its own).
func TestExplainSummaryAndCommands(t *testing.T) {
	t.Parallel()
	v := explainOf(ExplainInput{Group: "-odd group", Lag: VerdictLag{Messages: 1200, Known: true, Seconds: 95, SecondsKnown: true},
		Incidents: []ExplainIncident{{"orders/0", PartitionIncident{IncDisagree, "file says 5, coordinator says 7; more"}}}})
	if v.Summary != "fileCoordinatorDisagree on orders/0: file says 5, coordinator says 7; lag 1200 messages (1m35s)" {
		t.Errorf("summary %q", v.Summary)
	}
	if v.Next == nil || !strings.HasSuffix(v.Next.Command, " -- '-odd group'") {
		t.Errorf("next %+v", v.Next)
	}
	for _, r := range explainRules {
		if !strings.HasPrefix(r.command, "kaasctl ") {
			t.Errorf("rule %s: command %q", r.code, r.command)
		}
		if VerdictRank(r.severity) >= VerdictRank(VerdictOK) {
			t.Errorf("rule %s: severity %q", r.code, r.severity)
		}
	}
}

// The verdict's blocker is the read model's for its most lagging blocked
// partition: its kind, evidence, transaction and fix as a dry run, the
// count of blocked partitions, and its partition's finding; without a
// blocking one there is no blocker.
func TestExplainBlockerSlot(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 7, 23, 11, 0, 0, 0, time.UTC)
	v := explainOf(ExplainInput{Blockers: []PartitionBlocker{
		{Topic: "orders", Partition: 0, Committed: 5, Lag: 4, Kind: BlockOpenTxn, Detail: "held", Txn: &BlockingTxn{TransactionalID: "pay-1"}, Stuck: &Stuck{Since: since}, Assumes: "kaas Rust 0.2.18"},
		{Topic: "orders", Partition: 3, Committed: 8, Lag: 2, Kind: BlockRecord, Detail: "sat", FixCommand: "kaasctl offsets reset --group g --topic orders:3 --to-offset 9 --execute"},
	}})
	b := v.Blocker
	if b == nil || b.Partition != "orders/0" || b.Kind != BlockOpenTxn || b.Transaction != "pay-1" || !b.Since.Equal(since) || b.Assumes != "kaas Rust 0.2.18" || v.BlockedPartitions != 2 {
		t.Fatalf("blocker %+v (%d blocked)", b, v.BlockedPartitions)
	}
	if v.Severity != VerdictPage || len(v.Findings) != 1 || v.Findings[0].Kind != FindingBlocker || !strings.Contains(v.Findings[0].Detail, "and 1 more blocked partition") {
		t.Errorf("findings %+v", v.Findings)
	}
	if v.Next == nil || !strings.Contains(v.Next.Command, "groups describe") || !strings.Contains(v.Next.Command, "--why") {
		t.Errorf("next %+v: a transaction blocker without a command is shown by describe --why", v.Next)
	}
	rec := VerdictBlockerOf(&PartitionBlocker{Topic: "t", Partition: 1, Kind: BlockRecord, FixCommand: "kaasctl offsets reset --group g --topic t:1 --to-offset 9 --execute"})
	if rec.Command != "kaasctl offsets reset --group g --topic t:1 --to-offset 9" {
		t.Errorf("a reset is offered as its dry run: %q", rec.Command)
	}
	if v := explainOf(ExplainInput{Blockers: []PartitionBlocker{{Topic: "t", Kind: BlockNone}, {Topic: "t", Partition: 1, Kind: BlockNoConsumer}}}); v.Blocker != nil || v.BlockedPartitions != 0 || v.Severity != VerdictOK {
		t.Errorf("no blocking kind: %+v", v)
	}
}
