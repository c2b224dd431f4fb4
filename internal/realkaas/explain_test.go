//go:build realkaas && unix

package realkaas

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// explainVerdict is what the scenario reads of groups explain -o json.
type explainVerdict struct {
	Groups []struct {
		Group    string `json:"group"`
		Severity string `json:"severity"`
		Findings []struct {
			Code      string `json:"code"`
			Partition string `json:"partition"`
			Command   string `json:"command"`
		} `json:"findings"`
		Next *struct {
			Command string `json:"command"`
			For     string `json:"for"`
		} `json:"next"`
		Assumes string `json:"assumes"`
	} `json:"groups"`
}

// TestRealExplainAfterBrokerKill (issue 36): the brokers of a Go-flavour
// cluster are killed with a producer running and started again, so a
// partition comes back served below its segments (a broker taking it over
// at the epoch its manifest holds trusts the manifest's end) while the
// group has committed past that end. groups explain's verdict pages and
// names the incident, and its next command, run as printed, is doctor with
// the flags given: it exits 3 and names the stale end. (Rust 0.2.18's
// stale end comes from its recovery checkpoint, which kills do not leave
// reliably: TestRealExplainAfterCoordinatorKill covers both flavours.)
func TestRealExplainAfterBrokerKill(t *testing.T) {
	t.Parallel()
	testRealExplainAfterBrokerKill(t, FlavourGo)
}

func testRealExplainAfterBrokerKill(t *testing.T, f Flavour) {
	c := newFlavourCluster(t, f, "orders:3")
	brokers := strings.Join(c.Addrs(), ",")
	const group = "g-explain"
	produce(t, c, "orders", 3, 50)
	termAll(t, c) // every broker flushes the log end it holds
	startAll(t, c)
	settled(t, c)
	stopProducing := producing(t, c, 6)
	defer stopProducing()
	produceAtLeast(t, c, "orders", 3, 150)
	cs := startConsumer(t, c, group, "orders")
	waitFor(t, 120*time.Second, group+" committed past 200 on every partition", func() error {
		got := committed(t, c, group)
		for k, v := range got {
			if v < 200 {
				return fmt.Errorf("%s at %d", k, v)
			}
		}
		if len(got) != 3 {
			return fmt.Errorf("committed %s", fmtOffsets(got))
		}
		return nil
	})
	cs.stop()
	killUntilStale(t, c, f, group)

	args := []string{"groups", "explain", "--data-dir", c.Data, "--kaas-version", f.KaasVersion(), "--brokers", brokers, "--window", "0"}
	var next string
	eventually(t, 60*time.Second, "groups explain pages on the stale end", func() error {
		r := kaasctl(t, append(args, "-o", "json", group)...)
		v := decode[explainVerdict](t, r)
		if r.code != 3 || len(v.Groups) != 1 || v.Groups[0].Severity != "page" || v.Groups[0].Next == nil {
			return fmt.Errorf("%v", r)
		}
		vd := v.Groups[0]
		var codes []string
		for _, fd := range vd.Findings {
			codes = append(codes, fd.Code)
		}
		if !slices.Contains(codes, "servedBehindLog") && !slices.Contains(codes, "committedPastServedEnd") {
			return fmt.Errorf("findings %v", codes)
		}
		if !strings.HasPrefix(vd.Next.Command, "kaasctl doctor ") || !strings.Contains(vd.Next.Command, "--brokers ") || !strings.Contains(vd.Next.Command, "--data-dir "+c.Data) {
			return fmt.Errorf("next %+v", vd.Next)
		}
		t.Logf("verdict: findings %v, next %s (%s)", codes, vd.Next.Command, vd.Assumes)
		next = vd.Next.Command
		return nil
	})
	if next == "" {
		return
	}
	human := kaasctl(t, append(args, group)...)
	if !strings.Contains(human.stdout, "next: "+next) || !strings.Contains(human.stdout, "PAGE") {
		t.Errorf("the human verdict lacks its next command:\n%s", human.stdout)
	}
	words := strings.Fields(next)
	r := kaasctl(t, words[1:]...)
	if r.code != 3 || !strings.Contains(r.stdout, "servedBehindLog") {
		t.Errorf("the next command, run as printed, should exit 3 and name the stale end:\n%v", r)
	}
}

