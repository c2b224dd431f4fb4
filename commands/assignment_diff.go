package commands

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

func init() {
	register(Descriptor{
		Path:  "assignment diff",
		Usage: "audit explicit entries against the hash tier (one file), or compare two versions (two files)",
		Docs: []FormatDoc{
			{Title: "assignment diff OLD NEW", Doc: inspect.AssignmentDiff{}, JSONL: "each move (moves[])", Rank: 80},
			{Title: "assignment diff [FILE]", Doc: assignmentAuditView{}, JSONL: "each entry (entries[])", Rank: 90},
		},
		Build: func() *cli.Command {
			return &cli.Command{
				ArgsUsage: "[OLD] [NEW]",
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "group", Aliases: []string{"g"}, Usage: "also check this group (repeatable)"},
					&cli.StringSliceFlag{Name: "txn", Usage: "also check this transactional id (hash tier only; repeatable)"},
					&cli.BoolFlag{Name: "exit-code", Usage: "exit 3 when differences are found"},
				},
				Action: action(parseAssignmentDiff, runAssignmentDiff),
			}
		},
	})
}

// assignmentDiffOptions is 'assignment diff' after flag parsing.
type assignmentDiffOptions struct {
	files    []string // none (the volume's), one (audit) or two (OLD NEW)
	groups   []string // --group: also check these groups
	txns     []string // --txn: also check these transactional ids
	exitCode bool     // --exit-code: exit 3 when differences are found
}

func parseAssignmentDiff(c *cli.Context) (assignmentDiffOptions, error) {
	o := assignmentDiffOptions{files: c.Args().Slice(), groups: c.StringSlice("group"), txns: c.StringSlice("txn"), exitCode: c.Bool("exit-code")}
	if len(o.files) > 2 {
		return o, exit.UsageErrorf("assignment diff takes at most two files (OLD NEW); got %d. kaas keeps only the current assignment.json: 'kaasctl watch --journal DIR' keeps every version (see 'kaasctl assignment diff --help')", len(o.files))
	}
	return o, nil
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
	t := render.NewTable("KIND", "KEY", "FROM", "TO", "CAUSE", "FROM TIER+", "TO TIER+", "DETAIL+")
	for _, m := range d.Moves {
		t.Add(string(m.Kind), m.Key, m.From, m.To, string(m.Cause), string(m.FromTier), string(m.ToTier), m.Detail)
	}
	if err := g.Printer.Print(render.Output{Data: d, Items: d.Moves, Table: t, Human: func(p *render.Printer) error {
		return renderDiff(p, d)
	}}); err != nil {
		return err
	}
	if o.exitCode && d.HasDifferences() {
		return exit.ProblemsFound("differences found")
	}
	return nil
}

func renderDiff(p *render.Printer, d *inspect.AssignmentDiff) error {
	lines := diffHead(p, d)
	lines = append(lines, "", p.Paint(render.Bold, "BROKERS"))
	lines = append(lines, diffBrokers(p, d)...)
	lines = append(lines, "", p.Paint(render.Bold, "EXPLICIT ENTRIES"))
	lines = append(lines, diffEntries(d)...)
	head := fmt.Sprintf("COORDINATOR MOVES  %d of %d groups", inspect.CountMoves(d.Moves, inspect.KindGroup), d.GroupsChecked)
	if d.TxnsChecked > 0 {
		head += fmt.Sprintf(", %d of %d transactional ids", inspect.CountMoves(d.Moves, inspect.KindTxn), d.TxnsChecked)
	}
	lines = append(lines, "", p.Paint(render.Bold, head))
	if err := render.Lines(p.Out, lines...); err != nil {
		return err
	}
	if len(d.Moves) == 0 {
		return render.Lines(p.Out, "  none")
	}
	t := render.NewTable("KIND", "KEY", "FROM", "TO", "CAUSE", "DETAIL")
	for _, m := range d.Moves {
		t.Add(string(m.Kind), render.Shorten(m.Key, 60), m.From, m.To, string(m.Cause), m.Detail)
	}
	if err := p.Table(t); err != nil {
		return err
	}
	var parts []string
	for _, cc := range d.MovesByCause {
		parts = append(parts, cc.Cause.String()+" "+strconv.Itoa(cc.Count))
	}
	return render.Lines(p.Out, "by cause: "+strings.Join(parts, ", "))
}

// diffHead names the two versions and what changed about the controller
// and the hash divisor.
func diffHead(p *render.Printer, d *inspect.AssignmentDiff) []string {
	ref := func(r inspect.VersionRef) string {
		return fmt.Sprintf("epoch %d v%d (controller %s, %s)", r.ControllerEpoch, r.AssignmentVersion, render.Dash(r.Controller), render.Dash(r.GeneratedAt))
	}
	lines := []string{"old  " + ref(d.Old) + "  " + d.Old.Path, "new  " + ref(d.New) + "  " + d.New.Path}
	if d.Failover {
		lines = append(lines, p.Paint(render.Yellow, fmt.Sprintf("controller failover: epoch %d → %d, %s → %s",
			d.Old.ControllerEpoch, d.New.ControllerEpoch, render.Dash(d.Old.Controller), render.Dash(d.New.Controller))))
	} else if d.ControllerChanged {
		lines = append(lines, fmt.Sprintf("controller changed %s → %s without an epoch change", render.Dash(d.Old.Controller), render.Dash(d.New.Controller)))
	}
	if d.OldDivisor != d.NewDivisor {
		lines = append(lines, fmt.Sprintf("hash divisor %d → %d: hash-tier groups may move", d.OldDivisor, d.NewDivisor))
	}
	return lines
}

