package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// resetLab is a sandbox with topics orders (2 partitions, 10 records each,
// one an hour from base) and audit (1 partition, 4 records), and a group
// "app" whose consumer read everything and committed.
type resetLab struct {
	sb       *sandbox.Sandbox
	adm      *kadm.Client
	consumer *kgo.Client
	base     time.Time
	data     string
	boot     string
}

func newResetLab(t *testing.T) *resetLab {
	t.Helper()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: []sandbox.Topic{{Name: "orders", Partitions: 2}, {Name: "audit", Partitions: 1}}})
	lab := &resetLab{sb: sb, data: sb.Layout().DataDir, boot: strings.Join(sb.Bootstrap(), ",")}
	lab.base = time.Now().Add(-10 * time.Hour).Truncate(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(sb.Bootstrap()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var recs []*kgo.Record
	for p := int32(0); p < 2; p++ {
		for i := range 10 {
			recs = append(recs, &kgo.Record{Topic: "orders", Partition: p, Timestamp: lab.base.Add(time.Duration(i) * time.Hour), Value: []byte("o")})
		}
	}
	for range 4 {
		recs = append(recs, &kgo.Record{Topic: "audit", Partition: 0, Value: []byte("a")})
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(sb.Bootstrap()...))
	if err != nil {
		t.Fatal(err)
	}
	lab.adm = kadm.NewClient(cl)
	t.Cleanup(cl.Close)
	lab.consumer, err = kgo.NewClient(kgo.SeedBrokers(sb.Bootstrap()...), kgo.ConsumerGroup("app"), kgo.ConsumeTopics("orders", "audit"),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.SessionTimeout(6*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for n < 24 {
		fs := lab.consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consuming: %v (%d records)", err, n)
		}
		n += fs.NumRecords()
	}
	if err := lab.consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	lab.waitState(t, "Stable")
	return lab
}

func (lab *resetLab) waitState(t *testing.T, want string) {
	t.Helper()
	lab.sb.WaitFor(t, "group app "+want, 20*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		ds, err := lab.adm.DescribeGroups(ctx, "app")
		return err == nil && ds["app"].State == want
	})
}

func (lab *resetLab) file(g string) string {
	return filepath.Join(lab.sb.Layout().OffsetsPath(), g+".json")
}

// offsets reads a group's file as "topic/partition" → offset.
func (lab *resetLab) fileOffsets(t *testing.T, g string) map[string]int64 {
	t.Helper()
	of, fs, err := volume.ReadOffsetFile(lab.file(g))
	if err != nil || of.Format != volume.FormatEnvelope {
		t.Fatalf("%s: %v %v", lab.file(g), err, fs)
	}
	out := map[string]int64{}
	for _, e := range of.Entries {
		out[e.Topic+"/"+itoa32(e.Partition)] = e.Offset
	}
	return out
}

// wireOffsets asks the coordinator (OffsetFetch) for the group's offsets.
func (lab *resetLab) wireOffsets(t *testing.T, g string) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := lab.adm.FetchOffsetsForTopics(ctx, g, "orders", "audit")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			out[o.Topic+"/"+itoa32(o.Partition)] = o.At
		}
	})
	return out
}

func itoa32(p int32) string { return strconv.Itoa(int(p)) }

func (lab *resetLab) run(t *testing.T, args ...string) cliResult {
	t.Helper()
	return runCLI(t, "", nil, append([]string{"offsets"}, append(args, "-b", lab.boot, "--data-dir", lab.data)...)...)
}

