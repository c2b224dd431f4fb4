package commands

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

// formatDocs names each command's machine document (-o json, yaml) and the
// type it is built from; the fields are read from the type itself.
var formatDocs = []struct {
	command string
	doc     any
	jsonl   string // what -o jsonl prints, one per line
}{
	{"whois-coordinator", []inspect.WhoisResult{}, "each key's answer"},
	{"groups list", GroupsListView{}, "each group (groups[])"},
	{"groups describe", GroupsDescribeView{}, "each group (groups[])"},
	{"groups describe (with brokers)", GroupsDescribeLiveView{}, "each group (groups[])"},
	{"groups describe --why", GroupsWhyView{}, "each group (groups[]) with its lagging partitions' blockers"},
	{"groups health", GroupsHealthView{}, "each group (groups[])"},
	{"groups explain", GroupsExplainView{}, "each group's verdict (groups[])"},
	{"groups prune", GroupsPruneView{}, "each group (groups[])"},
	{"groups prune --restore", PruneRestoreView{}, "each group (groups[])"},
	{"probe", ProbeView{}, "each broker (brokers[])"},
	{"assignment show", inspect.AssignmentSummary{}, "each broker (brokers[])"},
	{"assignment diff OLD NEW", inspect.AssignmentDiff{}, "each move (moves[])"},
	{"assignment diff [FILE]", assignmentAuditView{}, "each entry (entries[])"},
	{"takeover trace", traceView{}, "each event (trace.events[])"},
	{"watch", watchView{}, "each move, as it happens"},
	{"watch --offsets", watchOffsetsView{}, "each offset-file change (events[]), as it happens"},
	{"offsets history", inspect.OffsetHistoryView{}, "each partition at each point (TIME, PARTITION, OFFSET, PREVIOUS, SOURCE, KIND, ANOMALY as in csv)"},
	{"plan restart", PlanRestartView{}, "the whole document"},
	{"plan restart --follow", FollowEvent{}, "each event (kind following, version, waiting, settled, unsettled, done), as it happens"},
	{"plan assignment", PlanAssignmentView{}, "each member (members[])"},
	{"doctor", DoctorView{}, "each finding"},
	{"volume check", inspect.CheckReport{}, "each finding (findings[])"},
	{"volume repair", repair.RepairReport{}, "each action (actions[])"},
	{"volume migrate", repair.MigrateReport{}, "each action (actions[])"},
	{"txn list / txn describe", TxnListView{}, "each transaction (transactions[])"},
	{"offsets reset / offsets delete", resetView{}, "the whole document"},
	{"version", versionView{}, "the whole document"},
	{"--help-json", HelpTree{}, "the whole document"},
}

// formatLines lists each -o format with what it is.
func formatLines() string {
	var b strings.Builder
	for _, f := range render.Formats {
		fmt.Fprintf(&b, "  %-5s  %s\n", f, formatDescriptions[f])
	}
	return b.String()
}

func init() {
	addHelpTopicFunc("formats", "output formats, and the JSON fields of every command (kaasctl help formats COMMAND: one command's)", helpFormats)
}

// formatsIntro is the start of 'help formats', also printed before one
// command's fields: the formats from formatDescriptions (helpjson.go).
var formatsIntro = "Output formats (-o)\n\n" + formatLines() + `
Machine output goes to stdout only; notes, warnings and progress go to stderr, so
'kaasctl ... -o json | jq' always reads valid JSON, also when some items failed (the
exit code says so). Fields marked optional are left out when they do not apply.
`

const formatsGeneral = `
Every JSON and YAML document starts with "schemaVersion" (an integer, below for each
command): a program checks it before reading the rest. It changes when the document's fields
do (one added, removed, renamed or of another kind). A document that is a JSON array
(whois-coordinator's) carries it in each element, as does every jsonl line and streamed item.

Every document about a volume or cluster names the kaas generation it assumed in a
"generation" object right after schemaVersion (in each element, jsonl line and streamed item
too; groups list/describe and doctor also have it in sources.generation; version and
--help-json, about kaasctl itself, have none): generation (go, 0.2.16, 0.2.18 or unknown), label, source (detected, pinned or
undetermined), evidence (why, in words), candidates (the generations still possible when
undetermined), liveOffsetsDir ("" when it cannot be told), ambiguous (both offsets dirs hold
group files), sameDir (the data dir and cluster dir are one directory).

Ids and names are carried whole and unchanged
  json, jsonl, yaml, csv and wide never shorten a group id, transactional id, member id,
  topic or path (only the default table shortens ids past 64 bytes, with the byte count).
  csv writes the exact bytes. kaas accepts any bytes in a group id, and JSON strings are
  UTF-8, so for every string field F whose value is not valid UTF-8 the JSON has:
    F            the value with each invalid byte replaced by U+FFFD (for reading)
    F` + render.Base64Suffix + `      the exact bytes, standard base64 (for use)
  and for a list of strings F with such an element, F` + render.Base64Suffix + ` is the base64 of every
  element in order. The extra field is present only then: output for valid ids never
  changes. The exact bytes of such ids, one per line:
    kaasctl groups list -o json | jq -r '.groups[].group` + render.Base64Suffix + ` // empty' | while read -r b; do
      printf '%s' "$b" | base64 -d; echo; done
  (jq's own @base64d would turn the invalid bytes back into U+FFFD.) yaml carries the same
  fields. Map keys are topic names, which Kafka limits to ASCII.

Human output (table, wide, notes, warnings, errors, completion candidates) never passes
control characters to the terminal: C0 and C1 controls, ESC sequences, invalid UTF-8 and
bidi overrides (U+202A-U+202E, U+2066-U+2069, U+200E/F, U+061C) are shown escaped as
\xNN or \uNNNN. Use -o json or csv for exact values.

JSON fields by command (kaasctl help formats COMMAND for one: 'help formats groups describe')
`

