package views

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render"
)

// PlanAssignmentView is plan assignment's -o json document.
type PlanAssignmentView = inspect.AssignPlan

// PlanAssignMember is one member now and after.
type PlanAssignMember = inspect.AssignPlanMember

// PlanAssignmentOutput is the plan: the table of members (-o json: the
// plan), with the sources, the moves and what a cooperative rebalance
// revokes first.
func PlanAssignmentOutput(v inspect.AssignPlan) render.Output {
	t := render.NewTable("MEMBER", "STATUS", "NOW", "AFTER", "GAINED", "LOST", "INSTANCE+", "CLIENT+", "SUBSCRIPTION+")
	for _, m := range v.Members {
		t.Add(m.MemberID, m.Status, partsText(m.Now), partsText(m.After), strconv.Itoa(m.Gained), strconv.Itoa(m.Lost), m.InstanceID, m.ClientID, strings.Join(m.Subscription, ","))
	}
	return render.Output{Data: v, Items: v.Members, Table: t, Human: func(p *render.Printer) error {
		return writePlanAssignment(p, v, t)
	}}
}

func writePlanAssignment(p *render.Printer, v inspect.AssignPlan, t *render.TableData) error {
	w := p.Out
	fmt.Fprintf(w, "%s  %s · assignor %s · %s\n", p.Paint(render.Bold, "plan assignment"), render.Shorten(v.Group, 80), v.Assignor, render.Plural(v.Rebalances, "rebalance", "rebalances"))
	fmt.Fprintf(w, "members        %s\n", v.Sources.Members)
	fmt.Fprintf(w, "subscriptions  %s\n", v.Sources.Subscriptions)
	fmt.Fprintf(w, "partitions     %s: %s\n", OrNone(v.Sources.Partitions), countsText(v.Partitions))
	fmt.Fprintf(w, "now            %s\n", v.Sources.Now)
	fmt.Fprintf(w, "assignor       %s\n", v.AssignorNote)
	for _, n := range v.Notes {
		fmt.Fprintf(w, "note           %s\n", n)
	}
	fmt.Fprintln(w)
	if err := p.Table(t); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s\n", p.Paint(render.Bold, render.Plural(len(v.Moves), "partition moves (its consumption pauses while it changes owner)", "partitions move (their consumption pauses while they change owner)")))
	for _, mv := range v.Moves {
		fmt.Fprintf(w, "  %s/%d  %s → %s\n", render.Shorten(mv.Topic, 80), mv.Partition, OrNone(mv.From), OrNone(mv.To))
	}
	if len(v.Revoked) > 0 {
		fmt.Fprintf(w, "\n%s\n", p.Paint(render.Bold, "revoked by the first (cooperative) rebalance, assigned by the second"))
		for _, mv := range v.Revoked {
			fmt.Fprintf(w, "  %s/%d  from %s\n", render.Shorten(mv.Topic, 80), mv.Partition, OrNone(mv.From))
		}
	}
	return nil
}

func partsText(m map[string][]int32) string {
	if len(m) == 0 {
		return "(none)"
	}
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(m)) {
		ps := make([]string, len(m[t]))
		for i, p := range m[t] {
			ps[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, t+": "+strings.Join(ps, ","))
	}
	return strings.Join(parts, "; ")
}

func countsText(m map[string]int32) string {
	if len(m) == 0 {
		return "(none)"
	}
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", t, m[t]))
	}
	return strings.Join(parts, ", ")
}

// FollowEvent is one line of plan restart --follow (-o jsonl: one object
// per line).
type FollowEvent = inspect.FollowEvent

// FollowedMove is a group's coordinator change as written, beside the
// prediction.
type FollowedMove = inspect.FollowedMove

// WriteFollowEvent prints one event of plan restart --follow: a JSON line
// (jsonl), or its line, deviations, moves and notes.
func WriteFollowEvent(p *render.Printer, e FollowEvent, jsonl bool) {
	w := p.Out
	if jsonl {
		jw := p.JSONLines(e)
		_ = jw.Write(e)
		_ = jw.Flush()
		return
	}
	line := render.Clean(e.Message)
	switch {
	case len(e.Deviations) > 0:
		line = p.Paint(render.Red, "DEVIATION ") + line
	case e.Kind == "version" && e.AsPlanned:
		line = p.Paint(render.Green, "as planned ") + line
	case e.Kind == "settled":
		line = p.Paint(render.Green, "safe to go on ") + line
	}
	fmt.Fprintln(w, line)
	for _, d := range e.Deviations {
		fmt.Fprintln(w, "    deviation: "+render.Clean(d))
	}
	for _, m := range e.Moves {
		mark := "as predicted"
		if !m.AsPlanned {
			mark = "predicted " + OrNone(m.Predicted)
		}
		fmt.Fprintf(w, "    %s  %s → %s  (%s)\n", render.Shorten(m.Group, 80), render.Clean(OrNone(m.From)), render.Clean(OrNone(m.To)), render.Clean(mark))
	}
	for _, n := range e.Notes {
		fmt.Fprintln(w, "    note: "+render.Clean(n))
	}
}

// PlanRestartView is plan restart's -o json document.
type PlanRestartView struct {
	Sources inspect.RestartSources `json:"sources"`
	*inspect.RestartPlan
}

