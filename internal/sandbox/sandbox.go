// Package sandbox runs an in-process, kaas-compatible cluster on loopback:
// the real Kafka wire protocol (franz-go's kfake does the Kafka work) behind
// a coordination layer that behaves like kaas, over a real volume directory.
//
// Every live kaasctl test and the `kaasctl sandbox` command run on it.
//
// # What it emulates
//
//   - Brokers kaas-0 … kaas-<N-1>, each its own TCP listener (node id = the
//     ordinal). Each client connection is relayed to kfake on a connection of
//     its own, so blocking requests (JoinGroup, Fetch) behave as on a broker.
//   - A controller that writes CD/assignment.json exactly as kaas does
//     (compact camelCase, 9-digit timestamps, alive brokers only, partition
//     leaders, explicit consumerGroups[] entries for the groups active at the
//     recompute, a new assignmentVersion on every change, tmp file + fsync +
//     rename) whenever a broker stops or starts or topics change.
//   - FindCoordinator answered by the two-tier rule (internal/grouphash) from
//     the current assignment; group requests sent to a non-coordinator get
//     NOT_COORDINATOR; ListGroups on a broker lists only the groups it
//     coordinates; transactional requests follow the hash tier.
//   - Every successful OffsetCommit writes CD/__consumer_offsets/<group>.json
//     (kaas's v2 envelope, the group's full committed set); DeleteGroups
//     removes it. DATA/<topic>/<partition>/manifest.json is kept current so
//     offline lag works on the sandbox volume.
//   - Per-broker JSON logs in kaas's tracing shape, including the controller
//     lines and `group coordinator change` lines (side gained/lost).
//   - A stopped broker closes its listener and every connection: clients get
//     connection refused, exactly as with a dead pod.
//   - A group whose coordinator changes loses its members (they get
//     UNKNOWN_MEMBER_ID and rejoin: one rebalance, as on kaas).
//   - ApiVersions advertises kaas's version caps for the group APIs and hides
//     KIP-848 and share groups, which kaas does not serve.
//
// The sandbox also re-reads assignment.json every PollInterval, so a
// hand-edited file (same controllerEpoch, higher assignmentVersion) takes
// effect as it would on kaas brokers — and, as on kaas, the controller's
// own writes are then skipped until its version passes the hand-written
// one; a lower controllerEpoch is rejected with kaas's warning.
//
// # Using it in a test
//
//	sb := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: []sandbox.Topic{{Name: "orders", Partitions: 4}}})
//	ctx := context.Background()
//	sb.Produce(ctx, "orders", 4, 10)                               // 10 records per partition
//	sb.Commit(ctx, "billing", map[string]map[int32]int64{"orders": {0: 5}}) // an Empty group with a file
//	cl, _ := sb.Client(sandbox.ConsumerOpts("g1", "orders")...)     // a live member (quick timeouts)
//	layout := sb.Layout()                                          // volume.Layout{DataDir, ClusterDir}
//	v := sb.Assignment().AssignmentVersion                         // what the brokers route by now
//	sb.StopBroker("kaas-1")                                        // returns once the new assignment is written
//	sb.WaitFor(t, "g1 committed", 10*time.Second, func() bool { _, ok := sb.CommittedOffsets("g1"); return ok })
//
// Start registers Close with t.Cleanup. New/Close do the same without a
// testing.TB. Change/Command return which known groups moved; Status and
// ServeControl (GET /status, POST /stop?broker=…) are what the command
// exposes. Sandbox.Kfake gives kfake's GroupInfo for assertions about group
// state. With Options.Persist the Kafka state survives a restart on the same
// data dir. Known differences from kaas are listed in Limits.
package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// Limits lists where the sandbox knowingly differs from kaas.
const Limits = `- one kfake cluster holds every group behind all brokers: a group that moves has
  its members evicted (they rejoin, one rebalance, as on kaas) but keeps its
  committed offsets in memory (kaas's new coordinator reloads the file instead);
- OffsetCommit is fenced by generation and member as in Apache Kafka (kaas
  accepts any); AcceptStaleCommits accepts them as kaas does, handing kfake a
  stale commit to a group with live members as one of a current member (it
  counts as that member's heartbeat, and a group completing a rebalance still
  answers REBALANCE_IN_PROGRESS);
- produce and fetch are served by any broker (Metadata advertises the leaders of
  assignment.json, but they are not enforced);
- transactional offsets reach the offset files at EndTxn(commit) even when the
  transaction and group coordinators differ (kaas loses them then, gh #114);
- controller changes are immediate (kaas waits for its lease and a 2 s poll).`