func helpFormats() string {
	var b strings.Builder
	b.WriteString(formatsIntro + formatsGeneral)
	for _, d := range formatDocs {
		writeFormatDoc(&b, d.command, d.jsonl, d.doc)
	}
	fmt.Fprintf(&b, "\nexporter   (Prometheus text format; kaasctl help formats exporter)\n")
	return b.String()
}

func writeFormatDoc(b *strings.Builder, command, jsonl string, doc any) {
	fmt.Fprintf(b, "\n%s   (schemaVersion %d; jsonl: %s)\n", command, docSchemaVersion(command), jsonl)
	for _, f := range render.Fields(doc) {
		fmt.Fprintf(b, "  %-44s %s\n", f.Path, f.Kind)
	}
}

// formatDocCommands is the command part of a formatDocs entry's name:
// "txn list / txn describe" is two, "assignment diff OLD NEW" is
// "assignment diff", "groups describe (with brokers)" is "groups describe".
func formatDocCommands(name string) []string {
	var out []string
	for _, part := range strings.Split(name, " / ") {
		var words []string
		for _, w := range strings.Fields(part) {
			if strings.ToLower(w) != w || strings.HasPrefix(w, "[") || strings.HasPrefix(w, "(") || strings.HasPrefix(w, "-") {
				break
			}
			words = append(words, w)
		}
		out = append(out, strings.Join(words, " "))
	}
	return out
}

// helpFormatsFor is 'kaasctl help formats COMMAND [SUBCOMMAND]': the
// formats and the fields of that command's documents only (of every
// subcommand's, for a parent such as 'groups').
func helpFormatsFor(cmds []*cli.Command, args []string) (string, error) {
	var path []string
	for _, a := range args {
		cmd := findCommand(cmds, a)
		if cmd == nil {
			cands := commandNames(cmds)
			if s := suggest(a, cands); s != "" {
				return "", exit.UsageErrorf("help formats: no command %q; did you mean %q?", strings.Join(append(path, a), " "), strings.Join(append(path, s), " "))
			}
			return "", exit.UsageErrorf("help formats: no command %q (kaasctl help formats lists every command's fields)", strings.Join(append(path, a), " "))
		}
		path = append(path, cmd.Name)
		cmds = cmd.Subcommands
	}
	q := strings.Join(path, " ")
	var b strings.Builder
	if q == "exporter" {
		b.WriteString(helpFormatsExporter())
		return b.String(), nil
	}
	b.WriteString(formatsIntro)
	n := 0
	for _, d := range formatDocs {
		for _, dc := range formatDocCommands(d.command) {
			if dc == q || strings.HasPrefix(dc, q+" ") {
				if n == 0 {
					b.WriteString("\nJSON fields\n")
				}
				writeFormatDoc(&b, d.command, d.jsonl, d.doc)
				n++
				break
			}
		}
	}
	if n == 0 {
		return "", exit.UsageErrorf("help formats: %s has no machine output (-o json); kaasctl help formats lists the commands that have", q)
	}
	return b.String(), nil
}

// helpFormatsExporter documents the exporter's page: the families a
// refresh writes (from the exporter's own declarations), the label
// conventions, and /api/health's JSON fields.
func helpFormatsExporter() string {
	var b strings.Builder
	b.WriteString(`kaasctl exporter output

/metrics (and 'kaasctl exporter --once' on stdout) is the Prometheus text exposition format
0.0.4, gzipped when the scraper asks for it. Label values are escaped as the format requires; a
value that is not valid UTF-8 (kaas accepts any bytes in a group id) has U+FFFD for each invalid
byte and a sibling label NAME_base64 with the exact bytes (group="bad\uFFFD",group_base64="YmFk/w==").
Besides the families below, each scrape appends the exporter's own process and Go runtime metrics
(go_*, process_*), kaas_exporter_refresh_duration_seconds (histogram),
kaas_exporter_http_in_flight and kaas_exporter_http_rejected_total.

Metric families (name, type, labels)
`)
	for _, f := range exporter.Families() {
		labels := ""
		if len(f.Labels) > 0 {
			labels = "{" + strings.Join(f.Labels, ",") + "}"
		}
		fmt.Fprintf(&b, "  %s%s  %s\n      %s\n", f.Name, labels, f.Type, f.Help)
	}
	b.WriteString("\n/api/health (JSON; read by 'kaasctl groups health --exporter URL')\n")
	for _, f := range render.Fields(exporter.HealthDocument{}) {
		fmt.Fprintf(&b, "  %-44s %s\n", f.Path, f.Kind)
	}
	return b.String()
}