func sameMap(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

type resetDoc struct {
	Mode   string
	Path   string
	Groups []struct {
		Group, State, Refused, Error string
		Kept                         int
		Rows                         []struct {
			Topic     string
			Partition int32
			New       int64
			Warnings  []string
			Result    string
			Detail    string
			Clamped   bool
		}
	}
}

func TestSandboxOffsetsReset(t *testing.T) {
	t.Parallel()
	lab := newResetLab(t)
	all := map[string]int64{"orders/0": 10, "orders/1": 10, "audit/0": 4}
	if got := lab.fileOffsets(t, "app"); !sameMap(got, all) {
		t.Fatalf("initial file %v", got)
	}

	// Stable: refused (exit 4), dry-run and execute alike; nothing changes.
	before, _ := os.ReadFile(lab.file("app"))
	for _, mode := range []string{"--dry-run", "--execute"} {
		r := lab.run(t, "reset", "--group", "app", "--topic", "orders", "--to-earliest", mode)
		if r.Code != 4 || !strings.Contains(r.Err, "Assignments can only be reset if the group 'app' is inactive, but the current state is Stable.") ||
			!strings.Contains(r.Err, "Stop every consumer") {
			t.Fatalf("%s on a Stable group: exit %d\n%s", mode, r.Code, r.Err)
		}
		// The closing line offers --force only with what it risks on a
		// broker that does not fence admin commits.
		last := strings.TrimSpace(r.Err[strings.LastIndex(strings.TrimSpace(r.Err), "\n")+1:])
		if strings.HasSuffix(last, "or use --force") || !strings.Contains(last, "--force") || !strings.Contains(last, "do not fence admin commits") || !strings.Contains(last, "overwrites") {
			t.Errorf("%s: the refusal's closing line: %q", mode, last)
		}
	}
	r := lab.run(t, "delete", "--group", "app", "--topic", "audit", "--execute")
	if r.Code != 4 || !strings.Contains(r.Err, "forbidden if the group is not empty") {
		t.Fatalf("delete on a Stable group: exit %d\n%s", r.Code, r.Err)
	}
	// --force: loud, and the broker's UNKNOWN_MEMBER_ID is reported per row.
	r = lab.run(t, "reset", "--group", "app", "--topic", "orders", "--to-earliest", "--execute", "--force", "-o", "json")
	var doc resetDoc
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
		t.Fatalf("json: %v\n%s\n%s", err, r.Out, r.Err)
	}
	if r.Code != 1 || !strings.Contains(r.Err, "!!! --force") {
		t.Errorf("forced reset of a Stable group: exit %d\n%s", r.Code, r.Err)
	}
	for _, row := range doc.Groups[0].Rows {
		if row.Result != "FAILED" || !strings.Contains(row.Detail, "group is not empty (a consumer may have joined)") {
			t.Errorf("row %+v", row)
		}
	}
	if after, _ := os.ReadFile(lab.file("app")); string(after) != string(before) {
		t.Fatalf("the file changed on a refused reset:\n%s\n%s", before, after)
	}

	// The consumer stops: the group is Empty.
	lab.consumer.Close()
	lab.waitState(t, "Empty")

	steps := []struct {
		name string
		args []string
		want map[string]int64
	}{
		{"to-earliest one topic keeps audit", []string{"--topic", "orders", "--to-earliest"}, map[string]int64{"orders/0": 0, "orders/1": 0, "audit/0": 4}},
		{"to-latest one partition", []string{"--topic", "orders:1", "--to-latest"}, map[string]int64{"orders/0": 0, "orders/1": 10, "audit/0": 4}},
		{"to-offset clamped", []string{"--all-topics", "--to-offset", "100"}, map[string]int64{"orders/0": 10, "orders/1": 10, "audit/0": 4}},
		{"shift-by", []string{"--topic", "orders", "--shift-by", "-3"}, map[string]int64{"orders/0": 7, "orders/1": 7, "audit/0": 4}},
		{"to-datetime", []string{"--topic", "orders", "--to-datetime", lab.base.Add(3 * time.Hour).UTC().Format(time.RFC3339)}, map[string]int64{"orders/0": 3, "orders/1": 3, "audit/0": 4}},
		{"by-duration ISO", []string{"--topic", "orders", "--by-duration", "PT5H30M"}, map[string]int64{"orders/0": 5, "orders/1": 5, "audit/0": 4}},
		{"by-duration short", []string{"--topic", "orders:0", "--by-duration", "90m"}, map[string]int64{"orders/0": 9, "orders/1": 5, "audit/0": 4}},
		{"to-current", []string{"--all-topics", "--to-current"}, map[string]int64{"orders/0": 9, "orders/1": 5, "audit/0": 4}},
	}
	for _, s := range steps {
		r := lab.run(t, append([]string{"reset", "--group", "app", "--execute", "-o", "json"}, s.args...)...)
		if r.Code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", s.name, r.Code, r.Out, r.Err)
		}
		var doc resetDoc
		if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		for _, row := range doc.Groups[0].Rows {
			if row.Result != "OK" && (s.name != "to-current" || row.Result != "UNCHANGED") {
				t.Errorf("%s: row %+v", s.name, row)
			}
		}
		if got := lab.fileOffsets(t, "app"); !sameMap(got, s.want) {
			t.Errorf("%s: file %v, want %v", s.name, got, s.want)
		}
		if got := lab.wireOffsets(t, "app"); !sameMap(got, s.want) {
			t.Errorf("%s: OffsetFetch %v, want %v", s.name, got, s.want)
		}
		if s.name == "to-offset clamped" {
			for _, row := range doc.Groups[0].Rows {
				if !row.Clamped || len(row.Warnings) == 0 || !strings.Contains(row.Warnings[0], "is higher than the latest offset") {
					t.Errorf("clamp warning missing: %+v", row)
				}
			}
		}
		if s.name == "to-earliest one topic keeps audit" && doc.Groups[0].Kept != 1 {
			t.Errorf("kept %d", doc.Groups[0].Kept)
		}
	}

	// --export, then --from-file, round-trips.
	r = lab.run(t, "reset", "--group", "app", "--topic", "orders", "--to-offset", "2", "--export")
	if r.Code != 0 || r.Out != "orders,0,2\norders,1,2\n" || !strings.Contains(r.Err, "nothing was written") {
		t.Fatalf("export: exit %d %q %s", r.Code, r.Out, r.Err)
	}
	plan := filepath.Join(t.TempDir(), "plan.csv")
	os.WriteFile(plan, []byte(r.Out), 0o644)
	if got := lab.fileOffsets(t, "app"); got["orders/0"] != 9 {
		t.Fatalf("--export wrote: %v", got)
	}
	if r = lab.run(t, "reset", "--group", "app", "--from-file", plan, "--execute"); r.Code != 0 {
		t.Fatalf("from-file: exit %d %s", r.Code, r.Err)
	}
	want := map[string]int64{"orders/0": 2, "orders/1": 2, "audit/0": 4}
	if got := lab.fileOffsets(t, "app"); !sameMap(got, want) {
		t.Errorf("after --from-file: %v", got)
	}

	// offsets delete of an Empty group: the file is rewritten without audit.
	r = lab.run(t, "delete", "--group", "app", "--topic", "audit")
	if r.Code != 0 || !strings.Contains(r.Err, "nothing was written") || lab.fileOffsets(t, "app")["audit/0"] != 4 {
		t.Fatalf("delete dry-run: exit %d %s", r.Code, r.Err)
	}
	// The coordinator still serves audit/0 from its cache (as kaas does):
	// the delete verifies over the wire, says so, and exits 3.
	r = lab.run(t, "delete", "--group", "app", "--topic", "audit", "--execute")
	if r.Code != 3 || !strings.Contains(r.Out, "CACHED") || !strings.Contains(r.Err, "still serves them from its offset cache") ||
		!strings.Contains(r.Err, "restart that broker") {
		t.Fatalf("delete: exit %d %s %s", r.Code, r.Out, r.Err)
	}
	if got := lab.fileOffsets(t, "app"); !sameMap(got, map[string]int64{"orders/0": 2, "orders/1": 2}) {
		t.Errorf("after delete: %v", got)
	}

	// --all-groups: every group on the volume and on the brokers.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	os2 := kadm.Offsets{}
	os2.AddOffset("orders", 0, 6, -1)
	if err := lab.adm.CommitAllOffsets(ctx, "second", os2); err != nil {
		t.Fatal(err)
	}
	r = lab.run(t, "reset", "--all-groups", "--topic", "orders", "--to-latest", "--execute", "-o", "json")
	doc = resetDoc{}
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil || r.Code != 0 || len(doc.Groups) != 2 {
		t.Fatalf("--all-groups: exit %d %v\n%s\n%s", r.Code, err, r.Out, r.Err)
	}
	// The coordinator still caches the deleted audit/0 (as kaas does): the
	// commit brings it back into the file, and kaasctl says so.
	if !strings.Contains(r.Err, "audit/0, which kaasctl did not write") {
		t.Errorf("stale cached key not reported:\n%s", r.Err)
	}
	for _, g := range []string{"app", "second"} {
		if got := lab.fileOffsets(t, g); got["orders/0"] != 10 || got["orders/1"] != 10 {
			t.Errorf("--all-groups %s: %v", g, got)
		}
	}
}