// Placement chooses how the controller places explicit consumerGroups[] entries.
type Placement string

const (
	// PlacementRendezvous is kaas's controller today: the highest XXH64 of
	// groupId 0x00 brokerId over the alive brokers. It often disagrees with
	// the hash tier, so a group's first entry usually moves it.
	PlacementRendezvous Placement = "rendezvous"
	// PlacementHash places entries where the routing hash would put them
	// (what kaas's design says the controller should do).
	PlacementHash Placement = "hash"
)

// Failover chooses the controller-failover behaviour of a kaas generation.
type Failover string

const (
	// FailoverReload: the Rust controller (0.2.16 and later).
	FailoverReload Failover = "reload"
	// FailoverDrop: the Go flavour.
	FailoverDrop Failover = "drop"
)

// Topic is a topic created when the sandbox starts.
type Topic struct {
	Name       string
	Partitions int32
}

// Options configure a sandbox. The zero value is usable apart from DataDir.
type Options struct {
	// Brokers is the number of brokers (default 3, at most 64).
	Brokers int
	// DataDir is the volume root (DATA). It is created when missing. The
	// cluster dir is DATA/__cluster.
	DataDir string
	// Listen is "host:port" for kaas-0; kaas-i listens on port+i. Empty or
	// port 0 means random loopback ports.
	Listen string
	// Placement of explicit entries (default rendezvous).
	Placement Placement
	// Failover is what a newly elected controller does with the previous
	// explicit entries: FailoverReload (the Rust controller loads the
	// previous assignment.json and keeps them) or FailoverDrop (the Go
	// flavour: its first version has no consumerGroups); by default the
	// emulated generation's.
	Failover Failover
	// Generation is the kaas generation emulated (DefaultGeneration when
	// unset): its row of the volume model says where offset files live
	// and what the controller does on failover.
	Generation volume.Generation
	// LogDir holds kaas-N.log (default DATA/.kaasctl-sandbox/logs).
	LogDir string
	// Topics are created at start.
	Topics []Topic
	// AutoCreateTopics lets producers create topics by writing to them.
	AutoCreateTopics bool
	// PollInterval is how often partition manifests are refreshed, topic
	// changes are detected and assignment.json is re-read (default 200ms).
	PollInterval time.Duration
	// Now is the clock for file and log timestamps (default time.Now).
	Now func() time.Time
	// Persist keeps the Kafka state (topics, records, groups, committed
	// offsets) under DATA/.kaasctl-sandbox/kfake, so a sandbox restarted on
	// the same data dir carries on where it stopped.
	Persist bool
}

// Sandbox is a running sandbox cluster. Its methods are safe for concurrent use.
type Sandbox struct {
	opts   Options
	layout volume.Layout

	kf     *kfake.Cluster
	kfAddr string
	admin  *kgo.Client
	adm    *kadm.Client
	// fetcher fills the segment files (kaaslog.go).
	fetcher *kgo.Client

	brokers []*broker
	byID    map[string]*broker

	lifeMu sync.Mutex // serialises stop/start/recompute
	ctl    *controller

	route   atomic.Pointer[routeState]
	applyMu sync.Mutex

	offsets   *offsetStore
	manifests *manifestWriter
	txn       txnOffsets

	// KeepMembersOnMove, when set before groups move, lets a moved group
	// keep its members (no rebalance); by default they are evicted and
	// rejoin, as on kaas.
	KeepMembersOnMove bool

	groupsMu sync.Mutex
	kfGroups map[string]struct{} // groups kfake held at the last look (any state but Dead)
	kfStates map[string]string   // their state at that look
	unloaded unloadedSet         // unloaded.go: Empty groups that moved
	lister   groupLister         // listgroups.go: kfake listings shared by concurrent ListGroups

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	demoCtx    context.Context
	demoCancel context.CancelFunc
	demoWG     sync.WaitGroup
	closed     atomic.Bool

	stale staleSet // stale.go: stale in-memory groups, when emulated

	zeroTimeOffsets atomic.Bool // quirks.go: ListOffsets by timestamp answers 0
	noTimeOffsets   atomic.Bool // quirks.go: ListOffsets by timestamp answers -1/-1
	emptyFetchAll   atomic.Bool // quirks.go: OffsetFetch with null topics answers none
	kaasManifests   atomic.Bool // kaaslog.go: manifests only on open/takeover/close (the default), else at every refresh
	kaasLog         *kaasLog
	// plantedLogs: a test writes the segment files (PlantLogs).
	plantedLogs atomic.Bool
	brokenCoord sync.Map    // quirks.go: broker id → coordination broken (OffsetCommit fails)
	frozen      sync.Map    // freeze.go: broker id → closed when thawed
	unfenced    atomic.Bool // unfenced.go: accept stale commits, as kaas does
}

