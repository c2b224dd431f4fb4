package views

import (
	"fmt"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// FindingWarnings is the warning- and error-level findings of a read, one
// line per kind: the first finding of a code, and how many more there are
// and where to see them all (givenFlags: the volume flags the printed
// volume check repeats).
func FindingWarnings(fs []volume.Finding, givenFlags string) []string {
	more := map[string]int{}
	var order []int
	for i, f := range fs {
		if f.Severity == volume.SevInfo {
			continue
		}
		n, seen := more[f.Code]
		if !seen {
			order = append(order, i)
			more[f.Code] = f.Repeats
			continue
		}
		more[f.Code] = n + 1 + f.Repeats
	}
	var out []string
	for _, i := range order {
		f := fs[i]
		if n := more[f.Code]; n > 0 {
			out = append(out, fmt.Sprintf("%s: %s (and %s like it: %s lists every one)", f.Path, f.Message, render.Plural(n, "more", "more"),
				inspect.FixWithFlags("'kaasctl volume check'", givenFlags)))
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s", f.Path, f.Message))
	}
	return out
}
