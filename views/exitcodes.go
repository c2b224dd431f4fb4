package views

import (
	"slices"

	"github.com/kaasctl/kaasctl/internal/exit"
)

// ExitCodeDocs are kaasctl's exit codes (internal/exit), one source for
// the help page and the command tree.
var ExitCodeDocs = []ExitCodeDoc{
	{Code: exit.OK, Name: "ok", Title: "ok", Meaning: "the command did what was asked and found nothing wrong"},
	{Code: exit.Error, Name: "error", Title: "error", Meaning: "something failed (a file could not be read or parsed, a broker did not answer, a per-item operation failed); the message on stderr names the file or broker and why"},
	{Code: exit.Usage, Name: "usage", Title: "usage", Meaning: "the command line is wrong (unknown command or flag, missing argument, conflicting flags); nothing was read or written"},
	{Code: exit.Problems, Name: "problems", Title: "problems found", Meaning: "the command ran to the end and reports problems (the commands listed, when they do)"},
	{Code: exit.Refused, Name: "refused", Title: "refused for safety", Meaning: "kaasctl would not act (e.g. an offsets reset on a group that is not Empty or Dead, or whose brokers' offsets for a time contradict the records); nothing was written for that group"},
}

// ExitProblems are the commands that exit 3, and when.
var ExitProblems = []ExitProblem{
	{Label: "volume check, doctor", Commands: []string{"volume check", "doctor"}, When: "findings of error severity"},
	{Label: "volume repair", Commands: []string{"volume repair"}, When: "conflicts it leaves to a person (a group with different\n                                 offsets in both layouts), in a dry run as with --execute;\n                                 a dry run with only changes to make exits 0"},
	{Label: "config show / check", Commands: []string{"config show", "config check"}, When: "configuration problems / seed brokers that did not answer"},
	{Label: "assignment diff", Commands: []string{"assignment diff"}, When: "--exit-code: differences, or entries against the hash tier"},
	{Label: "whois --live --exit-code", Commands: []string{"whois-coordinator"}, When: "keys whose volume and broker answers disagree"},
	{Label: "offsets delete", Commands: []string{"offsets delete"}, When: "a deleted offset a broker still serves from its cache"},
	{Label: "groups health", Commands: []string{"groups health"}, When: "a group that is not OK (any condition but OK)"},
	{Label: "groups explain", Commands: []string{"groups explain"}, When: "a verdict other than ok (warning or page)"},
	{Label: "probe", Commands: []string{"probe"}, When: "a broker that failed the probe (the step is named)"},
	{Label: "plan restart --follow", Commands: []string{"plan restart"}, When: "a version that deviated from the plan"},
	{Label: "volume migrate", Commands: []string{"volume migrate"}, When: "conflicts or unreadable files it leaves to a person"},
	{Label: "groups prune --execute", Commands: []string{"groups prune"}, When: "a pruned offset a coordinator still serves from memory, or a\n                                 pruned group a broker still lists (the broker is named)"},
}

// ExitRefusers are the commands that exit 4.
var ExitRefusers = []string{"offsets reset", "offsets delete", "volume repair", "volume migrate", "groups prune", "sandbox", "watch", "exporter"}

// ExitCodesOf are the exit codes the command at path can end with.
func ExitCodesOf(path string) []int {
	codes := []int{exit.OK, exit.Error, exit.Usage}
	for _, p := range ExitProblems {
		if slices.Contains(p.Commands, path) {
			codes = append(codes, exit.Problems)
			break
		}
	}
	if slices.Contains(ExitRefusers, path) {
		codes = append(codes, exit.Refused)
	}
	return codes
}

// ExitCodesHelp is 'kaasctl help exit-codes'.
func ExitCodesHelp() string { return ExitCodesPage(ExitCodeDocs, ExitProblems) }
