package commands

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render"
)

// What groups describe prints (offline and live): the summary section, the
// group blocks and their cells; and the --topic flag and the note about
// groups --topic/--lagging-only left out.

// topicFlag is --topic: repeatable, comma lists allowed, duplicates and
// blanks dropped.
func topicFlag(c *cli.Context) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range completion.RepeatedValues(c, "topic") {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" && !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// noteLeftOut says how many groups --topic/--lagging-only left out.
func noteLeftOut(g *Globals, f inspect.DescribeFilter, n int) {
	if n == 0 {
		return
	}
	var why []string
	if len(f.Topics) > 0 {
		why = append(why, "no partition on "+strings.Join(f.Topics, ", "))
	}
	if f.LaggingOnly {
		why = append(why, "no lag")
	}
	g.Notef("%s left out (%s)", render.Plural(n, "group", "groups"), strings.Join(why, " or "))
}