// The offline path refuses while brokers answer, and --to-datetime needs them.
func TestSandboxOffsetsResetOfflineRules(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 1, Topics: []sandbox.Topic{{Name: "orders", Partitions: 1}}})
	boot := strings.Join(sb.Bootstrap(), ",")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(sb.Bootstrap()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	o := kadm.Offsets{}
	o.AddOffset("orders", 0, 0, -1)
	if err := kadm.NewClient(cl).CommitAllOffsets(ctx, "g", o); err != nil {
		t.Fatal(err)
	}
	data := sb.Layout().DataDir
	r := runCLI(t, "", nil, "offsets", "reset", "-b", boot, "--data-dir", data, "-g", "g", "--all-topics", "--to-latest", "--offline", "--execute")
	if r.Code != 4 || !strings.Contains(r.Err, "the brokers answer") {
		t.Errorf("--offline with brokers up: exit %d %s", r.Code, r.Err)
	}
	r = runCLI(t, "", nil, "offsets", "reset", "--data-dir", data, "-g", "g", "--all-topics", "--to-datetime", "2026-01-01T00:00:00Z", "--offline")
	if r.Code != 1 || !strings.Contains(r.Err, "needs live brokers") {
		t.Errorf("--offline --to-datetime: exit %d %s", r.Code, r.Err)
	}
}

