//go:build realkaas && unix

package realkaas

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/internal/wire"
)

// A group member in a process of its own, so a scenario can kill it
// (SIGKILL): it neither leaves the group nor heartbeats again, and the
// coordinator has to time it out. It logs what the broker told it, one
// line each: "assigned MEMBER GENERATION" at every assignment and
// "committed MEMBER GENERATION topic/partition=offset,..." after every
// commit.

// envConsumerProc holds a consumerSpec (JSON) when this test binary is
// to be such a member.
const envConsumerProc = "KAASCTL_REALKAAS_CONSUMER"

type consumerSpec struct {
	Brokers []string      `json:"brokers"`
	Group   string        `json:"group"`
	Topic   string        `json:"topic"`
	Client  string        `json:"client"`
	Lock    string        `json:"lock"`
	Session time.Duration `json:"session"`
}

// fileLock is a group's commit lock: a mutex in this process, then an
// exclusive flock on path, which the group's consumer processes take too
// (the kernel drops a killed one's).
type fileLock struct {
	mu   sync.Mutex
	path string
	f    *os.File
}

func (l *fileLock) Lock() {
	l.mu.Lock()
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return // the lock dir went with the cluster: nothing left to serialise
	}
	for syscall.Flock(int(f.Fd()), syscall.LOCK_EX) == syscall.EINTR {
	}
	l.f = f
}

func (l *fileLock) Unlock() {
	if l.f != nil {
		syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
		l.f = nil
	}
	l.mu.Unlock()
}

// commitLockPath is the file that serialises group's commits on c.
func commitLockPath(c *Cluster, group string) string {
	dir := filepath.Join(filepath.Dir(c.Data), "commit-locks")
	os.MkdirAll(dir, 0o755)
	return filepath.Join(dir, unsafeName.ReplaceAllString(group, "_")+".lock")
}

// runConsumerProc is the member process: it consumes and commits until
// it is killed.
func runConsumerProc(spec string) int {
	var s consumerSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	v, err := wire.ParseMaxVersions("kaas")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	lock := &fileLock{path: s.Lock}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Brokers...), kgo.MaxVersions(v), kgo.ClientID(s.Client), kgo.RetryTimeout(30*time.Second),
		kgo.MetadataMinAge(250*time.Millisecond), kgo.ConsumerGroup(s.Group), kgo.ConsumeTopics(s.Topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.SessionTimeout(s.Session), kgo.HeartbeatInterval(500*time.Millisecond), kgo.RebalanceTimeout(10*time.Second),
		kgo.AdjustFetchOffsetsFn(clearEpochs),
		kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, _ map[string][]int32) {
			id, gen := cl.GroupMetadata()
			fmt.Printf("assigned %s %d\n", id, gen)
		}),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, _ map[string][]int32) { commitLogged(ctx, cl, lock) }))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	for {
		if cl.PollFetches(ctx).NumRecords() > 0 {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			commitLogged(cctx, cl, lock)
			cancel()
		}
	}
}

// clearEpochs drops the leader epoch of the offsets a consumer resumes
// from (kaas serves committed leader epoch 0 and answers
// OffsetForLeaderEpoch with error 73; see startConsumerOpts).
func clearEpochs(_ context.Context, m map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	for _, ps := range m {
		for p, o := range ps {
			ps[p] = o.WithEpoch(-1)
		}
	}
	return m, nil
}

// commitLogged commits what cl consumed under the group's lock and logs
// the offsets it committed.
func commitLogged(ctx context.Context, cl *kgo.Client, lock *fileLock) {
	lock.Lock()
	defer lock.Unlock()
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		return
	}
	var parts []string
	for topic, ps := range cl.CommittedOffsets() {
		for p, o := range ps {
			parts = append(parts, topic+"/"+strconv.Itoa(int(p))+"="+strconv.FormatInt(o.Offset, 10))
		}
	}
	slices.Sort(parts)
	id, gen := cl.GroupMetadata()
	fmt.Printf("committed %s %d %s\n", id, gen, strings.Join(parts, ","))
}

// memberLog is one line a member logged, with when the test read it.
type memberLog struct {
	at      time.Time
	what    string // assigned | committed
	member  string
	gen     int32
	offsets string
}

// consumerProc is a running member process.
type consumerProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	logs []memberLog
	errb strings.Builder
}

// startConsumerProc starts a member of group (client id client, session
// timeout session) reading topic, and returns once it has its first
// assignment.
func startConsumerProc(t *testing.T, c *Cluster, group, topic, client string, session time.Duration) *consumerProc {
	t.Helper()
	spec, _ := json.Marshal(consumerSpec{Brokers: c.Addrs(), Group: group, Topic: topic, Client: client, Lock: commitLockPath(c, group), Session: session})
	p := &consumerProc{cmd: exec.Command(os.Args[0], "-test.run=^$"), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), envConsumerProc+"="+string(spec))
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = &p.errb
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go p.read(out)
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done })
	waitFor(t, 60*time.Second, client+"'s first assignment", func() error {
		if p.member() == "" {
			return fmt.Errorf("not assigned yet")
		}
		return nil
	})
	return p
}

func (p *consumerProc) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		gen, _ := strconv.Atoi(f[2])
		l := memberLog{at: time.Now(), what: f[0], member: f[1], gen: int32(gen)}
		if len(f) > 3 {
			l.offsets = f[3]
		}
		p.mu.Lock()
		p.logs = append(p.logs, l)
		p.mu.Unlock()
	}
	p.cmd.Wait()
	close(p.done)
}

// member is the member id of its last assignment ("" before the first).
func (p *consumerProc) member() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.logs) - 1; i >= 0; i-- {
		if p.logs[i].what == "assigned" {
			return p.logs[i].member
		}
	}
	return ""
}

// log is what it logged so far.
func (p *consumerProc) log() []memberLog {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.logs)
}

// kill SIGKILLs the member and returns when.
func (p *consumerProc) kill(t *testing.T) time.Time {
	t.Helper()
	at := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	return at
}
