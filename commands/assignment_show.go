package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:  "assignment show",
		Usage: "version, controller, brokers and health, partitions and groups per broker (bar chart)",
		Docs: []FormatDoc{
			{Title: "assignment show", Doc: inspect.AssignmentSummary{}, JSONL: "each broker (brokers[])", Rank: 70},
		},
		Build: leaf(assignmentShowFlags, checkAssignmentShow, runAssignmentShow),
	})
}

// assignmentShowFlags are assignment show's flags, bound to o.
func assignmentShowFlags(o *assignmentShowOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "assignment", Aliases: []string{"f"}, Usage: "show this assignment file instead of the volume's CD/assignment.json", Destination: &o.assignment},
		&cli.StringSliceFlag{Name: "group", Aliases: []string{"g"}, Usage: "count this group too (repeatable), e.g. when no volume is given"},
	}
}

// assignmentShowOptions is 'assignment show' after flag parsing.
type assignmentShowOptions struct {
	assignment string   // --assignment FILE ("": the volume's assignment.json)
	groups     []string // --group: count these groups too
}

// checkAssignmentShow refuses arguments and reads --group.
func checkAssignmentShow(c *cli.Context, _ *Globals, o *assignmentShowOptions) error {
	if c.Args().Present() {
		return fmt.Errorf("assignment show takes no arguments (use --assignment FILE); got %q", c.Args().First())
	}
	o.groups = c.StringSlice("group")
	return nil
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
	return g.Printer.Print(views.AssignmentShowOutput(s, g.Now()))
}
