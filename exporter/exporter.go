package exporter

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/gctune"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
)

// DefaultListen is the exporter's default address. Port 10092 (Kafka's 9092
// moved past the 9100–9999 block Prometheus exporters allocated, which is
// full) is used by none of the Kafka exporters operators run next to a
// cluster: kafka_exporter 9308, kminion 8080, kafka-lag-exporter and Burrow
// 8000, the JMX exporter 5556/7071.
//
// It listens on loopback only: the metrics name every group, topic and
// broker, so exposing them is a choice (--listen :10092, or the pod's IP).
const DefaultListen = "127.0.0.1:10092"

// Options configure an Exporter.
type Options struct {
	Source *observe.Source
	// Interval between refreshes (default 15s).
	Interval time.Duration
	// Window of observations health is evaluated over (default 5m).
	Window time.Duration
	// PartitionMetrics emits the per-partition series.
	PartitionMetrics bool
	// Health options (the generation's plain-map hazard).
	Health inspect.HealthOptions
	// AssignmentPath is followed with internal/watch (fsnotify plus
	// polling) to count coordinator moves and refresh early on a new
	// version; empty without a volume.
	AssignmentPath string
	// PollInterval of the watch (default 1s).
	PollInterval time.Duration
	// Version and Revision label kaas_exporter_build_info.
	Version, Revision string
	// Logf reports problems, Notef events such as coordinator moves (nil:
	// silent).
	Logf, Notef func(format string, a ...any)
	// Offsets, when set, follows the live offsets dir between refreshes.
	Offsets *OffsetsFollow
	// Probe, when set, probes every coordinator each Interval (needs the
	// volume and the brokers).
	Probe *ProbeOptions
	// TuneMemory sets the collector of a served exporter
	// (gctune.ServerMemory): the soft memory limit from each refresh's
	// peak, and the memory of a refresh given back when it ends.
	TuneMemory bool
	// Members configure CHURN, the rewinds' authors and the events
	// journal (members.go).
	Members MembersOptions
}

// ProbeOptions configure the exporter's coordinator probe.
type ProbeOptions struct {
	// Topic takes the canary offsets ("": the first topic listed).
	Topic string
	// Owned says whether a canary id may be written (the probe writes
	// only canary groups it created: inspect.CanaryFileOwned).
	Owned func(group string) (bool, string)
}

// OffsetsFollow configures the exporter's offsets follower
// (watch.FollowOffsets on the live offsets dir, polled every PollInterval
// besides fsnotify). Each change of a group's file is compared with the
// previous one as it happens: the anomalies (REWIND, VANISHED, CORRUPT,
// PLAIN_MAP) feed the group's health and its rewind and vanished counters
// at the next refresh, instead of a comparison of the files two refreshes
// read, which misses a rewind overwritten within one interval. A change
// with an anomaly starts a refresh early. With a Journal, every change is
// recorded (what 'kaasctl watch --offsets --journal' writes).
type OffsetsFollow struct {
	// Dir is the live offsets dir of the volume's generation
	// (volume.Layout.FollowedOffsetsDir); Generation the detected or pinned one.
	Dir        string
	Generation volume.Generation
	// Journal records every change (nil: followed in memory only).
	Journal *watch.OffsetJournal
	// Seed is where an earlier run's journal left off (see
	// watch.LastJournalState).
	Seed []inspect.OffsetObservation
	// Candidates, on a volume with no group file yet, are the dirs the
	// follower watches until one gets a group file
	// (watch.SettleOffsetsDir); Open then makes the follow of that dir
	// (Dir, Generation, Journal and Seed), in the follower's goroutine.
	Candidates []string
	Open       func(dir string) (*OffsetsFollow, error)
}

