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
	{"assignment show", inspect.AssignmentSummary{}, "each broker (brokers[])"},
	{"assignment diff OLD NEW", inspect.AssignmentDiff{}, "each move (moves[])"},
	{"assignment diff [FILE]", trAuditView{}, "each entry (entries[])"},
	{"takeover trace", traceView{}, "each event (trace.events[])"},
	{"watch", watchView{}, "each move, as it happens"},
	{"watch --offsets", watchOffsetsView{}, "each offset-file change (events[]), as it happens"},
	{"offsets history", offsetsHistoryView{}, "each partition at each point (TIME, PARTITION, OFFSET, PREVIOUS, SOURCE, KIND, ANOMALY as in csv)"},
	{"doctor", DoctorView{}, "each finding"},
	{"volume check", inspect.CheckReport{}, "each finding (findings[])"},
	{"volume repair", repair.RepairReport{}, "each action (actions[])"},
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
