//go:build unix

package realkaas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Flavour is the kaas generation a cluster runs: the Go flavour (kaas
// before its Rust rewrite, the volume layout of "Go / Rust ≤ 0.2.15") or
// the Rust 0.2.18 broker. Its value is the --kaas-version that names it.
type Flavour string

const (
	// FlavourGo is kaas's Go flavour (../shared/kaas-go/src).
	FlavourGo Flavour = "go"
	// FlavourRust is kaas's Rust 0.2.18 broker (../shared/kaas-rust/src).
	FlavourRust Flavour = "0.2.18"
)

// Flavours are the generations the tier runs, in the order it runs them.
var Flavours = []Flavour{FlavourGo, FlavourRust}

// Name is the flavour as a test name ("go", "rust-0.2.18").
func (f Flavour) Name() string {
	if f.orGo() == FlavourRust {
		return "rust-0.2.18"
	}
	return "go"
}

// KaasVersion is the flavour as kaasctl's --kaas-version takes it.
func (f Flavour) KaasVersion() string { return string(f.orGo()) }

func (f Flavour) orGo() Flavour {
	if f == "" {
		return FlavourGo
	}
	return f
}

func (f Flavour) check() error {
	switch f {
	case FlavourGo, FlavourRust:
		return nil
	}
	return fmt.Errorf("unknown kaas flavour %q (want %q or %q)", f, FlavourGo, FlavourRust)
}

// RustSourceDir finds kaas-rust's source: $KAASCTL_REALKAAS_RUST_SRC,
// else shared/kaas-rust/src beside a parent of the working directory.
func RustSourceDir() (string, error) {
	if d := os.Getenv("KAASCTL_REALKAAS_RUST_SRC"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "Cargo.toml")); err != nil {
			return "", fmt.Errorf("KAASCTL_REALKAAS_RUST_SRC=%s: %v", d, err)
		}
		return filepath.Abs(d)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "shared", "kaas-rust", "src")
		if _, err := os.Stat(filepath.Join(p, "Cargo.toml")); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", fmt.Errorf("kaas-rust source not found: no shared/kaas-rust/src/Cargo.toml above %s (set KAASCTL_REALKAAS_RUST_SRC)", wd)
}

// cargoCmd is the cargo that builds the Rust broker: $KAASCTL_REALKAAS_CARGO,
// else cargo on PATH, else rustup's ~/.cargo/bin/cargo. Under rustup the
// toolchain is "stable" (the tree's rust-toolchain.toml pins a release that
// cannot be downloaded here).
func cargoCmd() (string, []string, error) {
	var env []string
	if os.Getenv("RUSTUP_TOOLCHAIN") == "" {
		env = append(env, "RUSTUP_TOOLCHAIN=stable")
	}
	if c := os.Getenv("KAASCTL_REALKAAS_CARGO"); c != "" {
		return c, env, nil
	}
	if p, err := exec.LookPath("cargo"); err == nil {
		return p, env, nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		if p := filepath.Join(home, ".cargo", "bin", "cargo"); isExec(p) {
			return p, env, nil
		}
	}
	return "", nil, errors.New("no cargo to build the Rust kaas broker: install a Rust toolchain ≥ 1.85 (rustup, or Debian's rustc-web cargo-web) and protobuf-compiler, or set KAASCTL_REALKAAS_CARGO")
}

// rustVersion is what the toolchain says of itself (part of the cache key).
func rustVersion(ctx context.Context, cargo string, env []string) (string, error) {
	cmd := exec.CommandContext(ctx, cargo, "--version")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v\n%s", cargo, err, tail(out, 1000))
	}
	return strings.TrimSpace(string(out)), nil
}