// Exporter refreshes from the sources and serves the last refresh.
type Exporter struct {
	opt      Options
	Registry *prometheus.Registry

	mu       sync.Mutex // health, counters, the last assignment
	health   inspect.HealthWindow
	c        counters
	lastA    *volume.Assignment
	lastKeys []string
	// The last problems logged (each is logged when it changes).
	lastWireErr, lastAssignErr string
	lastDropped                int
	lastInvalid                int
	// lastServedBehind names the partitions served behind their log at
	// the last refresh that asked the brokers (logged when it changes).
	lastServedBehind string

	snap      atomic.Pointer[snapshot]
	kick      chan struct{}
	durations prometheus.Histogram

	// Serving (see serve.go): the request slots of Server, requests in
	// flight, open connections, requests refused for lack of either.
	serve                     ServeOptions
	slots                     chan struct{}
	inFlight, conns, rejected atomic.Int64

	// The offsets follower: anomalies by group since the last refresh;
	// following is set once its first scan is done (until it stops).
	pending   map[string][]inspect.OffsetAnomaly
	following atomic.Bool

	probe  *probeMetrics
	memory gctune.ServerMemory
	// members is every group's membership across refreshes (members.go).
	members membership
	// lastProbe names the brokers failing at the last probe (logged when
	// it changes).
	lastProbe string
}

// snapshot is what scrapes serve until the next refresh: the exposition
// text of the refresh's metrics, compressed once (Prometheus asks for gzip).
//
// Only the compressed page is kept (a tenth of the text at 10,000 groups):
// a gzip scrape gets it as it is, closed into one gzip member with the
// exporter's own metrics, and a client that wants the text gets it
// decompressed as it reads, so neither the snapshots nor a slow reader
// hold the uncompressed page.
//
// It keeps the refresh's time, not its observation: the next refresh needs
// only the health window.
type snapshot struct {
	time     time.Time
	page     zpage
	coverage inspect.HealthCoverage
	// refs are the observed groups' health windows and lags their lag,
	// which /api/health is evaluated from (publish.go).
	refs []inspect.GroupRef
	lags []groupLag
	// healthDoc is /api/health, compressed on first request (healthPage).
	healthOnce sync.Once
	healthDoc  *zpage
}

// New builds an exporter; Run starts it.
func New(opt Options) *Exporter {
	if opt.Interval <= 0 {
		opt.Interval = 15 * time.Second
	}
	if opt.Window <= 0 {
		opt.Window = 5 * time.Minute
	}
	if opt.PollInterval <= 0 {
		opt.PollInterval = time.Second
	}
	e := &Exporter{opt: opt, Registry: prometheus.NewRegistry(), kick: make(chan struct{}, 1),
		c:       counters{moves: map[inspect.Cause]int64{}, brokerErrors: map[string]int64{}, brokersSeen: map[string]bool{}, brokerRequests: map[string]int64{}},
		pending: map[string][]inspect.OffsetAnomaly{}}
	if opt.Source != nil {
		opt.Source.Partitions = opt.PartitionMetrics
		e.c.shard = shardOf(opt.Source.Shard)
	}
	e.health = inspect.HealthWindow{Window: opt.Window, Opt: opt.Health}
	e.members = newMembership(opt)
	e.members.journalSnapshot()
	e.durations = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kaas_exporter_refresh_duration_seconds",
		Help:    "How long refreshes take (volume scan, broker requests, record timestamp probes).",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}})
	rejected := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "kaas_exporter_http_rejected_total",
		Help: "HTTP requests answered 503 because --max-requests requests were in flight for 5 s, or --max-connections connections were open."},
		func() float64 { return float64(e.rejected.Load()) })
	inFlight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kaas_exporter_http_in_flight",
		Help: "HTTP requests for /metrics and /api/health being served (this scrape included)."},
		func() float64 { return float64(e.inFlight.Load()) })
	e.Registry.MustRegister(e.durations, rejected, inFlight,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if opt.Probe != nil {
		e.probe = newProbeMetrics(e.Registry)
	}
	return e
}

func (e *Exporter) logf(format string, a ...any) {
	if e.opt.Logf != nil {
		e.opt.Logf(format, a...)
	}
}

func (e *Exporter) notef(format string, a ...any) {
	if e.opt.Notef != nil {
		e.opt.Notef(format, a...)
	}
}

