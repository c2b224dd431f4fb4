package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// DiffOutput is the comparison of two versions: a row per move, or the
// brokers, entries and moves for people.
func DiffOutput(d *inspect.AssignmentDiff) render.Output {
	t := render.NewTable("KIND", "KEY", "FROM", "TO", "CAUSE", "FROM TIER+", "TO TIER+", "DETAIL+")
	for _, m := range d.Moves {
		t.Add(string(m.Kind), m.Key, m.From, m.To, string(m.Cause), string(m.FromTier), string(m.ToTier), m.Detail)
	}
	return render.Output{Data: d, Items: d.Moves, Table: t, Human: func(p *render.Printer) error {
		return renderDiff(p, d)
	}}
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

type AssignmentAuditView struct {
	Assignment inspect.VersionRef   `json:"assignment"`
	Counts     map[string]int       `json:"counts"`
	Entries    []inspect.EntryAudit `json:"entries"`
}

// AuditOutput is the audit of the entries of the assignment a read from
// path: a row per entry.
func AuditOutput(path string, a *volume.Assignment, v AssignmentAuditView) render.Output {
	t := render.NewTable("GROUP", "BROKER", "STATUS", "HASH SAYS", "SLOT", "NOTE", "INDEX+", "HASH TIER+", "EPOCH+")
	for _, e := range v.Entries {
		t.Add(e.Group, e.Broker, string(e.Status), e.HashCoordinator, strconv.Itoa(e.Slot), e.Note,
			strconv.Itoa(e.Index), string(e.HashTier), strconv.FormatUint(uint64(e.Epoch), 10))
	}
	return render.Output{Data: v, Items: v.Entries, Table: t, Human: func(p *render.Printer) error {
		return renderAudit(p, path, a, v)
	}}
}

func renderAudit(p *render.Printer, path string, a *volume.Assignment, v AssignmentAuditView) error {
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

// AssignmentShowOutput is the summary and a chart line per broker (a
// table row per broker), ages as of now.
func AssignmentShowOutput(s *inspect.AssignmentSummary, now time.Time) render.Output {
	t := render.NewTable("BROKER", "HEALTH", "PARTITIONS", "GROUPS", "EXPLICIT", "HASH", "FALLBACK+", "LAST SEEN+")
	for _, b := range s.Brokers {
		t.Add(b.ID, b.Health, strconv.Itoa(b.Partitions), strconv.Itoa(b.Groups), strconv.Itoa(b.ExplicitGroups),
			strconv.Itoa(b.HashGroups), strconv.Itoa(b.FallbackGroups), b.LastSeen)
	}
	return render.Output{Data: s, Items: s.Brokers, Table: t, Human: func(p *render.Printer) error {
		lines := append(assignmentShowHead(p, s, now), "")
		return render.Lines(p.Out, append(lines, assignmentShowBrokers(p, s)...)...)
	}}
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