// routeState is the assignment the brokers route by.
type routeState struct {
	raw     []byte
	a       *volume.Assignment
	router  *grouphash.Router
	leaders map[tp]string
	epochs  map[tp]uint32
	mtime   time.Time
	size    int64
}

type tp struct {
	topic string
	part  int32
}

func newRouteState(raw []byte, a *volume.Assignment) *routeState {
	rs := &routeState{raw: raw, a: a, router: a.Router(), leaders: map[tp]string{}, epochs: map[tp]uint32{}}
	for _, p := range a.Partitions {
		k := tp{p.Topic, p.Partition}
		if _, dup := rs.leaders[k]; !dup {
			rs.leaders[k] = p.Broker
			rs.epochs[k] = p.Epoch
		}
	}
	return rs
}

func (rs *routeState) group(g string) string {
	if rs == nil {
		return ""
	}
	return rs.router.Group(g).Coordinator
}

func (rs *routeState) txn(id string) string {
	if rs == nil {
		return ""
	}
	return rs.router.Txn(id).Coordinator
}

// MaxBrokers bounds Options.Brokers.
const MaxBrokers = 64

// DefaultGeneration is the kaas generation the sandbox emulates unless
// Options.Generation says another: its row of the volume model decides
// the offsets dir and the controller's failover.
const DefaultGeneration = volume.Gen018

// kfakeCompactBytes is the size of kfake's groups log past which it is
// compacted (see New).
const kfakeCompactBytes = 1 << 30

