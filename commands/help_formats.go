package commands

import (
	"fmt"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
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
	{"groups health", GroupsHealthView{}, "each group (groups[])"},
	{"assignment show", inspect.AssignmentSummary{}, "each broker (brokers[])"},
	{"assignment diff OLD NEW", inspect.AssignmentDiff{}, "each move (moves[])"},
	{"assignment diff [FILE]", trAuditView{}, "each entry (entries[])"},
	{"takeover trace", traceView{}, "each event (trace.events[])"},
	{"watch", watchView{}, "each move, as it happens"},
	{"watch --offsets", watchOffsetsView{}, "each offset-file change (events[]), as it happens"},
	{"offsets history", offsetsHistoryView{}, "each partition at each point (TIME, PARTITION, OFFSET, PREVIOUS, SOURCE, KIND, ANOMALY as in csv)"},
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
}

func init() {
	addHelpTopicFunc("formats", "output formats, and the JSON fields of every command", helpFormats)
}

func helpFormats() string {
	var b strings.Builder
	b.WriteString(`Output formats (-o)

  table  for people: boxed on a terminal, aligned plain text when piped (easy to grep/cut)
  wide   the table with more columns
  json   one JSON document; camelCase field names, [] rather than null for lists
  jsonl  one JSON object per line (streams: whois --stdin, watch)
  yaml   the JSON document as YAML (same field names and order)
  csv    every column of the wide table, with a header row

Machine output goes to stdout only; notes, warnings and progress go to stderr, so
'kaasctl ... -o json | jq' always reads valid JSON, also when some items failed (the
exit code says so). Fields marked optional are left out when they do not apply.

Every offline document names the kaas generation it assumed in a "generation" object
(sources.generation in groups list/describe and doctor; generation in volume check, repair and
migrate): generation (go, 0.2.16, 0.2.18 or unknown), label, source (detected, pinned or
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

JSON fields by command
`)
	for _, d := range formatDocs {
		fmt.Fprintf(&b, "\n%s   (jsonl: %s)\n", d.command, d.jsonl)
		for _, f := range render.Fields(d.doc) {
			fmt.Fprintf(&b, "  %-44s %s\n", f.Path, f.Kind)
		}
	}
	return b.String()
}
