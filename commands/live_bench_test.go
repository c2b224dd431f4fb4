//go:build unix

package commands

import (
	"bytes"
	"context"
	"fmt"
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
	sb, err := sandbox.New(sandbox.Options{Brokers: 3, DataDir: b.TempDir(), Topics: []sandbox.Topic{{Name: "orders", Partitions: 4}}})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(sb.Bootstrap()...))
	if err != nil {
		b.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	sem := make(chan struct{}, 32)
	for i := range groups {
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
	cl.Close()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
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
