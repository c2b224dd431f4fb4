//go:build realkaas && unix

package realkaas

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bg is a long-running kaasctl (exporter, watch) in its own process group,
// stopped at cleanup.
type bg struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func startBG(t *testing.T, args ...string) *bg {
	t.Helper()
	b := &bg{done: make(chan struct{})}
	b.cmd = exec.Command(kaasctlBin, args...)
	b.cmd.Env = append(os.Environ(), "NO_COLOR=1", "KAASCTL_CONFIG="+filepath.Join(t.TempDir(), "none.yaml"))
	w := lockedWriter{&b.mu, &b.out}
	b.cmd.Stdout, b.cmd.Stderr = w, w
	b.cmd.SysProcAttr = sysProcAttr()
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.cmd.Wait(); close(b.done) }()
	t.Cleanup(func() {
		b.stop()
		if t.Failed() {
			t.Logf("kaasctl %s output:\n%s", strings.Join(args, " "), b.output())
		}
	})
	return b
}

func (b *bg) output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.String()
}

// stop sends SIGTERM (kaasctl flushes and exits), then SIGKILL after 10 s.
func (b *bg) stop() {
	select {
	case <-b.done:
		return
	default:
	}
	syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.done
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// metrics is one scrape: series (name{labels}) → value.
type metrics map[string]float64

var seriesRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)`)

func scrape(addr string) (metrics, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	m := metrics{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		s := seriesRE.FindStringSubmatch(line)
		if s == nil {
			continue
		}
		v, err := strconv.ParseFloat(s[3], 64)
		if err != nil {
			continue
		}
		m[s[1]+s[2]] = v
	}
	return m, nil
}

// get returns the value of the series of name whose labels include every
// label=value of want (the first match), and whether one matched.
func (m metrics) get(name string, want ...string) (float64, bool) {
	for k, v := range m {
		if !strings.HasPrefix(k, name+"{") && k != name {
			continue
		}
		okAll := true
		for i := 0; i+1 < len(want); i += 2 {
			if !strings.Contains(k, fmt.Sprintf("%s=%q", want[i], want[i+1])) {
				okAll = false
				break
			}
		}
		if okAll {
			return v, true
		}
	}
	return 0, false
}

// sum adds every series of name whose labels include want.
func (m metrics) sum(name string, want ...string) float64 {
	var s float64
	for k, v := range m {
		if !strings.HasPrefix(k, name+"{") && k != name {
			continue
		}
		okAll := true
		for i := 0; i+1 < len(want); i += 2 {
			if !strings.Contains(k, fmt.Sprintf("%s=%q", want[i], want[i+1])) {
				okAll = false
				break
			}
		}
		if okAll {
			s += v
		}
	}
	return s
}

// assignmentRecorder copies every version of assignment.json it sees (a
// 20 ms poll) into dir as v<version>.json, so the scenarios can compare
// what kaasctl says about the versions with what kaas wrote.
type assignmentRecorder struct {
	dir    string
	mu     sync.Mutex
	seen   map[int64]string
	cancel context.CancelFunc
	done   chan struct{}
}

func recordAssignments(t *testing.T, c *Cluster) *assignmentRecorder {
	t.Helper()
	r := &assignmentRecorder{dir: filepath.Join(t.TempDir(), "versions"), seen: map[int64]string{}, done: make(chan struct{})}
	os.MkdirAll(r.dir, 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	src := layoutOf(t, c).AssignmentPath()
	go func() {
		defer close(r.done)
		for ctx.Err() == nil {
			if b, err := os.ReadFile(src); err == nil {
				var v struct {
					AssignmentVersion int64 `json:"assignmentVersion"`
				}
				if json.Unmarshal(b, &v) == nil {
					r.mu.Lock()
					if _, ok := r.seen[v.AssignmentVersion]; !ok {
						p := filepath.Join(r.dir, fmt.Sprintf("v%04d.json", v.AssignmentVersion))
						os.WriteFile(p, b, 0o644)
						r.seen[v.AssignmentVersion] = p
					}
					r.mu.Unlock()
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

func (r *assignmentRecorder) latest() (int64, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var best int64 = -1
	for v := range r.seen {
		if v > best {
			best = v
		}
	}
	return best, r.seen[best]
}

func (r *assignmentRecorder) versions() map[int64]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[int64]string{}
	for k, v := range r.seen {
		out[k] = v
	}
	return out
}

// assignmentFile is the part of assignment.json the scenarios read.
type assignmentFile struct {
	ControllerEpoch   int64  `json:"controllerEpoch"`
	AssignmentVersion int64  `json:"assignmentVersion"`
	Controller        string `json:"controller"`
	Brokers           []struct {
		ID     string `json:"id"`
		Health string `json:"health"`
	} `json:"brokers"`
	ConsumerGroups []struct {
		Group  string `json:"groupId"`
		Broker string `json:"broker"`
	} `json:"consumerGroups"`
}

func readAssignment(t *testing.T, path string) assignmentFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var a assignmentFile
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return a
}
