package commands

import (
	"bytes"
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/repair"
)

// Flags → options: each command's flags write their options fields
// (Destination) and its check finishes them. optionsOf builds the command
// as its descriptor does (leaf over the same flags and check), with the
// common flags, and hands back the options its run would get.

var flagTestNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func optionsOf[O any](t *testing.T, flags func(*O) []cli.Flag, check func(*cli.Context, *Globals, *O) error, args ...string) (O, error) {
	t.Helper()
	var got O
	cmd := leaf(flags, check, func(_ context.Context, _ *Globals, o O) error { got = o; return nil })()
	cmd.Name, cmd.Flags = "cmd", completion.AppendMissing(cmd.Flags, commonFlags())
	var out, errb bytes.Buffer
	ios := &IOStreams{Out: &out, Err: &errb, Getenv: func(string) string { return "" }, Now: func() time.Time { return flagTestNow }}
	app := &cli.App{Name: "kaasctl", Writer: &out, ErrWriter: &errb, Metadata: map[string]any{"io": ios},
		Commands: []*cli.Command{cmd}, ExitErrHandler: func(*cli.Context, error) {}}
	err := app.Run(append([]string{"kaasctl", "cmd"}, args...))
	return got, err
}

// wantOptions fails unless got equals want, field by field.
func wantOptions[O any](t *testing.T, got, want O) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v", got, want)
	}
}

func TestExporterFlagsBindOptions(t *testing.T) {
	t.Parallel()
	o, err := optionsOf(t, exporterFlags, checkExporter)
	if err != nil {
		t.Fatal(err)
	}
	if o.interval != 15*time.Second || o.window != 5*time.Minute || o.stopAfter != time.Minute || o.maxGroups != 10000 || !o.lagSeconds || !o.followOffsets ||
		o.servedCheck != time.Minute || o.pollInterval != time.Second || o.journal.MaxAge != 30*24*time.Hour || o.journal.MaxBytes != 1<<30 || o.shard != nil {
		t.Errorf("defaults: %+v", o)
	}
	o, err = optionsOf(t, exporterFlags, checkExporter, "--listen", "127.0.0.1:1", "--max-requests", "3", "--max-connections", "5", "--write-timeout", "2s",
		"--interval", "30s", "--window", "10m", "--stop-after", "2m", "--max-groups", "7", "--partition-metrics", "--lag-seconds=false",
		"--served-check-interval", "0", "--poll-interval", "3s", "--probe", "--probe-topic", "t", "--churn-rebalances", "4", "--rewind-page-records", "9",
		"--journal", "/j", "--journal-max-age", "2d", "--journal-segment-age", "30m", "--journal-max-bytes", "2MiB", "--shard", "1/3", "--group-regex", "^g")
	if err != nil {
		t.Fatal(err)
	}
	if o.listen != "127.0.0.1:1" || o.serve.MaxRequests != 3 || o.serve.MaxConns != 5 || o.serve.WriteTimeout != 2*time.Second || o.interval != 30*time.Second ||
		o.window != 10*time.Minute || o.stopAfter != 2*time.Minute || o.maxGroups != 7 || !o.partitionMetrics || o.lagSeconds || o.servedCheck != 0 ||
		o.pollInterval != 3*time.Second || !o.probe || o.probeTopic != "t" || o.churn != (churnSpec{4, 9}) || o.filter.String() != "^g" ||
		o.journal != (observeJournal("/j", 2<<20, 48*time.Hour, 30*time.Minute)) || o.shard == nil || o.shard.String() != "1/3" {
		t.Errorf("flags: %+v", o)
	}
	if _, err := optionsOf(t, exporterFlags, checkExporter, "--journal", "/j", "--follow-offsets=false"); exit.Code(err) != exit.Usage {
		t.Errorf("--journal without the follower: %v", err)
	}
}

func TestGroupsObservationFlagsBindOptions(t *testing.T) {
	t.Parallel()
	h, err := optionsOf(t, healthFlags, checkGroupsHealth, "--window", "2m", "--interval", "10s", "--max-groups", "5", "--exporter", "http://x", "--churn-rebalances", "2", "g1", "g2")
	if err != nil {
		t.Fatal(err)
	}
	wantOptions(t, h, groupsHealthOptions{window: 2 * time.Minute, interval: 10 * time.Second, maxGroups: 5, exporterURL: "http://x", names: []string{"g1", "g2"},
		churn: churnSpec{2, inspect.DefaultRewindPageRecords}})
	e, err := optionsOf(t, explainFlags, checkGroupsExplain, "--window", "0", "--problems", "--journal", "/j", "--moves-since", "1h", "a")
	if err != nil {
		t.Fatal(err)
	}
	wantOptions(t, e, groupsExplainOptions{window: 0, interval: 5 * time.Second, maxGroups: 10000, problemsOnly: true, journal: "/j", movesSince: time.Hour, names: []string{"a"}})
	p, err := optionsOf(t, probeFlags, checkProbe, "--count", "3", "--interval", "2s", "--topic", "t")
	if err != nil {
		t.Fatal(err)
	}
	wantOptions(t, p, probeOptions{count: 3, interval: 2 * time.Second, topic: "t"})
	if _, err := optionsOf(t, probeFlags, checkProbe, "--count", "0"); exit.Code(err) != exit.Usage {
		t.Errorf("--count 0: %v", err)
	}
}