// movesSummary is "3 coordinator moves (broker_left 2, entry_added 1)".
func movesSummary(ms []inspect.Move) string {
	var parts []string
	for _, cc := range inspect.CountByCause(ms) {
		parts = append(parts, fmt.Sprintf("%s %d", cc.Cause, cc.Count))
	}
	n := "coordinator moves"
	if len(ms) == 1 {
		n = "coordinator move"
	}
	return fmt.Sprintf("%d %s (%s)", len(ms), n, strings.Join(parts, ", "))
}

// Refresh observes the sources once and replaces the snapshot.
func (e *Exporter) Refresh(ctx context.Context) *observe.Observation {
	o := e.opt.Source.Observe(ctx)
	if e.opt.TuneMemory {
		e.memory.Peak() // the observation is what a refresh holds most
	}
	e.publish(o)
	return o
}

// refreshServed is the refresh loop's Refresh: with TuneMemory, once the
// snapshot is published and the observation dropped, what the refresh
// allocated goes back to the system (gctune.ServerMemory.Settle).
func (e *Exporter) refreshServed(ctx context.Context) {
	e.Refresh(ctx)
	if e.opt.TuneMemory {
		e.memory.Settle()
	}
}

// publish records one refresh's observation: health windows, counters,
// logged changes, and the snapshot scrapes serve.
func (e *Exporter) publish(o *observe.Observation) {
	e.durations.Observe(o.Duration.Seconds())
	e.mu.Lock()
	defer e.mu.Unlock()
	e.c.refreshes++
	e.c.interval = e.opt.Interval
	if o.Successful() {
		e.c.lastSuccess = float64(o.Time.Add(o.Duration).UnixNano()) / 1e9
	}
	e.c.probes += int64(o.Probes)
	if o.WireErr != e.lastWireErr {
		if o.WireErr != "" {
			e.logf("brokers: %s", o.WireErr)
		} else {
			e.notef("brokers answer again")
		}
		e.lastWireErr = o.WireErr
	}
	if (o.Dropped > 0) != (e.lastDropped > 0) && o.Dropped > 0 {
		e.logf("%d of %d matching groups left out by --max-groups (kaas_exporter_groups_dropped); raise it or narrow --group-regex", o.Dropped, o.Matched)
	}
	e.lastDropped = o.Dropped
	if bad := invalidIDs(o); len(bad) != e.lastInvalid {
		if len(bad) > 0 {
			e.logf("%s", invalidIDsMessage(bad))
		}
		e.lastInvalid = len(bad)
	}
	e.logServedBehind(o)
	if o.AssignmentErr != e.lastAssignErr {
		if o.AssignmentErr != "" {
			e.logf("%s", o.AssignmentErr)
		}
		e.lastAssignErr = o.AssignmentErr
	}
	if cl := e.opt.Source.Client; cl != nil {
		names := inspect.NewNodeNamer(o.Assignment)
		for _, bc := range cl.Counter.Snapshot() {
			name := "seed"
			if !bc.Seed {
				name = names.Name(bc.Node)
			}
			e.c.brokerRequests[name] = bc.Requests
		}
	}
	if o.WireErr != "" {
		e.keepUnobserved(o)
	}
	e.publishGroups(o)
}

// logServedBehind logs the partitions served behind their log when the
// set changes, and when none is any more (refreshes whose brokers were not
// asked say nothing).
func (e *Exporter) logServedBehind(o *observe.Observation) {
	if !o.HasBrokers || o.WireErr != "" {
		return
	}
	names := make([]string, len(o.ServedBehind))
	for i, sb := range o.ServedBehind {
		names[i] = sb.Partition
	}
	key := strings.Join(names, ",")
	if key == e.lastServedBehind {
		return
	}
	switch {
	case key != "":
		var gi volume.GenerationInfo
		if o.Generation != nil {
			gi = *o.Generation
		}
		e.logf("%s", inspect.ServedBehindMessage(o.ServedBehind, "", gi, "kaas_partition_served_behind_log_records"))
	default:
		e.notef("every partition the offset files name is served at the log end of its segments again")
	}
	e.lastServedBehind = key
}

