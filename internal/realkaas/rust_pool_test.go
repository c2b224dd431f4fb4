//go:build realkaas && unix

package realkaas

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// A volume pool: the Rust brokers run with a second log dir
// (KAAS_LOG_DIRS) and AlterReplicaLogDirs moves orders/1 into it (in this
// lab the placement is the leader's own, as kaas's dev mode does without an
// operator). Every offline answer of kaasctl given the pool dir
// (--log-dirs) finds the partition there; without it, each says a pool dir
// was not given.
func TestRustPoolLogDirs(t *testing.T) {
	t.Parallel()
	fast := filepath.Join(t.TempDir(), "fast")
	if err := os.MkdirAll(fast, 0o755); err != nil {
		t.Fatal(err)
	}
	pool, _ := json.Marshal([]map[string]any{{"name": "fast", "path": fast, "defaultEligible": false}})
	c := newRustCluster(t, "orders:3", "KAAS_LOG_DIRS="+string(pool))
	produce(t, c, "orders", 3, 20)
	k := tp{"orders", 1}
	moveToLogDir(t, c, k, fast)
	if _, err := os.Stat(filepath.Join(fast, "orders", "1")); err != nil {
		t.Fatalf("AlterReplicaLogDirs answered, but %s has no orders/1: %v", fast, err)
	}
	if _, err := os.Stat(filepath.Join(c.Data, "orders", "1")); err == nil {
		t.Errorf("orders/1 is still in the data dir after the move")
	}
	produce(t, c, "orders", 3, 5) // appended in the pool dir
	cs := startConsumer(t, c, "g-pool", "orders")
	waitPositions(t, all("orders", 3, 25), cs)
	cs.stop()
	with := []string{"--data-dir", c.Data, "--kaas-version", "0.2.18", "--log-dirs", fast}
	without := []string{"--data-dir", c.Data, "--kaas-version", "0.2.18"}
	// groups describe, offline: the log end and lag of orders/1.
	for _, args := range [][]string{with, without} {
		od := decode[offlineDescribe](t, ok(t, append([]string{"groups", "describe", "g-pool", "-o", "json"}, args...)...))
		for _, p := range od.Groups[0].Partitions {
			if p.Partition != 1 {
				continue
			}
			switch {
			case len(args) == len(with) && (p.HighWatermark == nil || *p.HighWatermark != 25 || p.Lag == nil || *p.Lag != 0):
				t.Errorf("groups describe --log-dirs: orders/1 %+v; its segments in %s end at 25", p, fast)
			case len(args) == len(without) && (p.Lag != nil || !strings.Contains(p.LagNote, "--log-dirs")):
				t.Errorf("groups describe without the pool dir: orders/1 %+v, want lag unknown and a note naming --log-dirs", p)
			}
		}
	}
	// volume check: the pool dir's partition is read (its manifest and log).
	vc := decode[checkView](t, kaasctl(t, append([]string{"volume", "check", "-o", "json"}, with...)...))
	for _, f := range vc.Findings {
		if strings.Contains(f.Path, fast) && f.Severity == "error" {
			t.Errorf("volume check --log-dirs: %s %s: %s", f.Code, f.Path, f.Message)
		}
	}
	// An offline reset plan (dry run): to the log end read from the pool dir;
	// without it the row is refused naming the missing pool dir.
	for _, args := range [][]string{with, without} {
		r := kaasctl(t, append([]string{"offsets", "reset", "--group", "g-pool", "--topic", "orders", "--to-latest", "--offline", "-o", "json"}, args...)...)
		v := decode[resetView](t, r)
		for _, g := range v.Groups {
			for _, row := range g.Rows {
				if row.Partition != 1 {
					continue
				}
				if len(args) == len(with) && (row.Error != "" || row.New != 25) {
					t.Errorf("offline reset --to-latest --log-dirs: orders/1 %+v", row)
				}
				if len(args) == len(without) && !strings.Contains(row.Error+row.Detail+strings.Join(row.Warnings, " "), "--log-dirs") {
					t.Errorf("offline reset --to-latest without the pool dir: orders/1 %+v, want it refused naming --log-dirs", row)
				}
			}
		}
	}
	// The pool dir from kaas's own variable, as the broker's env has it.
	r := kaasctlEnv(t, []string{"KAAS_LOG_DIRS=" + string(pool)}, "groups", "describe", "g-pool", "--data-dir", c.Data, "--kaas-version", "0.2.18", "-o", "json")
	if od := decode[offlineDescribe](t, r); od.Groups[0].TotalLag != 0 || !od.Groups[0].LagKnown {
		t.Errorf("KAAS_LOG_DIRS from the environment: %v", r)
	}
	l, err := volume.Resolve(volume.ResolveInput{DataDirFlag: c.Data, LogDirsFlag: []string{fast}, KaasVersionFlag: "0.2.18"})
	if err != nil || l.PartitionDir("orders", 1) != filepath.Join(fast, "orders", "1") {
		t.Errorf("layout with the pool: %v %s", err, l.PartitionDir("orders", 1))
	}
}

// moveToLogDir sends AlterReplicaLogDirs for k to its leader (kaas moves
// only partitions it leads) and waits for it to answer without error.
func moveToLogDir(t *testing.T, c *Cluster, k tp, dir string) {
	t.Helper()
	leader := partitionEntries(t, c)[k].Broker
	cl := newClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrAlterReplicaLogDirsRequest()
	d := kmsg.NewAlterReplicaLogDirsRequestDir()
	d.Dir = dir
	dt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
	dt.Topic, dt.Partitions = k.Topic, []int32{k.Partition}
	d.Topics = append(d.Topics, dt)
	req.Dirs = append(req.Dirs, d)
	var node int32 = -1
	fmt.Sscanf(leader, "kaas-%d", &node)
	resp, err := req.RequestWith(ctx, cl.Broker(int(node)))
	if err != nil {
		t.Fatalf("AlterReplicaLogDirs to %s: %v", leader, err)
	}
	for _, tt := range resp.Topics {
		for _, p := range tt.Partitions {
			if p.ErrorCode != 0 {
				t.Fatalf("AlterReplicaLogDirs %s to %s on %s: error %d", k, dir, leader, p.ErrorCode)
			}
		}
	}
	t.Logf("moved %s into the pool dir %s on its leader %s", k, dir, leader)
}
