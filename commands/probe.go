package commands

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/helptext"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

func init() {
	register(Descriptor{
		Path:  "probe",
		Usage: "canary on every coordinator: FindCoordinator, OffsetCommit and OffsetFetch per broker, timed, naming the step that fails",
		Docs: []FormatDoc{
			{Title: "probe", Doc: ProbeView{}, JSONL: "each broker (brokers[])", Rank: 60},
		},
		HelpVars: helptext.Vars{"canaryPrefix": inspect.CanaryPrefix, "probeMetadata": inspect.ProbeMetadata},
		Build: func() *cli.Command {
			return &cli.Command{
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "count", Value: 1, Usage: "probe `N` times"},
					durationFlag("interval", time.Second, "between probes (with --count)"),
					&cli.StringFlag{Name: "topic", Usage: "commit the canary offsets on partition 0 of `TOPIC` (default: the first topic listed)"},
				},
				Action: action(parseProbe, runProbe),
			}
		},
	})
}

// ProbeView is the machine document of 'kaasctl probe'.
type ProbeView struct {
	Topic   string             `json:"topic"`
	Rounds  int                `json:"rounds"`
	Brokers []ProbeBrokerStats `json:"brokers"`
	// Probes are every round's report.
	Probes []*exporter.ProbeReport `json:"probes"`
}

// ProbeBrokerStats is one broker over every round.
type ProbeBrokerStats struct {
	Broker string `json:"broker"`
	Node   int32  `json:"node"`
	Addr   string `json:"addr,omitempty"`
	// Sources says where kaasctl knows the broker from: brokers[],
	// metadata, --brokers.
	Sources []string `json:"sources"`
	Canary  string   `json:"canary"`
	Tier    string   `json:"tier,omitempty"`
	// OK: every round passed.
	OK       bool `json:"ok"`
	Rounds   int  `json:"rounds"`
	Failures int  `json:"failures"`
	// FailedStep and Error are the last failure's.
	FailedStep string          `json:"failedStep,omitempty"`
	Error      string          `json:"error,omitempty"`
	Steps      []ProbeStepStat `json:"steps"`
}