func TestListingFlagsBindOptions(t *testing.T) {
	t.Parallel()
	issue := inspect.KnownIssues()[0]
	l, err := optionsOf(t, groupsListFlags, checkGroupsList, "--coordinator", "2", "--tier", "hash", "--issues-only", "--issue", issue, "-t", "a,b", "-t", "a", "--drain-window", "1s")
	if err != nil {
		t.Fatal(err)
	}
	wantOptions(t, l, groupsListOptions{filter: inspect.GroupFilter{Coordinator: "2", Tier: "hash", IssuesOnly: true, Issue: issue}, topics: []string{"a", "b"}, drainWindow: time.Second})
	if _, err := optionsOf(t, groupsListFlags, checkGroupsList, "--tier", "nope"); exit.Code(err) != exit.Usage {
		t.Errorf("--tier nope: %v", err)
	}
	d, err := optionsOf(t, describeFlags, checkGroupsDescribe, "--lagging-only", "--summary", "-g", "g2", "g1")
	if err != nil {
		t.Fatal(err)
	}
	if !d.filter.LaggingOnly || !d.summaryOnly || !reflect.DeepEqual(d.sel.Names, []string{"g1", "g2"}) || d.why.on || d.why.limits != volume.DefaultRecordLimits() {
		t.Errorf("describe: %+v", d)
	}
	w, err := optionsOf(t, describeFlags, checkGroupsDescribe, "--why", "--peek", "3", "--preview-bytes", "10", "--window", "5s", "--all")
	if err != nil {
		t.Fatal(err)
	}
	if !w.sel.All || !w.why.on || w.why.limits.Peek != 3 || w.why.limits.PreviewBytes != 10 || w.why.window != 5*time.Second {
		t.Errorf("describe --why: %+v", w)
	}
	if _, err := optionsOf(t, describeFlags, checkGroupsDescribe, "--peek", "3", "g"); exit.Code(err) != exit.Usage {
		t.Errorf("--peek without --why: %v", err)
	}
	lag, err := optionsOf(t, lagFlags, checkLag, "--lagging-only")
	if err != nil || !lag.sel.All || lag.view != "offsets" || !lag.filter.LaggingOnly {
		t.Errorf("lag: %+v %v", lag, err)
	}
	wh, err := optionsOf(t, whoisFlags, checkWhois, "--txn", "--assignment", "f", "--what-if-down", "1,2", "--keep-listed", "--placement", "hash", "--failover", "drop", "k")
	if err != nil {
		t.Fatal(err)
	}
	if !wh.Txn || wh.AssignmentFile != "f" || !reflect.DeepEqual(wh.WhatIf.Down, []string{"1", "2"}) || !wh.WhatIf.KeepListed || wh.WhatIf.Placement != "hash" ||
		wh.WhatIf.Failover == "" || !reflect.DeepEqual(wh.Keys, []string{"k"}) {
		t.Errorf("whois: %+v", wh)
	}
}