// Offline, with no broker configured: the file is written atomically, with
// a backup, from the partition manifests.
func TestOffsetsResetOffline(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cd := filepath.Join(data, "__cluster")
	writeFile(t, cd, "assignment.json", `{"version":1,"brokers":[{"id":"kaas-0","health":"alive"}]}`)
	writeFile(t, cd, "__consumer_offsets/g.json", `{"offsets":{"orders/0":5,"audit/0":1},"metadata":{"audit/0":"x"}}`)
	writeFile(t, data, "orders/0/manifest.json", `{"epoch":1,"highWatermark":50,"logStartOffset":3}`)
	writePartitionLog(t, data, "orders/0", 3, 50)
	r := runCLI(t, "", nil, "offsets", "reset", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-earliest", "--offline", "--execute")
	if r.Code != 0 || !strings.Contains(r.Err, "group state is unknown") {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	got, _ := os.ReadFile(filepath.Join(cd, "__consumer_offsets", "g.json"))
	if string(got) != `{"offsets":{"audit/0":1,"orders/0":3},"metadata":{"audit/0":"x"}}` {
		t.Errorf("file %s", got)
	}
	ents, _ := os.ReadDir(filepath.Join(cd, "__consumer_offsets"))
	if len(ents) != 2 || !strings.Contains(ents[1].Name(), ".kaasctl-bak-") {
		t.Errorf("want the file and its backup: %v", ents)
	}
	// Execute without --offline and without brokers: a usage error naming both ways.
	r = runCLI(t, "", nil, "offsets", "reset", "--data-dir", data, "-g", "g", "--all-topics", "--to-earliest", "--execute")
	if r.Code != 2 || !strings.Contains(r.Err, "--offline") {
		t.Errorf("no brokers: exit %d %s", r.Code, r.Err)
	}
}

func TestOffsetsResetUsageErrors(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	base := []string{"offsets", "reset", "--data-dir", data}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-g", "g", "--all-topics"}, "Option '[reset-offsets]' requires one of the following scenarios: --to-datetime, --by-duration, --to-earliest, --to-latest, --shift-by, --from-file, --to-current, --to-offset"},
		{[]string{"-g", "g", "--all-topics", "--to-earliest", "--to-latest"}, `Option "[to-earliest]" can't be used with option "[to-latest]"`},
		{[]string{"-g", "g", "--to-earliest"}, "One of the reset scopes should be defined: --all-topics, --topic."},
		{[]string{"-g", "g", "--all-topics", "--topic", "t", "--to-earliest"}, `Option "[all-topics]" can't be used with option "[topic]"`},
		{[]string{"--all-topics", "--to-earliest"}, "takes one of these options: --group, --all-groups"},
		{[]string{"-g", "g", "--all-groups", "--all-topics", "--to-earliest"}, `Option "[group]" can't be used with option "[all-groups]"`},
		{[]string{"-g", "g", "--all-topics", "--to-earliest", "--dry-run", "--execute"}, "only accepts one of [execute] and [dry-run]"},
		{[]string{"-g", "g", "--all-topics", "--to-offset", "-1"}, "--to-offset"},
		{[]string{"-g", "g", "--all-topics", "--shift-by", "x"}, "--shift-by"},
		{[]string{"-g", "g", "--all-topics", "--by-duration", "soon"}, "--by-duration"},
		{[]string{"-g", "g", "--all-topics", "--to-datetime", "yesterday"}, "--to-datetime"},
		{[]string{"-g", "g", "--all-topics", "--from-file", filepath.Join(data, "missing.csv")}, "--from-file"},
		{[]string{"-g", "g", "--topic", "bad/topic", "--to-earliest"}, "not a valid topic name"},
		{[]string{"-g", "g", "--topic", "t:x", "--to-earliest"}, "not a partition number"},
	}
	for _, c := range cases {
		r := runCLI(t, "", nil, append(base, c.args...)...)
		if r.Code != 2 || !strings.Contains(r.Err, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, r.Code, r.Err, c.want)
		}
	}
	r := runCLI(t, "", nil, "offsets", "delete", "--data-dir", data, "-g", "g")
	if r.Code != 2 || !strings.Contains(r.Err, "--topic") {
		t.Errorf("delete without --topic: exit %d %s", r.Code, r.Err)
	}
	// A group id kaas cannot use as a file name is never written.
	writeFile(t, data, "__cluster/assignment.json", `{"version":1,"brokers":[]}`)
	r = runCLI(t, "", nil, "offsets", "reset", "--data-dir", data, "-g", "../assignment", "--topic", "t:0", "--to-offset", "1", "--offline", "--execute")
	if r.Code != 1 || !strings.Contains(r.Err, "does not write offsets of this group id") {
		t.Errorf("hostile group id: exit %d %s", r.Code, r.Err)
	}
}

