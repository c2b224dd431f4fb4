//go:build unix

package commands

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
)

// startVolumeExporter runs the exporter's serving path (runExporter) on
// loopback over the volume at data only (no brokers) until the test ends;
// stderr collects its warnings and notes.
func startVolumeExporter(t *testing.T, data string, o exporterOptions) (addr string, stderr *lockedBuffer) {
	t.Helper()
	l, err := volume.Resolve(volume.ResolveInput{DataDirFlag: data})
	if err != nil {
		t.Fatal(err)
	}
	l = l.WithGeneration()
	src := &observe.Source{Layout: &l, MaxGroups: o.maxGroups}
	stderr = &lockedBuffer{}
	g := &Globals{IO: &IOStreams{Out: io.Discard, Err: stderr, Getenv: func(string) string { return "" }},
		Printer: &render.Printer{Format: render.Table, Out: io.Discard, Err: stderr}}
	if o.listen == "" {
		o.listen = "127.0.0.1:0"
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- runExporter(ctx, g, src, o, func(a string) { ready <- a }) }()
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("exporter did not start: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("exporter: %v", err)
		}
	})
	return addr, stderr
}

// invalidUTF8Volume is a volume with two ordinary groups and two whose ids
// are not UTF-8 (and differ only in the invalid byte).
func invalidUTF8Volume(t *testing.T) (data string, bad []string) {
	t.Helper()
	data, cd := safeVolume(t)
	od := filepath.Join(cd, "__consumer_offsets")
	writeFile(t, od, "ok-1.json", `{"offsets":{"orders/0":11}}`)
	bad = []string{"bad\xff", "bad\xfe"}
	for i, g := range bad {
		writeFile(t, od, g+".json", fmt.Sprintf(`{"offsets":{"orders/0":%d}}`, 20+i))
	}
	return data, bad
}

// A group id that is not UTF-8 does not take the scrape down: a real
// Prometheus accepts the page, keeps the other groups' series, and has the
// odd groups under group_base64; the exporter counts them and says so once.
func TestExporterInvalidUTF8GroupWithPrometheus(t *testing.T) {
	t.Parallel()
	bin := promBinary(t)
	data, bad := invalidUTF8Volume(t)
	addr, stderr := startVolumeExporter(t, data, exporterOptions{interval: 200 * time.Millisecond, window: time.Minute,
		partitionMetrics: true, pollInterval: 100 * time.Millisecond})
	prom := startPrometheus(t, bin, addr)

	waitProm(t, prom, `up{job="kaasctl"}`, "the scrape accepted (up 1)", oneEquals(1))
	waitProm(t, prom, `kaas_group_partition_committed_offset{group="ok-1"}`, "ok-1's series", oneEquals(11))
	waitProm(t, prom, `kaas_group_partition_committed_offset{group="g"}`, "g's series", oneEquals(5))
	for i, g := range bad {
		b64 := base64.StdEncoding.EncodeToString([]byte(g))
		r := waitProm(t, prom, fmt.Sprintf(`kaas_group_partition_committed_offset{group_base64=%q}`, b64), "the series of "+b64, oneEquals(float64(20+i)))
		if got := r[0].Metric["group"]; got != "bad\uFFFD" {
			t.Errorf("group label %q, want bad\\uFFFD", got)
		}
	}
	waitProm(t, prom, `kaas_exporter_groups_invalid_utf8`, "the count of such ids", oneEquals(2))
	waitProm(t, prom, `kaas_exporter_refreshes_total > 3`, "several refreshes", func(r []promSample) bool { return len(r) == 1 })
	log := stderr.String()
	if n := strings.Count(log, "not valid UTF-8"); n != 1 || !strings.Contains(log, base64.StdEncoding.EncodeToString([]byte(bad[0]))) {
		t.Errorf("want the ids logged once (with their base64), got %d times:\n%s", n, log)
	}
}

