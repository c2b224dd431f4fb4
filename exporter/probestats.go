package exporter

import (
	"slices"
)

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

// ProbeStats folds the rounds into one line per broker.
func ProbeStats(reps []*ProbeReport) []ProbeBrokerStats {
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