// An impossible zone offset is refused like an impossible date, and before
// any broker is asked: a listener standing in for the bootstrap server
// must see no connection.
func TestOffsetsResetImpossibleZoneRefusedBeforeTheBrokers(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	data := t.TempDir()
	writeFile(t, data, "__cluster/assignment.json", `{"version":1,"brokers":[]}`)
	for _, v := range []string{"2026-11-27T16:00:00+99:99", "2026-11-27T16:00:00+25:00", "2026-11-27T16:00:00-24:30", "2026-13-01T00:00:00Z"} {
		r := runCLI(t, "", nil, "offsets", "reset", "--data-dir", data, "--bootstrap-server", ln.Addr().String(), "-g", "g", "--all-topics", "--to-datetime", v, "--execute")
		if r.Code != 2 || !strings.Contains(r.Err, v) || !strings.Contains(r.Err, "not a") {
			t.Errorf("%s: exit %d, stderr %q", v, r.Code, r.Err)
		}
		r = runCLI(t, "", nil, "offsets", "history", "g", "--data-dir", data, "--since", v)
		if r.Code != 2 || !strings.Contains(r.Err, "not a") {
			t.Errorf("history --since %s: exit %d, stderr %q", v, r.Code, r.Err)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connections to the broker before the refusal", n)
	}
}

// Offline, a row is checked against the partitions the volume holds, as
// the brokers check it online: partition 2147483647 of a 4-partition topic
// is refused, and nothing is written.
func TestOffsetsResetOfflineRowsCheckedAgainstTheVolume(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cd := filepath.Join(data, "__cluster")
	writeFile(t, cd, "assignment.json", `{"version":1,"brokers":[{"id":"kaas-0","health":"alive"}]}`)
	writeFile(t, cd, "__consumer_offsets/g.json", `{"offsets":{"orders/0":5}}`)
	for p := range 4 {
		writeFile(t, data, "orders/"+strconv.Itoa(p)+"/manifest.json", `{"epoch":1,"highWatermark":50,"logStartOffset":0}`)
		writePartitionLog(t, data, "orders/"+strconv.Itoa(p), 0, 50)
	}
	plan := writeFile(t, t.TempDir(), "plan.csv", "orders,0,7\norders,2147483647,9\n")
	r := runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--from-file", plan, "--execute", "-o", "json")
	if r.Code == 0 || !strings.Contains(r.Out, "partition orders-2147483647 is not on the volume") || !strings.Contains(r.Out, "holds partitions 0-3 of orders") {
		t.Errorf("exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	if got, _ := os.ReadFile(filepath.Join(cd, "__consumer_offsets", "g.json")); string(got) != `{"offsets":{"orders/0":5}}` {
		t.Errorf("written: %s", got)
	}
	// The partitions the volume holds go through.
	plan = writeFile(t, t.TempDir(), "plan.csv", "orders,0,7\norders,3,9\n")
	if r := runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--from-file", plan, "--execute"); r.Code != 0 {
		t.Errorf("exit %d\n%s", r.Code, r.Err)
	}
}

// TestSandboxOffsetsResetServedBehindLog: a broker that serves a log end
// below what the partition's segments hold (kaas's stale high watermark
// after a same-epoch takeover) does not move the group: the live reset
// refuses that partition, naming both ends, and writes nothing for the
// group.
func TestSandboxOffsetsResetServedBehindLog(t *testing.T) {
	t.Parallel()
	lab := newResetLab(t)
	lab.consumer.Close()
	lab.waitState(t, "Empty")
	// The brokers serve orders/0 at 10; its segments hold 25 records.
	lab.sb.PlantLogs() // the test's segments stay as written
	writePartitionLog(t, lab.data, "orders/0", 0, 25)
	before, _ := os.ReadFile(lab.file("app"))
	r := lab.run(t, "reset", "--group", "app", "--topic", "orders", "--to-earliest", "-o", "json")
	var doc staleResetView
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil || len(doc.Groups) != 1 {
		t.Fatalf("json: %v\n%s\n%s", err, r.Out, r.Err)
	}
	rows := map[int32]string{}
	for _, row := range doc.Groups[0].Rows {
		rows[row.Partition] = row.Error
		if row.Partition == 1 && (row.Error != "" || row.New != 0) {
			t.Errorf("orders/1 (no segments on the volume) is planned as usual: %+v", row)
		}
	}
	want := "the broker serves log end 10 but the partition's segments end at 25"
	if !strings.Contains(rows[0], want) || !strings.Contains(rows[0], "remove recovery-checkpoint.json") || !strings.Contains(rows[0], "kaas generation") {
		t.Errorf("orders/0: want the row refused with %q, the fix and the generation, got %q", want, rows[0])
	}
	r = lab.run(t, "reset", "--group", "app", "--topic", "orders", "--to-earliest", "--execute", "-o", "json")
	if r.Code != 4 {
		t.Errorf("an execute with a row refused for a stale end: exit %d, want 4 (refused):\n%s\n%s", r.Code, r.Out, r.Err)
	}
	if after, _ := os.ReadFile(lab.file("app")); !bytes.Equal(after, before) || !strings.Contains(r.Out, "nothing is written for this group") {
		t.Errorf("the execute wrote the group's file, or did not say it would not:\nbefore %s\nafter  %s\n%s", before, after, r.Out)
	}
}

// TestSandboxDoctorServedBehindLog: doctor -b names the partition a broker
// serves below its segments, with both ends, and exits 3 (an error-level
// finding); a partition served at its log end is not named.
func TestSandboxDoctorServedBehindLog(t *testing.T) {
	t.Parallel()
	lab := newResetLab(t)
	lab.sb.PlantLogs() // the test's segments stay as written
	writePartitionLog(t, lab.data, "orders/0", 0, 25)
	writePartitionLog(t, lab.data, "orders/1", 0, 10)
	r := runCLI(t, "", nil, "doctor", "-b", lab.boot, "--data-dir", lab.data, "-o", "json")
	var doc struct {
		Findings []struct {
			Code, Message, Fix string
			Subjects           []string
		}
	}
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
		t.Fatalf("json: %v\n%s\n%s", err, r.Out, r.Err)
	}
	found := false
	for _, f := range doc.Findings {
		if f.Code != "live.servedBehindLog" {
			continue
		}
		found = true
		if strings.Join(f.Subjects, ",") != "orders/0" || !strings.Contains(f.Message, "orders/0 served at 10, its segments end at 25") || !strings.Contains(f.Fix, "remove recovery-checkpoint.json") {
			t.Errorf("finding %+v", f)
		}
	}
	if !found || r.Code != 3 {
		t.Errorf("doctor: exit %d, want 3 and a live.servedBehindLog finding:\n%s\n%s", r.Code, r.Out, r.Err)
	}
}

