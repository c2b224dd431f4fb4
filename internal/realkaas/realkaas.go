//go:build unix

// Package realkaas runs a real kaas cluster for kaasctl's end-to-end tier,
// of either generation kaas ships: its Go flavour from
// ../shared/kaas-go/src, or its Rust 0.2.18 broker from
// ../shared/kaas-rust/src (rust.go). Each is built once into a cache keyed
// by a hash of its source tree and started as N brokers on loopback over one
// data dir: the Go brokers on free ports of 127.0.0.1, the Rust brokers each
// on its own loopback address sharing one port, as pods do. Every broker
// runs in its own process group and is recorded in a registry so that a
// later run reaps what a killed run left behind. Only tests use it (the tier
// runs with `make test-real`).
package realkaas

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// SourceDir finds kaas-go's source: $KAASCTL_REALKAAS_SRC, else
// shared/kaas-go/src beside a parent of the working directory (the clone
// sits beside shared/, as in CI).
func SourceDir() (string, error) {
	if d := os.Getenv("KAASCTL_REALKAAS_SRC"); d != "" {
		return checkSource(d)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "shared", "kaas-go", "src")
		if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", fmt.Errorf("kaas-go source not found: no shared/kaas-go/src/go.mod above %s (set KAASCTL_REALKAAS_SRC)", wd)
}

func checkSource(d string) (string, error) {
	if _, err := os.Stat(filepath.Join(d, "go.mod")); err != nil {
		return "", fmt.Errorf("KAASCTL_REALKAAS_SRC=%s: %v", d, err)
	}
	return filepath.Abs(d)
}

// CacheRoot is where the broker binaries and the process registry live:
// $KAASCTL_REALKAAS_CACHE, else <user cache dir>/kaasctl-realkaas.
func CacheRoot() (string, error) {
	if d := os.Getenv("KAASCTL_REALKAAS_CACHE"); d != "" {
		return d, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache dir for the kaas broker (set KAASCTL_REALKAAS_CACHE): %v", err)
	}
	return filepath.Join(c, "kaasctl-realkaas"), nil
}

// SourceHash hashes every regular file of the source tree (path and bytes)
// and the Go version that builds it: the cache key of the binary.
func SourceHash(src, goVersion string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "go %s\n", goVersion)
	var files []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") && p != src {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hashing %s: %v", src, err)
	}
	sort.Strings(files)
	for _, p := range files {
		rel, _ := filepath.Rel(src, p)
		f, err := os.Open(p)
		if err != nil {
			return "", fmt.Errorf("hashing %s: %v", p, err)
		}
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		n, err := io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("hashing %s: %v", p, err)
		}
		fmt.Fprintf(h, "\x00%d\n", n)
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// BuildResult says where the broker binary is and whether this call built it.
type BuildResult struct {
	Bin     string
	Cached  bool
	Elapsed time.Duration
}

