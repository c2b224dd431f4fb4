package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// GroupsExplainView is the machine document of 'groups explain'.
type GroupsExplainView struct {
	// Source is "observed" or the exporter's URL (conditions and forecasts).
	Source   string `json:"source"`
	Window   string `json:"window"`
	Interval string `json:"interval"`
	// Generation is the kaas generation assumed (nil without a volume).
	Generation *volume.GenerationInfo `json:"generation"`
	Groups     []inspect.Verdict      `json:"groups"`
	// Severities counts the verdicts by severity (every group observed,
	// also those --problems leaves out).
	Severities map[string]int `json:"severities"`
	// Moves says where the coordinator moves come from.
	Moves ExplainMovesSource `json:"moves"`
}

// ExplainMovesSource is where a verdict's moves come from.
type ExplainMovesSource struct {
	// Journal is the --journal DIR read ("" none); Versions the assignment
	// versions followed (the journal's and those seen while observing).
	Journal  string    `json:"journal"`
	Versions int       `json:"versions"`
	Since    time.Time `json:"since"`
}

// ExplainOutput is the verdicts: a few lines per group for people (every
// finding with -o wide), a row per group in csv.
func ExplainOutput(v GroupsExplainView) render.Output {
	t := render.NewTable("GROUP", "SEVERITY", "SUMMARY", "LAG", "LAG-SECONDS", "DRAIN", "RETENTION", "COORDINATOR", "ANSWERED", "MOVES", "NEXT")
	for _, vd := range v.Groups {
		lag, secs := "-", "-"
		if vd.Lag.Known {
			lag = strconv.FormatInt(vd.Lag.Messages, 10)
		}
		if vd.Lag.SecondsKnown {
			secs = strconv.FormatFloat(vd.Lag.Seconds, 'f', 0, 64)
		}
		next := ""
		if vd.Next != nil {
			next = vd.Next.Command
		}
		t.Add(vd.Group, vd.Severity, vd.Summary, lag, secs, vd.Drain.Text(), vd.Retention.Text(), vd.Coordinator.Computed, vd.Coordinator.Answered,
			strconv.Itoa(len(vd.Moves)), next)
	}
	return render.Output{Data: v, Items: v.Groups, Table: t, Human: func(p *render.Printer) error { return explainHuman(p, v) }}
}

// severityPaint colours a severity for people.
var severityPaint = map[string]string{inspect.VerdictPage: render.Red, inspect.VerdictWarning: render.Yellow, inspect.VerdictOK: render.Green}

func explainHuman(p *render.Printer, v GroupsExplainView) error {
	if len(v.Groups) == 0 {
		fmt.Fprintf(p.Out, "no groups to explain\n")
	}
	for i, vd := range v.Groups {
		if i > 0 {
			fmt.Fprintf(p.Out, "\n")
		}
		explainVerdictLines(p, vd)
	}
	var counts []string
	for _, s := range inspect.VerdictSeverities {
		counts = append(counts, fmt.Sprintf("%d %s", v.Severities[s], s))
	}
	gen := ""
	if v.Generation != nil {
		gen = "; " + v.Generation.Short()
	}
	fmt.Fprintf(p.Out, "\n%s (%s, window %s)%s\n", strings.Join(counts, ", "), v.Source, v.Window, gen)
	return nil
}

// explainVerdictLines is one group's few lines.
func explainVerdictLines(p *render.Printer, vd inspect.Verdict) {
	fmt.Fprintf(p.Out, "%s  %s  %s\n", render.Shorten(vd.Group, 80), p.Paint(severityPaint[vd.Severity], strings.ToUpper(vd.Severity)), vd.Summary)
	fmt.Fprintf(p.Out, "    lag %s; drain %s; retention %s\n", verdictLagText(vd.Lag), vd.Drain.Text(), vd.Retention.Text())
	fmt.Fprintf(p.Out, "    coordinator %s\n", verdictCoordinatorText(vd.Coordinator))
	if b := vd.Blocker; b != nil {
		fmt.Fprintf(p.Out, "    blocked %s at offset %d by %s%s\n", b.Partition, b.Offset, b.Kind, map[bool]string{true: fmt.Sprintf(" (%d partitions blocked)", vd.BlockedPartitions), false: ""}[vd.BlockedPartitions > 1])
		if b.Fix != "" {
			fmt.Fprintf(p.Out, "    fix: %s\n", b.Fix)
		}
	}
	if n := len(vd.Moves); n > 0 {
		m := vd.Moves[n-1]
		fmt.Fprintf(p.Out, "    moved %s: %s → %s (%s, assignment v%d)%s\n", OrNone(render.Timestamp(m.Time)), OrNone(m.From), OrNone(m.To), m.Cause, m.AssignmentVersion,
			map[bool]string{true: fmt.Sprintf(", %d moves in all", n), false: ""}[n > 1])
	}
	for j, f := range vd.Findings {
		if j == 0 && !p.Wide() {
			continue
		}
		on := ""
		if f.Partition != "" {
			on = " on " + f.Partition
		}
		if !p.Wide() {
			fmt.Fprintf(p.Out, "    also %s%s (%s)\n", f.Code, on, f.Severity)
			continue
		}
		fmt.Fprintf(p.Out, "    %-7s %s%s: %s\n", f.Severity, f.Code, on, f.Detail)
		if f.Command != "" {
			fmt.Fprintf(p.Out, "            $ %s\n", f.Command)
		}
	}
	if vd.Next != nil {
		fmt.Fprintf(p.Out, "    next: %s\n", vd.Next.Command)
	}
}

func verdictLagText(l inspect.VerdictLag) string {
	s := totalLagText(l.Known, l.Messages, l.UnknownPartitions)
	if l.SecondsKnown {
		s += " (" + inspect.FormatSeconds(l.Seconds) + ")"
	}
	return s
}

func verdictCoordinatorText(c inspect.VerdictCoordinator) string {
	s := OrNone(c.Computed)
	if c.Tier != "" {
		s += " (" + c.Tier + ")"
	}
	switch {
	case c.AnswerError != "":
		s += "; brokers: " + c.AnswerError
	case c.Answered != "":
		s += "; brokers answer " + c.Answered
	}
	if c.State != "" {
		s += "; " + c.State + ", " + render.Plural(c.Members, "member", "members")
	}
	return s
}
