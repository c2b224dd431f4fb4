package commands

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// fromFileVolume writes an offline volume with groups×topics×parts rows'
// worth of partitions: a manifest per partition and an offset file per
// group, and the --from-file plan (group,topic,partition,offset) naming
// every partition of every group. It returns the data dir and the plan.
func fromFileVolume(tb testing.TB, groups, topics, parts int) (data, plan string) {
	tb.Helper()
	data = tb.TempDir()
	od := filepath.Join(data, "__cluster", "__consumer_offsets")
	if err := os.MkdirAll(od, 0o755); err != nil {
		tb.Fatal(err)
	}
	os.WriteFile(filepath.Join(data, "__cluster", "assignment.json"), []byte(`{"version":1,"brokers":[]}`), 0o644)
	for t := range topics {
		for p := range parts {
			dir := filepath.Join(data, fmt.Sprintf("topic-%03d", t), fmt.Sprint(p))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				tb.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"epoch":1,"highWatermark":100000,"logStartOffset":0}`), 0o644)
		}
	}
	plan = filepath.Join(tb.TempDir(), "plan.csv")
	f, err := os.Create(plan)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for g := range groups {
		name := fmt.Sprintf("group-%05d", g)
		os.WriteFile(filepath.Join(od, name+".json"), []byte(`{"offsets":{"topic-000/0":1}}`), 0o644)
		for t := range topics {
			for p := range parts {
				fmt.Fprintf(w, "%s,topic-%03d,%d,%d\n", name, t, p, 10+g+p)
			}
		}
	}
	w.Flush()
	f.Close()
	return data, plan
}

// BenchmarkResetFromFile plans a --from-file of 1,000,000 rows (1,000
// groups × 10 topics × 100 partitions) offline, as a dry-run in JSON: the
// whole path from reading the CSV to the rendered plan.
func BenchmarkResetFromFile(b *testing.B) {
	for _, n := range []struct{ groups, topics, parts int }{{10, 10, 100}, {100, 10, 100}, {1000, 10, 100}} {
		rows := n.groups * n.topics * n.parts
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			data, plan := fromFileVolume(b, n.groups, n.topics, n.parts)
			b.ResetTimer()
			for range b.N {
				r := runCLI(b, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "--all-groups", "--from-file", plan, "--allow-unverified-log-end", "-o", "json", "-q")
				if r.Code != 0 {
					b.Fatalf("exit %d: %.2000s", r.Code, r.Err)
				}
			}
			b.ReportMetric(float64(rows), "rows")
		})
	}
}

// BenchmarkResetFromFileOneGroup is Kafka's one-group layout
// (topic,partition,offset): one group with every row, executed offline.
func BenchmarkResetFromFileOneGroup(b *testing.B) {
	for _, rows := range []int{20_000, 80_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			data, _ := fromFileVolume(b, 0, 0, 0)
			plan := filepath.Join(b.TempDir(), "plan.csv")
			f, _ := os.Create(plan)
			w := bufio.NewWriter(f)
			for i := range rows {
				fmt.Fprintf(w, "t%d,%d,%d\n", i%10, i/10, i)
			}
			w.Flush()
			f.Close()
			gf := filepath.Join(data, "__cluster", "__consumer_offsets", "g.json")
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				os.WriteFile(gf, []byte(`{"offsets":{"t0/0":1}}`), 0o644)
				b.StartTimer()
				r := runCLI(b, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "--group", "g", "--from-file", plan, "--allow-unverified-log-end", "--execute", "--keep-backups", "1", "-q")
				if r.Code != 0 {
					b.Fatalf("exit %d: %.2000s", r.Code, r.Err)
				}
			}
			b.ReportMetric(float64(rows), "rows")
		})
	}
}
