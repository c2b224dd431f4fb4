package commands

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

func init() {
	register(func() *cli.Command {
		return &cli.Command{
			Name:  "probe",
			Usage: "canary on every coordinator: FindCoordinator, OffsetCommit and OffsetFetch per broker, timed, naming the step that fails",
			Description: "For every broker in assignment.json, kaasctl picks a canary group id that kaas routes to that broker\n" +
				"(both tiers: an explicit consumerGroups[] entry wins), " + inspect.CanaryPrefix + "<broker>-<n>, and takes it\n" +
				"through the round trips a consumer makes, all to that broker:\n\n" +
				"  FindCoordinator  the broker must name itself as the canary's coordinator\n" +
				"  OffsetCommit     an admin commit (generation -1, no member) of the probe's time in ms on partition 0\n" +
				"                   of --topic (default: the first topic the brokers list)\n" +
				"  OffsetFetch      must give that offset back\n\n" +
				"It finds a broker that accepts connections and answers metadata and ListGroups but cannot\n" +
				"coordinate (a wedged offsets store, a read-only volume), which no lag metric shows until its groups\n" +
				"fall behind. A broker that is not alive in assignment.json gets no canary (kaas routes nothing to it)\n" +
				"and fails at step 'route'. The canary groups' offset files are the only thing the probe writes;\n" +
				"every listing, group metric, health evaluation and alert leaves them out. 'kaasctl exporter --probe'\n" +
				"runs the same probe at every refresh (kaas_probe_* metrics).\n\n" +
				"--count N probes N times, --interval apart: per broker the successes and, per step, the median,\n" +
				"99th percentile and largest round trip. Exit code 3 when a broker failed a probe.\n\n" +
				"Examples:\n" +
				"  kaasctl probe --data-dir /data -b kaas-0:9092\n" +
				"  kaasctl probe --data-dir /data -b kaas-0:9092 --count 20 --interval 500ms -o json",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "count", Value: 1, Usage: "probe `N` times"},
				&cli.DurationFlag{Name: "interval", Value: time.Second, Usage: "between probes (with --count)"},
				&cli.StringFlag{Name: "topic", Usage: "commit the canary offsets on partition 0 of `TOPIC` (default: the first topic listed)"},
			},
			Action: runProbe,
		}
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
	Canary string `json:"canary"`
	Tier   string `json:"tier,omitempty"`
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

func runProbe(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	count, interval := c.Int("count"), c.Duration("interval")
	if count < 1 || interval < 0 {
		return exit.UsageErrorf("--count must be at least 1 and --interval not negative")
	}
	if !g.HasVolume() {
		return exit.UsageErrorf("probe needs the volume (--data-dir or --cluster-dir): the canary ids are picked from assignment.json's routing")
	}
	if !wantsBrokers(g) {
		return exit.UsageErrorf("probe needs brokers: pass --brokers (or set KAASCTL_BROKERS or a profile)")
	}
	l, err := g.Layout()
	if err != nil {
		return err
	}
	a, fs, err := volume.ReadAssignment(l.AssignmentPath())
	g.WarnFindings(fs)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	cl, err := liveClient(c.Context, g)
	if err != nil {
		return err
	}
	defer cl.Close()
	v := ProbeView{Rounds: count, Probes: []*exporter.ProbeReport{}}
	tick := time.NewTicker(max(interval, time.Millisecond))
	defer tick.Stop()
	for i := range count {
		if i > 0 {
			select {
			case <-c.Context.Done():
				return c.Context.Err()
			case <-tick.C:
			}
		}
		rep, err := exporter.Probe(c.Context, a, cl, c.String("topic"))
		if err != nil {
			return err
		}
		v.Topic = rep.Topic
		v.Probes = append(v.Probes, rep)
	}
	v.Brokers = probeStats(v.Probes)
	failed := 0
	t := render.NewTable("BROKER", "NODE", "CANARY", "RESULT", "FAILED STEP", "FIND", "COMMIT", "FETCH", "ERROR", "TIER+")
	for _, b := range v.Brokers {
		res := "OK"
		if !b.OK {
			failed++
			res = "FAILED"
		}
		if count > 1 {
			res += fmt.Sprintf(" %d/%d", b.Rounds-b.Failures, b.Rounds)
		}
		cells := map[string]string{}
		for _, s := range b.Steps {
			cells[s.Step] = probeLatency(s, count)
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
	if err := g.Printer.Print(render.Output{Data: v, Items: v.Brokers, Table: t, Human: func(p *render.Printer) error {
		fmtf(p.Out, "canary offsets on %s/0; %s\n", v.Topic, render.Plural(count, "probe", "probes"))
		return p.Table(t)
	}}); err != nil {
		return err
	}
	if failed > 0 {
		var names []string
		for _, b := range v.Brokers {
			if !b.OK {
				names = append(names, b.Broker+" ("+b.FailedStep+")")
			}
		}
		g.Warnf("%s failed the probe: %s", render.Plural(failed, "broker", "brokers"), strings.Join(names, ", "))
		return exit.ProblemsFound("%s failed the probe", render.Plural(failed, "broker", "brokers"))
	}
	return nil
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
				out = append(out, ProbeBrokerStats{Broker: b.Broker, Node: b.Node, Canary: b.Canary, Tier: b.Tier, OK: true, Steps: []ProbeStepStat{}})
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