func TestPlanAndHistoryFlagsBindOptions(t *testing.T) {
	t.Parallel()
	r, err := optionsOf(t, planRestartFlags, checkPlanRestart, "--failover", "drop", "--placement", "HASH", "--all-active", "--steps-of-all", "--brokers-order", "2,1",
		"--follow", "--keep-going", "--follow-timeout", "1m", "--poll-interval", "2s", "--settle-timeout", "3s")
	if err != nil {
		t.Fatal(err)
	}
	if r.FailoverFlag != "drop" || r.Failover == "" || r.Placement != "hash" || !r.AllActive || !r.StepsOfAll || !reflect.DeepEqual(r.Order, []string{"2", "1"}) ||
		r.Follow != (followOptions{On: true, KeepGoing: true, Timeout: time.Minute, PollInterval: 2 * time.Second, SettleTimeout: 3 * time.Second}) {
		t.Errorf("plan restart: %+v", r)
	}
	a, err := optionsOf(t, planAssignmentFlags, checkPlanAssignment, "--members", "3", "--add", "1", "--assignor", "RANGE", "--remove", "m1,m2", "g")
	if err != nil {
		t.Fatal(err)
	}
	wantOptions(t, a, planAssignmentOptions{Group: "g", Members: 3, Add: 1, Assignor: "range", Remove: []string{"m1", "m2"}})
	h, err := optionsOf(t, offsetsHistoryFlags, checkOffsetsHistory, "--journal", "/j", "--timeline", "--since", "1h", "g")
	if err != nil {
		t.Fatal(err)
	}
	if h.group != "g" || h.journal != "/j" || !h.timeline || !h.since.Equal(flagTestNow.Add(-time.Hour)) || h.keep == nil {
		t.Errorf("offsets history: %+v", h)
	}
	tl, err := optionsOf(t, timelineFlags, checkGroupsTimeline, "--journal", "/j", "--rewind-page-records", "5", "--source", "commits", "g")
	if err != nil {
		t.Fatal(err)
	}
	wantOptions(t, tl, groupsTimelineOptions{group: "g", journal: "/j", pageRecords: 5, sources: []string{inspect.TLCommits}})
	tr, err := optionsOf(t, traceFlags, checkTakeoverTrace, "--journal", "/j", "--no-live", "--broker", "1", "--placements", "-g", "g", "p")
	if err != nil {
		t.Fatal(err)
	}
	if tr.journal != "/j" || !tr.noLive || tr.broker != "1" || !tr.placements || !reflect.DeepEqual(tr.groups, []string{"g"}) || !reflect.DeepEqual(tr.paths, []string{"p"}) {
		t.Errorf("takeover trace: %+v", tr)
	}
}

func TestWriteFlagsBindOptions(t *testing.T) {
	t.Parallel()
	r, err := optionsOf(t, resetFlags, checkOffsetsReset, "--group", "a", "--group", "b", "--to-earliest", "--all-topics", "--execute", "--force", "--offline",
		"--export", "--export-rollback", "r.csv", "--overwrite-rollback", "--keep-backups", "0")
	if err != nil {
		t.Fatal(err)
	}
	wantOptions(t, r, resetOptions{mode: writeMode{execute: true, force: true, offline: true, policy: repair.Policy{KeepBackups: -1}}, spec: repair.Spec{Kind: repair.ToEarliest},
		allTopics: true, groups: []string{"a", "b"}, multi: true, export: true, exportRollback: "r.csv", overwriteRollback: true})
	f, err := optionsOf(t, resetFlags, checkOffsetsReset, "--all-groups", "--from-file", "plan.csv")
	if err != nil || !f.allGroups || f.fromFile != "plan.csv" || f.spec.Kind != repair.FromFile || !f.multi {
		t.Errorf("reset --from-file: %+v %v", f, err)
	}
	hs, err := optionsOf(t, resetFlags, checkOffsetsReset, "--group", "g", "--to-history-before-anomaly", "--journal", "/j", "--history-since", "1d")
	if err != nil || hs.journal != "/j" || !hs.historySince.Equal(flagTestNow.Add(-24*time.Hour)) || hs.spec.Kind != repair.ToHistoryBeforeAnomaly {
		t.Errorf("reset --to-history-before-anomaly: %+v %v", hs, err)
	}
	if _, err := optionsOf(t, resetFlags, checkOffsetsReset, "--group", "g", "--to-earliest", "--all-topics", "--execute", "--dry-run"); exit.Code(err) != exit.Usage {
		t.Errorf("--execute --dry-run: %v", err)
	}
	d, err := optionsOf(t, deleteFlags, checkOffsetsDelete, "--group", "a", "--group", "a", "--topic", "t:0,2", "--offline")
	if err != nil {
		t.Fatal(err)
	}
	wantOptions(t, d, deleteOptions{mode: writeMode{offline: true}, groups: []string{"a"}, scopes: []repair.TopicScope{{Topic: "t", Partitions: []int32{0, 2}}}})
	p, err := optionsOf(t, pruneFlags, checkGroupsPrune, "--empty-for", "30d", "--journal", "/j", "--max-groups", "5", "--execute", "--offline",
		"--export", "x.json", "--export-rollback", "r", "--overwrite-rollback", "--exclude", "^a", "--exclude", "^b")
	if err != nil {
		t.Fatal(err)
	}
	if !p.mode.execute || !p.mode.offline || p.journal != "/j" || p.maxGroups != 5 || p.export != "x.json" || p.rollback != "r" || !p.overwrite ||
		!p.ask.Empty || p.ask.MinAge != 30*24*time.Hour || p.ask.AgeFrom != inspect.AgeBoth || len(p.exclude) != 2 {
		t.Errorf("prune: %+v", p)
	}
	if rs, err := optionsOf(t, pruneFlags, checkGroupsPrune, "--restore", "r"); err != nil || rs.restore != "r" || rs.maxGroups != defaultPruneMaxGroups {
		t.Errorf("prune --restore: %+v %v", rs, err)
	}
	v, err := optionsOf(t, volumeRepairFlags, checkVolumeRepair, "--execute", "--tmp-older-than", "2h", "--follow-symlinks")
	if err != nil {
		t.Fatal(err)
	}
	wantOptions(t, v, volumeRepairOptions{execute: true, tmpOlderThan: 2 * time.Hour, policy: repair.Policy{FollowSymlinks: true}, now: flagTestNow})
	m, err := optionsOf(t, volumeMigrateFlags, checkVolumeMigrate, "--to", "0.2.18", "--execute", "--quiet-period", "0s")
	if err != nil || !m.execute || m.to != volume.Gen018 || m.quiet != 0 || !m.now.Equal(flagTestNow) {
		t.Errorf("volume migrate: %+v %v", m, err)
	}
}

