package commands

import (
	"strings"
	"testing"
)

// 'help formats COMMAND' shows that command's formats and fields only;
// the exporter's page lists its metric families and /api/health.
func TestHelpFormatsPerCommand(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", nil, "help", "formats", "exporter")
	if r.Code != 0 {
		t.Fatalf("help formats exporter: exit %d: %s", r.Code, r.Err)
	}
	for _, want := range []string{"Prometheus text exposition", "kaas_group_lag{group}  gauge", "kaas_group_partition_lag{group,topic,partition}", "group_base64", "/api/health", "groups[]"} {
		if !strings.Contains(r.Out, want) {
			t.Errorf("help formats exporter lacks %q", want)
		}
	}
	r = runCLI(t, "", nil, "help", "formats", "groups", "describe")
	if r.Code != 0 || !strings.Contains(r.Out, "groups describe (with brokers)") || !strings.Contains(r.Out, "groups[].summary.totalLag") ||
		strings.Contains(r.Out, "volume check") || strings.Contains(r.Out, "groups list") || !strings.Contains(r.Out, "jsonl") {
		t.Errorf("help formats groups describe: exit %d\n%s%s", r.Code, r.Out, r.Err)
	}
	r = runCLI(t, "", nil, "help", "formats", "txn", "describe")
	if r.Code != 0 || !strings.Contains(r.Out, "txn list / txn describe") {
		t.Errorf("help formats txn describe: exit %d\n%s%s", r.Code, r.Out, r.Err)
	}
	r = runCLI(t, "", nil, "help", "formats", "whois")
	if r.Code != 0 || !strings.Contains(r.Out, "whois-coordinator") {
		t.Errorf("help formats whois (an alias): exit %d\n%s%s", r.Code, r.Out, r.Err)
	}
	r = runCLI(t, "", nil, "help", "formats", "sandbox")
	if r.Code != 2 || !strings.Contains(r.Err, "no machine output") {
		t.Errorf("help formats sandbox: exit %d %s", r.Code, r.Err)
	}
	r = runCLI(t, "", nil, "help", "formats", "grops")
	if r.Code != 2 || !strings.Contains(r.Err, `did you mean "groups"`) {
		t.Errorf("help formats grops: exit %d %s", r.Code, r.Err)
	}
	if r := runCLI(t, "", nil, "help", "formats"); r.Code != 0 || !strings.Contains(r.Out, "help formats COMMAND") {
		t.Errorf("help formats does not say how to see one command: %s", r.Err)
	}
}

// Bare kaasctl (and --help) lists the help topics beside the commands.
func TestBareKaasctlListsHelpTopics(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{}, {"--help"}, {"help"}} {
		r := runCLI(t, "", nil, args...)
		if r.Code != 0 || strings.Count(r.Out, "HELP TOPICS") != 1 {
			t.Errorf("kaasctl %v: exit %d, want one HELP TOPICS section:\n%s", args, r.Code, r.Out)
			continue
		}
		for _, topic := range topicNames() {
			if !strings.Contains(r.Out, "   "+topic+" ") {
				t.Errorf("kaasctl %v does not list the topic %s", args, topic)
			}
		}
	}
}

// assignment diff says where a second version comes from.
func TestAssignmentDiffSaysHowToGetTwoVersions(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", nil, "assignment", "diff", "--help")
	if r.Code != 0 || !strings.Contains(r.Out, "kaasctl watch --data-dir /data --journal") || !strings.Contains(r.Out, "assignment-e<epoch>-v<version>.json") ||
		!strings.Contains(r.Out, "cp /data/__cluster/assignment.json /tmp/before.json") {
		t.Errorf("assignment diff --help does not say how to get two versions:\n%s", r.Out)
	}
	r = runCLI(t, "", nil, "assignment", "diff", "a", "b", "c")
	if r.Code != 2 || !strings.Contains(r.Err, "watch --journal DIR") {
		t.Errorf("three files: exit %d %s", r.Code, r.Err)
	}
}
