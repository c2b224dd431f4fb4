package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runKafka runs offsets reset with Kafka's spelling of the connection
// (--bootstrap-server, --timeout in milliseconds).
func (lab *resetLab) runKafka(t *testing.T, args ...string) cliResult {
	t.Helper()
	return runCLI(t, "", nil, append([]string{"offsets", "reset", "--bootstrap-server", lab.boot, "--timeout", "30000", "--data-dir", lab.data}, args...)...)
}

// The places where kaasctl used to differ from kafka-consumer-groups.sh
// (issue: offsets reset as a drop-in), on one sandbox: group "app" has a
// running consumer (Stable); idle1 and idle2 are Empty with offsets.
func TestSandboxOffsetsResetAsKafka(t *testing.T) {
	t.Parallel()
	lab := newResetLab(t)
	commitAdmin(t, lab.sb, "idle1", map[int32]int64{0: 8, 1: 8})
	commitAdmin(t, lab.sb, "idle2", map[int32]int64{0: 9, 1: 9})
	appBefore, _ := os.ReadFile(lab.file("app"))

	// One Stable group refuses only itself: one error line, the other
	// group is written, exit 4.
	r := lab.runKafka(t, "--group", "app", "--group", "idle1", "--topic", "orders", "--to-offset", "5", "--execute")
	if r.Code != 4 || strings.Count(r.Err, "Error: ") != 1 || !strings.Contains(r.Err, "Error: Assignments can only be reset if the group 'app' is inactive, but the current state is Stable.") ||
		!strings.Contains(r.Out, "REFUSED  not written: the group was refused (state Stable)") {
		t.Fatalf("mixed groups: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	if got := lab.fileOffsets(t, "idle1"); got["orders/0"] != 5 || got["orders/1"] != 5 {
		t.Errorf("idle1 not reset beside the refused group: %v", got)
	}
	if got := lab.wireOffsets(t, "idle1"); got["orders/0"] != 5 {
		t.Errorf("idle1 OffsetFetch: %v", got)
	}
	if after, _ := os.ReadFile(lab.file("app")); string(after) != string(appBefore) {
		t.Error("the refused group's file changed")
	}
	// --export lists only what would be written, in the 4-column form
	// since several groups are in play.
	r = lab.runKafka(t, "--group", "app", "--group", "idle1", "--topic", "orders", "--to-offset", "2", "--export")
	if r.Code != 4 || r.Out != "idle1,orders,0,2\nidle1,orders,1,2\n" {
		t.Errorf("export with a refused group: exit %d %q\n%s", r.Code, r.Out, r.Err)
	}
	// Two --group, one of which has nothing to reset: still 4 columns.
	r = lab.runKafka(t, "--group", "idle1", "--group", "missing.group", "--all-topics", "--to-offset", "2", "--export")
	if r.Code != 0 || r.Out != "idle1,orders,0,2\nidle1,orders,1,2\n" {
		t.Errorf("export with one group found: exit %d %q\n%s", r.Code, r.Out, r.Err)
	}

	// A 4-column file without rows for one group: that group is skipped
	// with Kafka's message, the other is written (exit 0).
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.csv")
	os.WriteFile(plan, []byte("idle1,orders,0,7\nidle1,audit,0,1\n"), 0o644)
	r = lab.runKafka(t, "--group", "idle1", "--group", "idle2", "--from-file", plan, "--topic", "orders", "--execute")
	if r.Code != 0 || !strings.Contains(r.Err, "Error: No reset plan for group idle2 found") ||
		!strings.Contains(r.Err, "--topic and --all-topics are ignored") {
		t.Fatalf("4-column file missing a group: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	// The scope was ignored: audit/0 from the file was applied too.
	if got := lab.fileOffsets(t, "idle1"); got["orders/0"] != 7 || got["audit/0"] != 1 || got["orders/1"] != 5 {
		t.Errorf("from-file with an ignored scope: %v", got)
	}
	if got := lab.fileOffsets(t, "idle2"); got["orders/0"] != 9 {
		t.Errorf("idle2 changed: %v", got)
	}
	// A 3-column file with several groups applies to none: refused loudly.
	os.WriteFile(plan, []byte("orders,0,1\n"), 0o644)
	r = lab.runKafka(t, "--group", "idle1", "--group", "idle2", "--from-file", plan, "--execute")
	if r.Code != 2 || !strings.Contains(r.Err, "applies such a file to none of them") {
		t.Errorf("3-column file, two groups: exit %d\n%s", r.Code, r.Err)
	}

	// A group with no offsets at all under --all-topics is skipped, and
	// nothing is written for it (Kafka's testResetOffsetsNotExistingGroup).
	r = lab.runKafka(t, "--group", "missing.group", "--all-topics", "--to-current", "--execute")
	if r.Code != 0 || !strings.Contains(r.Err, "skipped: group 'missing.group' has no committed offsets") {
		t.Errorf("missing group: exit %d\n%s", r.Code, r.Err)
	}
	if _, err := os.Stat(lab.file("missing.group")); err == nil {
		t.Error("a file was written for a group with nothing to reset")
	}

	// --by-duration -PT30M: Java's Duration makes it the future, which
	// falls back to the log end.
	r = lab.runKafka(t, "--group", "idle2", "--topic", "orders", "--by-duration", "-PT30M", "--execute")
	if r.Code != 0 || !strings.Contains(r.Err, "is negative") {
		t.Fatalf("-PT30M: exit %d\n%s", r.Code, r.Err)
	}
	if got := lab.fileOffsets(t, "idle2"); got["orders/0"] != 10 || got["orders/1"] != 10 {
		t.Errorf("-PT30M did not reset to the log end: %v", got)
	}

	// A datetime without a zone is UTC, and the output says so.
	local := lab.base.Add(3 * time.Hour).UTC().Format("2006-01-02T15:04:05.000")
	r = lab.runKafka(t, "--group", "idle2", "--topic", "orders", "--to-datetime", local, "--execute", "-o", "json")
	var doc struct{ Spec string }
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil || r.Code != 0 || !strings.Contains(doc.Spec, "read as UTC") || !strings.Contains(r.Err, "read as UTC") {
		t.Fatalf("zone-less datetime: exit %d %v %q\n%s", r.Code, err, doc.Spec, r.Err)
	}
	if got := lab.fileOffsets(t, "idle2"); got["orders/0"] != 3 || got["orders/1"] != 3 {
		t.Errorf("zone-less datetime: %v", got)
	}

	// --to-group copies another group's offsets, within the scope.
	r = lab.runKafka(t, "--group", "idle2", "--to-group", "idle1", "--topic", "orders:1", "--execute")
	if r.Code != 0 {
		t.Fatalf("--to-group: exit %d\n%s", r.Code, r.Err)
	}
	if got := lab.fileOffsets(t, "idle2"); got["orders/0"] != 3 || got["orders/1"] != 5 {
		t.Errorf("--to-group one partition: %v", got)
	}
	r = lab.runKafka(t, "--group", "idle2", "--to-group", "idle1", "--all-topics", "--execute")
	want := lab.fileOffsets(t, "idle1")
	if got := lab.fileOffsets(t, "idle2"); r.Code != 0 || !sameMap(got, want) {
		t.Errorf("--to-group --all-topics: exit %d %v want %v\n%s", r.Code, got, want, r.Err)
	}
	if got := lab.wireOffsets(t, "idle2"); !sameMap(got, want) {
		t.Errorf("--to-group OffsetFetch %v want %v", got, want)
	}
	r = lab.runKafka(t, "--group", "idle2", "--to-group", "idle2", "--all-topics")
	if r.Code != 2 || !strings.Contains(r.Err, "the source is also a group to reset") {
		t.Errorf("--to-group onto itself: exit %d %s", r.Code, r.Err)
	}

	// A broker that answers ListOffsets by timestamp with 0 (kaas's Go
	// generation): refused with the evidence, naming the partitions.
	before, _ := os.ReadFile(lab.file("idle2"))
	lab.sb.EmulateZeroTimestampOffsets(true)
	at := lab.base.Add(3 * time.Hour).UTC().Format(time.RFC3339)
	r = lab.runKafka(t, "--group", "idle2", "--topic", "orders", "--to-datetime", at, "--execute")
	if r.Code != 4 || !strings.Contains(r.Err, "contradict the records on orders/0, orders/1") ||
		!strings.Contains(r.Out, "the brokers answered offset 0") || !strings.Contains(r.Out, "earlier than that") {
		t.Fatalf("zero timestamp answers: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	if after, _ := os.ReadFile(lab.file("idle2")); string(after) != string(before) {
		t.Error("written despite the implausible answer")
	}
	// The same reset against the normal sandbox works.
	lab.sb.EmulateZeroTimestampOffsets(false)
	r = lab.runKafka(t, "--group", "idle2", "--topic", "orders", "--to-datetime", at, "--execute")
	if got := lab.fileOffsets(t, "idle2"); r.Code != 0 || got["orders/0"] != 3 || got["orders/1"] != 3 {
		t.Errorf("normal sandbox: exit %d %v\n%s", r.Code, got, r.Err)
	}
}

func TestHelpOffsetsComingFromKafka(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", nil, "help", "offsets")
	for _, want := range []string{"Coming from kafka-consumer-groups.sh", "Deliberate differences", "exit codes: 4 when any group was refused", "dry-run is the default", "--command-config"} {
		if r.Code != 0 || !strings.Contains(r.Out, want) {
			t.Errorf("help offsets: exit %d, missing %q", r.Code, want)
		}
	}
}

// Kafka's command line without a volume: one sentence says why kaas needs it.
func TestOffsetsResetNeedsVolume(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", nil, "offsets", "reset", "--bootstrap-server", "127.0.0.1:1", "--timeout", "3000", "--group", "g", "--all-topics", "--to-earliest")
	if r.Code != 2 || !strings.Contains(r.Err, "kaasctl needs the kaas volume even with --bootstrap-server") || !strings.Contains(r.Err, "full set of offsets") ||
		strings.Contains(r.Err, "overhead") {
		t.Errorf("exit %d\n%s", r.Code, r.Err)
	}
}