// TestSandboxDescribeServedBehindLog: groups describe with the volume and
// the brokers marks the partition a broker serves below the log end its
// segments gave before the brokers were asked (both ends in -o json and
// in the partition's note, the group's issue, one warning naming the
// generation); a partition served at its segments' end is not marked.
func TestSandboxDescribeServedBehindLog(t *testing.T) {
	t.Parallel()
	lab := newResetLab(t)
	// The brokers serve orders/0 and orders/1 at 10; the segments hold 25
	// and 10 records.
	lab.sb.PlantLogs() // the test's segments stay as written
	writePartitionLog(t, lab.data, "orders/0", 0, 25)
	writePartitionLog(t, lab.data, "orders/1", 0, 10)
	r := runCLI(t, "", nil, "groups", "describe", "-b", lab.boot, "--data-dir", lab.data, "-o", "json", "app")
	var doc struct {
		Groups []struct {
			Issues     []string
			Partitions []struct {
				Topic           string
				Partition       int32
				LogEnd          int64
				Lag             *int64
				SegmentsLogEnd  *int64
				ServedBehindLog bool
				Note            string
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil || len(doc.Groups) != 1 {
		t.Fatalf("exit %d, json: %v\n%s\n%s", r.Code, err, r.Out, r.Err)
	}
	d := doc.Groups[0]
	if !slices.Contains(d.Issues, "servedBehindLog") {
		t.Errorf("issues %v: want servedBehindLog", d.Issues)
	}
	seen := 0
	for _, p := range d.Partitions {
		if p.Topic != "orders" {
			continue
		}
		seen++
		switch p.Partition {
		case 0:
			if !p.ServedBehindLog || p.LogEnd != 10 || p.SegmentsLogEnd == nil || *p.SegmentsLogEnd != 25 ||
				!strings.Contains(p.Note, "served log end 10 is 15 records behind the segments' 25") {
				t.Errorf("orders/0, served at 10 below its segments' 25: %+v", p)
			}
		case 1:
			if p.ServedBehindLog || p.SegmentsLogEnd == nil || *p.SegmentsLogEnd != 10 || strings.Contains(p.Note, "stale") {
				t.Errorf("orders/1, served at its segments' end: %+v", p)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("want orders/0 and orders/1 described, got %+v", d.Partitions)
	}
	if !strings.Contains(r.Err, "1 partition is served below the log end of its segments") || !strings.Contains(r.Err, "orders/0 served at 10, its segments end at 25 (group app)") ||
		!strings.Contains(r.Err, "kaas") || strings.Count(r.Err, "served below the log end") != 1 {
		t.Errorf("want one warning naming orders/0, both ends and the generation:\n%s", r.Err)
	}
	// People see the group's issue, and the partition's note in the wide table.
	r = runCLI(t, "", nil, "groups", "describe", "-b", lab.boot, "--data-dir", lab.data, "app")
	if !strings.Contains(r.Out, "issues       servedBehindLog") {
		t.Errorf("table: want the group's issue:\n%s", r.Out)
	}
	r = runCLI(t, "", nil, "groups", "describe", "-b", lab.boot, "--data-dir", lab.data, "-o", "wide", "app")
	if !strings.Contains(r.Out, "served log end 10 is 15 records behind the segments' 25") {
		t.Errorf("wide table: want the note on orders/0:\n%s", r.Out)
	}
}

// A reset reads the read model's incidents of every partition it plans:
// --to-current does not keep a commit past a verified log end (exit 4,
// the volume unchanged, the fix named), and a partition whose segment
// holds an offset range twice (a leader appended at a stale end) moves
// only to an offset given explicitly.
func TestResetRefusesWhatTheReadModelFlags(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cd := filepath.Join(data, "__cluster")
	writeFile(t, cd, "assignment.json", `{"controllerEpoch":1,"assignmentVersion":1,"controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"}],"partitions":[]}`)
	od := filepath.Join(cd, "__consumer_offsets")
	writeFile(t, od, "past.json", `{"offsets":{"orders/0":40}}`)
	writeFile(t, od, "twice.json", `{"offsets":{"orders/1":20}}`)
	if err := volume.WriteRecords(filepath.Join(data, "orders", "0"), 0, 25, 1); err != nil {
		t.Fatal(err)
	}
	// orders/1: offsets 0–9, then 5–14 again (a takeover at a stale end 5).
	twice := append(volume.EncodeBatch(0, 10, 1, nil), volume.EncodeBatch(5, 10, 1, nil)...)
	writeFile(t, filepath.Join(data, "orders", "1"), volume.SegmentLogName(0, 1), string(twice))
	before := fileHashes(t, data)
	reset := func(group string, args ...string) cliResult {
		return runCLIWithin(t, nil, append([]string{"offsets", "reset", "-g", group, "--offline", "--data-dir", data, "--kaas-version", "0.2.18", "--execute", "-o", "json"}, args...)...)
	}
	r := reset("past", "--topic", "orders:0", "--to-current")
	if r.Code != 4 || !strings.Contains(r.Out, "committed 40 is beyond the segments' log end 25") || !strings.Contains(r.Out, "choose --to-latest") {
		t.Errorf("--to-current past the log end: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	r = reset("twice", "--topic", "orders:1", "--to-latest")
	if r.Code != 4 || !strings.Contains(r.Out, "offsets 5–9 are in") || !strings.Contains(r.Out, "--to-offset N") {
		t.Errorf("--to-latest on a log written twice: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	if after := fileHashes(t, data); !maps.Equal(before, after) {
		t.Errorf("a refused reset changed the volume")
	}
	// An explicit offset is the operator's decision: planned and written.
	if r = reset("twice", "--topic", "orders:1", "--to-offset", "15"); r.Code != 0 {
		t.Errorf("--to-offset on a log written twice: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	if r = reset("past", "--topic", "orders:0", "--to-latest"); r.Code != 0 || !strings.Contains(r.Out, `"new": 25`) {
		t.Errorf("--to-latest past the log end: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
}
