package commands

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render"
)

func init() {
	register(Descriptor{
		Path:  "assignment show",
		Usage: "version, controller, brokers and health, partitions and groups per broker (bar chart)",
		Docs: []FormatDoc{
			{Title: "assignment show", Doc: inspect.AssignmentSummary{}, JSONL: "each broker (brokers[])", Rank: 70},
		},
		Build: func() *cli.Command {
			return &cli.Command{
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "assignment", Aliases: []string{"f"}, Usage: "show this assignment file instead of the volume's CD/assignment.json"},
					&cli.StringSliceFlag{Name: "group", Aliases: []string{"g"}, Usage: "count this group too (repeatable), e.g. when no volume is given"},
				},
				Action: action(parseAssignmentShow, runAssignmentShow),
			}
		},
	})
}

// assignmentShowOptions is 'assignment show' after flag parsing.
type assignmentShowOptions struct {
	assignment string   // --assignment FILE ("": the volume's assignment.json)
	groups     []string // --group: count these groups too
}

func parseAssignmentShow(c *cli.Context) (assignmentShowOptions, error) {
	if c.Args().Present() {
		return assignmentShowOptions{}, fmt.Errorf("assignment show takes no arguments (use --assignment FILE); got %q", c.Args().First())
	}
	return assignmentShowOptions{assignment: c.String("assignment"), groups: c.StringSlice("group")}, nil
}

func runAssignmentShow(_ context.Context, g *Globals, o assignmentShowOptions) error {
	path := o.assignment
	if path == "" {
		l, err := g.Layout()
		if err != nil {
			return err
		}
		path = l.AssignmentPath()
	}
	a, fs, err := readAssignment(g, path)
	if err != nil {
		return err
	}
	s := inspect.SummarizeAssignment(path, a, fs, offsetFileGroups(g), o.groups, g.Now())
	t := render.NewTable("BROKER", "HEALTH", "PARTITIONS", "GROUPS", "EXPLICIT", "HASH", "FALLBACK+", "LAST SEEN+")
	for _, b := range s.Brokers {
		t.Add(b.ID, b.Health, strconv.Itoa(b.Partitions), strconv.Itoa(b.Groups), strconv.Itoa(b.ExplicitGroups),
			strconv.Itoa(b.HashGroups), strconv.Itoa(b.FallbackGroups), b.LastSeen)
	}
	now := g.Now()
	return g.Printer.Print(render.Output{Data: s, Items: s.Brokers, Table: t, Human: func(p *render.Printer) error {
		lines := append(assignmentShowHead(p, s, now), "")
		return render.Lines(p.Out, append(lines, assignmentShowBrokers(p, s)...)...)
	}})
}

// assignmentShowHead is the summary above the chart.
func assignmentShowHead(p *render.Printer, s *inspect.AssignmentSummary, now time.Time) []string {
	gen := s.GeneratedAt
	if t, err := time.Parse(time.RFC3339Nano, s.GeneratedAt); err == nil {
		gen = t.UTC().Format("2006-01-02 15:04:05Z") + " (" + render.Ago(now, t) + ")"
	}
	groups := fmt.Sprintf("groups     %d known: %s, %s on the volume", s.KnownGroups,
		render.Plural(s.ExplicitEntries, "explicit entry", "explicit entries"), render.Plural(s.OffsetFileGroups, "offset file", "offset files"))
	if s.ExtraGroups > 0 {
		groups += fmt.Sprintf(", %d named with --group", s.ExtraGroups)
	}
	if s.UncoordinatedGroups > 0 {
		groups += fmt.Sprintf("; %d with no coordinator", s.UncoordinatedGroups)
	}
	lines := []string{
		p.Paint(render.Bold, fmt.Sprintf("assignment v%d · controller epoch %d · controller %s", s.AssignmentVersion, s.ControllerEpoch, render.Dash(s.Controller))),
		"generated  " + render.Dash(gen),
		"file       " + s.Path,
		fmt.Sprintf("brokers    %d listed, %d alive (hash divisor %d)", s.ListedBrokers(), s.AliveBrokers, s.ListedBrokers()),
		fmt.Sprintf("partitions %d in %s", s.Partitions, render.Plural(s.Topics, "topic", "topics")),
		groups,
	}
	if len(s.EntriesByStatus) == 0 {
		return lines
	}
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
	return append(lines, "entries    "+strings.Join(parts, ", ")+"  (details: kaasctl assignment diff)")
}

// assignmentShowBrokers is the chart: one line per broker with bars for
// its partitions and groups.
func assignmentShowBrokers(p *render.Printer, s *inspect.AssignmentSummary) []string {
	maxP, maxG, idW := 0, 0, len("BROKER")
	for _, b := range s.Brokers {
		maxP, maxG = max(maxP, b.Partitions), max(maxG, b.Groups)
		idW = max(idW, len(render.Shorten(b.ID, 40)))
	}
	const barW = 20
	pW, gW := len(strconv.Itoa(maxP)), len(strconv.Itoa(maxG))
	head := render.Pad("BROKER", idW) + "  " + render.Pad("HEALTH", 9) + "  " + render.Pad("PARTITIONS", barW+pW+1) + "   GROUPS"
	rows := make([]string, 0, len(s.Brokers))
	width := utf8.RuneCountInString(head)
	for _, b := range s.Brokers {
		detail := fmt.Sprintf("(explicit %d, hash %d", b.ExplicitGroups, b.HashGroups)
		if b.FallbackGroups > 0 {
			detail += fmt.Sprintf(", %d via fallback", b.FallbackGroups)
		}
		row := render.Pad(render.Shorten(b.ID, 40), idW) + "  " + render.Pad(b.Health, 9) + "  " +
			render.Bar(b.Partitions, maxP, barW) + " " + fmt.Sprintf("%*d", pW, b.Partitions) + " · " +
			render.Bar(b.Groups, maxG, barW) + " " + fmt.Sprintf("%*d", gW, b.Groups) + " " + detail + ")"
		width = max(width, utf8.RuneCountInString(row))
		rows = append(rows, row)
	}
	if p.Wide() {
		head = render.Pad(head, width) + "  LAST SEEN"
	}
	lines := []string{p.Paint(render.Dim, head)}
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
		lines = append(lines, row[:hs]+p.Paint(colour, b.Health)+row[hs+len(b.Health):])
	}
	if len(s.Brokers) == 0 {
		lines = append(lines, p.Paint(render.Red, "(no brokers: every group and transactional id gets COORDINATOR_NOT_AVAILABLE)"))
	}
	return lines
}
