package views

import (
	"cmp"
	"slices"
	"strings"

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

// ExitCodesHelp is 'kaasctl help exit-codes': the codes, and when the
// commands exit 3 (each a row of its descriptor, merged by ExitProblemRows).
func ExitCodesHelp(problems []ExitProblem) string {
	return ExitCodesPage(ExitCodeDocs, ExitProblemRows(problems))
}

// ExitProblemRows are the page's rows of the commands' ExitProblems: in
// Rank order, the rows of one Label as one, their When joined by " / "
// (each said once).
func ExitProblemRows(ps []ExitProblem) []ExitProblem {
	ps = slices.Clone(ps)
	slices.SortStableFunc(ps, func(a, b ExitProblem) int { return cmp.Compare(a.Rank, b.Rank) })
	var out []ExitProblem
	for _, p := range ps {
		n := len(out)
		switch {
		case n == 0 || out[n-1].Label != p.Label:
			out = append(out, p)
		case !slices.Contains(strings.Split(out[n-1].When, " / "), p.When):
			out[n-1].When += " / " + p.When
		}
	}
	return out
}