// PlanRestartOutput is the plan: the orders compared, then the steps of
// the planned one (of every order with all).
func PlanRestartOutput(view PlanRestartView, all bool) render.Output {
	t := render.NewTable("ORDER", "BROKERS", "MOVES", "GROUPS MOVED", "MOVED TWICE", "MAX WITHOUT COORDINATOR", "FAILOVERS", "IDLE MOVES")
	for _, row := range restartRows(view.RestartPlan) {
		s := row.o.Score
		t.Add(row.name, strings.Join(row.o.Order, ","), fmt.Sprint(s.Moves), fmt.Sprint(s.GroupsMoved), fmt.Sprint(s.MovedTwice),
			fmt.Sprint(s.MaxWithoutCoordinator), fmt.Sprint(s.Failovers), fmt.Sprint(s.IdleMoves))
	}
	return render.Output{Data: view, Table: t, Human: func(p *render.Printer) error {
		return renderRestartPlan(p, view, t, all)
	}}
}

type restartRow struct {
	name string
	o    *inspect.RestartOrder
}

func restartRows(p *inspect.RestartPlan) []restartRow {
	rows := []restartRow{{"plan", &p.Plan}, {"naive", &p.Naive}, {"worst", &p.Worst}}
	if p.Given != nil {
		rows = append(rows, restartRow{"given", p.Given})
	}
	return rows
}

// cleanJoin joins broker ids (anybody can write assignment.json) each on
// one line: a newline in an id is shown escaped, never as a line break.
func cleanJoin(ids []string, sep string) string { return strings.Join(render.CleanAll(ids), sep) }

func renderRestartPlan(p *render.Printer, v PlanRestartView, t *render.TableData, all bool) error {
	w := p.Out
	pl := v.RestartPlan
	fmt.Fprintf(w, "%s  %d brokers (%s), controller %s, assignment v%d (epoch %d)\n", p.Paint(render.Bold, "plan restart"),
		len(pl.Brokers), cleanJoin(pl.Brokers, ", "), render.Clean(OrNone(pl.Controller)), pl.Version, pl.Epoch)
	fmt.Fprintf(w, "from        %s\n", render.Clean(v.Sources.Assignment))
	fmt.Fprintf(w, "groups      %d known: %d with members, %d loaded but Empty, %d idle — %s\n", pl.Groups.Known, pl.Groups.WithMembers, pl.Groups.LoadedEmpty, pl.Groups.Idle, v.Sources.Activity)
	fmt.Fprintf(w, "model       placement %s; %s\n", pl.Placement, render.Clean(v.Sources.Generation))
	for _, n := range v.Sources.Notes {
		fmt.Fprintf(w, "            %s\n", render.Clean(n))
	}
	fmt.Fprintf(w, "search      %s: %s\n", pl.Search.Method, pl.Search.Detail)
	fmt.Fprintf(w, "objective   %s\n\n", pl.Search.Objective)
	if err := p.Table(t); err != nil {
		return err
	}
	rows := restartRows(pl)
	if !all {
		rows = rows[:1]
		if pl.Given != nil {
			rows = append(rows, restartRow{"given", pl.Given})
		}
	}
	for _, r := range rows {
		fmt.Fprintf(w, "\n%s\n", p.Paint(render.Bold, fmt.Sprintf("STEPS (%s order: %s)", r.name, cleanJoin(r.o.Order, " → "))))
		for _, s := range r.o.Steps {
			renderRestartStep(p, w, s)
		}
	}
	return nil
}

func renderRestartStep(p *render.Printer, w io.Writer, s inspect.RestartStep) {
	broker := render.Clean(s.Broker)
	fmt.Fprintf(w, "\n%s  (%s)\n", p.Paint(render.Bold, fmt.Sprintf("step %d: restart %s", s.N, broker)),
		render.Plural(s.Score.Moves, "move of a group with members", "moves of groups with members")+
			fmt.Sprintf(", %d without a coordinator at the stop", s.Score.WithoutCoordinator))
	for _, v := range []inspect.RestartVersion{s.Stop, s.Start} {
		head := fmt.Sprintf("  %-5s %s", v.Event, broker)
		if !v.Written {
			fmt.Fprintf(w, "%s → no version: no broker alive, no controller\n", head)
		} else {
			fo := ""
			if v.Failover {
				fo = p.Paint(render.Yellow, "  controller failover")
			}
			fmt.Fprintf(w, "%s → v%d (epoch %d, controller %s), brokers %s, %s%s\n", head, v.Version, v.ControllerEpoch, render.Clean(OrNone(v.Controller)),
				cleanJoin(v.Brokers, ","), render.Plural(v.Entries, "explicit entry", "explicit entries"), fo)
		}
		if len(v.WithoutCoordinator) > 0 {
			fmt.Fprintf(w, "        no coordinator until v%d: %s\n", v.Version, strings.Join(trSafeAll(v.WithoutCoordinator), ", "))
		}
		if len(v.Moves) == 0 {
			fmt.Fprintf(w, "        no group moves\n")
		}
		for _, m := range v.Moves {
			var tags []string
			if m.Back {
				tags = append(tags, "back")
			}
			if m.NotCoordinator {
				tags = append(tags, "NOT_COORDINATOR")
			}
			if !m.Members {
				tags = append(tags, "no members")
			}
			tag := ""
			if len(tags) > 0 {
				tag = " [" + strings.Join(tags, ", ") + "]"
			}
			fmt.Fprintf(w, "        %s  %s → %s  %s%s\n", render.Shorten(m.Group, 80), render.Clean(OrNone(m.From)), render.Clean(OrNone(m.To)), render.Clean(m.Cause), tag)
		}
	}
	for _, x := range s.WaitFor {
		fmt.Fprintf(w, "  wait for %s\n", render.Clean(x))
	}
}

func trSafeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = render.Shorten(s, 80)
	}
	return out
}