// ProbeStepStat is one step's round trips over the rounds (seconds).
type ProbeStepStat struct {
	Step     string  `json:"step"`
	Count    int     `json:"count"`
	Failures int     `json:"failures"`
	P50      float64 `json:"p50"`
	P99      float64 `json:"p99"`
	Max      float64 `json:"max"`
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

func parseProbe(c *cli.Context) (probeOptions, error) {
	o := probeOptions{count: c.Int("count"), interval: flagDuration(c, "interval"), topic: c.String("topic")}
	if o.count < 1 || o.interval < 0 {
		return o, exit.UsageErrorf("--count must be at least 1 and --interval not negative")
	}
	return o, nil
}

// probeNeeds: the canary ids come from the volume's routing, the probe
// itself from the brokers.
func probeNeeds() sourceNeeds {
	return sourceNeeds{
		volume:  "probe needs the volume (--data-dir or --cluster-dir): the canary ids are picked from assignment.json's routing",
		brokers: "probe needs brokers: pass --brokers (or set KAASCTL_BROKERS or a profile)",
		// The seeds that do not answer the connection check are the
		// probe's findings, not asked twice.
		mode: connectReport,
	}
}

func runProbe(ctx context.Context, g *Globals, o probeOptions) error {
	src, err := openSources(ctx, g, probeNeeds())
	if err != nil {
		return err
	}
	defer src.Close()
	if src.connErr != nil {
		return src.connErr
	}
	o.unreached = map[string]string{}
	for _, b := range src.badSeeds {
		o.unreached[b.Broker] = b.Error()
	}
	a, fs, err := volume.ReadAssignment(src.layout.AssignmentPath())
	g.WarnFindings(fs)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	o.owned = canaryOwner(*src.layout)
	v, err := probeRounds(ctx, src.client, a, o)
	if err != nil {
		return err
	}
	if err := g.Printer.Print(probeOutput(v)); err != nil {
		return err
	}
	noteSkippedCanaries(g, v.Probes)
	var failed []string
	for _, b := range v.Brokers {
		if !b.OK {
			failed = append(failed, render.Clean(b.Broker)+" ("+b.FailedStep+")")
		}
	}
	if len(failed) > 0 {
		what := render.Plural(len(failed), "broker", "brokers")
		g.Warnf("%s failed the probe: %s", what, strings.Join(failed, ", "))
		return exit.ProblemsFound("%s failed the probe", what)
	}
	return nil
}

// probeRounds probes o.count times, o.interval apart, and folds the
// rounds into one line per broker.
func probeRounds(ctx context.Context, cl *wire.Client, a *volume.Assignment, o probeOptions) (ProbeView, error) {
	v := ProbeView{Rounds: o.count, Probes: []*exporter.ProbeReport{}}
	tick := time.NewTicker(max(o.interval, time.Millisecond))
	defer tick.Stop()
	for i := range o.count {
		if i > 0 {
			select {
			case <-ctx.Done():
				return v, ctx.Err()
			case <-tick.C:
			}
		}
		in := exporter.ProbeInput{Assignment: a, Client: cl, Topic: o.topic, Owned: o.owned}
		if i == 0 {
			in.Unreached = o.unreached
		}
		rep, err := exporter.Probe(ctx, in)
		if err != nil {
			return v, err
		}
		v.Topic = rep.Topic
		v.Probes = append(v.Probes, rep)
	}
	v.Brokers = probeStats(v.Probes)
	return v, nil
}

// probeOutput is the probe's output: a line per broker.
func probeOutput(v ProbeView) render.Output {
	t := render.NewTable("BROKER", "NODE", "CANARY", "RESULT", "FAILED STEP", "FIND", "COMMIT", "FETCH", "ERROR", "TIER+")
	for _, b := range v.Brokers {
		res := "OK"
		if !b.OK {
			res = "FAILED"
		}
		if v.Rounds > 1 {
			res += fmt.Sprintf(" %d/%d", b.Rounds-b.Failures, b.Rounds)
		}
		cells := map[string]string{}
		for _, s := range b.Steps {
			cells[s.Step] = probeLatency(s, v.Rounds)
		}
		cell := func(step string) string {
			if v, ok := cells[step]; ok {
				return v
			}
			return "-"
		}
		t.Add(b.Broker, strconv.Itoa(int(b.Node)), render.Dash(b.Canary), res, render.Dash(b.FailedStep),
			cell(wire.StepFindCoordinator), cell(wire.StepOffsetCommit), cell(wire.StepOffsetFetch), render.Dash(b.Error), render.Dash(b.Tier))
	}
	return render.Output{Data: v, Items: v.Brokers, Table: t, Human: func(p *render.Printer) error {
		fmt.Fprintf(p.Out, "canary offsets on %s/0; %s\n", v.Topic, render.Plural(v.Rounds, "probe", "probes"))
		return p.Table(t)
	}}
}

// probeLatency is a step's cell: its round trip (one probe), or
// p50/p99/max over many ("!" marks a step that failed in some round).
func probeLatency(s ProbeStepStat, count int) string {
	ms := func(sec float64) string { return strconv.FormatFloat(sec*1000, 'f', 1, 64) + "ms" }
	out := ms(s.Max)
	if count > 1 {
		out = ms(s.P50) + "/" + ms(s.P99) + "/" + ms(s.Max)
	}
	if s.Failures > 0 {
		out += " !" + strconv.Itoa(s.Failures)
	}
	return out
}

// probeStats folds the rounds into one line per broker.
func probeStats(reps []*exporter.ProbeReport) []ProbeBrokerStats {
	var out []ProbeBrokerStats
	idx := map[string]int{}
	times := map[string]map[string][]float64{}
	for _, rep := range reps {
		for _, b := range rep.Brokers {
			i, ok := idx[b.Broker]
			if !ok {
				i = len(out)
				idx[b.Broker] = i
				out = append(out, ProbeBrokerStats{Broker: b.Broker, Node: b.Node, Addr: b.Addr, Sources: b.Sources, Canary: b.Canary, Tier: b.Tier, OK: true, Steps: []ProbeStepStat{}})
				times[b.Broker] = map[string][]float64{}
			}
			s := &out[i]
			s.Rounds++
			if !b.OK {
				s.OK = false
				s.Failures++
				s.FailedStep, s.Error = b.FailedStep, b.Err
			}
			for _, st := range b.Steps {
				times[b.Broker][st.Step] = append(times[b.Broker][st.Step], st.Seconds)
				j := slices.IndexFunc(s.Steps, func(x ProbeStepStat) bool { return x.Step == st.Step })
				if j < 0 {
					s.Steps = append(s.Steps, ProbeStepStat{Step: st.Step})
					j = len(s.Steps) - 1
				}
				s.Steps[j].Count++
				if !st.OK {
					s.Steps[j].Failures++
				}
			}
		}
	}
	for i := range out {
		for j := range out[i].Steps {
			st := &out[i].Steps[j]
			ts := times[out[i].Broker][st.Step]
			slices.Sort(ts)
			st.P50, st.P99, st.Max = quantile(ts, .5), quantile(ts, .99), ts[len(ts)-1]
		}
	}
	return out
}

// quantile of sorted values (nearest rank).
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*q+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// canaryOwner says, from the group's offset file on the volume of l,
// whether the probe may write a canary id: only a group it created
// (inspect.CanaryFileOwned). A file that cannot be read is left alone.
// On a volume whose live offsets dir cannot be told yet (no group has a
// file: a new cluster), the file is looked for in both generations' dirs.
func canaryOwner(l volume.Layout) func(group string) (bool, string) {
	return func(group string) (bool, string) {
		gf, err := repair.ReadGroupFile(l, group)
		if err == nil {
			return inspect.CanaryFileOwned(gf.File)
		}
		if _, lerr := l.WithGeneration().LiveOffsetsDir(); lerr == nil {
			return false, "its offset file cannot be read (" + err.Error() + "): left alone"
		}
		for _, gen := range []volume.Generation{volume.GenGo, volume.Gen018} {
			gf, err := repair.ReadGroupFile(l.PinnedTo(gen, "the probe's check of its canary"), group)
			switch {
			case err != nil:
				return false, "its offset file cannot be read (" + err.Error() + "): left alone"
			case gf.File != nil:
				return inspect.CanaryFileOwned(gf.File)
			}
		}
		return true, ""
	}
}

// noteSkippedCanaries says which canary ids the probe left alone (groups
// of that name kaasctl did not create), once each.
func noteSkippedCanaries(g *Globals, reps []*exporter.ProbeReport) {
	seen := map[string]bool{}
	for _, rep := range reps {
		for _, b := range rep.Brokers {
			for _, s := range b.Skipped {
				if !seen[s] {
					seen[s] = true
					g.Notef("%s", render.Clean(s))
				}
			}
		}
	}
}
