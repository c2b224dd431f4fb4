package exporter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// The coordinator probe: for every broker kaasctl knows of (brokers[],
// the metadata, --brokers), a canary group kaas routes to it
// (inspect.CanaryGroups) taken through FindCoordinator, OffsetCommit and
// OffsetFetch, each timed. It finds a broker that accepts connections and
// lists groups but cannot coordinate, which no lag metric shows until its
// groups fall behind, and names a broker that is down although kaas no
// longer lists it. The canary's offset file is the only thing it writes,
// and only a canary group the probe itself created.

// BrokerProbe is one broker's probe.
type BrokerProbe struct {
	Broker string `json:"broker"`
	Node   int32  `json:"node"`
	Addr   string `json:"addr,omitempty"`
	// Sources says where kaasctl knows the broker from: brokers[],
	// metadata, --brokers.
	Sources []string `json:"sources"`
	Canary  string   `json:"canary"`
	Tier    string   `json:"tier,omitempty"`
	OK      bool     `json:"ok"`
	// FailedStep is the first step that failed ("route" when the broker
	// gets no canary: it is not alive in assignment.json, or not in it).
	FailedStep string           `json:"failedStep,omitempty"`
	Err        string           `json:"error,omitempty"`
	Steps      []wire.ProbeStep `json:"steps"`
	// Skipped are canary ids left alone (groups kaasctl did not create).
	Skipped []string `json:"skipped,omitempty"`
	// Seconds is the three round trips together.
	Seconds float64 `json:"seconds"`
}

// StepRoute is the failing step of a broker kaas routes no group to.
const StepRoute = "route"

// ProbeReport is one probe of every broker.
type ProbeReport struct {
	Time time.Time `json:"time"`
	// Topic and Partition are where the canary offsets are committed, and
	// Offset the offset committed: the partition's log end, so every
	// canary offset is one kaas could hold.
	Topic     string        `json:"topic"`
	Partition int32         `json:"partition"`
	Offset    int64         `json:"offset"`
	Brokers   []BrokerProbe `json:"brokers"`
	OK        int           `json:"ok"`
	Failed    int           `json:"failed"`
}

// ErrNoProbeTopic: the cluster has no topic to commit a canary offset to.
var ErrNoProbeTopic = errors.New("the cluster has no topic to commit the canary offset to (name one with --probe-topic)")

// ProbeInput is what a probe needs.
type ProbeInput struct {
	// Assignment is the volume's assignment.json: the canaries' routing.
	Assignment *volume.Assignment
	Client     *wire.Client
	// Topic takes the canary offsets on its partition 0 ("": the first
	// topic the brokers list).
	Topic string
	// Owned says whether a canary id may be written (see
	// inspect.CanaryFileOwned); nil: the probe cannot tell, and writes
	// nothing.
	Owned func(group string) (bool, string)
	// Unreached are addresses known not to answer (the connection check's
	// failures, address → why): a broker at one fails at FindCoordinator
	// with that reason without being waited for again.
	Unreached map[string]string
}

