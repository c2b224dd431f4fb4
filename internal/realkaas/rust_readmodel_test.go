//go:build realkaas && unix

package realkaas

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// What the Rust 0.2.18 broker does with offset files its own coordinator
// left in shapes it then misreads: each scenario asserts where the consumer
// resumed and that kaasctl's read model said so beforehand (which offset
// the consumer resumes from, and that the lag of those partitions is
// unknown, never a lag counted from an offset no consumer will get).

// offlineLag is groups describe's offline answer for group: lag per
// partition and the total, as kaasctl prints it.
func offlineLag(t *testing.T, c *Cluster, group string) string {
	t.Helper()
	r := ok(t, "groups", "describe", group, "--data-dir", c.Data, "--kaas-version", "0.2.18")
	return r.stdout + r.stderr
}

// resumeView is the read model's answer for a partition of groups describe
// -o json offline: which offset a consumer resumes from, and the lag.
type resumeView struct {
	Groups []struct {
		TotalLag   int64 `json:"totalLag"`
		Partitions []struct {
			Topic      string `json:"topic"`
			Partition  int32  `json:"partition"`
			Lag        *int64 `json:"lag"`
			ResumeRule string `json:"resumeRule"`
			LagUnknown string `json:"lagUnknown"`
		} `json:"partitions"`
	} `json:"groups"`
}

// wantResume asserts that groups describe (offline, 0.2.18 pinned) gives
// every partition of group the resume rule of want ("" for any) and an
// unknown lag, except those in known, whose lag it gives; and that the
// total counts only those.
func wantResume(t *testing.T, c *Cluster, group string, rule map[tp]string, known map[tp]int64) {
	t.Helper()
	v := decode[resumeView](t, ok(t, "groups", "describe", group, "--data-dir", c.Data, "--kaas-version", "0.2.18", "-o", "json"))
	if len(v.Groups) != 1 {
		t.Fatalf("groups describe %s: %+v", group, v)
	}
	var total int64
	seen := 0
	for _, p := range v.Groups[0].Partitions {
		k := tp{p.Topic, p.Partition}
		want, named := rule[k]
		if !named {
			continue
		}
		seen++
		if lag, ok := known[k]; ok {
			total += lag
			if p.Lag == nil || *p.Lag != lag {
				t.Errorf("%s %s: lag %v, want %d (resume rule %s)", group, k, p.Lag, lag, p.ResumeRule)
			}
		} else if p.Lag != nil {
			t.Errorf("%s %s: lag %d, but the consumer will not resume from that offset (resume rule %q, want %q)", group, k, *p.Lag, p.ResumeRule, want)
		}
		if want != "" && p.ResumeRule != want {
			t.Errorf("%s %s: resume rule %q, want %q (lag unknown: %q)", group, k, p.ResumeRule, want, p.LagUnknown)
		}
	}
	if seen != len(rule) {
		t.Errorf("%s: groups describe shows %d of the %d partitions of its committed topics: %+v", group, seen, len(rule), v.Groups[0].Partitions)
	}
	if v.Groups[0].TotalLag != total {
		t.Errorf("%s: total lag %d, want %d (only the partitions whose resume offset is known)", group, v.Groups[0].TotalLag, total)
	}
}

