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
	return g.Printer.Print(views.AssignmentShowOutput(s, g.Now()))
}
