//go:build realkaas && unix

package realkaas

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Helpers of the Rust-only scenarios (rust_*_test.go).

// newRustCluster starts a 3-broker Rust 0.2.18 cluster for t.
func newRustCluster(t *testing.T, topics string, env ...string) *Cluster {
	t.Helper()
	return startCluster(t, Options{Flavour: FlavourRust, Topics: topics, Env: env})
}

// brokerLogLine is one JSON line of a Rust broker's log.
type brokerLogLine struct {
	Time    time.Time
	Level   string
	Message string
	Fields  map[string]any
}

// brokerLog reads broker i's JSON log (KAAS_LOG_FORMAT=json): every line
// whose message contains one of msgs (all lines when none given).
func brokerLog(t *testing.T, c *Cluster, i int, msgs ...string) []brokerLogLine {
	t.Helper()
	f, err := os.Open(c.LogPath(i))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []brokerLogLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var raw struct {
			Timestamp time.Time      `json:"timestamp"`
			Level     string         `json:"level"`
			Fields    map[string]any `json:"fields"`
		}
		if json.Unmarshal(sc.Bytes(), &raw) != nil {
			continue
		}
		msg, _ := raw.Fields["message"].(string)
		keep := len(msgs) == 0
		for _, m := range msgs {
			keep = keep || strings.Contains(msg, m)
		}
		if keep {
			out = append(out, brokerLogLine{Time: raw.Timestamp, Level: raw.Level, Message: msg, Fields: raw.Fields})
		}
	}
	return out
}

// activeGroups starts one consumer for each of coordGroups (orders and
// events), waits until each read what was produced, and gives every group
// an explicit entry: entries go only to groups a broker reports active at
// a recompute, and the groups formed after the cluster's balanced version,
// so one non-controller broker is killed and started again (two
// recomputes). It returns the consumers by group.
func activeGroups(t *testing.T, c *Cluster, rec *assignmentRecorder) map[string]*consumer {
	t.Helper()
	produce(t, c, "orders", 3, 10)
	cs := map[string]*consumer{}
	for _, g := range coordGroups {
		cs[g] = startConsumer(t, c, g, "orders")
	}
	for _, g := range coordGroups {
		waitPositions(t, all("orders", 3, 10), cs[g])
	}
	ctrl := controllerOf(t, c)
	other := (ctrl + 1) % len(c.Brokers)
	v, _ := rec.latest()
	if err := c.Kill(other); err != nil {
		t.Fatal(err)
	}
	v = waitVersion(t, rec, v, func(a assignmentFile) bool { return len(aliveIDs(a)) == len(c.Brokers)-1 })
	if err := c.StartBroker(other); err != nil {
		t.Fatal(err)
	}
	waitVersion(t, rec, v, func(a assignmentFile) bool { return len(aliveIDs(a)) == len(c.Brokers) })
	if err := c.WaitSettled(context.Background(), 60*time.Second); err != nil {
		t.Fatal(err)
	}
	// The last version moved groups to their entries' brokers: wait until
	// each re-joined there (a plan made before counts it idle).
	for _, g := range coordGroups {
		waitGroupState(t, c, g, "Stable")
	}
	return cs
}

func controllerOf(t *testing.T, c *Cluster) int {
	t.Helper()
	i, err := c.Controller(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// entriesOf is a version's explicit entries, group → broker.
func entriesOf(a assignmentFile) map[string]string {
	out := map[string]string{}
	for _, e := range a.ConsumerGroups {
		if _, ok := out[e.Group]; !ok {
			out[e.Group] = e.Broker
		}
	}
	return out
}

func indexOf(c *Cluster, id string) int {
	for i, b := range c.Brokers {
		if b.ID == id {
			return i
		}
	}
	return -1
}

func fmtMap(m map[string]string) string {
	var b strings.Builder
	for _, g := range coordGroups {
		if v, ok := m[g]; ok {
			fmt.Fprintf(&b, "%s=%s ", g, v)
		}
	}
	return strings.TrimSpace(b.String())
}
