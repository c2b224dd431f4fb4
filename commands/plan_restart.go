package commands

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

const planUsage = "plan before you touch: a rolling restart with the fewest group moves, a consumer group's partitions before and after scaling"

// planRestartHelp is plan restart's description.
const planRestartHelp = "Each broker restart is two assignment versions: the controller writes one listing the brokers\n" +
	"still alive when the broker leaves, and one listing it again when it rejoins. For each version\n" +
	"the plan computes what kaas's controller writes (SPEC §1 routing; explicit entries only for\n" +
	"active groups, kept while their broker is alive, otherwise placed by rendezvous; the hash\n" +
	"divisor is the alive count) and so which groups move, where and back, which see NOT_COORDINATOR\n" +
	"(the old coordinator is running) and which have no coordinator (theirs stopped) until the\n" +
	"version is applied.\n\n" +
	"Controller failover (restarting the controller) per generation: the Go flavour's new controller\n" +
	"drops every explicit entry (all groups fall back to the hash tier, then are placed afresh); the\n" +
	"Rust controller reloads them. The generation comes from the volume (--kaas-version pins it;\n" +
	"--failover overrides the model). The next controller is assumed to be the lowest alive broker\n" +
	"id (the sandbox's rule; on Kubernetes the lease goes to whichever broker asks first).\n\n" +
	"Which groups are active: with -b, the groups each coordinator lists (ListGroups on every broker;\n" +
	"an Empty group is loaded but has no members, and stops being active once it moves); offline,\n" +
	"the groups holding an explicit entry (active at the last version) are assumed to have members\n" +
	"and other offset-file groups to be idle (--all-active: every known group has members).\n\n" +
	"Orders are compared by: coordinator moves of groups with members (each a rebalance), then\n" +
	"groups moved twice, then the most groups without a coordinator at once, then failovers. Every\n" +
	"order is evaluated up to 8 brokers (40,320 orders); beyond, a greedy order improved by pairwise\n" +
	"swaps within a bound of work (a few seconds at 127 brokers, the most plan restart takes): the\n" +
	"search line says what was searched and whether the bound stopped it; a terminal shows its\n" +
	"progress. The plan assumes the operator waits, before each next step, for\n" +
	"the predicted version and for the moved groups to be Stable again (printed per step).\n\n" +
	"--follow: follows assignment.json (as watch does) during the real restart in the planned order\n" +
	"(or --brokers-order), says per version whether it is what the plan predicted, and when it is\n" +
	"safe to go on (with -b: the moved groups Stable on their predicted coordinator). A deviation (a\n" +
	"broker restarted out of order, a group elsewhere than predicted, an unexpected controller)\n" +
	"exits 3 (--keep-going: report it, re-plan from the real version and follow to the end).\n\n" +
	"Examples:\n" +
	"  kaasctl plan restart --data-dir /data -b kaas-0:9092                 the plan, live group activity\n" +
	"  kaasctl plan restart --data-dir /data --brokers-order kaas-2,kaas-0,kaas-1   score your order\n" +
	"  kaasctl plan restart --data-dir /data --failover drop -o json        a Go-flavour cluster, as JSON\n" +
	"  kaasctl plan restart --data-dir /data -b kaas-0:9092 --follow        during the restart: as planned?"

func init() {
	describeParent("plan", "Plans predict what kaas and the clients will do, from the same rules they run:\n\n"+
		"  plan restart             the broker restart order that moves the fewest consumer groups, step by\n"+
		"                           step, compared with the listed and the worst order; --follow checks a\n"+
		"                           real restart against it\n"+
		"  plan assignment GROUP    the partitions each member owns now and after --members/--add/--remove,\n"+
		"                           computed by franz-go's own balancers (or minikafka's round-robin)")
	registerSub("plan", planUsage, newPlanRestartCmd)
}