// Build returns the broker binary for src, building it (go build
// ./cmd/skafka, modules through the proxy) into the cache when the source
// hash has no binary yet. It writes only the binary and Go's own caches: src
// may be read-only. Concurrent builds of one hash wait on a lock file.
func Build(ctx context.Context, src string) (BuildResult, error) {
	start := time.Now()
	root, err := CacheRoot()
	if err != nil {
		return BuildResult{}, err
	}
	gover, err := goEnv(ctx, "GOVERSION")
	if err != nil {
		return BuildResult{}, err
	}
	hash, err := SourceHash(src, gover)
	if err != nil {
		return BuildResult{}, err
	}
	dir := filepath.Join(root, "bin", hash)
	bin := filepath.Join(dir, "skafka")
	if isExec(bin) {
		return BuildResult{Bin: bin, Cached: true, Elapsed: time.Since(start)}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return BuildResult{}, fmt.Errorf("broker cache: %v", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return BuildResult{}, fmt.Errorf("broker cache lock: %v", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return BuildResult{}, fmt.Errorf("broker cache lock: %v", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if isExec(bin) { // another run built it while this one waited
		return BuildResult{Bin: bin, Cached: true, Elapsed: time.Since(start)}, nil
	}
	tmp := fmt.Sprintf("%s.tmp-%d", bin, os.Getpid())
	cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=false", "-o", tmp, "./cmd/skafka")
	cmd.Dir = src
	// -mod=readonly (the default) never writes go.mod/go.sum: src may be a read-only copy.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		return BuildResult{}, fmt.Errorf("building the kaas broker (go build ./cmd/skafka in %s): %v\n%s", src, err, tail(out, 4000))
	}
	if err := os.Rename(tmp, bin); err != nil {
		return BuildResult{}, fmt.Errorf("broker cache: %v", err)
	}
	return BuildResult{Bin: bin, Elapsed: time.Since(start)}, nil
}

func goEnv(ctx context.Context, key string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", key).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %v (is Go on PATH?)", key, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// Options describe a cluster.
type Options struct {
	Bin     string // broker binary (Build, BuildRust)
	Root    string // the run's dir: data/ and logs/ are made under it
	Brokers int    // default 3
	Topics  string // "orders:3,events:6" (LAB_TOPICS; KAAS_TOPICS JSON for Rust)
	// Name tags the run in the registry and the broker environment.
	Name string
	// Flavour is the kaas generation Bin is: FlavourGo (the default) or
	// FlavourRust.
	Flavour Flavour
	// Env is extra broker environment (NAME=value), e.g. KAAS_LOG_DIRS or
	// the controller lease's KAAS_CONTROLLER_* timings for Rust.
	Env []string
}

// Broker is one broker process.
type Broker struct {
	Index int
	ID    string // skafka-N (Go) or kaas-N (Rust)
	// Host and Port are the Kafka listener; HeartbeatAddr and HealthAddr
	// the controller heartbeat and /healthz listeners.
	Host          string
	Port          int
	HeartbeatAddr string
	HealthAddr    string
	cmd           *exec.Cmd
	done          chan struct{}
	exitMu        sync.Mutex
	exit          error
}

// Addr is the broker's Kafka listener.
func (b *Broker) Addr() string { return net.JoinHostPort(b.Host, strconv.Itoa(b.Port)) }

// Cluster is a running kaas cluster.
type Cluster struct {
	opt     Options
	Data    string
	Logs    string
	Base    int
	Brokers []*Broker
	runID   string
	regDir  string
	// net is the Rust cluster's loopback /24 ("127.a.b"), "" for Go.
	net string
}

// Flavour is the cluster's kaas generation.
func (c *Cluster) Flavour() Flavour { return c.opt.Flavour.orGo() }

var (
	liveMu  sync.Mutex
	liveSet = map[*Cluster]struct{}{}
	portsMu sync.Mutex
	// heldPorts is every port of a range handed out and not released
	// (ranges of different bases overlap: base+100 is another base's +0),
	// and heldBy each base's ports.
	heldPorts = map[int]bool{}
	heldBy    = map[int][]int{}
)

// StopEverything kills every broker of every cluster this process started
// (the signal handler and TestMain call it).
func StopEverything() {
	liveMu.Lock()
	cs := make([]*Cluster, 0, len(liveSet))
	for c := range liveSet {
		cs = append(cs, c)
	}
	liveMu.Unlock()
	for _, c := range cs {
		c.Stop()
	}
}

// Start starts a cluster on a free base port (Kafka port base+N, heartbeat
// +100, health +200), retrying with another base when a port is taken, and
// waits until every broker answers its health endpoint and the controller
// has written an assignment listing all of them.
func Start(ctx context.Context, opt Options) (*Cluster, error) {
	if opt.Brokers == 0 {
		opt.Brokers = 3
	}
	if opt.Topics == "" {
		opt.Topics = "orders:3,events:6"
	}
	opt.Flavour = opt.Flavour.orGo()
	if err := opt.Flavour.check(); err != nil {
		return nil, err
	}
	if opt.Flavour == FlavourRust {
		if _, err := rustTopics(opt.Topics); err != nil {
			return nil, err
		}
	}
	root, err := CacheRoot()
	if err != nil {
		return nil, err
	}
	c := &Cluster{opt: opt, Data: filepath.Join(opt.Root, "data"), Logs: filepath.Join(opt.Root, "logs"),
		runID: fmt.Sprintf("%d-%d", os.Getpid(), rand.Int64()), regDir: filepath.Join(root, "running")}
	for _, d := range []string{c.Data, c.Logs, c.regDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	liveMu.Lock()
	liveSet[c] = struct{}{}
	liveMu.Unlock()
	var lastErr error
	for attempt := 0; attempt < 6; attempt++ {
		base, err := c.layoutBrokers()
		if err != nil {
			return nil, err
		}
		lastErr = c.startAll(ctx)
		if lastErr == nil {
			lastErr = c.WaitReady(ctx, 60*time.Second)
		}
		if lastErr == nil {
			return c, nil
		}
		c.Stop()
		releaseBase(base)
		if !errors.Is(lastErr, errPortTaken) && !errors.Is(lastErr, errTornManifest) {
			break
		}
		// A port was taken between the probe and the broker's bind, or a
		// broker read a manifest another one was writing: move the whole
		// layout, and start from an empty data dir again.
		os.RemoveAll(c.Data)
		os.MkdirAll(c.Data, 0o755)
	}
	c.forget()
	return nil, fmt.Errorf("starting the kaas cluster (logs in %s): %w", c.Logs, lastErr)
}

var errPortTaken = errors.New("port taken")

// layoutBrokers picks the cluster's addresses and fills c.Brokers.
func (c *Cluster) layoutBrokers() (int, error) {
	c.Brokers = nil
	if c.opt.Flavour == FlavourRust {
		return c.layoutRust()
	}
	base, err := pickBase(c.opt.Brokers)
	if err != nil {
		return 0, err
	}
	c.Base = base
	for i := 0; i < c.opt.Brokers; i++ {
		c.Brokers = append(c.Brokers, &Broker{Index: i, ID: fmt.Sprintf("skafka-%d", i), Host: "127.0.0.1", Port: base + i,
			HeartbeatAddr: fmt.Sprintf("127.0.0.1:%d", base+100+i), HealthAddr: fmt.Sprintf("127.0.0.1:%d", base+200+i)})
	}
	return base, nil
}

// errTornManifest: three kaas brokers started at once on an empty data dir
// can exit at start, one reading a partition's manifest.json while another
// writes it ("open disk storage ... manifest: parse ... unexpected end of
// JSON input"; seen once in a loaded run). Start tries again.
var errTornManifest = errors.New("a broker read a manifest another one was writing")

func pickBase(n int) (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	// Below the ephemeral range (32768+ on Linux), so no client's outgoing
	// connection holds one of the ports.
	for try := 0; try < 200; try++ {
		base := 20000 + 10*rand.IntN(1100) // 20000..30990
		ports := rangePorts(base, n)
		free := true
		for _, p := range ports {
			if heldPorts[p] {
				free = false
				break
			}
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				free = false
				break
			}
			l.Close()
		}
		if free {
			for _, p := range ports {
				heldPorts[p] = true
			}
			heldBy[base] = ports
			return base, nil
		}
	}
	return 0, errors.New("no free loopback port range for the brokers in 20000–31300")
}

func releaseBase(b int) {
	portsMu.Lock()
	for _, p := range heldBy[b] {
		delete(heldPorts, p)
	}
	delete(heldBy, b)
	delete(heldNets, b)
	portsMu.Unlock()
}

// rangePorts is the ports a cluster of n brokers at base listens on: the
// Kafka ports base+i, the peer ports base+100+i and the health ports
// base+200+i.
func rangePorts(base, n int) []int {
	out := make([]int, 0, 3*n)
	for i := 0; i < n; i++ {
		out = append(out, base+i, base+100+i, base+200+i)
	}
	return out
}

func (c *Cluster) peers() string {
	var p []string
	for i := range c.Brokers {
		p = append(p, fmt.Sprintf("%d=127.0.0.1:%d:%d", i, c.Base+i, c.Base+100+i))
	}
	return strings.Join(p, ",")
}

// goEnv is a Go broker's environment.
func (c *Cluster) goBrokerEnv(i int) []string {
	b := c.Brokers[i]
	return []string{
		"LAB_MODE=1", "LAB_PEERS=" + c.peers(), "LAB_TOPICS=" + c.opt.Topics,
		"MY_POD_NAME=" + b.ID, "SKAFKA_DATA_DIR=" + c.Data,
		"SKAFKA_HOST=127.0.0.1", "SKAFKA_PORT=" + strconv.Itoa(b.Port),
		"SKAFKA_CONTROLLER_HEARTBEAT_ADDR=" + b.HeartbeatAddr,
		"SKAFKA_HEALTH_ADDR=" + b.HealthAddr,
		"SKAFKA_CLUSTER_ID=kaas-go-local", "SKAFKA_FLUSH_INTERVAL_MESSAGES=100", "SKAFKA_AUTH_DISABLED=true",
	}
}

func (c *Cluster) startAll(ctx context.Context) error {
	for i := range c.Brokers {
		if err := c.StartBroker(i); err != nil {
			return err
		}
	}
	return nil
}

// StartBroker starts (or restarts) broker i, appending to its log.
func (c *Cluster) StartBroker(i int) error {
	b := c.Brokers[i]
	if b.cmd != nil && !b.exited() {
		return fmt.Errorf("%s is already running (pid %d)", b.ID, b.cmd.Process.Pid)
	}
	logf, err := os.OpenFile(c.LogPath(i), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.opt.Bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + os.TempDir()}
	if c.opt.Flavour == FlavourRust {
		cmd.Env = append(cmd.Env, c.rustBrokerEnv(i)...)
	} else {
		cmd.Env = append(cmd.Env, c.goBrokerEnv(i)...)
	}
	cmd.Env = append(append(cmd.Env, c.opt.Env...), "KAASCTL_REALKAAS_RUN="+c.runID)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = c.opt.Root
	// Its own process group (a kill reaches anything it forks); and if this
	// test process dies without cleaning up, the kernel kills the broker.
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("starting %s (%s): %v", b.ID, c.opt.Bin, err)
	}
	logf.Close()
	b.cmd, b.done = cmd, make(chan struct{})
	c.register(cmd.Process.Pid)
	go func(b *Broker, cmd *exec.Cmd, done chan struct{}) {
		err := cmd.Wait()
		b.exitMu.Lock()
		b.exit = err
		b.exitMu.Unlock()
		c.unregister(cmd.Process.Pid)
		close(done)
	}(b, cmd, b.done)
	return nil
}

func (b *Broker) exited() bool {
	if b.done == nil {
		return true
	}
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// Running says whether broker i's process is alive.
func (c *Cluster) Running(i int) bool { return !c.Brokers[i].exited() }

// LogPath is broker i's log file.
func (c *Cluster) LogPath(i int) string {
	return filepath.Join(c.Logs, c.Brokers[i].ID+".log")
}

// Addrs lists the Kafka listeners of the brokers (all, running or not).
func (c *Cluster) Addrs() []string {
	var a []string
	for _, b := range c.Brokers {
		a = append(a, b.Addr())
	}
	return a
}

// Health is a broker's /healthz answer.
type Health struct {
	Status            string `json:"status"`
	BrokerID          string `json:"broker_id"`
	IsController      bool   `json:"is_controller"`
	ControllerID      string `json:"controller_id"`
	AssignmentVersion int64  `json:"assignment_version"`
	Recovering        int    `json:"partitions_recovering"`
}

// Health asks broker i's health endpoint.
func (c *Cluster) Health(ctx context.Context, i int) (Health, error) {
	var h Health
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.Brokers[i].HealthAddr+"/healthz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return h, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return h, fmt.Errorf("%s /healthz: %v", c.Brokers[i].ID, err)
	}
	return h, nil
}

// WaitReady waits until every running broker answers /healthz, its Kafka
// port accepts connections, and they agree on one controller. A broker that
// exits meanwhile fails the wait (errPortTaken when its log says so).
func (c *Cluster) WaitReady(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) {
		last = nil
		ctrl := ""
		for i, b := range c.Brokers {
			if b.cmd == nil {
				continue
			}
			if b.exited() {
				return c.exitError(i)
			}
			h, err := c.Health(ctx, i)
			if err != nil {
				last = fmt.Errorf("%s: %v", b.ID, err)
				break
			}
			conn, err := net.DialTimeout("tcp", b.Addr(), time.Second)
			if err != nil {
				last = fmt.Errorf("%s: %v", b.ID, err)
				break
			}
			conn.Close()
			if h.Recovering > 0 {
				last = fmt.Errorf("%s: %d partitions recovering", b.ID, h.Recovering)
				break
			}
			if h.ControllerID == "" || (ctrl != "" && h.ControllerID != ctrl) {
				last = fmt.Errorf("%s: controller %q (others say %q)", b.ID, h.ControllerID, ctrl)
				break
			}
			ctrl = h.ControllerID
		}
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("brokers not ready after %s: %v", within, last)
}

// WaitSettled waits until the controller has written an assignment listing
// exactly the running brokers as alive, every running broker has loaded that
// version, and no partition is recovering. Right after a restart kaas
// answers ListOffsets with log end 0 on partitions whose new leader has not
// taken over yet; a consumer that fetches then is reset to the log start.
func (c *Cluster) WaitSettled(ctx context.Context, within time.Duration) error {
	if err := c.WaitReady(ctx, within); err != nil {
		return err
	}
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) {
		last = c.settled(ctx)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("cluster not settled after %s: %v", within, last)
}

// SettleStarted is WaitSettled after brokers were started together. kaas's
// Go controller can miss one of them for good that way: its broker-set
// watcher (watchBrokerSet, polling every 2 s) takes its first snapshot
// after the first assignment was computed, so a broker that connected in
// between is in neither that assignment nor any later diff, until the set
// changes again. When a running broker is still not alive in
// assignment.json after a while, SettleStarted stops it, waits for the
// controller's next version (the change the watcher sees), starts it
// again and waits to settle, as an operator would; logf says so.
func (c *Cluster) SettleStarted(ctx context.Context, within time.Duration, logf func(format string, args ...any)) error {
	first := min(within/3, 20*time.Second)
	err := c.WaitSettled(ctx, first)
	if err == nil {
		return nil
	}
	missing, version := c.runningNotAlive()
	if len(missing) == 0 {
		return c.WaitSettled(ctx, within-first)
	}
	for _, i := range missing {
		logf("%s runs but assignment v%d does not list it alive after %s (kaas's controller missed it at start): restarting it", c.Brokers[i].ID, version, first)
		if err := c.Term(i); err != nil {
			return err
		}
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			if _, v := c.runningNotAlive(); v > version {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
		if err := c.StartBroker(i); err != nil {
			return err
		}
	}
	return c.WaitSettled(ctx, within)
}

// runningNotAlive lists the running brokers assignment.json does not list
// alive, and its version (0 when unreadable).
func (c *Cluster) runningNotAlive() ([]int, int64) {
	l, err := volume.Resolve(volume.ResolveInput{DataDirFlag: c.Data})
	if err != nil {
		return nil, 0
	}
	a, _, err := volume.ReadAssignment(l.AssignmentPath())
	if err != nil {
		return nil, 0
	}
	alive := map[string]bool{}
	for _, b := range a.Brokers {
		alive[b.ID] = b.Health == "alive"
	}
	var out []int
	for i, b := range c.Brokers {
		if c.Running(i) && !alive[b.ID] {
			out = append(out, i)
		}
	}
	return out, a.AssignmentVersion
}

func (c *Cluster) settled(ctx context.Context) error {
	l, err := volume.Resolve(volume.ResolveInput{DataDirFlag: c.Data})
	if err != nil {
		return err
	}
	b, err := os.ReadFile(l.AssignmentPath())
	if err != nil {
		return err
	}
	var a struct {
		AssignmentVersion int64 `json:"assignmentVersion"`
		Brokers           []struct {
			ID     string `json:"id"`
			Health string `json:"health"`
		} `json:"brokers"`
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	alive := map[string]bool{}
	for _, br := range a.Brokers {
		if br.Health == "alive" {
			alive[br.ID] = true
		}
	}
	for i, br := range c.Brokers {
		if c.Running(i) != alive[br.ID] {
			return fmt.Errorf("assignment v%d: %s alive=%v, running=%v", a.AssignmentVersion, br.ID, alive[br.ID], c.Running(i))
		}
		if !c.Running(i) {
			continue
		}
		h, err := c.Health(ctx, i)
		if err != nil {
			return err
		}
		if h.AssignmentVersion != a.AssignmentVersion || h.Recovering > 0 {
			return fmt.Errorf("%s: assignment v%d (file v%d), %d partitions recovering", br.ID, h.AssignmentVersion, a.AssignmentVersion, h.Recovering)
		}
	}
	return nil
}

func (c *Cluster) exitError(i int) error {
	b := c.Brokers[i]
	b.exitMu.Lock()
	err := b.exit
	b.exitMu.Unlock()
	log, _ := os.ReadFile(c.LogPath(i))
	if bytes.Contains(bytes.ToLower(log), []byte("address already in use")) {
		return fmt.Errorf("%s exited (%v): %w", b.ID, err, errPortTaken)
	}
	if bytes.Contains(log, []byte(`"open disk storage"`)) && bytes.Contains(log, []byte("manifest: parse")) {
		return fmt.Errorf("%s exited (%v): %w", b.ID, err, errTornManifest)
	}
	return fmt.Errorf("%s exited (%v); its log ends:\n%s", b.ID, err, tail(log, 2000))
}

// Controller returns the index of the broker the running brokers name as
// controller.
func (c *Cluster) Controller(ctx context.Context) (int, error) {
	for i := range c.Brokers {
		if !c.Running(i) {
			continue
		}
		h, err := c.Health(ctx, i)
		if err != nil {
			continue
		}
		for j, b := range c.Brokers {
			if b.ID == h.ControllerID {
				return j, nil
			}
		}
	}
	return -1, errors.New("no running broker names a controller")
}

// Kill sends SIGKILL to broker i's process group and waits for it to exit.
func (c *Cluster) Kill(i int) error { return c.signal(i, syscall.SIGKILL, 10*time.Second) }

// Term sends SIGTERM (a graceful stop) and waits up to 20 s; then SIGKILL.
func (c *Cluster) Term(i int) error {
	if err := c.signal(i, syscall.SIGTERM, 20*time.Second); err != nil {
		c.signal(i, syscall.SIGKILL, 10*time.Second)
		return err
	}
	return nil
}

func (c *Cluster) signal(i int, sig syscall.Signal, wait time.Duration) error {
	b := c.Brokers[i]
	if b.cmd == nil || b.exited() {
		return nil
	}
	syscall.Kill(-b.cmd.Process.Pid, sig)
	select {
	case <-b.done:
		return nil
	case <-time.After(wait):
		return fmt.Errorf("%s did not exit within %s of %v", b.ID, wait, sig)
	}
}

// Stop kills every broker of the cluster (SIGKILL: nothing the tests assert
// depends on a graceful stop at cleanup) and waits for them.
func (c *Cluster) Stop() {
	for i := range c.Brokers {
		c.Kill(i)
	}
	c.forget()
}

func (c *Cluster) forget() {
	liveMu.Lock()
	delete(liveSet, c)
	liveMu.Unlock()
}

// The registry: one file per broker process, naming the process and its
// owner, so a run that was killed (SIGKILL, OOM, a lost CI runner) has its
// brokers reaped by the next run.
type regEntry struct {
	PID   int    `json:"pid"`
	Owner int    `json:"owner"`
	RunID string `json:"runId"`
	Bin   string `json:"bin"`
}

func (c *Cluster) register(pid int) {
	e := regEntry{PID: pid, Owner: os.Getpid(), RunID: c.runID, Bin: c.opt.Bin}
	b, _ := json.Marshal(e)
	os.WriteFile(filepath.Join(c.regDir, strconv.Itoa(pid)), b, 0o644)
}

func (c *Cluster) unregister(pid int) {
	os.Remove(filepath.Join(c.regDir, strconv.Itoa(pid)))
}

// Reap kills brokers a previous run left running: registry entries whose
// owner process is gone and whose process still carries the run's marker in
// its environment. It returns what it killed.
func Reap() ([]string, error) {
	root, err := CacheRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "running")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var killed []string
	for _, de := range ents {
		p := filepath.Join(dir, de.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var e regEntry
		if json.Unmarshal(b, &e) != nil || e.PID <= 0 {
			os.Remove(p)
			continue
		}
		if e.Owner != os.Getpid() && processAlive(e.Owner) && ownerIsTest(e.Owner) {
			continue // another run still owns it
		}
		if processAlive(e.PID) && hasMarker(e.PID, e.RunID) {
			syscall.Kill(-e.PID, syscall.SIGKILL)
			syscall.Kill(e.PID, syscall.SIGKILL)
			killed = append(killed, fmt.Sprintf("pid %d (run %s)", e.PID, e.RunID))
		}
		os.Remove(p)
	}
	return killed, nil
}

func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

// ownerIsTest is true when pid is a process that could own brokers (not a
// recycled pid of something else): it is a Go test binary or kaasctl run.
func ownerIsTest(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return runtime.GOOS != "linux" // without /proc, assume it is
	}
	return bytes.Contains(b, []byte(".test"))
}

func hasMarker(pid int, runID string) bool {
	f, err := os.Open(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, 0); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	want := "KAASCTL_REALKAAS_RUN=" + runID
	for sc.Scan() {
		if sc.Text() == want {
			return true
		}
	}
	return false
}