// keepUnobserved adds the groups of the last refresh that this one, whose
// brokers could not be asked, did not see (groups known only from the
// brokers' listings) as failed observations: they turn ERR with their last
// known conditions carried, rather than vanishing from the metrics, which
// would reset every pending alert of theirs.
func (e *Exporter) keepUnobserved(o *observe.Observation) {
	seen := make(map[string]bool, len(o.Groups))
	for i := range o.Groups {
		seen[o.Groups[i].Row.Group] = true
	}
	for _, name := range e.lastKeys {
		if seen[name] {
			continue
		}
		o.Groups = append(o.Groups, observe.GroupObs{Row: inspect.GroupRow{Group: name}, Partitions: []observe.PartObs{},
			Sample: inspect.HealthSample{Time: o.Time, Partitions: []inspect.PartitionSample{}, Err: "brokers: " + o.WireErr}})
	}
	slices.SortFunc(o.Groups, func(a, b observe.GroupObs) int { return strings.Compare(a.Row.Group, b.Row.Group) })
}

// followsFile reports whether the offsets follower follows the file a
// refresh read: one in its directory, or none at all (a file created there
// later is the follower's to see).
func (e *Exporter) followsFile(f *inspect.OffsetReading) bool {
	if f == nil || e.opt.Offsets == nil {
		return false
	}
	return f.Missing && f.File == "" || filepath.Dir(f.File) == filepath.Clean(e.opt.Offsets.Dir)
}

// settleOffsets waits for the first group file in one of the candidate
// dirs and makes the follow of that dir.
func (e *Exporter) settleOffsets(ctx context.Context, of *OffsetsFollow) (*OffsetsFollow, error) {
	dir, err := watch.SettleOffsetsDir(ctx, of.Candidates, e.opt.PollInterval)
	if err != nil {
		return nil, err
	}
	settled, err := of.Open(dir)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.opt.Offsets = settled
	e.mu.Unlock()
	return settled, nil
}

// onOffsetEvents is the follower's batch: journaled, logged when anomalous,
// and kept for the next refresh, which it starts early when a group
// went wrong.
func (e *Exporter) onOffsetEvents(evs []watch.OffsetEvent) {
	of := e.opt.Offsets
	if j := of.Journal; j != nil {
		err := j.Append(evs)
		for _, w := range j.Warnings {
			e.logf("%s", w)
		}
		j.Warnings = nil
		e.mu.Lock()
		if err != nil {
			e.c.journalErrors++
			e.logf("journal: %v (%d changes not recorded)", err, len(evs))
		} else {
			e.c.journalRecords += int64(len(evs))
		}
		e.mu.Unlock()
	}
	match := func(g string) bool { return e.opt.Source.Filter == nil || e.opt.Source.Filter.MatchString(g) }
	anomalous := false
	e.mu.Lock()
	for _, ev := range evs {
		if ev.Prev != nil {
			e.c.offsetChanges++
		}
		if len(ev.Anomalies) == 0 || !match(ev.Cur.Group) {
			continue
		}
		anomalous = true
		e.pending[ev.Cur.Group] = append(e.pending[ev.Cur.Group], ev.Anomalies...)
		kinds := make([]string, 0, len(ev.Anomalies))
		for _, a := range ev.Anomalies {
			if !slices.Contains(kinds, a.Kind) {
				kinds = append(kinds, a.Kind)
			}
		}
		e.notef("offsets: group %s: %s in %s (%s)", ev.Cur.Group, strings.Join(kinds, ", "), ev.Cur.File, ev.Anomalies[0].Detail)
	}
	e.mu.Unlock()
	if anomalous {
		e.refreshSoon()
	}
}