// New starts a sandbox. Close it when done.
func New(opts Options) (*Sandbox, error) {
	if err := opts.withDefaults(); err != nil {
		return nil, err
	}
	host, port0, err := parseListen(opts.Listen)
	if err != nil {
		return nil, err
	}
	layout, err := opts.makeDirs()
	if err != nil {
		return nil, err
	}
	s := &Sandbox{opts: opts, layout: layout, byID: map[string]*broker{}, kfGroups: map[string]struct{}{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.demoCtx, s.demoCancel = context.WithCancel(s.ctx)
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	if err := s.startKfake(); err != nil {
		return nil, err
	}
	s.offsets = newOffsetStore(layout.LiveOffsetsDirOf(s.opts.Generation))
	s.offsets.load()
	s.manifests = newManifestWriter(layout)
	s.kaasLog = newKaasLog(layout)
	s.kaasManifests.Store(true)
	if err := s.listenBrokers(host, port0); err != nil {
		return nil, err
	}
	s.ctl = newController(s)
	s.lifeMu.Lock()
	err = s.ctl.recompute("startup")
	s.lifeMu.Unlock()
	if err != nil {
		return nil, err
	}
	for _, b := range s.brokers {
		b.serve()
	}
	s.wg.Add(1)
	go s.pollLoop()
	ok = true
	return s, nil
}

// withDefaults fills in the options left zero (3 brokers, rendezvous
// placement, the default generation and its failover, a 200 ms poll, the
// real clock) and refuses values the sandbox cannot run with.
func (opts *Options) withDefaults() error {
	if opts.Brokers == 0 {
		opts.Brokers = 3
	}
	if opts.Brokers < 1 || opts.Brokers > MaxBrokers {
		return fmt.Errorf("brokers must be between 1 and %d, got %d", MaxBrokers, opts.Brokers)
	}
	switch opts.Placement {
	case "":
		opts.Placement = PlacementRendezvous
	case PlacementRendezvous, PlacementHash:
	default:
		return fmt.Errorf("placement must be %q or %q, got %q", PlacementRendezvous, PlacementHash, opts.Placement)
	}
	if opts.Generation == volume.GenUnknown {
		opts.Generation = DefaultGeneration
	}
	spec, known := opts.Generation.Spec()
	if !known {
		return fmt.Errorf("sandbox: kaas generation %q is not one kaasctl knows", opts.Generation)
	}
	switch opts.Failover {
	case "":
		opts.Failover = FailoverDrop
		if spec.Failover.Reloads {
			opts.Failover = FailoverReload
		}
	case FailoverReload, FailoverDrop:
	default:
		return fmt.Errorf("failover must be %q or %q, got %q", FailoverReload, FailoverDrop, opts.Failover)
	}
	if opts.DataDir == "" {
		return errors.New("sandbox: DataDir is required")
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 200 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	for _, t := range opts.Topics {
		if err := validTopicName(t.Name); err != nil {
			return err
		}
		if t.Partitions < 1 || t.Partitions > 10000 {
			return fmt.Errorf("topic %q: partitions must be between 1 and 10000, got %d", t.Name, t.Partitions)
		}
	}
	return nil
}

// makeDirs makes the data dir absolute and creates the dirs the emulated
// generation keeps (the cluster dir, its live offsets dir) and the log
// dir, which defaults to one under the sandbox's state dir.
func (opts *Options) makeDirs() (volume.Layout, error) {
	dataDir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return volume.Layout{}, err
	}
	opts.DataDir = dataDir
	if opts.LogDir == "" {
		opts.LogDir = filepath.Join(dataDir, StateDirName, "logs")
	}
	// The sandbox keeps the volume as the emulated generation does.
	layout := volume.DataDirLayout(dataDir, "sandbox")
	for _, d := range []string{layout.ClusterDir, layout.LiveOffsetsDirOf(opts.Generation), opts.LogDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return volume.Layout{}, err
		}
	}
	return layout, nil
}

// startKfake starts the one-node kfake cluster behind the brokers (seeded
// with the options' topics, persisted when asked) and the sandbox's own
// clients of it.
func (s *Sandbox) startKfake() error {
	opts := s.opts
	kopts := []kfake.Opt{kfake.NumBrokers(1), kfake.ClusterID("kaas-sandbox"),
		kfake.GroupMinSessionTimeout(100 * time.Millisecond)}
	for _, t := range opts.Topics {
		kopts = append(kopts, kfake.SeedTopics(t.Partitions, t.Name))
	}
	if opts.AutoCreateTopics {
		kopts = append(kopts, kfake.AllowAutoTopicCreation())
	}
	if opts.Persist {
		// kfake compacts its groups log once it passes
		// state.log.compact.bytes (10 MiB by default), and a compacted log
		// still over it is compacted again at every request after an
		// append, one unbuffered write per entry: 100,000 committed groups
		// (about 15 MiB compacted) kept a core and a half busy for as long
		// as anything committed. The threshold is set far above what a
		// sandbox holds.
		kopts = append(kopts, kfake.DataDir(filepath.Join(opts.DataDir, StateDirName, "kfake")),
			kfake.BrokerConfigs(map[string]string{"state.log.compact.bytes": strconv.Itoa(kfakeCompactBytes)}))
	}
	var err error
	if s.kf, err = kfake.NewCluster(kopts...); err != nil {
		return fmt.Errorf("start kfake: %w", err)
	}
	s.kfAddr = s.kf.ListenAddrs()[0]
	if s.admin, err = kgo.NewClient(kgo.SeedBrokers(s.kfAddr), kgo.RequestRetries(2), kgo.RetryTimeout(5*time.Second)); err != nil {
		return err
	}
	s.adm = kadm.NewClient(s.admin)
	if s.fetcher, err = newFetcher(s.kfAddr); err != nil {
		return err
	}
	s.lister.fetch = s.fetchKfakeGroups
	s.lister.brokers = func() int { return len(s.runningBrokers()) }
	return nil
}

// listenBrokers opens each broker's log and listener (on consecutive
// ports from port0, or ports the system picks when it is 0) and logs the
// addresses they advertise.
func (s *Sandbox) listenBrokers(host string, port0 int) error {
	for i := 0; i < s.opts.Brokers; i++ {
		b := &broker{s: s, id: "kaas-" + strconv.Itoa(i), node: int32(i), conns: map[*clientConn]struct{}{}}
		var err error
		if b.log, err = openBrokerLog(s.opts.LogDir, b.id, s.opts.Now); err != nil {
			return err
		}
		port := 0
		if port0 > 0 {
			port = port0 + i
		}
		if err := b.listen(net.JoinHostPort(host, strconv.Itoa(port))); err != nil {
			return fmt.Errorf("%s: %w", b.id, err)
		}
		// Fixed for the sandbox's life; a restart binds the same address.
		b.bind = b.ln.Addr().String()
		b.addr = advertised(b.ln.Addr())
		s.brokers = append(s.brokers, b)
		s.byID[b.id] = b
	}
	for _, b := range s.brokers {
		b.log.log("INFO", targetCluster, "kaas broker listening", kv{"broker", b.id}, kv{"node_id", int(b.node)}, kv{"addr", b.addr})
	}
	return nil
}

// StateDirName is the dot-directory at the data-dir root that holds the
// sandbox's own files (logs by default). kaas's operator keeps dot-dirs.
const StateDirName = ".kaasctl-sandbox"

// advertised is the address clients are told: a wildcard bind is
// advertised as loopback.
func advertised(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok || !ta.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ta.Port))
}

