package commands

import (
	"context"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:     "plan restart",
		Usage:    "the order to restart the brokers so that the fewest consumer groups move; --follow checks the real restart",
		Problems: &views.ExitProblem{Label: "plan restart --follow", When: "a version that deviated from the plan", Rank: 100},
		Docs: []FormatDoc{
			{Title: "plan restart", Doc: views.PlanRestartView{}, JSONL: "the whole document", Rank: 140},
			{Title: "plan restart --follow", Doc: views.FollowEvent{}, JSONL: "each event (kind following, version, waiting, settled, unsettled, done), as it happens", Rank: 150},
		},
		Tool: &MCPTool{Name: "plan_restart", Title: "Plan a rolling restart", Input: mcpserver.PlanRestartInput{},
			Description: "A rolling restart of the brokers in an order that moves the fewest groups, with each step's moves and waits."},
		Build: leaf(planRestartFlags, checkPlanRestart, runPlanRestart),
	})
}

// planRestartFlags are plan restart's flags, bound to o.
func planRestartFlags(o *planRestartOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "brokers-order", Usage: "score this order (comma separated or repeated; every broker once); with --follow, follow it instead of the plan"},
		&cli.StringFlag{Name: "failover", Usage: "controller failover model: drop (Go flavour) or reload (Rust); default from the volume's generation", Destination: &o.FailoverFlag},
		&cli.StringFlag{Name: "placement", Value: "rendezvous", Usage: "how the controller places entries: rendezvous (kaas today) or hash (kaas's design)", Destination: &o.Placement},
		&cli.BoolFlag{Name: "all-active", Usage: "offline: treat every known group as active with members (default: only groups with an explicit entry)", Destination: &o.AllActive},
		&cli.BoolFlag{Name: "steps-of-all", Usage: "print the steps of the naive and worst orders too (json always has them)", Destination: &o.StepsOfAll},
		&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "follow the real restart and check it against the plan (exit 3 on a deviation)", Destination: &o.Follow.On},
		&cli.BoolFlag{Name: "keep-going", Usage: "with --follow: on a deviation, re-plan from the real version and keep following", Destination: &o.Follow.KeepGoing},
		completion.DurationFlag(&o.Follow.Timeout, "follow-timeout", 0, "with --follow: give up after this long (0: until the restart completes or Ctrl-C)"),
		completion.DurationFlag(&o.Follow.PollInterval, "poll-interval", 0, "with --follow: how often assignment.json is polled besides fsnotify (default 1s)"),
		completion.DurationFlag(&o.Follow.SettleTimeout, "settle-timeout", 0, "with --follow -b: how long to wait for moved groups to be Stable before saying so (default 60s)"),
	}
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

// checkPlanRestart reads --brokers-order and checks --failover and
// --placement.
func checkPlanRestart(c *cli.Context, _ *Globals, o *planRestartOptions) error {
	if c.Args().Len() > 0 {
		return exit.UsageErrorf("plan restart takes no arguments (got %q); brokers come from assignment.json, an order from --brokers-order", c.Args().First())
	}
	o.Order, o.Placement = splitList(c.StringSlice("brokers-order")), strings.ToLower(o.Placement)
	if o.FailoverFlag != "" {
		var err error
		if o.Failover, err = inspect.ParseFailover(o.FailoverFlag); err != nil {
			return exit.UsageErrorf("%v", err)
		}
	}
	if o.Placement != "rendezvous" && o.Placement != "hash" {
		return exit.UsageErrorf("--placement must be rendezvous or hash, got %q", c.String("placement"))
	}
	return nil
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
	return g.Printer.Print(views.PlanRestartOutput(views.PlanRestartView{Sources: src, RestartPlan: plan}, o.StepsOfAll))
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
	if r.Live, err = observe.RestartListings(ctx, cl, g); err != nil {
		return r, l, err
	}
	r.LiveAsked = true
	return r, l, nil
}