func (e *Exporter) refreshSoon() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// onVersion counts the coordinator moves a new assignment version makes
// among the groups of the last refresh and the explicit entries, and asks
// for an early refresh.
func (e *Exporter) onVersion(v watch.Version) {
	e.mu.Lock()
	e.c.versionsSeen++
	prev := e.lastA
	if prev != nil && inspect.NewerThan(prev, v.Assignment) {
		// kaas's brokers never apply it (a lower version in the same
		// epoch is a duplicate, a lower epoch is fenced): no move, and
		// the newest version stays the one the next is compared with.
		e.c.versionsBackwards++
		e.mu.Unlock()
		e.logf("%s", inspect.VersionWarnings(e.opt.AssignmentPath, prev, v.Assignment, false)[0]+"; kaas's brokers skip it: no coordinator moved (kaas_assignment_versions_backwards_total)")
		return
	}
	e.lastA = v.Assignment
	keys := e.lastKeys
	if gap := inspect.FindVersionGap(prev, v.Assignment); gap.Count > 0 {
		e.c.versionsMissed += gap.Count
		e.notef("assignment epoch %d v%d: %s", v.Assignment.ControllerEpoch, v.Assignment.AssignmentVersion, gap.Message())
	}
	if prev != nil && (prev.ControllerEpoch != v.Assignment.ControllerEpoch || prev.AssignmentVersion != v.Assignment.AssignmentVersion || v.Rewritten) {
		res := inspect.ComputeMoves(inspect.MovesInput{Old: prev, New: v.Assignment, Groups: keys})
		at := v.Assignment.GeneratedTime()
		if at.IsZero() {
			at = time.Now()
		}
		for _, m := range res.Moves {
			if m.Kind == inspect.KindGroup {
				e.c.moves[m.Cause]++
				e.members.win.NoteMove(m.Key, inspect.CoordinatorMove{Time: at, From: m.From, To: m.To, Cause: string(m.Cause)})
			}
		}
		if n := len(res.Moves); n > 0 {
			e.notef("assignment epoch %d v%d: %s", v.Assignment.ControllerEpoch, v.Assignment.AssignmentVersion, movesSummary(res.Moves))
		}
	}
	e.mu.Unlock()
	e.refreshSoon()
}

// minRefreshGap spaces refreshes started early (a new assignment version,
// an offset anomaly): a burst of them costs one refresh per gap at most.
const minRefreshGap = time.Second

// Run refreshes every Interval (and early on a new assignment version or
// an offset anomaly) until ctx is done. With Offsets, the follower's first
// scan is done before the first refresh, so every refresh is covered.
func (e *Exporter) Run(ctx context.Context) error {
	if e.opt.TuneMemory {
		e.memory.Start()
	}
	if e.opt.Offsets != nil {
		ready, stopped := e.startFollower(ctx)
		defer func() { <-stopped }()
		// A follower still settling on a dir is not waited for: refreshes
		// compare the files until it follows.
		if len(e.opt.Offsets.Candidates) == 0 {
			select {
			case <-ready:
			case <-stopped:
			case <-ctx.Done():
				return nil
			}
		}
	}
	if e.opt.AssignmentPath != "" {
		go watch.Run(ctx, watch.Options{Path: e.opt.AssignmentPath, PollInterval: e.opt.PollInterval, OnVersion: e.onVersion,
			OnProblem: func(msg string, ok bool) {
				if !ok {
					e.logf("%s", msg)
				}
			}})
	}
	if e.probe != nil {
		go e.runProbes(ctx)
	}
	e.refreshLoop(ctx)
	return nil
}