// newPlanRestartCmd builds 'plan restart'.
func newPlanRestartCmd() *cli.Command {
	return &cli.Command{
		Name:  "restart",
		Usage: "the order to restart the brokers so that the fewest consumer groups move; --follow checks the real restart",
		UsageText: "kaasctl plan restart [--data-dir DIR] [-b BROKERS] [--brokers-order B1,B2,...] [--failover reload|drop] [-o json]\n" +
			"kaasctl plan restart --follow [--brokers-order ...] [-b BROKERS] [--keep-going]",
		Description: planRestartHelp,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "brokers-order", Usage: "score this order (comma separated or repeated; every broker once); with --follow, follow it instead of the plan"},
			&cli.StringFlag{Name: "failover", Usage: "controller failover model: drop (Go flavour) or reload (Rust); default from the volume's generation"},
			&cli.StringFlag{Name: "placement", Value: "rendezvous", Usage: "how the controller places entries: rendezvous (kaas today) or hash (kaas's design)"},
			&cli.BoolFlag{Name: "all-active", Usage: "offline: treat every known group as active with members (default: only groups with an explicit entry)"},
			&cli.BoolFlag{Name: "steps-of-all", Usage: "print the steps of the naive and worst orders too (json always has them)"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "follow the real restart and check it against the plan (exit 3 on a deviation)"},
			&cli.BoolFlag{Name: "keep-going", Usage: "with --follow: on a deviation, re-plan from the real version and keep following"},
			durationFlag("follow-timeout", 0, "with --follow: give up after this long (0: until the restart completes or Ctrl-C)"),
			durationFlag("poll-interval", 0, "with --follow: how often assignment.json is polled besides fsnotify (default 1s)"),
			durationFlag("settle-timeout", 0, "with --follow -b: how long to wait for moved groups to be Stable before saying so (default 60s)"),
		},
		Action: action(parsePlanRestart, runPlanRestart),
	}
}

// PlanRestartView is plan restart's -o json document.
type PlanRestartView struct {
	Sources inspect.RestartSources `json:"sources"`
	*inspect.RestartPlan
}

// planRestartOptions is 'plan restart' after flag parsing.
type planRestartOptions struct {
	Order        []string              // --brokers-order
	FailoverFlag string                // --failover as given ("": from the volume's generation)
	Failover     inspect.FailoverModel // the model --failover names
	Placement    string                // rendezvous or hash
	AllActive    bool
	StepsOfAll   bool
	Follow       followOptions
}

// followOptions is plan restart --follow's flags.
type followOptions struct {
	On            bool          // --follow
	KeepGoing     bool          // --keep-going
	Timeout       time.Duration // --follow-timeout (0: none)
	PollInterval  time.Duration // --poll-interval (0: the watch's default)
	SettleTimeout time.Duration // --settle-timeout (0: 60s)
}

// parsePlanRestart reads and checks plan restart's flags.
func parsePlanRestart(c *cli.Context) (planRestartOptions, error) {
	if c.Args().Len() > 0 {
		return planRestartOptions{}, exit.UsageErrorf("plan restart takes no arguments (got %q); brokers come from assignment.json, an order from --brokers-order", c.Args().First())
	}
	o := planRestartOptions{Order: splitList(c.StringSlice("brokers-order")), FailoverFlag: c.String("failover"),
		Placement: strings.ToLower(c.String("placement")), AllActive: c.Bool("all-active"), StepsOfAll: c.Bool("steps-of-all"),
		Follow: followOptions{On: c.Bool("follow"), KeepGoing: c.Bool("keep-going"), Timeout: flagDuration(c, "follow-timeout"),
			PollInterval: flagDuration(c, "poll-interval"), SettleTimeout: flagDuration(c, "settle-timeout")}}
	if o.FailoverFlag != "" {
		var err error
		if o.Failover, err = inspect.ParseFailover(o.FailoverFlag); err != nil {
			return o, exit.UsageErrorf("%v", err)
		}
	}
	if o.Placement != "rendezvous" && o.Placement != "hash" {
		return o, exit.UsageErrorf("--placement must be rendezvous or hash, got %q", c.String("placement"))
	}
	return o, nil
}