func parseListen(s string) (string, int, error) {
	if s == "" {
		return "127.0.0.1", 0, nil
	}
	host, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("listen address %q: %v (want host:port, e.g. 127.0.0.1:9092)", s, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("listen address %q: port must be a number between 0 and 65535", s)
	}
	return host, port, nil
}

// Close stops every broker and releases everything. Safe to call twice.
func (s *Sandbox) Close() {
	if s.closed.Swap(true) {
		return
	}
	// Demo clients leave their groups while the brokers still answer (a
	// client stuck in a rebalance is cut off when the brokers stop).
	if s.demoCancel != nil {
		s.demoCancel()
	}
	waitTimeout(&s.demoWG, 10*time.Second)
	if s.cancel != nil {
		s.cancel()
	}
	for _, b := range s.brokers {
		b.stop()
	}
	s.wg.Wait()
	if s.kaasLog != nil {
		s.kaasLog.close(s.manifests)
	}
	waitTimeout(&s.demoWG, 5*time.Second)
	if s.admin != nil {
		s.admin.Close()
	}
	if s.fetcher != nil {
		s.fetcher.Close()
	}
	if s.kf != nil {
		s.kf.Close()
	}
	for _, b := range s.brokers {
		b.log.log("INFO", targetSandbox, "sandbox: broker shut down", kv{"broker", b.id})
		b.log.close()
	}
}

// waitTimeout waits for wg, at most d.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// Bootstrap returns the listen address of every broker (stopped ones too:
// clients skip the ones that refuse).
func (s *Sandbox) Bootstrap() []string {
	out := make([]string, len(s.brokers))
	for i, b := range s.brokers {
		out[i] = b.addr
	}
	return out
}

// Layout is the sandbox's volume: DataDir and ClusterDir.
func (s *Sandbox) Layout() volume.Layout { return s.layout }

// LogDir is where kaas-N.log files are written.
func (s *Sandbox) LogDir() string { return s.opts.LogDir }

// Placement is the controller's placement of explicit entries.
func (s *Sandbox) Placement() Placement { return s.opts.Placement }

// BrokerIDs lists every broker id, running or not, in ordinal order.
func (s *Sandbox) BrokerIDs() []string {
	out := make([]string, len(s.brokers))
	for i, b := range s.brokers {
		out[i] = b.id
	}
	return out
}

// Addr returns a broker's listen address.
func (s *Sandbox) Addr(id string) (string, bool) {
	b, ok := s.byID[id]
	if !ok {
		return "", false
	}
	return b.addr, true
}

// Running reports whether a broker is running.
func (s *Sandbox) Running(id string) bool {
	b, ok := s.byID[id]
	return ok && b.isRunning()
}

// Assignment returns the assignment the brokers route by now (a copy of
// the last applied file).
func (s *Sandbox) Assignment() *volume.Assignment {
	rs := s.route.Load()
	if rs == nil {
		return nil
	}
	a, _, err := volume.ParseAssignment("assignment.json", rs.raw)
	if err != nil {
		return nil
	}
	return a
}

// Coordinator is the broker that coordinates a group under the current
// assignment ("" when none).
func (s *Sandbox) Coordinator(group string) string { return s.route.Load().group(group) }

// ErrUnknownBroker is returned for a broker id the sandbox does not have.
var ErrUnknownBroker = errors.New("unknown broker")