// startFollower follows the offsets dir (settling on one of the
// candidates first) in a goroutine of its own: ready closes once its first
// scan is done, stopped when it has stopped (its journal closed).
func (e *Exporter) startFollower(ctx context.Context) (ready, stopped chan struct{}) {
	ready, stopped = make(chan struct{}), make(chan struct{})
	of := e.opt.Offsets
	go func() {
		defer close(stopped)
		if len(of.Candidates) > 0 {
			var err error
			if of, err = e.settleOffsets(ctx, of); err != nil {
				e.logf("offsets: %v (anomalies are compared between refreshes)", err)
				return
			}
		}
		err := watch.FollowOffsets(ctx, watch.OffsetsOptions{Dir: of.Dir, PollInterval: e.opt.PollInterval, Generation: of.Generation,
			Seed: of.Seed, OnEvents: e.onOffsetEvents,
			OnReady: func() {
				e.following.Store(true)
				close(ready)
			},
			OnProblem: func(msg string, ok bool) {
				if ok {
					e.notef("offsets: %s is readable again", of.Dir)
				} else {
					e.logf("offsets: %s", msg)
				}
			},
			OnNote: func(msg string) { e.notef("offsets: %s", msg) }})
		e.following.Store(false)
		if err != nil {
			e.logf("offsets: the follower stopped: %v (anomalies are compared between refreshes)", err)
		}
		if of.Journal != nil {
			of.Journal.Close()
		}
	}()
	return ready, stopped
}

// refreshLoop refreshes every Interval, and early when kicked (at most
// once per minRefreshGap), until ctx is done.
func (e *Exporter) refreshLoop(ctx context.Context) {
	tick := time.NewTicker(e.opt.Interval)
	defer tick.Stop()
	for {
		started := time.Now()
		rctx, cancel := context.WithTimeout(ctx, e.opt.Interval*4)
		e.refreshServed(rctx)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-e.kick:
			if wait := minRefreshGap - time.Since(started); wait > 0 && wait < e.opt.Interval {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
			tick.Reset(e.opt.Interval)
		}
	}
}

// ProbeOnce probes every coordinator once and records the result in the
// kaas_probe_* metrics.
func (e *Exporter) ProbeOnce(ctx context.Context) (*ProbeReport, error) {
	src := e.opt.Source
	if src.Layout == nil || src.Client == nil {
		return nil, fmt.Errorf("the probe needs the volume (assignment.json) and the brokers")
	}
	a, _, err := volume.ReadAssignment(src.Layout.AssignmentPath())
	if err != nil {
		return nil, err
	}
	rep, err := Probe(ctx, ProbeInput{Assignment: a, Client: src.Client, Topic: e.opt.Probe.Topic, Owned: e.opt.Probe.Owned})
	if err != nil {
		return nil, err
	}
	e.probe.record(rep)
	var bad []string
	for _, b := range rep.Brokers {
		if !b.OK {
			bad = append(bad, b.Broker+" at "+b.FailedStep+" ("+b.Err+")")
		}
	}
	msg := render.Clean(strings.Join(bad, "; ")) // broker ids on one line
	e.mu.Lock()
	changed := msg != e.lastProbe
	e.lastProbe = msg
	e.mu.Unlock()
	if changed {
		if msg != "" {
			e.logf("probe: %s", msg)
		} else {
			e.notef("probe: every coordinator answers")
		}
	}
	return rep, nil
}

