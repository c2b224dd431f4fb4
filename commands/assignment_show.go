package commands

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render"
)

const assignmentUsage = "inspect the controller's assignment.json: versions, brokers, load per broker, diffs"

func init() {
	registerSub("assignment", assignmentUsage, func() *cli.Command {
		return &cli.Command{
			Name:      "show",
			Usage:     "version, controller, brokers and health, partitions and groups per broker (bar chart)",
			UsageText: "kaasctl assignment show [--assignment FILE] [--data-dir DIR | --cluster-dir DIR] [-o table|wide|json|yaml|csv]\n\nExamples:\n   kaasctl assignment show --data-dir /data\n   kaasctl assignment show --assignment saved/assignment-e3-v41.json -o json",
			Description: "Groups per broker count every known group: explicit consumerGroups[] entries plus every\n" +
				"group with an offset file on the volume, each resolved through kaas's two-tier routing.\n" +
				"With --assignment FILE the file is shown; offset files still come from the volume when one is given.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "assignment", Aliases: []string{"f"}, Usage: "show this assignment file instead of the volume's CD/assignment.json"},
				&cli.StringSliceFlag{Name: "group", Aliases: []string{"g"}, Usage: "count this group too (repeatable), e.g. when no volume is given"},
			},
			Action: assignmentShow,
		}
	})
}

func assignmentShow(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.Args().Present() {
		return fmt.Errorf("assignment show takes no arguments (use --assignment FILE); got %q", c.Args().First())
	}
	path := c.String("assignment")
	if path == "" {
		l, err := g.Layout()
		if err != nil {
			return err
		}
		path = l.AssignmentPath()
	}
	a, fs, err := trReadAssignment(g, path)
	if err != nil {
		return err
	}
	s := inspect.SummarizeAssignment(path, a, fs, trOffsetGroups(g), c.StringSlice("group"), g.Now())

	t := render.NewTable("BROKER", "HEALTH", "PARTITIONS", "GROUPS", "EXPLICIT", "HASH", "FALLBACK+", "LAST SEEN+")
	for _, b := range s.Brokers {
		t.Add(b.ID, b.Health, strconv.Itoa(b.Partitions), strconv.Itoa(b.Groups), strconv.Itoa(b.ExplicitGroups),
			strconv.Itoa(b.HashGroups), strconv.Itoa(b.FallbackGroups), b.LastSeen)
	}
	return g.Printer.Print(render.Output{Data: s, Items: s.Brokers, Table: t, Human: func(p *render.Printer) error {
		return renderAssignmentShow(p, s, g.Now())
	}})
}

func renderAssignmentShow(p *render.Printer, s *inspect.AssignmentSummary, now time.Time) error {
	gen := s.GeneratedAt
	if t, err := time.Parse(time.RFC3339Nano, s.GeneratedAt); err == nil {
		gen = t.UTC().Format("2006-01-02 15:04:05Z") + " (" + render.Ago(now, t) + ")"
	}
	lines := []string{
		p.Paint(render.Bold, fmt.Sprintf("assignment v%d · controller epoch %d · controller %s", s.AssignmentVersion, s.ControllerEpoch, render.Dash(s.Controller))),
		"generated  " + render.Dash(gen),
		"file       " + s.Path,
		fmt.Sprintf("brokers    %d listed, %d alive (hash divisor %d)", trCountListed(s), s.AliveBrokers, trCountListed(s)),
		fmt.Sprintf("partitions %d in %s", s.Partitions, render.Plural(s.Topics, "topic", "topics")),
		fmt.Sprintf("groups     %d known: %s, %s on the volume%s%s", s.KnownGroups,
			render.Plural(s.ExplicitEntries, "explicit entry", "explicit entries"), render.Plural(s.OffsetFileGroups, "offset file", "offset files"),
			trExtraNote(s.ExtraGroups), trUncoordinated(s.UncoordinatedGroups)),
	}
	if len(s.EntriesByStatus) > 0 {
		var parts []string
		for _, k := range []inspect.EntryStatus{inspect.EntryAgrees, inspect.EntryDisagrees, inspect.EntryDeadBroker, inspect.EntryUnknownBroker, inspect.EntryDuplicate} {
			if n := s.EntriesByStatus[string(k)]; n > 0 {
				txt := fmt.Sprintf("%d %s", n, k)
				if k != inspect.EntryAgrees {
					txt = p.Paint(render.Yellow, txt)
				}
				parts = append(parts, txt)
			}
		}
		lines = append(lines, "entries    "+strings.Join(parts, ", ")+"  (details: kaasctl assignment diff)")
	}
	lines = append(lines, "")
	maxP, maxG, idW := 0, 0, len("BROKER")
	for _, b := range s.Brokers {
		maxP = max(maxP, b.Partitions)
		maxG = max(maxG, b.Groups)
		idW = max(idW, len(render.Shorten(b.ID, 40)))
	}
	const barW = 20
	pW := len(strconv.Itoa(maxP))
	gW := len(strconv.Itoa(maxG))
	head := render.Pad("BROKER", idW) + "  " + render.Pad("HEALTH", 9) + "  " + render.Pad("PARTITIONS", barW+pW+1) + "   GROUPS"
	rows := make([]string, 0, len(s.Brokers))
	width := utf8.RuneCountInString(head)
	for _, b := range s.Brokers {
		detail := fmt.Sprintf("(explicit %d, hash %d", b.ExplicitGroups, b.HashGroups)
		if b.FallbackGroups > 0 {
			detail += fmt.Sprintf(", %d via fallback", b.FallbackGroups)
		}
		detail += ")"
		row := render.Pad(render.Shorten(b.ID, 40), idW) + "  " + render.Pad(b.Health, 9) + "  " +
			render.Bar(b.Partitions, maxP, barW) + " " + fmt.Sprintf("%*d", pW, b.Partitions) + " · " +
			render.Bar(b.Groups, maxG, barW) + " " + fmt.Sprintf("%*d", gW, b.Groups) + " " + detail
		width = max(width, utf8.RuneCountInString(row))
		rows = append(rows, row)
	}
	if p.Wide() {
		head = render.Pad(head, width) + "  LAST SEEN"
	}
	lines = append(lines, p.Paint(render.Dim, head))
	for i, b := range s.Brokers {
		row := rows[i]
		if p.Wide() {
			row = render.Pad(row, width) + "  " + b.LastSeen
		}
		// Colour the health after padding, so escapes do not skew widths.
		hs := len(render.Pad(render.Shorten(b.ID, 40), idW)) + 2
		colour := render.Red
		if b.Health == "alive" {
			colour = render.Green
		}
		row = row[:hs] + p.Paint(colour, b.Health) + row[hs+len(b.Health):]
		lines = append(lines, row)
	}
	if len(s.Brokers) == 0 {
		lines = append(lines, p.Paint(render.Red, "(no brokers: every group and transactional id gets COORDINATOR_NOT_AVAILABLE)"))
	}
	return render.Lines(p.Out, lines...)
}

func trCountListed(s *inspect.AssignmentSummary) int {
	n := 0
	for _, b := range s.Brokers {
		if b.Health != "unlisted" {
			n++
		}
	}
	return n
}

func trExtraNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d named with --group", n)
}

func trUncoordinated(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d with no coordinator", n)
}