func (s *Sandbox) lookup(id string) (*broker, error) {
	b, ok := s.byID[id]
	if !ok {
		return nil, fmt.Errorf("%w %q (have %s)", ErrUnknownBroker, id, strings.Join(s.BrokerIDs(), ", "))
	}
	return b, nil
}

// StopBroker stops a broker: its listener and every connection close, the
// controller recomputes and the new assignment.json is written before this
// returns. Stopping a stopped broker is not an error (changed is false).
func (s *Sandbox) StopBroker(id string) (changed bool, err error) {
	if s.closed.Load() {
		return false, errors.New("sandbox is closed")
	}
	b, err := s.lookup(id)
	if err != nil {
		return false, err
	}
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if !b.isRunning() {
		return false, nil
	}
	if s.ctl.id == b.id {
		b.log.log("INFO", targetCluster, "controller stack shut down (lease lost or shutdown)")
	}
	b.log.log("INFO", targetSandbox, "sandbox: broker stopped (listener and connections closed)", kv{"broker", b.id})
	b.stop()
	s.forgetStale(b.id) // stale.go: a restart drops the broker's memory
	return true, s.ctl.recompute("broker_dead")
}

// StartBroker starts a stopped broker on its old address and recomputes.
func (s *Sandbox) StartBroker(id string) (changed bool, err error) {
	if s.closed.Load() {
		return false, errors.New("sandbox is closed")
	}
	b, err := s.lookup(id)
	if err != nil {
		return false, err
	}
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if b.isRunning() {
		return false, nil
	}
	if err := listenAgain(b); err != nil {
		return false, fmt.Errorf("%s: listen again on %s: %w", id, b.bind, err)
	}
	b.log.log("INFO", targetSandbox, "sandbox: broker started", kv{"broker", b.id}, kv{"addr", b.addr})
	if err := s.ctl.recompute("broker_joined"); err != nil {
		return true, err
	}
	b.serve()
	return true, nil
}