// runProbes probes every Interval until ctx is done.
func (e *Exporter) runProbes(ctx context.Context) {
	tick := time.NewTicker(e.opt.Interval)
	defer tick.Stop()
	lastErr := ""
	for {
		pctx, cancel := context.WithTimeout(ctx, e.opt.Interval*4)
		_, err := e.ProbeOnce(pctx)
		cancel()
		if msg := fmt.Sprint(err); err != nil && msg != lastErr {
			e.logf("probe: %v", err)
			lastErr = msg
		} else if err == nil {
			lastErr = ""
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// HealthDocument is what /api/health serves ('kaasctl groups health
// --exporter URL' reads it).
type HealthDocument struct {
	Time   time.Time             `json:"time"`
	Window string                `json:"window"`
	Groups []inspect.GroupHealth `json:"groups"`
	// Coverage is which groups the exporter observes (its --group-regex
	// and --max-groups): why a group is not in Groups.
	Coverage inspect.HealthCoverage `json:"coverage"`
}

// Handler serves /metrics, /api/health, /healthz and a landing page.
func (e *Exporter) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", e.limited(e.serveMetrics))
	mux.HandleFunc("/api/health", e.limited(e.serveHealth))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if e.snap.Load() == nil {
			http.Error(w, "no refresh yet", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>kaasctl exporter</title></head><body><h1>kaasctl exporter</h1>
<p><a href="/metrics">/metrics</a> · <a href="/api/health">/api/health</a> (group health, JSON) · <a href="/healthz">/healthz</a></p></body></html>`)
	})
	return readOnly(mux)
}

// invalidIDsMessage says which group ids are not UTF-8 and how they are
// exported (logged when their number changes, not at every refresh).
func invalidIDsMessage(bad []string) string {
	const show = 3
	var ids []string
	for _, g := range bad[:min(len(bad), show)] {
		ids = append(ids, base64.StdEncoding.EncodeToString([]byte(g)))
	}
	more := ""
	if len(bad) > show {
		more = fmt.Sprintf(" and %d more", len(bad)-show)
	}
	n := "group id is"
	if len(bad) > 1 {
		n = "group ids are"
	}
	return fmt.Sprintf("%d %s not valid UTF-8 (base64: %s%s): exported with U+FFFD in the group label and the exact id in group_base64 (kaas_exporter_groups_invalid_utf8)",
		len(bad), n, strings.Join(ids, ", "), more)
}

// ownText is the exposition of the exporter's own registry (refresh
// duration histogram, Go and process metrics): small, gathered per scrape.
func (e *Exporter) ownText(keep func(name string) bool) []byte {
	mfs, err := e.Registry.Gather()
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if keep == nil || keep(mf.GetName()) {
			enc.Encode(mf)
		}
	}
	if err != nil {
		e.logf("metrics: %v", err)
	}
	return b.Bytes()
}

// WriteMetrics writes what a scrape serves (keep filters the exporter's
// own families; nil keeps all).
func (e *Exporter) WriteMetrics(w io.Writer, keep func(name string) bool) error {
	if sn := e.snap.Load(); sn != nil {
		if err := writeText(w, &sn.page); err != nil {
			return err
		}
	}
	_, err := w.Write(e.ownText(keep))
	return err
}

// Once is 'exporter --once': one refresh (and one probe round, with
// probe) and what a scrape would serve written to w, kaasctl's own
// families only (no go_ or process_ series).
func (e *Exporter) Once(ctx context.Context, w io.Writer, probe bool) (*observe.Observation, error) {
	obs := e.Refresh(ctx)
	if probe {
		if _, err := e.ProbeOnce(ctx); err != nil {
			return obs, fmt.Errorf("probe: %w", err)
		}
	}
	keep := func(name string) bool { return !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") }
	return obs, e.WriteMetrics(w, keep)
}

// writeText writes the text of a page, decompressing as w takes it (32 KiB
// at a time).
func writeText(w io.Writer, p *zpage) error {
	zr := p.text()
	defer zr.Close()
	buf := copyBufPool.Get().(*[]byte)
	defer copyBufPool.Put(buf)
	_, err := io.CopyBuffer(struct{ io.Writer }{w}, zr, *buf)
	return err
}

// serveMetrics copies the last snapshot (gzipped when the scraper accepts
// it, which Prometheus does) and appends the exporter's own metrics: a
// scrape never touches the volume or the brokers, and never re-encodes the
// groups' series. The gzip body is one member (the page's open DEFLATE
// stream, the own metrics compressed after it, one trailer): readers that
// stop at a body's first member (curl --compressed) see the whole page.
func (e *Exporter) serveMetrics(w http.ResponseWriter, r *http.Request) {
	own := e.ownText(nil)
	// Only the page's bytes are held while a client reads, not the
	// refresh's observation.
	var page *zpage
	if sn := e.snap.Load(); sn != nil {
		page = &sn.page
	} else {
		page = &zpage{}
	}
	w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		fw := deflatePool.Get().(*flate.Writer)
		page.writeGzip(w, own, fw)
		fw.Reset(io.Discard)
		deflatePool.Put(fw)
		return
	}
	if err := writeText(w, page); err != nil {
		return
	}
	w.Write(own)
}
