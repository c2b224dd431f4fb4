package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:     "assignment diff",
		Usage:    "audit explicit entries against the hash tier (one file), or compare two versions (two files)",
		Problems: &views.ExitProblem{Label: "assignment diff", When: "--exit-code: differences, or entries against the hash tier", Rank: 40},
		Docs: []FormatDoc{
			{Title: "assignment diff OLD NEW", Doc: inspect.AssignmentDiff{}, JSONL: "each move (moves[])", Rank: 80},
			{Title: "assignment diff [FILE]", Doc: views.AssignmentAuditView{}, JSONL: "each entry (entries[])", Rank: 90},
		},
		Args:  "[OLD] [NEW]",
		Build: leaf(assignmentDiffFlags, checkAssignmentDiff, runAssignmentDiff),
	})
}

// assignmentDiffFlags are assignment diff's flags, bound to o.
func assignmentDiffFlags(o *assignmentDiffOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "group", Aliases: []string{"g"}, Usage: "also check this group (repeatable)"},
		&cli.StringSliceFlag{Name: "txn", Usage: "also check this transactional id (hash tier only; repeatable)"},
		&cli.BoolFlag{Name: "exit-code", Usage: "exit 3 when differences are found", Destination: &o.exitCode},
	}
}

// assignmentDiffOptions is 'assignment diff' after flag parsing.
type assignmentDiffOptions struct {
	files    []string // none (the volume's), one (audit) or two (OLD NEW)
	groups   []string // --group: also check these groups
	txns     []string // --txn: also check these transactional ids
	exitCode bool     // --exit-code: exit 3 when differences are found
}

// checkAssignmentDiff reads the files (at most two) and the keys.
func checkAssignmentDiff(c *cli.Context, _ *Globals, o *assignmentDiffOptions) error {
	o.files, o.groups, o.txns = c.Args().Slice(), c.StringSlice("group"), c.StringSlice("txn")
	if len(o.files) > 2 {
		return exit.UsageErrorf("assignment diff takes at most two files (OLD NEW); got %d. kaas keeps only the current assignment.json: 'kaasctl watch --journal DIR' keeps every version (see 'kaasctl assignment diff --help')", len(o.files))
	}
	return nil
}

// runAssignmentDiff audits one file (none: the volume's) or compares two.
func runAssignmentDiff(_ context.Context, g *Globals, o assignmentDiffOptions) error {
	switch len(o.files) {
	case 2:
		return diffAssignments(g, o)
	case 1:
		return auditAssignment(g, o, o.files[0])
	}
	l, err := g.Layout()
	if err != nil {
		return err
	}
	return auditAssignment(g, o, l.AssignmentPath())
}

func diffAssignments(g *Globals, o assignmentDiffOptions) error {
	rs, err := volume.ReadAssignments(o.files[0], o.files[1])
	if err != nil {
		return err
	}
	for _, r := range rs {
		g.WarnFindings(r.Findings)
	}
	old, cur := rs[0].Assignment, rs[1].Assignment
	if inspect.NewerThan(old, cur) {
		g.Warnf("OLD (epoch %d, v%d) is newer than NEW (epoch %d, v%d); comparing in the order given",
			old.ControllerEpoch, old.AssignmentVersion, cur.ControllerEpoch, cur.AssignmentVersion)
	}
	groups := append(offsetFileGroups(g), o.groups...)
	d := inspect.DiffAssignments(o.files[0], old, o.files[1], cur, groups, o.txns)
	if err := g.Printer.Print(views.DiffOutput(d)); err != nil {
		return err
	}
	if o.exitCode && d.HasDifferences() {
		return exit.ProblemsFound("differences found")
	}
	return nil
}

// auditAssignment checks every explicit entry of one file against the
// hash tier.
func auditAssignment(g *Globals, o assignmentDiffOptions, path string) error {
	a, _, err := readAssignment(g, path)
	if err != nil {
		return err
	}
	v := views.AssignmentAuditView{Assignment: inspect.VersionRefOf(path, a), Entries: inspect.AuditEntries(a)}
	var problems int
	v.Counts, problems = inspect.AuditCounts(v.Entries)
	if err := g.Printer.Print(views.AuditOutput(path, a, v)); err != nil {
		return err
	}
	if o.exitCode && problems > 0 {
		return exit.ProblemsFound("%d entries do not agree with the hash tier", problems)
	}
	return nil
}
