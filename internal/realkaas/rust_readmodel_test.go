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
// left in shapes it then misreads, and what kaasctl says about their lag
// today. The read model (issue 32) owns those answers: these scenarios
// assert what kaas did (where the consumer resumed) and record what
// kaasctl said, for that work to turn into assertions.

// offlineLag is groups describe's offline answer for group: lag per
// partition and the total, as kaasctl prints it.
func offlineLag(t *testing.T, c *Cluster, group string) string {
	t.Helper()
	r := ok(t, "groups", "describe", group, "--data-dir", c.Data, "--kaas-version", "0.2.18")
	return r.stdout + r.stderr
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
	want := all("events", 6, 0)
	want[tp{"events", 0}] = 20
	produce(t, c, "events", 6, 1)
	resumeAt(t, c, "a file cut to 1 of 6 partitions", "g-cut", want, "events")
}

// A group whose only file is in the legacy dir (DATA/__consumer_offsets) is
// never read by a 0.2.18 broker: the consumer starts from
// auto.offset.reset; kaasctl today shows the legacy file's offsets and lag.
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
	startAll(t, c)
	resumeAt(t, c, "a group only in the legacy dir", "g-lo", all("orders", 3, 0), "orders")
}

type errString string

func (e errString) Error() string { return string(e) }