// Probe probes every broker kaasctl knows of. The committed offset is the
// partition's log end (one kaas could hold), with metadata naming this
// probe's time, so a fetch that returns an older probe's commit fails.
// Each broker's probe runs under one --timeout, all at once.
func Probe(ctx context.Context, in ProbeInput) (*ProbeReport, error) {
	cl := in.Client
	if in.Owned == nil {
		return nil, errors.New("the probe cannot tell which canary groups it created (it needs the volume's offset files)")
	}
	md, err := cl.Metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	topic, err := probeTopic(md, in.Topic)
	if err != nil {
		return nil, err
	}
	offset, err := probeOffset(ctx, cl, topic)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	rep := &ProbeReport{Time: now, Topic: topic, Offset: offset}
	pc := wire.ProbeCommit{Topic: topic, Offset: offset, Metadata: inspect.ProbeMetadata + " " + strconv.FormatInt(now.UnixMilli(), 10)}
	canaries := map[string]inspect.Canary{}
	for _, c := range inspect.CanaryGroups(in.Assignment, in.Owned) {
		canaries[c.Broker] = c
	}
	known := inspect.KnownBrokers(in.Assignment, md.Brokers, cl.Settings.Brokers)
	rep.Brokers = make([]BrokerProbe, len(known))
	var wg sync.WaitGroup
	for i, kb := range known {
		bp := &rep.Brokers[i]
		*bp = BrokerProbe{Broker: kb.Name, Node: kb.Node, Addr: kb.Addr, Sources: kb.Sources(), Steps: []wire.ProbeStep{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := cl.WithTimeout(ctx)
			defer cancel()
			if why, ok := in.Unreached[kb.Addr]; ok && kb.Addr != "" {
				bp.Canary, bp.FailedStep, bp.Err = canaries[kb.Name].Group, wire.StepFindCoordinator, unreachedText(kb, "did not answer when kaasctl connected: "+why)
				return
			}
			probeBroker(pctx, cl, bp, kb, canaries[kb.Name], pc)
		}()
	}
	wg.Wait()
	rep.Brokers = slices.DeleteFunc(rep.Brokers, func(b BrokerProbe) bool { return b.Broker == "" })
	slices.SortStableFunc(rep.Brokers, func(x, y BrokerProbe) int {
		return cmp.Or(cmp.Compare(x.Node, y.Node), cmp.Compare(x.Broker, y.Broker))
	})
	for _, b := range rep.Brokers {
		if b.OK {
			rep.OK++
		} else {
			rep.Failed++
		}
	}
	return rep, nil
}

// probeTopic is the topic the canaries commit to: the one asked for, else
// the first the metadata lists.
func probeTopic(md *wire.Metadata, topic string) (string, error) {
	if topic != "" {
		return topic, nil
	}
	for _, t := range md.Topics {
		if t.Err == "" && len(t.Partitions) > 0 && (topic == "" || t.Topic < topic) {
			topic = t.Topic
		}
	}
	if topic == "" {
		return "", ErrNoProbeTopic
	}
	return topic, nil
}

// probeOffset is the log end of topic/0 as its leader serves it: the
// canary's committed offset, one kaas could hold.
func probeOffset(ctx context.Context, cl *wire.Client, topic string) (int64, error) {
	tps := wire.TopicPartitions{}
	tps.Add(topic, 0)
	los, err := cl.ListLogOffsets(ctx, tps)
	if err != nil {
		return 0, fmt.Errorf("the log end of %s/0 (the canary's offset): %w", topic, err)
	}
	lo, ok := los[topic][0]
	switch {
	case !ok:
		return 0, fmt.Errorf("the log end of %s/0 (the canary's offset): no answer", topic)
	case lo.Err != "" || lo.End < 0:
		return 0, fmt.Errorf("the log end of %s/0 (the canary's offset) is unknown: %s; nothing is committed", topic, lo.Err)
	}
	return max(lo.End, lo.Start, 0), nil
}

// unreachedText says why a broker was not probed: its address did not
// answer (why), and for one known only from --brokers, what that means.
func unreachedText(kb inspect.KnownBroker, why string) string {
	if kb.OnlySeed() {
		return fmt.Sprintf("not reached at %s (given by --brokers; kaas lists it neither in brokers[] nor in its metadata, as for a broker that is down): %s", kb.Addr, why)
	}
	return why
}

// probeBroker probes one known broker into bp (under ctx's deadline): its
// canary through the three steps, or the step it could not reach. A
// --brokers address no other source names is probed only for an answer;
// one that answers is no broker of its own (a bootstrap address) and its
// row is dropped (Broker "").
func probeBroker(ctx context.Context, cl *wire.Client, bp *BrokerProbe, kb inspect.KnownBroker, c inspect.Canary, pc wire.ProbeCommit) {
	bp.Canary, bp.Tier, bp.Skipped = c.Group, c.Tier, c.Skipped
	switch {
	case kb.OnlySeed():
		err := cl.ReachAddr(ctx, kb.Addr)
		if err == nil {
			bp.Broker = ""
			return
		}
		bp.FailedStep, bp.Err = wire.StepFindCoordinator, unreachedText(kb, err.Error())
		return
	case !kb.Listed:
		bp.FailedStep, bp.Err = StepRoute, "not in assignment.json's brokers[] (the metadata lists it): kaas routes no group to it"
		return
	case c.Group == "":
		bp.FailedStep, bp.Err = StepRoute, c.Err
		return
	case !kb.InMetadata:
		bp.FailedStep, bp.Err = wire.StepFindCoordinator, "the brokers' metadata does not list "+kb.Name+" (node "+strconv.Itoa(int(kb.Node))+"): it is not connected to the cluster"
		return
	}
	p := cl.ProbeCoordinator(ctx, kb.Node, c.Group, pc)
	bp.Steps, bp.FailedStep, bp.Err, bp.OK = p.Steps, p.FailedStep, p.Err, p.FailedStep == ""
	for _, s := range p.Steps {
		bp.Seconds += s.Seconds
	}
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
