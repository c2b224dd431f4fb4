//go:build realkaas && unix

package realkaas

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Size-based retention on the Rust broker. KAAS_TOPICS takes only a name
// and a partition count; retention.bytes is the operator's
// DATA/<topic>/.config.json (retentionBytes), and the 0.2.18 broker never
// reads it: its size cleaner (crates/kaas-storage/src/cleaner.rs) is not
// started by bins/kaas. The log start moves only by DeleteRecords, which is
// what the cleaner would call. kaasctl's retention forecast follows the log
// start's own advance: it fires before a lagging group's committed offset is
// passed, and its lag counts what was deleted.

func logStart(t *testing.T, c *Cluster, k tp) int64 {
	t.Helper()
	adm := kadm.NewClient(newClient(t, c))
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	var start int64
	// Right after a restart one broker's metadata can name a leader kgo
	// does not know yet ("unknown broker"): ask again.
	waitFor(t, 30*time.Second, "ListOffsets earliest of "+k.String(), func() error {
		s, err := adm.ListStartOffsets(ctx, k.Topic)
		if err != nil {
			return err
		}
		o, ok := s.Lookup(k.Topic, k.Partition)
		if !ok || o.Err != nil {
			return fmt.Errorf("%s: %v", k, o.Err)
		}
		start = o.Offset
		return nil
	})
	return start
}

type retentionView struct {
	Groups []struct {
		Partitions []struct {
			Partition int32  `json:"partition"`
			Committed int64  `json:"committed"`
			LogEnd    int64  `json:"logEnd"`
			Lag       *int64 `json:"lag"`
		} `json:"partitions"`
		Forecast *struct {
			Retention *struct {
				Known     bool    `json:"known"`
				Seconds   float64 `json:"seconds"`
				Partition string  `json:"partition"`
				Breached  bool    `json:"breached"`
			} `json:"retention"`
		} `json:"forecast"`
	} `json:"groups"`
}

func TestRustRetention(t *testing.T) {
	t.Parallel()
	c := newRustCluster(t, "orders:1")
	k := tp{"orders", 0}
	produceBig(t, c, "orders", 1, 100, 200)
	dir := filepath.Join(c.Data, "orders")
	cfg, _ := json.Marshal(map[string]int64{"retentionBytes": 2000, "segmentBytes": 4096})
	if err := os.WriteFile(filepath.Join(dir, ".config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	termAll(t, c)
	startAll(t, c) // partitions opened again with the topic config on disk
	produceBig(t, c, "orders", 1, 100, 200)
	if s, end := logStart(t, c, k), logEnds(t, c, "orders")[k]; s != 0 || end != 200 {
		t.Errorf("with retention.bytes 2000 over %d records of 200 bytes the log is %d–%d: kaas 0.2.18 enforces no retention.bytes", end, s, end)
	} else {
		t.Logf("retentionBytes 2000 in %s: the log still starts at 0 with 40 KB in it (no size cleaner runs)", filepath.Join(dir, ".config.json"))
	}
	// A lagging group at 100; the log start advances by DeleteRecords, 10
	// every 400 ms, up to 150.
	adm := kadm.NewClient(newClient(t, c))
	commit := kadm.Offsets{}
	commit.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 100, LeaderEpoch: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := adm.CommitAllOffsets(ctx, "g-ret", commit); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for at := int64(10); at <= 150 && ctx.Err() == nil; at += 10 {
			o := kadm.Offsets{}
			o.Add(kadm.Offset{Topic: "orders", Partition: 0, At: at})
			// Right after a restart the client may not know the
			// partition's leader yet ("unknown broker"): ask again.
			deadline := time.Now().Add(10 * time.Second)
			for {
				resp, err := adm.DeleteRecords(ctx, o)
				if err == nil {
					err = resp.Error()
				}
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("DeleteRecords to %d: %v", at, err)
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(400 * time.Millisecond)
		}
	}()
	brokers := strings.Join(c.Addrs(), ",")
	// Right after the restart the group's coordinator may not be
	// available yet: described as failed, asked again as an operator would.
	var r result
	waitFor(t, 30*time.Second, "g-ret described", func() error {
		r = kaasctl(t, "groups", "describe", "g-ret", "--data-dir", c.Data, "--kaas-version", "0.2.18", "--brokers", brokers, "--drain-window", "2s", "-o", "json")
		if r.code == 1 && strings.Contains(r.stderr, "COORDINATOR_NOT_AVAILABLE") {
			return fmt.Errorf("%s", r.stderr)
		}
		return nil
	})
	if r.code != 0 && r.code != 3 {
		t.Fatalf("%v", r)
	}
	v := decode[retentionView](t, r)
	startNow := logStart(t, c, k)
	if len(v.Groups) != 1 || v.Groups[0].Forecast == nil || v.Groups[0].Forecast.Retention == nil {
		t.Fatalf("groups describe --drain-window gave no retention forecast: %v", r)
	}
	f := v.Groups[0].Forecast.Retention
	t.Logf("retention forecast with the log start at %d and g-ret at 100: %+v", startNow, *f)
	if startNow < 100 && (!f.Known || f.Breached || f.Seconds <= 0 || f.Seconds > 30 || f.Partition != "orders/0") {
		t.Errorf("the log start advances 25/s toward g-ret's 100 (now %d): the forecast should say within seconds, before it is passed: %+v", startNow, *f)
	}
	wg.Wait()
	if s := logStart(t, c, k); s != 150 {
		t.Fatalf("log start %d after DeleteRecords to 150", s)
	}
	// The coordinator can answer OffsetFetch with nothing for a moment (a
	// group with no members, reloaded): ask until it serves g-ret's 100.
	eventually(t, 30*time.Second, "lag past the log start, and the forecast breached", func() error {
		od := decode[offlineDescribe](t, ok(t, "groups", "describe", "g-ret", "--data-dir", c.Data, "--kaas-version", "0.2.18", "-o", "json"))
		if p := od.Groups[0].Partitions[0]; p.Lag == nil || p.HighWatermark == nil || *p.Lag != *p.HighWatermark-100 || p.Committed != 100 {
			return fmt.Errorf("with the log start (150) past g-ret's 100, lag should count the 50 deleted records too (log end − 100): %+v", p)
		}
		r := kaasctl(t, "groups", "describe", "g-ret", "--data-dir", c.Data, "--kaas-version", "0.2.18", "--brokers", brokers, "--drain-window", "1s", "-o", "json")
		if r.code != 0 && r.code != 3 {
			return fmt.Errorf("%v", r)
		}
		v = decode[retentionView](t, r)
		if v.Groups[0].Partitions[0].Committed < 0 {
			// kaas's coordinator has not loaded g-ret (no member ever
			// joined; a coordinator that took it over serves nothing):
			// the live forecast has no committed offset to compare.
			t.Logf("the coordinator serves no committed offset for g-ret (not loaded): the live forecast cannot say it was passed; offline lag did")
			return nil
		}
		if rf := v.Groups[0].Forecast; rf == nil || rf.Retention == nil || !rf.Retention.Breached {
			return fmt.Errorf("the retention forecast does not say the committed offset was passed: %+v", rf)
		}
		return nil
	})
	m, _ := os.ReadFile(filepath.Join(layoutOf(t, c).PartitionDir("orders", 0), "manifest.json"))
	t.Logf("after DeleteRecords to 150 the partition's manifest says %s", m)
}
