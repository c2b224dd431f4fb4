package exporter

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// The coordinator probe: for every broker, a canary group kaas routes to
// it (inspect.CanaryGroups) taken through FindCoordinator, OffsetCommit and
// OffsetFetch, each timed. It finds a broker that accepts connections and
// lists groups but cannot coordinate, which no lag metric shows until its
// groups fall behind. The canary's offset file is the only thing it writes.

// BrokerProbe is one broker's probe.
type BrokerProbe struct {
	Broker string `json:"broker"`
	Node   int32  `json:"node"`
	Addr   string `json:"addr,omitempty"`
	Canary string `json:"canary"`
	Tier   string `json:"tier,omitempty"`
	OK     bool   `json:"ok"`
	// FailedStep is the first step that failed ("route" when the broker
	// gets no canary: it is not alive in assignment.json).
	FailedStep string           `json:"failedStep,omitempty"`
	Err        string           `json:"error,omitempty"`
	Steps      []wire.ProbeStep `json:"steps"`
	// Seconds is the three round trips together.
	Seconds float64 `json:"seconds"`
}

// StepRoute is the failing step of a broker kaas routes no group to.
const StepRoute = "route"

// ProbeReport is one probe of every broker.
type ProbeReport struct {
	Time time.Time `json:"time"`
	// Topic and Partition are where the canary offsets are committed.
	Topic     string        `json:"topic"`
	Partition int32         `json:"partition"`
	Brokers   []BrokerProbe `json:"brokers"`
	OK        int           `json:"ok"`
	Failed    int           `json:"failed"`
}

// ErrNoProbeTopic: the cluster has no topic to commit a canary offset to.
var ErrNoProbeTopic = errors.New("the cluster has no topic to commit the canary offset to (name one with --probe-topic)")

// Probe probes every broker of a (the volume's assignment.json) through
// cl. topic is where canary offsets go ("": the first topic the brokers
// list); the committed offset is the probe's time in milliseconds, so a
// fetch that returns an older probe's offset fails.
func Probe(ctx context.Context, a *volume.Assignment, cl *wire.Client, topic string) (*ProbeReport, error) {
	md, err := cl.Metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	if topic == "" {
		for _, t := range md.Topics {
			if t.Err == "" && len(t.Partitions) > 0 && (topic == "" || t.Topic < topic) {
				topic = t.Topic
			}
		}
		if topic == "" {
			return nil, ErrNoProbeTopic
		}
	}
	now := time.Now()
	rep := &ProbeReport{Time: now, Topic: topic, Brokers: []BrokerProbe{}}
	addrs := map[int32]string{}
	for _, b := range md.Brokers {
		addrs[b.NodeID] = b.Addr()
	}
	canaries := inspect.CanaryGroups(a)
	rep.Brokers = make([]BrokerProbe, len(canaries))
	var wg sync.WaitGroup
	for i, c := range canaries {
		bp := &rep.Brokers[i]
		*bp = BrokerProbe{Broker: c.Broker, Node: c.Node, Addr: addrs[c.Node], Canary: c.Group, Tier: c.Tier, Steps: []wire.ProbeStep{}}
		switch {
		case c.Group == "":
			bp.FailedStep, bp.Err = StepRoute, c.Err
			continue
		case bp.Addr == "":
			bp.FailedStep, bp.Err = wire.StepFindCoordinator, "the brokers' metadata does not list "+c.Broker+" (node "+strconv.Itoa(int(c.Node))+"): it is not connected to the cluster"
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := cl.ProbeCoordinator(ctx, c.Node, c.Group, topic, 0, now.UnixMilli())
			bp.Steps, bp.FailedStep, bp.Err, bp.OK = p.Steps, p.FailedStep, p.Err, p.FailedStep == ""
			for _, s := range p.Steps {
				bp.Seconds += s.Seconds
			}
		}()
	}
	wg.Wait()
	slices.SortFunc(rep.Brokers, func(x, y BrokerProbe) int { return int(x.Node) - int(y.Node) })
	for _, b := range rep.Brokers {
		if b.OK {
			rep.OK++
		} else {
			rep.Failed++
		}
	}
	return rep, nil
}

// probeMetrics are the probe's series, in the exporter's registry.
type probeMetrics struct {
	success  *prometheus.GaugeVec
	duration *prometheus.HistogramVec
	failures *prometheus.CounterVec
	canary   *prometheus.GaugeVec
	last     prometheus.Gauge
}

func newProbeMetrics(reg *prometheus.Registry) *probeMetrics {
	m := &probeMetrics{
		success: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kaas_probe_success",
			Help: "1 when the broker's canary group went through FindCoordinator, OffsetCommit and OffsetFetch at the last probe, else 0 (kaas_probe_failures_total names the step)."}, []string{"broker"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kaas_probe_step_duration_seconds",
			Help:    "Round trip of each probe step to the broker (FindCoordinator, OffsetCommit, OffsetFetch), successful or not.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"broker", "step"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kaas_probe_failures_total",
			Help: "Probes of the broker that failed, by the first step that failed (route: kaas routes no group to the broker)."}, []string{"broker", "step"}),
		canary: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kaas_probe_canary_info",
			Help: "The canary group the probe uses for the broker (prefix " + inspect.CanaryPrefix + "; left out of every group metric) and how kaas routes it. Always 1."}, []string{"broker", "group", "tier"}),
		last: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kaas_probe_last_timestamp_seconds", Help: "When the last probe finished (Unix seconds)."}),
	}
	reg.MustRegister(m.success, m.duration, m.failures, m.canary, m.last)
	return m
}

func (m *probeMetrics) record(rep *ProbeReport) {
	m.canary.Reset()
	for _, b := range rep.Brokers {
		m.success.WithLabelValues(b.Broker).Set(b2f(b.OK))
		for _, s := range b.Steps {
			m.duration.WithLabelValues(b.Broker, s.Step).Observe(s.Seconds)
		}
		if !b.OK {
			m.failures.WithLabelValues(b.Broker, b.FailedStep).Inc()
		}
		if b.Canary != "" {
			m.canary.WithLabelValues(b.Broker, b.Canary, b.Tier).Set(1)
		}
	}
	m.last.Set(float64(rep.Time.UnixNano()) / 1e9)
}
