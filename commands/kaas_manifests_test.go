package commands

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/views"
)

// TestKaasManifestsQuirk: with the sandbox keeping its files as kaas does
// (segment files follow the log, manifest.json only on open, takeover and
// close), the brokers up and no --brokers given, offline lag is log end −
// committed from the segments, --to-latest plans the real log end,
// --to-current writes nothing, the exporter agrees and volume check names
// the stale manifest.
func TestKaasManifestsQuirk(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 2, Topics: []sandbox.Topic{{Name: "orders", Partitions: 1}}, PollInterval: 50 * time.Millisecond})
	if out, err := sb.Command("quirk kaas-manifests on"); err != nil || !strings.Contains(out, "on") {
		t.Fatalf("quirk: %q %v", out, err)
	}
	cl, err := sb.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	data := sb.Layout().DataDir
	dir := sb.Layout().PartitionDir("orders", 0)
	logEnd := func() int64 {
		pl, _, err := volume.ReadPartitionLog(dir)
		if err != nil {
			return -1
		}
		return pl.LogEnd
	}
	produce := func(n int) {
		recs := make([]*kgo.Record, n)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: "orders", Value: []byte("v")}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitEnd := func(want int64) {
		for logEnd() != want {
			if ctx.Err() != nil {
				t.Fatalf("segments end at %d, want %d", logEnd(), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	produce(5)
	waitEnd(5)
	produce(200)
	waitEnd(205)
	m, _, err := (&volume.ManifestReader{L: sb.Layout()}).Get("orders", 0)
	if err != nil || m.HighWatermark >= 205 {
		t.Fatalf("the manifest follows the log with the quirk on: %+v %v", m, err)
	}
	adm := kadm.NewClient(cl)
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 50, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, "g-stale", offs); err != nil {
		t.Fatal(err)
	}
	gf := filepath.Join(sb.Layout().OffsetsPath(), "g-stale.json")
	for {
		if b, err := os.ReadFile(gf); err == nil && strings.Contains(string(b), `"orders/0":50`) {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the commit never reached the offset file")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Brokers up, no --brokers: offline lag from the segments.
	out, errOut, code := runVol(t, "groups", "describe", "g-stale", "--data-dir", data, "-o", "json")
	if code != 0 {
		t.Fatalf("describe: exit %d\n%s", code, errOut)
	}
	d := mustJSON[views.GroupsDescribeView](t, out).Groups[0]
	if len(d.Partitions) != 1 || d.Partitions[0].Lag == nil || *d.Partitions[0].Lag != 155 || d.Partitions[0].LogEndSource != volume.SourceSegments {
		t.Errorf("offline lag (manifest %d): %+v", m.HighWatermark, d.Partitions)
	}
	// The exporter without brokers agrees.
	r := runCLI(t, "", nil, "exporter", "--once", "--data-dir", data)
	if !regexp.MustCompile(`(?m)^kaas_group_lag\{group="g-stale"\} 155$`).MatchString(r.Out) {
		t.Errorf("exporter --once: exit %d\n%s", r.Code, grepLines(r.Out, "g-stale"))
	}
	// --to-latest (offline, forced past the answering brokers, dry run)
	// plans the real log end; --to-current writes nothing.
	out, errOut, _ = runVol(t, "offsets", "reset", "--data-dir", data, "--offline", "--force", "-g", "g-stale", "--topic", "orders", "--to-latest", "-o", "json")
	v := mustJSON[staleResetView](t, out)
	if len(v.Groups) != 1 || len(v.Groups[0].Rows) != 1 || v.Groups[0].Rows[0].New != 205 || v.Groups[0].Rows[0].LogSource != volume.SourceSegments {
		t.Errorf("--to-latest: %+v\n%s", v, errOut)
	}
	before, _ := os.ReadFile(gf)
	if _, errOut, code := runVol(t, "offsets", "reset", "--data-dir", data, "--offline", "--force", "-g", "g-stale", "--topic", "orders", "--to-current", "--execute"); code != 0 {
		t.Errorf("--to-current: exit %d\n%s", code, errOut)
	}
	if after, _ := os.ReadFile(gf); string(after) != string(before) {
		t.Errorf("--to-current rewrote the file: %s → %s", before, after)
	}
	// volume check names the stale manifest.
	out, _, _ = runVol(t, "volume", "check", "--data-dir", data)
	if !strings.Contains(out, volume.CodeManifestTrails) || !strings.Contains(out, "orders/0/manifest.json") {
		t.Errorf("volume check:\n%s", out)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