func TestOtherFlagsBindOptions(t *testing.T) {
	t.Parallel()
	w, err := optionsOf(t, watchFlags, checkWatch, "--poll-interval", "2s", "--poll-only", "--journal", "/j", "--once", "--timeout", "5s", "--count", "3", "--assignment", "f", "-g", "g")
	if err != nil {
		t.Fatal(err)
	}
	if w.pollInterval != 2*time.Second || !w.pollOnly || w.journal != "/j" || !w.once || w.timeout != 5*time.Second || w.count != 3 || w.assignment != "f" ||
		!reflect.DeepEqual(w.groups, []string{"g"}) || w.offsets {
		t.Errorf("watch: %+v", w)
	}
	wo, err := optionsOf(t, watchFlags, checkWatch, "--offsets", "--anomalies-only", "--members-interval", "0", "--churn-window", "1m", "--journal", "/j", "--journal-max-age", "1d")
	if err != nil {
		t.Fatal(err)
	}
	if !wo.offsets || !wo.anomaliesOnly || wo.members.interval != 0 || wo.members.window != time.Minute || wo.offsetJournal != observeJournal("/j", 1<<30, 24*time.Hour, time.Hour) {
		t.Errorf("watch --offsets: %+v", wo)
	}
	mc, err := optionsOf(t, mcpFlags, checkMCP, "--http", "127.0.0.1:0", "--log-file", "f", "--max-calls", "2", "--call-timeout", "30s", "--max-request-bytes", "2KiB", "--journal", "/j")
	if err != nil {
		t.Fatal(err)
	}
	wantOptions(t, mc, mcpOptions{http: "127.0.0.1:0", logFile: "f", maxCalls: 2, callTimeout: 30 * time.Second, maxRequest: 2 << 10, journal: "/j"})
	s, err := optionsOf(t, sandboxFlags, checkSandbox, "-n", "2", "--listen", "l", "--demo", "--log-dir", "d", "--force", "--keep", "--stale-groups", "--control", "off")
	if err != nil || s.Brokers != 2 || s.Listen != "l" || !s.Demo || s.LogDir != "d" || !s.Force || !s.Keep || !s.StaleGroups || s.Control != "" || len(s.Topics) == 0 {
		t.Errorf("sandbox: %+v %v", s, err)
	}
	dr, err := optionsOf(t, doctorFlags, checkDoctor, "--offline", "--severity", "warning")
	if err != nil {
		t.Fatal(err)
	}
	wantOptions(t, dr, doctorOptions{minSeverity: volume.SevWarning, offline: true, now: flagTestNow})
	tx, err := optionsOf(t, txnListFlags, checkTxnList, "--overdue", "--hanging", "--state", "Ongoing")
	if err != nil || !tx.filter.Overdue || !tx.filter.Hanging || len(tx.filter.States) != 1 || !tx.now.Equal(flagTestNow) {
		t.Errorf("txn list: %+v %v", tx, err)
	}
	ad, err := optionsOf(t, assignmentDiffFlags, checkAssignmentDiff, "--exit-code", "-g", "g", "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	wantOptions(t, ad, assignmentDiffOptions{files: []string{"a", "b"}, groups: []string{"g"}, exitCode: true})
	sp, err := optionsOf(t, setProfileFlags, checkConfigSetProfile, "--use", "--brokers", "k:9092", "p1")
	if err != nil || !sp.Use || sp.Name != "p1" || sp.Edit.Set["brokers"] != "k:9092" {
		t.Errorf("config set-profile: %+v %v", sp, err)
	}
}

func observeJournal(dir string, maxBytes int64, maxAge, segmentAge time.Duration) observe.JournalSpec {
	return observe.JournalSpec{Dir: dir, MaxBytes: maxBytes, MaxAge: maxAge, SegmentAge: segmentAge}
}
