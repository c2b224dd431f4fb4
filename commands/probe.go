package commands

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/helptext"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:     "probe",
		Usage:    "canary on every coordinator: FindCoordinator, OffsetCommit and OffsetFetch per broker, timed, naming the step that fails",
		Problems: &views.ExitProblem{Label: "probe", When: "a broker that failed the probe (the step is named)", Rank: 90},
		Docs: []FormatDoc{
			{Title: "probe", Doc: views.ProbeView{}, JSONL: "each broker (brokers[])", Rank: 60},
		},
		HelpVars: helptext.Vars{"canaryPrefix": inspect.CanaryPrefix, "probeMetadata": inspect.ProbeMetadata},
		Build:    leaf(probeFlags, checkProbe, runProbe),
	})
}

// probeFlags are probe's flags, bound to o.
func probeFlags(o *probeOptions) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "count", Value: 1, Usage: "probe `N` times", Destination: &o.count},
		completion.DurationFlag(&o.interval, "interval", time.Second, "between probes (with --count)"),
		&cli.StringFlag{Name: "topic", Usage: "commit the canary offsets on partition 0 of `TOPIC` (default: the first topic listed)", Destination: &o.topic},
	}
}

// probeOptions is 'probe' after flag parsing.
type probeOptions struct {
	// count probes, interval apart.
	count    int
	interval time.Duration
	// topic takes the canary commits on partition 0 ("": the first listed).
	topic string
	// owned says whether a canary id may be written (runProbe sets it
	// from the volume: canaryOwner).
	owned func(group string) (bool, string)
	// unreached are the --brokers addresses that did not answer the
	// connection check (address → why): the first round takes that as
	// their probe instead of waiting for them a second time.
	unreached map[string]string
}

// checkProbe refuses a count below 1 and a negative interval.
func checkProbe(_ *cli.Context, _ *Globals, o *probeOptions) error {
	if o.count < 1 || o.interval < 0 {
		return exit.UsageErrorf("--count must be at least 1 and --interval not negative")
	}
	return nil
}

// probeNeeds: the canary ids come from the volume's routing, the probe
// itself from the brokers.
func probeNeeds() observe.Needs {
	return observe.Needs{
		Volume:  "probe needs the volume (--data-dir or --cluster-dir): the canary ids are picked from assignment.json's routing",
		Brokers: "probe needs brokers: pass --brokers (or set KAASCTL_BROKERS or a profile)",
		// The seeds that do not answer the connection check are the
		// probe's findings, not asked twice.
		Connect: observe.ConnectReport,
	}
}

func runProbe(ctx context.Context, g *Globals, o probeOptions) error {
	src, err := observe.OpenInputs(ctx, g, probeNeeds())
	if err != nil {
		return err
	}
	defer src.Close()
	if src.ConnErr != nil {
		return src.ConnErr
	}
	o.unreached = map[string]string{}
	for _, b := range src.BadSeeds {
		o.unreached[b.Broker] = b.Error()
	}
	a, fs, err := volume.ReadAssignment(src.Layout.AssignmentPath())
	g.WarnFindings(fs)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	o.owned = repair.CanaryOwner(*src.Layout)
	in := exporter.ProbeInput{Assignment: a, Client: src.Client, Topic: o.topic, Owned: o.owned, Unreached: o.unreached}
	reps, err := exporter.ProbeRounds(ctx, in, o.count, o.interval)
	if err != nil {
		return err
	}
	v := views.ProbeViewOf(reps, o.count)
	if err := g.Printer.Print(views.ProbeOutput(v)); err != nil {
		return err
	}
	for _, s := range exporter.SkippedCanaries(v.Probes) {
		g.Notef("%s", render.Clean(s))
	}
	if failed := views.ProbeFailed(v); len(failed) > 0 {
		what := render.Plural(len(failed), "broker", "brokers")
		g.Warnf("%s failed the probe: %s", what, strings.Join(failed, ", "))
		return exit.ProblemsFound("%s failed the probe", what)
	}
	return nil
}