// The served exporter is read-only (405 for writes) and, by default,
// listens on loopback only.
func TestExporterServerReadOnlyAndLoopback(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	addr, _ := startVolumeExporter(t, data, exporterOptions{interval: time.Minute, window: time.Minute, pollInterval: time.Second})
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		req, _ := http.NewRequest(m, "http://"+addr+"/metrics", strings.NewReader("x"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s /metrics: HTTP %d, want 405", m, resp.StatusCode)
		}
	}
	host, _, err := net.SplitHostPort(exporter.DefaultListen)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		t.Errorf("default --listen %s is not loopback", exporter.DefaultListen)
	}
	r := runCLI(t, "", nil, "exporter", "--help")
	if !strings.Contains(r.Out, "127.0.0.1:10092") || !strings.Contains(r.Out, "--listen :10092") {
		t.Errorf("exporter --help does not show the loopback default and how to expose it:\n%s", r.Out)
	}
}

// exporter --once says on stderr that --max-groups left groups out.
func TestExporterOnceSaysGroupsDropped(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	for _, g := range []string{"h1", "h2"} {
		writeFile(t, cd, "__consumer_offsets/"+g+".json", `{"offsets":{"orders/0":1}}`)
	}
	r := runCLI(t, "", nil, "exporter", "--once", "--data-dir", data, "--max-groups", "1")
	if r.Code != 0 || !strings.Contains(r.Err, "2 of 3 matching groups left out by --max-groups") || !strings.Contains(r.Err, "one refresh of 1 group") ||
		!strings.Contains(r.Out, "kaas_exporter_groups_dropped 2") {
		t.Errorf("exit %d\nstderr: %s", r.Code, r.Err)
	}
}

// The generation sentence is short in everyday notes, in full with -v and
// in volume check.
func TestGenerationSentenceShortUnlessVerbose(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	const evidence = "cannot be told apart from the volume"
	for _, args := range [][]string{{"groups", "list"}, {"groups", "describe", "g"}} {
		r := runCLI(t, "", nil, append(args, "--data-dir", data)...)
		if r.Code != 0 || strings.Contains(r.Err, evidence) || strings.Count(r.Err, "kaas generation") != 1 || !strings.Contains(r.Err, "-v or 'kaasctl volume check' says why") {
			t.Errorf("%v: exit %d, want the generation once and short:\n%s", args, r.Code, r.Err)
		}
		for _, line := range strings.Split(r.Err, "\n") {
			if len(line) > 250 {
				t.Errorf("%v: a %d-character line on stderr: %s", args, len(line), line)
			}
		}
		r = runCLI(t, "", nil, append(args, "--data-dir", data, "-v")...)
		if r.Code != 0 || !strings.Contains(r.Err, evidence) {
			t.Errorf("%v -v: exit %d, want the evidence in full:\n%s", args, r.Code, r.Err)
		}
	}
	if r := runCLI(t, "", nil, "volume", "check", "--data-dir", data); !strings.Contains(r.Out, evidence) {
		t.Errorf("volume check lacks the full sentence:\n%s", r.Out)
	}
}

// /api/health, like every JSON output, keeps a group id that is not UTF-8
// exactly: a groupBase64 sibling beside the readable group.
func TestExporterAPIHealthInvalidUTF8Group(t *testing.T) {
	t.Parallel()
	data, bad := invalidUTF8Volume(t)
	addr, _ := startVolumeExporter(t, data, exporterOptions{interval: 200 * time.Millisecond, window: time.Minute, pollInterval: 100 * time.Millisecond})
	want := map[string]bool{}
	for _, g := range bad {
		want[base64.StdEncoding.EncodeToString([]byte(g))] = true
	}
	var doc struct {
		Groups []map[string]any `json:"groups"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/api/health")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			doc.Groups = nil
			if json.Unmarshal(body, &doc) == nil && len(doc.Groups) >= 3 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/api/health never listed the groups (last err %v)", err)
		}
		time.Sleep(50 * time.Millisecond) // the poll interval of a wait with a deadline, as waitProm
	}
	got := map[string]bool{}
	for _, g := range doc.Groups {
		if b, ok := g["groupBase64"].(string); ok {
			got[b] = true
			if g["group"] != "bad\uFFFD" {
				t.Errorf("group %q beside groupBase64 %s, want bad\\uFFFD", g["group"], b)
			}
		}
	}
	for b := range want {
		if !got[b] {
			t.Errorf("/api/health lacks groupBase64 %s: %v", b, doc.Groups)
		}
	}
}