// listenAgain binds a restarted broker's old address. While it was down
// another socket of the machine may have taken the port (an outgoing
// connection's ephemeral port, from the same range): kaas's broker keeps
// its address, so the sandbox asks again until that socket lets go (at
// most rebindWait).
func listenAgain(b *broker) error {
	deadline := time.Now().Add(rebindWait)
	for {
		err := b.listen(b.bind)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// rebindWait bounds listenAgain.
const rebindWait = 15 * time.Second

// TB is the part of testing.TB that Start and WaitFor use.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
	TempDir() string
}

// Start starts a sandbox for a test (DataDir defaults to t.TempDir()) and
// closes it when the test ends. It fails the test when the sandbox cannot start.
func Start(t TB, opts Options) *Sandbox {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("sandbox: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// WaitFor polls cond every 20ms until it is true, and fails the test with
// "timed out after D waiting for WHAT" when timeout passes first.
func (s *Sandbox) WaitFor(t TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	if err := WaitUntil(timeout, cond); err != nil {
		t.Fatalf("sandbox: %v waiting for %s", err, what)
	}
}

// WaitUntil polls cond every 20ms until it is true or timeout passes.
func WaitUntil(timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s", timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BrokerStatus is one broker in Status.
type BrokerStatus struct {
	ID         string `json:"id"`
	NodeID     int32  `json:"nodeId"`
	Addr       string `json:"addr"`
	State      string `json:"state"` // running | stopped
	Controller bool   `json:"controller"`
	Log        string `json:"log"`
	Groups     int    `json:"groups"` // known groups it coordinates
}

// Status is the sandbox at a glance (the control endpoint's GET /status).
type Status struct {
	Bootstrap         string         `json:"bootstrap"`
	DataDir           string         `json:"dataDir"`
	ClusterDir        string         `json:"clusterDir"`
	LogDir            string         `json:"logDir"`
	Placement         Placement      `json:"placement"`
	Controller        string         `json:"controller"`
	ControllerEpoch   int64          `json:"controllerEpoch"`
	AssignmentVersion int64          `json:"assignmentVersion"`
	Brokers           []BrokerStatus `json:"brokers"`
	Groups            []string       `json:"groups"`
}

// Status reports brokers, the current assignment and the known groups.
func (s *Sandbox) Status() Status {
	rs := s.route.Load()
	st := Status{
		Bootstrap:  strings.Join(s.Bootstrap(), ","),
		DataDir:    s.layout.DataDir,
		ClusterDir: s.layout.ClusterDir,
		LogDir:     s.opts.LogDir,
		Placement:  s.opts.Placement,
		Groups:     s.knownGroups(),
	}
	if rs != nil {
		st.Controller = rs.a.Controller
		st.ControllerEpoch = rs.a.ControllerEpoch
		st.AssignmentVersion = rs.a.AssignmentVersion
	}
	counts := map[string]int{}
	for _, g := range st.Groups {
		counts[rs.group(g)]++
	}
	for _, b := range s.brokers {
		state := "stopped"
		if b.isRunning() {
			state = "running"
		}
		st.Brokers = append(st.Brokers, BrokerStatus{ID: b.id, NodeID: b.node, Addr: b.addr, State: state,
			Controller: rs != nil && rs.a.Controller == b.id, Log: b.log.path, Groups: counts[b.id]})
	}
	return st
}

// setKfakeGroups records the groups kfake holds (from a ListGroups).
func (s *Sandbox) setKfakeGroups(lg *kmsg.ListGroupsResponse) {
	m := make(map[string]struct{}, len(lg.Groups))
	states := make(map[string]string, len(lg.Groups))
	for _, g := range lg.Groups {
		if g.GroupState != "Dead" {
			m[g.Group] = struct{}{}
			states[g.Group] = g.GroupState
		}
	}
	s.groupsMu.Lock()
	s.kfGroups = m
	s.kfStates = states
	s.reloadIfJoinedLocked()
	s.groupsMu.Unlock()
}

// listKfake is a kfake listing begun after the call, shared with the
// brokers' ListGroups in flight (listgroups.go).
func (s *Sandbox) listKfake(ctx context.Context) (*kmsg.ListGroupsResponse, error) {
	c := s.lister.join("")
	select {
	case <-c.done:
		return c.resp, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// refreshGroups asks kfake which groups exist now.
func (s *Sandbox) refreshGroups() {
	ctx, cancel := context.WithTimeout(s.ctx, 3*time.Second)
	defer cancel()
	if lg, err := s.listKfake(ctx); err == nil {
		s.setKfakeGroups(lg)
	}
}

// knownGroups are the groups that exist: in the brokers' memory (kfake, as
// of the last look) or on the volume (an offsets file).
func (s *Sandbox) knownGroups() []string {
	set := map[string]struct{}{}
	s.groupsMu.Lock()
	for g := range s.kfGroups {
		set[g] = struct{}{}
	}
	s.groupsMu.Unlock()
	for _, g := range s.offsets.groupNames() {
		set[g] = struct{}{}
	}
	out := make([]string, 0, len(set))
	for g := range set {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

// apply makes a new assignment the one brokers route by, and logs every
// known group whose coordinator changes on both brokers' logs.
func (s *Sandbox) apply(raw []byte, a *volume.Assignment, st os.FileInfo) {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	ns := newRouteState(raw, a)
	if st != nil {
		ns.mtime, ns.size = st.ModTime(), st.Size()
	}
	old := s.route.Swap(ns)
	if old == nil {
		return
	}
	var moved []string
	for _, g := range s.knownGroups() {
		from, to := old.group(g), ns.group(g)
		if from == to {
			continue
		}
		moved = append(moved, g)
		fields := func(side string) []kv {
			return []kv{{"group", g}, {"from", from}, {"to", to}, {"assignment_version", a.AssignmentVersion}, {"side", side}}
		}
		if b, ok := s.byID[from]; ok && b.isRunning() {
			b.log.log("INFO", targetTakeover, "group coordinator change", fields("lost")...)
		}
		if b, ok := s.byID[to]; ok && b.isRunning() {
			b.log.log("INFO", targetTakeover, "group coordinator change", fields("gained")...)
		}
	}
	s.noteMoves(old, ns, moved) // stale.go
	s.noteUnloaded(moved)       // unloaded.go
	s.evictMembers(moved)
}

// pollLoop refreshes manifests, notices topic changes and re-reads
// assignment.json (a hand edit takes effect like on kaas brokers).
func (s *Sandbox) pollLoop() {
	defer s.wg.Done()
	tk := time.NewTicker(s.opts.PollInterval)
	defer tk.Stop()
	var next, looked time.Time // of the next look at kfake's groups, and the last
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-tk.C:
		}
		if now := time.Now(); !now.Before(next) {
			// A listing the brokers made for a client since the last
			// look is as good as a look of the poll's own.
			lg, at, took := s.lister.latest()
			if lg != nil && at.After(looked) {
				s.setKfakeGroups(lg)
			} else {
				s.refreshGroups()
				_, _, took = s.lister.latest()
			}
			looked = time.Now()
			next = looked.Add(groupsRefreshPause(max(took, looked.Sub(now))))
		}
		s.checkAssignmentFile()
		s.refreshTopics()
	}
}

// groupsRefreshPause is how long the sandbox waits before it lists kfake's
// groups again after a listing that took took: 20 times as long, so that
// a sandbox holding 100,000 groups (a listing of about 300 ms) does not
// keep a core busy listing them; with a few groups it is the poll interval.
func groupsRefreshPause(took time.Duration) time.Duration { return 20 * took }

// checkAssignmentFile applies an assignment.json written by someone else.
func (s *Sandbox) checkAssignmentFile() {
	p := s.layout.AssignmentPath()
	st, err := os.Stat(p)
	if err != nil {
		return
	}
	cur := s.route.Load()
	if cur != nil && st.ModTime().Equal(cur.mtime) && st.Size() == cur.size {
		return
	}
	raw, _, err := safefs.ReadFileFollow(p, 0) // regular files only: never blocks
	if err != nil {
		return
	}
	if cur != nil && bytes.Equal(raw, cur.raw) {
		s.applyMu.Lock()
		if s.route.Load() == cur {
			cur.mtime, cur.size = st.ModTime(), st.Size()
		}
		s.applyMu.Unlock()
		return
	}
	a, _, err := volume.ParseAssignment(p, raw)
	for _, b := range s.brokers {
		if !b.isRunning() {
			continue
		}
		switch {
		case err != nil:
			b.log.log("DEBUG", targetCoordinator, "assignment.json: parse failed (will retry)", kv{"path", p}, kv{"e", err.Error()})
		case cur != nil && a.ControllerEpoch < cur.a.ControllerEpoch:
			b.log.log("WARN", targetCoordinator, "assignment.json rejected — stale controller epoch", kv{"file_epoch", a.ControllerEpoch}, kv{"lease_epoch", cur.a.ControllerEpoch})
		}
	}
	if err != nil || (cur != nil && a.ControllerEpoch < cur.a.ControllerEpoch) {
		s.applyMu.Lock()
		if c := s.route.Load(); c == cur && cur != nil {
			cur.mtime, cur.size = st.ModTime(), st.Size()
		}
		s.applyMu.Unlock()
		return
	}
	if cur != nil && a.ControllerEpoch == cur.a.ControllerEpoch && a.AssignmentVersion <= cur.a.AssignmentVersion {
		// kaas skips it too (same epoch, version not newer).
		s.applyMu.Lock()
		if c := s.route.Load(); c == cur {
			cur.mtime, cur.size = st.ModTime(), st.Size()
		}
		s.applyMu.Unlock()
		return
	}
	s.apply(raw, a, st)
}

// stateFile is what `kaasctl sandbox` writes for scripts.
type stateFile struct {
	PID        int      `json:"pid"`
	Bootstrap  string   `json:"bootstrap"`
	Brokers    []string `json:"brokers"`
	Control    string   `json:"control"`
	DataDir    string   `json:"dataDir"`
	ClusterDir string   `json:"clusterDir"`
	LogDir     string   `json:"logDir"`
}

// WriteStateFile writes DATA/.kaasctl-sandbox.json (bootstrap, control
// endpoint, directories) atomically, for scripts.
func (s *Sandbox) WriteStateFile(control string) (string, error) {
	p := filepath.Join(s.layout.DataDir, StateFileName)
	sf := stateFile{PID: os.Getpid(), Bootstrap: strings.Join(s.Bootstrap(), ","), Brokers: s.BrokerIDs(), Control: control,
		DataDir: s.layout.DataDir, ClusterDir: s.layout.ClusterDir, LogDir: s.opts.LogDir}
	data, err := json.MarshalIndent(sf, "", "  ")
	if err != nil {
		return "", err
	}
	return p, writeFileAtomic(p, append(data, '\n'))
}

// StateFileName is the file at the data-dir root naming a running sandbox.
const StateFileName = ".kaasctl-sandbox.json"

type kadmListedOffset = kadm.ListedOffset