// BuildRust returns the Rust broker binary for src, building it (cargo
// build --release -p kaas, crates from Debian's packages through
// src/lab/fetch-crates.sh) into the cache when the source hash has no binary
// yet. The crates, cargo's target dir and the binary live under the cache
// root; src is only read (a lock file that no longer resolves is
// regenerated in a copy). Concurrent builds of one hash wait on a lock.
func BuildRust(ctx context.Context, src string) (BuildResult, error) {
	start := time.Now()
	root, err := CacheRoot()
	if err != nil {
		return BuildResult{}, err
	}
	cargo, env, err := cargoCmd()
	if err != nil {
		return BuildResult{}, err
	}
	ver, err := rustVersion(ctx, cargo, env)
	if err != nil {
		return BuildResult{}, err
	}
	hash, err := SourceHash(src, ver)
	if err != nil {
		return BuildResult{}, err
	}
	dir := filepath.Join(root, "bin", "rust-"+hash)
	bin := filepath.Join(dir, "kaas")
	if isExec(bin) {
		return BuildResult{Bin: bin, Cached: true, Elapsed: time.Since(start)}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return BuildResult{}, fmt.Errorf("broker cache: %v", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return BuildResult{}, err
	}
	defer unlock()
	if isExec(bin) {
		return BuildResult{Bin: bin, Cached: true, Elapsed: time.Since(start)}, nil
	}
	if _, err := exec.LookPath("protoc"); err != nil {
		return BuildResult{}, errors.New("building the Rust kaas broker needs protoc: apt-get install protobuf-compiler")
	}
	home, err := rustCrates(ctx, root, src)
	if err != nil {
		return BuildResult{}, err
	}
	env = append(env, "CARGO_HOME="+home, "CARGO_TARGET_DIR="+filepath.Join(root, "rust-target"))
	built, err := cargoBuild(ctx, cargo, env, src, root)
	if err != nil {
		return BuildResult{}, err
	}
	tmp := fmt.Sprintf("%s.tmp-%d", bin, os.Getpid())
	if err := copyFile(built, tmp); err != nil {
		return BuildResult{}, fmt.Errorf("broker cache: %v", err)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return BuildResult{}, fmt.Errorf("broker cache: %v", err)
	}
	return BuildResult{Bin: bin, Elapsed: time.Since(start)}, nil
}

func lockDir(dir string) (func(), error) {
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("broker cache lock: %v", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return nil, fmt.Errorf("broker cache lock: %v", err)
	}
	return func() { syscall.Flock(int(lock.Fd()), syscall.LOCK_UN); lock.Close() }, nil
}

// rustCrates returns the CARGO_HOME whose config replaces the public
// registry with Debian's crates, fetching them (src/lab/fetch-crates.sh,
// about 15 s) the first time.
func rustCrates(ctx context.Context, root, src string) (string, error) {
	dir := filepath.Join(root, "rust-crates")
	home := filepath.Join(dir, "cargo-home")
	if _, err := os.Stat(filepath.Join(home, "config.toml")); err == nil {
		return home, nil
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(src, "lab", "fetch-crates.sh"), dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("fetching the Rust broker's crates (%s/lab/fetch-crates.sh %s): %v\n%s", src, dir, err, tail(out, 3000))
	}
	return home, nil
}

// cargoBuild builds -p kaas from src with the lock file as shipped; when
// cargo says it no longer resolves against the crates (a Debian point
// release moved one), it builds a copy of src with the lock file
// regenerated. It returns the built binary.
func cargoBuild(ctx context.Context, cargo string, env []string, src, root string) (string, error) {
	out, err := runCargo(ctx, cargo, env, src, "build", "--release", "--offline", "--locked", "-p", "kaas")
	if err != nil && lockStale(out) {
		cp := filepath.Join(root, "rust-src")
		os.RemoveAll(cp)
		if err := exec.CommandContext(ctx, "cp", "-r", src, cp).Run(); err != nil {
			return "", fmt.Errorf("copying %s to regenerate its lock file: %v", src, err)
		}
		exec.Command("chmod", "-R", "u+w", cp).Run()
		if out, err := runCargo(ctx, cargo, env, cp, "generate-lockfile", "--offline"); err != nil {
			return "", fmt.Errorf("building the Rust kaas broker: cargo generate-lockfile in %s: %v\n%s", cp, err, tail(out, 4000))
		}
		out, err = runCargo(ctx, cargo, env, cp, "build", "--release", "--offline", "-p", "kaas")
	}
	if err != nil {
		return "", fmt.Errorf("building the Rust kaas broker (cargo build --release -p kaas in %s): %v\n%s", src, err, tail(out, 4000))
	}
	bin := filepath.Join(root, "rust-target", "release", "kaas")
	if !isExec(bin) {
		return "", fmt.Errorf("building the Rust kaas broker: cargo succeeded but %s is missing", bin)
	}
	return bin, nil
}

func runCargo(ctx context.Context, cargo string, env []string, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, cargo, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd.CombinedOutput()
}

// lockStale: cargo refused --locked because the lock file names crate
// versions the directory source does not have.
func lockStale(out []byte) bool {
	s := string(out)
	return strings.Contains(s, "--locked") || strings.Contains(s, "failed to select a version") ||
		strings.Contains(s, "lock file") && strings.Contains(s, "needs to be updated")
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

// heldNets are the loopback /24s of running Rust clusters, by base port.
var heldNets = map[int]string{}

// layoutRust gives broker N the address NET.(N+1), all brokers one Kafka,
// heartbeat and health port (kaas advertises every peer with the port of
// the listener the client used, so the ports must match, as pods' do). NET
// is a random 127.a.b not held by another cluster of this process, and
// every address:port is probed free.
func (c *Cluster) layoutRust() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	for try := 0; try < 200; try++ {
		base := 20000 + 10*rand.IntN(1100)
		netw := fmt.Sprintf("127.%d.%d", 100+rand.IntN(150), 1+rand.IntN(250))
		if !c.rustFree(base, netw) {
			continue
		}
		ports := []int{base, base + 100, base + 200}
		for _, p := range ports {
			heldPorts[p] = true
		}
		heldBy[base] = ports
		heldNets[base] = netw
		c.Base, c.net = base, netw
		for i := 0; i < c.opt.Brokers; i++ {
			host := fmt.Sprintf("%s.%d", netw, i+1)
			c.Brokers = append(c.Brokers, &Broker{Index: i, ID: fmt.Sprintf("kaas-%d", i), Host: host, Port: base,
				HeartbeatAddr: net.JoinHostPort(host, strconv.Itoa(base+100)), HealthAddr: net.JoinHostPort(host, strconv.Itoa(base+200))})
		}
		return base, nil
	}
	return 0, errors.New("no free loopback address and port range for the Rust brokers")
}

func (c *Cluster) rustFree(base int, netw string) bool {
	for _, n := range heldNets {
		if n == netw {
			return false
		}
	}
	for _, p := range []int{base, base + 100, base + 200} {
		if heldPorts[p] {
			return false
		}
		for i := 0; i < c.opt.Brokers; i++ {
			l, err := net.Listen("tcp", net.JoinHostPort(fmt.Sprintf("%s.%d", netw, i+1), strconv.Itoa(p)))
			if err != nil {
				return false
			}
			l.Close()
		}
	}
	return true
}

// rustTopics turns "orders:3,events:6" into KAAS_TOPICS JSON.
func rustTopics(spec string) (string, error) {
	type topic struct {
		Name       string `json:"name"`
		Partitions int    `json:"partitions"`
	}
	var ts []topic
	for _, item := range strings.Split(spec, ",") {
		name, n, ok := strings.Cut(strings.TrimSpace(item), ":")
		p, err := strconv.Atoi(n)
		if !ok || err != nil || p <= 0 || name == "" {
			return "", fmt.Errorf("topics %q: want name:partitions[,…]", spec)
		}
		ts = append(ts, topic{name, p})
	}
	b, err := json.Marshal(ts)
	return string(b), err
}

// rustBrokerEnv is a Rust broker's environment, as src/lab/run-cluster.sh
// sets it.
func (c *Cluster) rustBrokerEnv(i int) []string {
	b := c.Brokers[i]
	var peers []string
	for _, p := range c.Brokers {
		peers = append(peers, fmt.Sprintf("%d=%s", p.Index, p.Host))
	}
	topics, err := rustTopics(c.opt.Topics)
	if err != nil {
		topics = "[]" // Start checked it; never reached
	}
	listeners, _ := json.Marshal([]map[string]string{{"name": "internal", "addr": b.Addr()}})
	return []string{
		"LAB_MODE=1", "LAB_PEERS=" + strings.Join(peers, ","), "LAB_HEALTH_PORT=" + strconv.Itoa(c.Base+200),
		"MY_POD_NAME=" + b.ID, "KAAS_BROKER_ID=" + strconv.Itoa(i),
		"KAAS_DATA_DIR=" + c.Data, "KAAS_CLUSTER_ID=kaas-lab",
		"KAAS_LISTENERS=" + string(listeners), "KAAS_HEALTH_ADDR=" + b.HealthAddr,
		"KAAS_CONTROLLER_HEARTBEAT_ADDR=" + b.HeartbeatAddr, "KAAS_PEER_HEARTBEAT_PORT=" + strconv.Itoa(c.Base+100),
		"KAAS_TOPICS=" + topics, "KAAS_AUTH_DISABLED=true", "KAAS_LOG_FORMAT=json", "RUST_LOG=info",
	}
}

// Freeze stops broker i with SIGSTOP (a hung process: its sockets stay
// open, it answers nothing); Thaw resumes it with SIGCONT.
func (c *Cluster) Freeze(i int) error { return c.signalNoWait(i, syscall.SIGSTOP) }

// Thaw resumes a frozen broker (SIGCONT).
func (c *Cluster) Thaw(i int) error { return c.signalNoWait(i, syscall.SIGCONT) }

func (c *Cluster) signalNoWait(i int, sig syscall.Signal) error {
	b := c.Brokers[i]
	if b.cmd == nil || b.exited() {
		return fmt.Errorf("%s is not running", b.ID)
	}
	return syscall.Kill(-b.cmd.Process.Pid, sig)
}
