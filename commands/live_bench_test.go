//go:build unix

package commands

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/internal/sandbox"
)

// BenchmarkLiveDescribeAll10k runs `kaasctl groups describe --all` with a
// volume and brokers over 10,000 groups (each with 4 committed partitions)
// on a 3-broker sandbox. SPEC §7: under 2 s, requests batched per
// coordinator (O(brokers) round trips, not O(groups)). Reports the requests
// the run sent in total and to the busiest broker.
func BenchmarkLiveDescribeAll10k(b *testing.B) {
	TuneRuntime() // as the binary runs
	const groups = 10000
	sb := seededSandbox(b, groups)
	env := map[string]string{"KAASCTL_BROKERS": strings.Join(sb.Bootstrap(), ",")}
	perBroker := regexp.MustCompile(`kaas-\d+ (\d+)`)
	total := regexp.MustCompile(`with (\d+) requests`)
	var maxPer, sum float64
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for range b.N {
		var out, errb bytes.Buffer
		code := Main([]string{"kaasctl", "groups", "describe", "--all", "--data-dir", sb.Layout().DataDir, "-o", benchFormat},
			&IOStreams{Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }})
		if code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
		b.StopTimer()
		if n := strings.Count(strings.ReplaceAll(out.String(), `": "`, `":"`), `"group":"bench-`); n < groups {
			b.Fatalf("described %d groups", n)
		}
		maxPer = 0
		for _, m := range perBroker.FindAllStringSubmatch(errb.String(), -1) {
			v, _ := strconv.ParseFloat(m[1], 64)
			maxPer = max(maxPer, v)
		}
		if m := total.FindStringSubmatch(errb.String()); m != nil {
			sum, _ = strconv.ParseFloat(m[1], 64)
		}
		b.StartTimer()
	}
	// CPU of the whole process (kaasctl and the in-process sandbox) per
	// run: steadier than wall time on a shared machine.
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
	b.ReportMetric(sum, "requests/op")
	b.ReportMetric(maxPer, "requests-busiest-broker/op")
	b.ReportMetric(float64(groups), "groups")
}

// benchFormat is the output of the benchmarked run (jsonl: what a script
// piping 10,000 groups would ask for).
var benchFormat = "jsonl"

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// seededSandbox starts a 3-broker sandbox whose volume holds n committed
// groups bench-00000… (4 partitions each), committed through the wire.
func seededSandbox(b *testing.B, n int) *sandbox.Sandbox {
	b.Helper()
	sb, err := sandbox.New(sandbox.Options{Brokers: 3, DataDir: b.TempDir(), Topics: []sandbox.Topic{{Name: "orders", Partitions: 4}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(sb.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(sb.Bootstrap()...))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			os := kadm.Offsets{}
			for p := range int32(4) {
				os.AddOffset("orders", p, int64(i%7), -1)
			}
			if err := adm.CommitAllOffsets(ctx, fmt.Sprintf("bench-%05d", i), os); err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	return sb
}

// BenchmarkDescribeOneGroup10kFiles describes one named group with brokers,
// with and without --data-dir, on a volume of 10,000 offset files: the
// volume adds the group's own file, not a scan of the directory (target:
// at most 1.2× the wire-only CPU). The figure is the CPU (user + sys) of
// the kaasctl process alone: the benchmark builds the binary and runs it
// against the in-process sandbox, whose own work is not counted.
func BenchmarkDescribeOneGroup10kFiles(b *testing.B) {
	sb := seededSandbox(b, 10000)
	bin := filepath.Join(b.TempDir(), "kaasctl")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/kaasctl").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	brokers := strings.Join(sb.Bootstrap(), ",")
	run := func(b *testing.B, args ...string) float64 {
		var cpu time.Duration
		for b.Loop() {
			cmd := exec.Command(bin, append([]string{"groups", "describe", "bench-04242", "-o", "json", "--brokers", brokers}, args...)...)
			cmd.Env = []string{"HOME=" + b.TempDir()}
			out, err := cmd.Output()
			if err != nil || !strings.Contains(string(out), `"bench-04242"`) {
				b.Fatalf("%v: %s", err, out)
			}
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		per := cpu.Seconds() / float64(b.N)
		b.ReportMetric(per*1000, "process-cpu-ms/op")
		return per
	}
	var wireOnly float64
	b.Run("wire-only", func(b *testing.B) { wireOnly = run(b) })
	b.Run("with-data-dir", func(b *testing.B) {
		withVol := run(b, "--data-dir", sb.Layout().DataDir)
		if wireOnly > 0 {
			b.ReportMetric(withVol/wireOnly, "x-wire-only-cpu")
			b.ReportMetric(1.2, "target-x")
		}
	})
}
