package commands

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render"
)

// The summary section of groups describe (offline and live), the --topic
// flag, and the note about groups --topic/--lagging-only left out.

// summaryRow is one group of the summary section.
type summaryRow struct {
	group string
	s     inspect.GroupSummary
}

// summaryTable is one line per group: state, members, coordinator, total
// lag, partitions, topics.
func summaryTable(f render.Format, rows []summaryRow) *render.TableData {
	t := render.NewTable("GROUP", "STATE", "MEMBERS", "COORDINATOR", "TOTAL-LAG", "PARTITIONS", "TOPICS")
	for _, r := range rows {
		members := "-"
		if r.s.Members != nil {
			members = strconv.Itoa(*r.s.Members)
		}
		t.Add(cellName(f, r.group), stateCell(r.s.State), members, render.Dash(r.s.Coordinator),
			totalLagText(r.s.LagKnown, r.s.TotalLag, r.s.LagUnknown), strconv.Itoa(r.s.Partitions), render.Dash(strings.Join(r.s.Topics, ",")))
	}
	return t
}

// writeSummary prints the summary section (and a blank line before the
// group blocks unless it is all that is printed).
func writeSummary(p *render.Printer, rows []summaryRow, only bool) error {
	if len(rows) == 0 {
		if only {
			fmtf(p.Out, "no group matches\n")
		}
		return nil
	}
	if err := p.Table(summaryTable(p.Format, rows)); err != nil {
		return err
	}
	if !only {
		fmtf(p.Out, "\n")
	}
	return nil
}

// stateCell is a group's live state in a table, the same in groups list and
// groups describe: "-" when there is none (offline, or a group its
// coordinator does not hold: issue fileOnly).
func stateCell(state string) string {
	if state == "" {
		return "-"
	}
	return state
}

// topicFlag is --topic: repeatable, comma lists allowed, duplicates and
// blanks dropped.
func topicFlag(c *cli.Context) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range repeated(c, "topic") {
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