// runPlanRestart reads the cluster, plans the restart and prints the plan,
// or follows the real restart against it.
func runPlanRestart(ctx context.Context, g *Globals, o planRestartOptions) error {
	if o.Follow.On && (g.Printer.Format == render.YAML || g.Printer.Format == render.CSV) {
		return exit.UsageErrorf("plan restart --follow prints a stream: -o table or -o jsonl")
	}
	r, l, err := readRestart(ctx, g, o)
	if err != nil {
		return err
	}
	in, src := inspect.BuildRestartInput(r)
	done := searchProgress(g, &in)
	plan, err := inspect.PlanRestart(in, o.Order)
	done()
	if err != nil {
		if len(o.Order) > 0 {
			return exit.UsageErrorf("%v", err)
		}
		return err
	}
	plan.FailoverWhy = src.FailoverWhy
	if o.Follow.On {
		return followRestart(ctx, g, o.Follow, in, plan, r.Assignment, l)
	}
	view := PlanRestartView{Sources: src, RestartPlan: plan}
	t := render.NewTable("ORDER", "BROKERS", "MOVES", "GROUPS MOVED", "MOVED TWICE", "MAX WITHOUT COORDINATOR", "FAILOVERS", "IDLE MOVES")
	for _, row := range restartRows(plan) {
		s := row.o.Score
		t.Add(row.name, strings.Join(row.o.Order, ","), fmt.Sprint(s.Moves), fmt.Sprint(s.GroupsMoved), fmt.Sprint(s.MovedTwice),
			fmt.Sprint(s.MaxWithoutCoordinator), fmt.Sprint(s.Failovers), fmt.Sprint(s.IdleMoves))
	}
	return g.Printer.Print(render.Output{Data: view, Table: t, Human: func(p *render.Printer) error {
		return renderRestartPlan(p, view, t, o.StepsOfAll)
	}})
}

// searchProgress shows the heuristic search's progress on a terminal
// (orders evaluated, against what its bound allows); the func it returns
// erases it.
func searchProgress(g *Globals, in *inspect.RestartInput) (done func()) {
	const label = "plan restart: orders searched"
	if g.Progress(label, 0) == nil {
		return func() {} // not a terminal, or -q
	}
	var p *render.Progress
	var shown int64
	in.Progress = func(n, total int64) {
		if p == nil {
			p = g.Progress(label, total)
		}
		p.Add(n - shown)
		shown = n
	}
	return func() { p.Done() }
}

// readRestart reads what the plan starts from: assignment.json, the
// groups with an offset file and, with brokers, every broker's ListGroups
// answer through wire's one group gathering (a broker that fails is
// warned about, and counted by the plan).
func readRestart(ctx context.Context, g *Globals, o planRestartOptions) (inspect.RestartReading, volume.Layout, error) {
	r := inspect.RestartReading{AllActive: o.AllActive, FailoverFlag: o.FailoverFlag, Failover: o.Failover, Placement: o.Placement}
	l, err := g.Layout()
	if err != nil {
		return r, l, err
	}
	a, fs, err := volume.ReadAssignment(l.AssignmentPath())
	if err != nil {
		return r, l, err
	}
	g.WarnFindings(fs)
	r.Assignment, r.AssignmentPath, r.Gen, r.Generation = a, l.AssignmentPath(), l.Gen.Gen, l.Gen.Summary()
	r.OffsetGroups = offsetFileGroups(g)
	if !g.HasBrokers() {
		return r, l, nil
	}
	cl, err := g.Client(ctx)
	if err != nil {
		return r, l, err
	}
	defer cl.Close()
	cctx, cancel := cl.WithTimeout(ctx)
	defer cancel()
	gathered, err := cl.GatherGroups(cctx, wire.GroupRounds{})
	if err != nil {
		return r, l, err
	}
	r.Live, r.LiveAsked = gathered.Listings, true
	for _, ans := range r.Live {
		if ans.Err != "" {
			g.Warnf("%s", ans.Err)
		}
	}
	return r, l, nil
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
		len(pl.Brokers), cleanJoin(pl.Brokers, ", "), render.Clean(orNone(pl.Controller)), pl.Version, pl.Epoch)
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
			fmt.Fprintf(w, "%s → v%d (epoch %d, controller %s), brokers %s, %s%s\n", head, v.Version, v.ControllerEpoch, render.Clean(orNone(v.Controller)),
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
			fmt.Fprintf(w, "        %s  %s → %s  %s%s\n", render.Shorten(m.Group, 80), render.Clean(orNone(m.From)), render.Clean(orNone(m.To)), render.Clean(m.Cause), tag)
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
