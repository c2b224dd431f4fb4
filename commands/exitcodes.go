package commands

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/render/views"
)

// exitCodeDocs are kaasctl's exit codes (internal/exit), one source for
// the help page and the command tree.
var exitCodeDocs = []views.ExitCodeDoc{
	{Code: exit.OK, Name: "ok", Title: "ok", Meaning: "the command did what was asked and found nothing wrong"},
	{Code: exit.Error, Name: "error", Title: "error", Meaning: "something failed (a file could not be read or parsed, a broker did not answer, a per-item operation failed); the message on stderr names the file or broker and why"},
	{Code: exit.Usage, Name: "usage", Title: "usage", Meaning: "the command line is wrong (unknown command or flag, missing argument, conflicting flags); nothing was read or written"},
	{Code: exit.Problems, Name: "problems", Title: "problems found", Meaning: "the command ran to the end and reports problems (the commands listed, when they do)"},
	{Code: exit.Refused, Name: "refused", Title: "refused for safety", Meaning: "kaasctl would not act (e.g. an offsets reset on a group that is not Empty or Dead, or whose brokers' offsets for a time contradict the records); nothing was written for that group"},
}

// exitProblems are the commands that exit 3, and when.
var exitProblems = []struct {
	label    string
	commands []string
	when     string
}{
	{"volume check, doctor", []string{"volume check", "doctor"}, "findings of error severity"},
	{"volume repair", []string{"volume repair"}, "conflicts it leaves to a person (a group with different\n                                 offsets in both layouts), in a dry run as with --execute;\n                                 a dry run with only changes to make exits 0"},
	{"config show / check", []string{"config show", "config check"}, "configuration problems / seed brokers that did not answer"},
	{"assignment diff", []string{"assignment diff"}, "--exit-code: differences, or entries against the hash tier"},
	{"whois --live --exit-code", []string{"whois-coordinator"}, "keys whose volume and broker answers disagree"},
	{"offsets delete", []string{"offsets delete"}, "a deleted offset a broker still serves from its cache"},
	{"groups health", []string{"groups health"}, "a group that is not OK (any condition but OK)"},
	{"groups explain", []string{"groups explain"}, "a verdict other than ok (warning or page)"},
	{"probe", []string{"probe"}, "a broker that failed the probe (the step is named)"},
	{"plan restart --follow", []string{"plan restart"}, "a version that deviated from the plan"},
	{"volume migrate", []string{"volume migrate"}, "conflicts or unreadable files it leaves to a person"},
	{"groups prune --execute", []string{"groups prune"}, "a pruned offset a coordinator still serves from memory, or a\n                                 pruned group a broker still lists (the broker is named)"},
}

// exitRefusers are the commands that exit 4.
var exitRefusers = []string{"offsets reset", "offsets delete", "volume repair", "volume migrate", "groups prune", "sandbox", "watch", "exporter"}

// exitCodesOf are the exit codes the command at path can end with.
func exitCodesOf(path string) []int {
	codes := []int{exit.OK, exit.Error, exit.Usage}
	for _, p := range exitProblems {
		if slices.Contains(p.commands, path) {
			codes = append(codes, exit.Problems)
			break
		}
	}
	if slices.Contains(exitRefusers, path) {
		codes = append(codes, exit.Refused)
	}
	return codes
}

// exitCodesHelp is 'kaasctl help exit-codes'.
func exitCodesHelp() string {
	var b strings.Builder
	b.WriteString("kaasctl exit codes\n\n")
	for _, d := range exitCodeDocs {
		fmt.Fprintf(&b, "  %d  %s\n", d.Code, wrapText(d.Title+": "+d.Meaning, 86, "     "))
		if d.Code == exit.Problems {
			for _, p := range exitProblems {
				fmt.Fprintf(&b, "       %-25s %s\n", p.label, p.when)
			}
		}
		if d.Code == exit.Refused {
			b.WriteString("     offsets reset and delete handle groups one by one, as Kafka's tool does: the other\n" +
				"     groups of the run are still written, and the run exits 4 if any group was refused.\n" +
				"     groups prune exits 4 when a selected group or row is refused (live, loaded by its\n" +
				"     coordinator, evidence that cannot tell), and when a plan selects more groups than\n" +
				"     --max-groups (then nothing is written)\n")
		}
	}
	b.WriteString("\nAny failure of a single item (one group, one partition, one file) makes the whole run\n" +
		"non-zero, and machine output (-o json/jsonl/yaml/csv) stays valid on partial failure.\n")
	return b.String()
}

// wrapText breaks s into lines of at most width, the later ones indented.
func wrapText(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		if i > 0 && n+1+len(w) > width {
			b.WriteString("\n" + indent)
			n = len(indent)
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
