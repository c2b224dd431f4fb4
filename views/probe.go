package views

import (
	"fmt"
	"strconv"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// ProbeView is the machine document of 'kaasctl probe'.
type ProbeView struct {
	Topic   string                      `json:"topic"`
	Rounds  int                         `json:"rounds"`
	Brokers []exporter.ProbeBrokerStats `json:"brokers"`
	// Probes are every round's report.
	Probes []*exporter.ProbeReport `json:"probes"`
}

// ProbeOutput is the probe's output: a line per broker.
func ProbeOutput(v ProbeView) render.Output {
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
func probeLatency(s exporter.ProbeStepStat, count int) string {
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

// ProbeViewOf folds the probe's rounds (exporter.ProbeRounds, count of
// them) into one line per broker.
func ProbeViewOf(reps []*exporter.ProbeReport, count int) ProbeView {
	v := ProbeView{Rounds: count, Probes: reps}
	if len(reps) > 0 {
		v.Topic = reps[len(reps)-1].Topic
	}
	v.Brokers = exporter.ProbeStats(v.Probes)
	return v
}

// ProbeFailed names each broker that failed the probe and the step it
// failed at.
func ProbeFailed(v ProbeView) []string {
	var failed []string
	for _, b := range v.Brokers {
		if !b.OK {
			failed = append(failed, render.Clean(b.Broker)+" ("+b.FailedStep+")")
		}
	}
	return failed
}