// kaas's OffsetDelete (an admin client's; kaasctl offsets delete writes the
// file itself) rewrites the file
// as a plain map; a 0.2.18 coordinator that loads it reads it as empty, so
// after a restart the consumer resumes from auto.offset.reset everywhere.
func TestRustPlainMapAfterOffsetDelete(t *testing.T) {
	t.Parallel()
	c := newRustCluster(t, "orders:3")
	produce(t, c, "orders", 3, 30)
	cs := startConsumer(t, c, "g-pm", "orders")
	waitPositions(t, all("orders", 3, 30), cs)
	cs.stop()
	waitGroupState(t, c, "g-pm", "Empty")
	adm := kadm.NewClient(newClient(t, c))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	ts := kadm.TopicsSet{}
	ts.Add("orders", 0)
	if _, err := adm.DeleteOffsets(ctx, "g-pm", ts); err != nil {
		t.Fatalf("OffsetDelete orders/0: %v", err)
	}
	dir, err := layoutOf(t, c).LiveOffsetsDir()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(dir + "/g-pm.json")
	t.Logf("after OffsetDelete of orders/0 the file is %s", b)
	if strings.Contains(string(b), `"offsets"`) {
		t.Errorf("kaas's OffsetDelete wrote the envelope (%s): the plain-map finding rests on it writing a plain map", b)
	}
	t.Logf("kaasctl, before the restart:\n%s", offlineLag(t, c, "g-pm"))
	termAll(t, c)
	wantResume(t, c, "g-pm", map[tp]string{{"orders", 1}: "fileReadsEmpty", {"orders", 2}: "fileReadsEmpty"}, nil)
	startAll(t, c)
	resumeAt(t, c, "a plain-map file after a coordinator restart", "g-pm", all("orders", 3, 0), "orders")
}

// A coordinator that has not loaded a group writes its first commit over
// the file as the whole file: a commit naming 1 of 6 partitions leaves a
// file of 1, and the consumer re-reads the other 5 from the start.
func TestRustFileCutByFirstCommit(t *testing.T) {
	t.Parallel()
	c := newRustCluster(t, "events:6")
	produce(t, c, "events", 6, 20)
	cs := startConsumer(t, c, "g-cut", "events")
	waitPositions(t, all("events", 6, 20), cs)
	cs.stop()
	termAll(t, c)
	startAll(t, c) // every coordinator cache cold
	adm := kadm.NewClient(newClient(t, c))
	off := kadm.Offsets{}
	off.Add(kadm.Offset{Topic: "events", Partition: 0, At: 20, LeaderEpoch: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := adm.CommitAllOffsets(ctx, "g-cut", off); err != nil {
		t.Fatalf("committing events/0 alone: %v", err)
	}
	dir, _ := layoutOf(t, c).LiveOffsetsDir()
	waitFor(t, 15*time.Second, "the cut file", func() error {
		b, _ := os.ReadFile(dir + "/g-cut.json")
		if strings.Contains(string(b), "events/1") {
			return errString("file still holds events/1: " + string(b))
		}
		return nil
	})
	b, _ := os.ReadFile(dir + "/g-cut.json")
	t.Logf("after one commit of events/0 to a cold coordinator the file is %s", b)
	t.Logf("kaasctl:\n%s", offlineLag(t, c, "g-cut"))
	rules := map[tp]string{}
	for p := int32(0); p < 6; p++ {
		rules[tp{"events", p}] = "none"
	}
	rules[tp{"events", 0}] = ""
	wantResume(t, c, "g-cut", rules, map[tp]int64{{"events", 0}: 0})
	want := all("events", 6, 0)
	want[tp{"events", 0}] = 20
	produce(t, c, "events", 6, 1)
	resumeAt(t, c, "a file cut to 1 of 6 partitions", "g-cut", want, "events")
}

// A group whose only file is in the legacy dir (DATA/__consumer_offsets) is
// never read by a 0.2.18 broker: the consumer starts from
// auto.offset.reset; kaasctl shows its offsets as a file the brokers do
// not read, with the lag unknown.
func TestRustLegacyOnlyGroupLag(t *testing.T) {
	t.Parallel()
	c := newRustCluster(t, "orders:3")
	produce(t, c, "orders", 3, 30)
	termAll(t, c)
	l := layoutOf(t, c)
	if err := os.MkdirAll(l.DataOffsetsPath(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.DataOffsetsPath()+"/g-lo.json", []byte(`{"offsets":{"orders/0":25,"orders/1":25,"orders/2":25}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("kaasctl:\n%s", offlineLag(t, c, "g-lo"))
	wantResume(t, c, "g-lo", map[tp]string{{"orders", 0}: "fileNotRead", {"orders", 1}: "fileNotRead", {"orders", 2}: "fileNotRead"}, nil)
	startAll(t, c)
	resumeAt(t, c, "a group only in the legacy dir", "g-lo", all("orders", 3, 0), "orders")
}

type errString string

func (e errString) Error() string { return string(e) }