func diffBrokers(p *render.Printer, d *inspect.AssignmentDiff) []string {
	if len(d.Brokers) == 0 {
		return []string{"  no change"}
	}
	var lines []string
	for _, b := range d.Brokers {
		switch b.Change {
		case "joined":
			lines = append(lines, p.Paint(render.Green, "  + "+render.Shorten(b.ID, 80))+"  joined ("+b.NewHealth+")")
		case "left":
			lines = append(lines, p.Paint(render.Red, "  - "+render.Shorten(b.ID, 80))+"  left (was "+b.OldHealth+")")
		default:
			lines = append(lines, p.Paint(render.Yellow, "  ~ "+render.Shorten(b.ID, 80))+"  health "+b.OldHealth+" → "+b.NewHealth)
		}
	}
	return lines
}

func diffEntries(d *inspect.AssignmentDiff) []string {
	if len(d.Entries) == 0 {
		return []string{"  no change"}
	}
	var lines []string
	for _, e := range d.Entries {
		switch e.Change {
		case "added":
			lines = append(lines, "  + "+render.Shorten(e.Group, 80)+" → "+e.NewBroker)
		case "removed":
			lines = append(lines, "  - "+render.Shorten(e.Group, 80)+" (was "+e.OldBroker+")")
		default:
			lines = append(lines, "  ~ "+render.Shorten(e.Group, 80)+" "+e.OldBroker+" → "+e.NewBroker)
		}
	}
	return lines
}

type assignmentAuditView struct {
	Assignment inspect.VersionRef   `json:"assignment"`
	Counts     map[string]int       `json:"counts"`
	Entries    []inspect.EntryAudit `json:"entries"`
}

// auditAssignment checks every explicit entry of one file against the
// hash tier.
func auditAssignment(g *Globals, o assignmentDiffOptions, path string) error {
	a, _, err := readAssignment(g, path)
	if err != nil {
		return err
	}
	v := assignmentAuditView{Assignment: inspect.VersionRefOf(path, a), Entries: inspect.AuditEntries(a)}
	var problems int
	v.Counts, problems = inspect.AuditCounts(v.Entries)
	t := render.NewTable("GROUP", "BROKER", "STATUS", "HASH SAYS", "SLOT", "NOTE", "INDEX+", "HASH TIER+", "EPOCH+")
	for _, e := range v.Entries {
		t.Add(e.Group, e.Broker, string(e.Status), e.HashCoordinator, strconv.Itoa(e.Slot), e.Note,
			strconv.Itoa(e.Index), string(e.HashTier), strconv.FormatUint(uint64(e.Epoch), 10))
	}
	err = g.Printer.Print(render.Output{Data: v, Items: v.Entries, Table: t, Human: func(p *render.Printer) error {
		return renderAudit(p, path, a, v)
	}})
	if err != nil {
		return err
	}
	if o.exitCode && problems > 0 {
		return exit.ProblemsFound("%d entries do not agree with the hash tier", problems)
	}
	return nil
}

func renderAudit(p *render.Printer, path string, a *volume.Assignment, v assignmentAuditView) error {
	head := fmt.Sprintf("assignment epoch %d v%d (controller %s) · %s: %s",
		a.ControllerEpoch, a.AssignmentVersion, render.Dash(a.Controller), path,
		render.Plural(len(v.Entries), "explicit entry", "explicit entries"))
	var parts []string
	for _, k := range []inspect.EntryStatus{inspect.EntryAgrees, inspect.EntryDisagrees, inspect.EntryDeadBroker, inspect.EntryUnknownBroker, inspect.EntryDuplicate} {
		if n := v.Counts[string(k)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(parts) > 0 {
		head += " — " + strings.Join(parts, ", ")
	}
	if err := render.Lines(p.Out, head); err != nil {
		return err
	}
	if len(v.Entries) == 0 {
		return render.Lines(p.Out, "no explicit consumerGroups[] entries: every group routes through the hash tier")
	}
	tt := render.NewTable("GROUP", "BROKER", "STATUS", "HASH SAYS", "SLOT", "NOTE", "INDEX+", "HASH TIER+", "EPOCH+")
	for _, e := range v.Entries {
		st := string(e.Status)
		if e.Status != inspect.EntryAgrees {
			st = p.Paint(render.Yellow, st)
		}
		tt.Add(render.Shorten(e.Group, 60), e.Broker, st, e.HashCoordinator, strconv.Itoa(e.Slot), e.Note,
			strconv.Itoa(e.Index), string(e.HashTier), strconv.FormatUint(uint64(e.Epoch), 10))
	}
	return p.Table(tt)
}