// killUntilStale kills every broker (SIGKILL) with the producer running
// and starts them again, until a partition comes back served below what
// its segments held: which partitions a broker trusts a stale end of
// depends on the epochs the restart left, so a kill may not leave one;
// each further kill is another chance (at most four), right after a burst
// of records.
func killUntilStale(t *testing.T, c *Cluster, f Flavour, group string) {
	t.Helper()
	for attempt := 1; attempt <= 4; attempt++ {
		// Records the brokers have not flushed an end for yet (Go: the
		// manifest is rewritten only on takeover, roll and close; Rust:
		// the recovery checkpoint trails the log).
		produce(t, c, "orders", 3, 20)
		for i := range c.Brokers {
			if err := c.Kill(i); err != nil {
				t.Fatal(err)
			}
		}
		held, _ := offlineEndsOf(t, c, f, group)
		startAll(t, c)
		settled(t, c)
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			served := logEnds(t, c, "orders")
			for k, end := range held {
				if s, ok := served[k]; ok && s > 0 && s < end {
					t.Logf("kill %d: %s served at %d, its segments held %d", attempt, k, s, end)
					return
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("kill %d: no partition served below its segments (%s held)", attempt, fmtOffsets(held))
	}
	t.Fatal("four kills with the producer running left no partition served below its segments")
}

// settled waits until the controller published a version with every
// broker.
func settled(t *testing.T, c *Cluster) {
	t.Helper()
	if err := c.WaitSettled(context.Background(), 60*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestRealExplainAfterCoordinatorKill (issue 36): a group's coordinator is
// killed; the broker that takes the group over has not loaded it, so an
// admin commit of one partition rewrites its offset file with only that
// partition (kaas never merges a commit into a group it has not loaded).
// groups explain names the partitions left without an offset
// (uncommittedPartitions) and its next command, run as printed, lists
// them.
func TestRealExplainAfterCoordinatorKill(t *testing.T) {
	t.Parallel()
	forFlavours(t, testRealExplainAfterCoordinatorKill)
}

func testRealExplainAfterCoordinatorKill(t *testing.T, f Flavour) {
	c := newFlavourCluster(t, f, "orders:3")
	const group = "g-cold"
	produce(t, c, "orders", 3, 30)
	adminCommit(t, c, group, 3, 30)
	victim := whoisOffline(t, c, false, nil, group)[group].Coordinator
	if err := c.Kill(brokerIndex(t, c, victim)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, group+" moved off "+victim, func() error {
		if co := whoisOffline(t, c, false, nil, group)[group].Coordinator; co == victim || co == "" {
			return fmt.Errorf("coordinator %q", co)
		}
		return nil
	})
	adm := kadm.NewClient(newClient(t, c))
	one := kadm.Offsets{}
	one.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 30, LeaderEpoch: -1})
	waitFor(t, 60*time.Second, "a commit of orders/0 alone to the new coordinator", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := adm.CommitAllOffsets(ctx, group, one); err != nil {
			return err
		}
		if fileHolds(t, c, group, "orders/1") {
			return fmt.Errorf("the file still holds orders/1")
		}
		return nil
	})

	var alive []string
	for i, b := range c.Brokers {
		if b.ID != victim {
			alive = append(alive, c.Addrs()[i])
		}
	}
	brokers := strings.Join(alive, ",")
	args := []string{"groups", "explain", "--data-dir", c.Data, "--kaas-version", f.KaasVersion(), "--brokers", brokers, "--window", "0", "-o", "json", group}
	r := kaasctl(t, args...)
	v := decode[explainVerdict](t, r)
	if r.code != 3 || len(v.Groups) != 1 || v.Groups[0].Next == nil {
		t.Fatalf("want a verdict with a next command: %v", r)
	}
	vd := v.Groups[0]
	var codes []string
	for _, fd := range vd.Findings {
		codes = append(codes, fd.Code)
	}
	if !slices.Contains(codes, "uncommittedPartitions") || vd.Severity == "ok" {
		t.Errorf("the verdict does not name the partitions the cold commit left without an offset: %s %v", vd.Severity, codes)
	}
	t.Logf("verdict %s: findings %v, next %s (%s)", vd.Severity, codes, vd.Next.Command, vd.Assumes)
	if !strings.Contains(vd.Next.Command, "--brokers "+alive[0]) || !strings.Contains(vd.Next.Command, "--data-dir "+c.Data) {
		t.Errorf("the next command lacks the flags given: %s", vd.Next.Command)
	}
	words := strings.Fields(vd.Next.Command)
	nr := kaasctl(t, words[1:]...)
	if nr.code != 0 && nr.code != 3 || !strings.Contains(nr.stdout, "orders") {
		t.Errorf("the next command, run as printed:\n%v", nr)
	}
}
