//go:build unix

package realkaas

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// The cache key follows the source: same tree, same hash; one changed byte,
// another hash; a testdata dir does not count.
func TestSourceHash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "cmd", "skafka"), 0o755)
	os.MkdirAll(filepath.Join(dir, "testdata"), 0o755)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "cmd", "skafka", "main.go"), []byte("package main\n"), 0o644)
	h1, err := SourceHash(dir, "go1.26")
	if err != nil {
		t.Fatal(err)
	}
	if h2, _ := SourceHash(dir, "go1.26"); h2 != h1 {
		t.Errorf("same tree, hashes %s and %s", h1, h2)
	}
	if h, _ := SourceHash(dir, "go1.27"); h == h1 {
		t.Error("another Go version, same hash")
	}
	os.WriteFile(filepath.Join(dir, "testdata", "x"), []byte("y"), 0o644)
	if h, _ := SourceHash(dir, "go1.26"); h != h1 {
		t.Error("a testdata file changed the hash")
	}
	os.WriteFile(filepath.Join(dir, "cmd", "skafka", "main.go"), []byte("package main \n"), 0o644)
	if h, _ := SourceHash(dir, "go1.26"); h == h1 {
		t.Error("a changed source file kept the hash")
	}
}

// pickBase skips a range one of whose ports is taken, and never hands out
// a port of a range it handed out before (ranges of different bases overlap).
func TestPickBase(t *testing.T) {
	t.Parallel()
	a, err := pickBase(3)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseBase(a)
	for i := 0; i < 3; i++ {
		for _, off := range []int{0, 100, 200} {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(a+off+i)))
			if err != nil {
				t.Fatalf("base %d: port %d not free: %v", a, a+off+i, err)
			}
			l.Close()
		}
	}
	b, err := pickBase(3)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseBase(b)
	if a == b {
		t.Errorf("base %d handed out twice", a)
	}
	for _, p := range rangePorts(b, 3) {
		if slices.Contains(rangePorts(a, 3), p) {
			t.Errorf("bases %d and %d share port %d", a, b, p)
		}
	}
}

// Reap removes entries of processes that are gone and leaves an entry
// whose owner (this test) is alive and whose process lacks the marker.
func TestReapRegistry(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("KAASCTL_REALKAAS_CACHE", cache)
	run := filepath.Join(cache, "running")
	os.MkdirAll(run, 0o755)
	write := func(name string, e regEntry) {
		b, _ := json.Marshal(e)
		os.WriteFile(filepath.Join(run, name), b, 0o644)
	}
	// A dead process (pid far above pid_max) of a dead owner.
	write("4194999", regEntry{PID: 4194999, Owner: 4194998, RunID: "gone"})
	// This process, recorded as a broker: it lacks the run marker, so it is
	// not killed, only forgotten.
	write(strconv.Itoa(os.Getpid()), regEntry{PID: os.Getpid(), Owner: 4194998, RunID: "not-a-broker"})
	killed, err := Reap()
	if err != nil {
		t.Fatal(err)
	}
	if len(killed) != 0 {
		t.Errorf("killed %v", killed)
	}
	if ents, _ := os.ReadDir(run); len(ents) != 0 {
		t.Errorf("registry keeps %d entries", len(ents))
	}
}

// The Rust brokers' topics are KAAS_TOPICS JSON made from the tier's
// "name:partitions" list; a malformed list is an error, not a broker with
// no topics.
func TestRustTopics(t *testing.T) {
	t.Parallel()
	got, err := rustTopics("orders:3, events:6")
	if err != nil || got != `[{"name":"orders","partitions":3},{"name":"events","partitions":6}]` {
		t.Errorf("rustTopics: %s, %v", got, err)
	}
	for _, bad := range []string{"", "orders", "orders:0", ":3", "orders:x"} {
		if _, err := rustTopics(bad); err == nil {
			t.Errorf("rustTopics(%q): no error", bad)
		}
	}
}

// A Rust cluster's brokers get one address each on a loopback /24 no other
// cluster of this process holds, and share one Kafka, heartbeat and health
// port; releasing the base frees the /24.
func TestLayoutRust(t *testing.T) {
	t.Parallel()
	a := &Cluster{opt: Options{Brokers: 3, Flavour: FlavourRust}}
	if _, err := a.layoutBrokers(); err != nil {
		t.Fatal(err)
	}
	defer releaseBase(a.Base)
	b := &Cluster{opt: Options{Brokers: 3, Flavour: FlavourRust}}
	if _, err := b.layoutBrokers(); err != nil {
		t.Fatal(err)
	}
	defer releaseBase(b.Base)
	if a.net == b.net || a.Base == b.Base {
		t.Errorf("two clusters share net %s / base %d", a.net, a.Base)
	}
	for i, br := range a.Brokers {
		want := a.net + "." + strconv.Itoa(i+1)
		if br.Host != want || br.Port != a.Base || br.ID != "kaas-"+strconv.Itoa(i) {
			t.Errorf("broker %d: %s %s:%d, want kaas-%d %s:%d", i, br.ID, br.Host, br.Port, i, want, a.Base)
		}
	}
	portsMu.Lock()
	held := heldNets[a.Base] == a.net
	portsMu.Unlock()
	if !held {
		t.Errorf("net %s not held", a.net)
	}
}
