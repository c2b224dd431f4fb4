//go:build unix

package commands

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/views"
)

// scrape fetches the exporter's /metrics.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExporterJournal runs 'kaasctl exporter --journal DIR' on the sandbox
// as a user would (through Main, stopped with Ctrl-C), with a refresh
// interval of an hour: only the offsets follower can notice anything. An
// admin commit rewinds an idle group; the follower flags it, records it
// in the journal and starts a refresh, which counts the four rewound
// partitions once (the refresh also reads the rewound file, whose
// comparison with the last refresh is left to the follower). 'groups
// health --exporter' and 'offsets history --journal' read the result.
func TestExporterJournal(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 20)
	commitAdmin(t, sb, "idle", map[int32]int64{0: 20, 1: 20, 2: 20, 3: 20})
	dd := sb.Layout().DataDir
	journal := filepath.Join(t.TempDir(), "journal")

	var errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"kaasctl", "exporter", "--data-dir", dd, "--brokers", strings.Join(sb.Bootstrap(), ","), "--listen", "127.0.0.1:0",
			"--interval", "1h", "--poll-interval", "50ms", "--lag-seconds=false", "--journal", journal, "--journal-max-bytes", "64MiB"},
			&IOStreams{In: strings.NewReader(""), Out: io.Discard, Err: &errb, Getenv: func(string) string { return "" }})
	}()
	stopped := false
	defer func() {
		if !stopped {
			syscall.Kill(os.Getpid(), syscall.SIGINT)
			<-done
		}
	}()
	serving := regexp.MustCompile(`serving http://([^/\s]+)/metrics`)
	var addr string
	sb.WaitFor(t, "the exporter serving", 20*time.Second, func() bool {
		select {
		case code := <-done:
			stopped = true
			t.Fatalf("exporter exited %d: %s", code, errb.String())
		default:
		}
		m := serving.FindStringSubmatch(errb.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	})
	if !strings.Contains(errb.String(), "following the offset files in "+sb.Layout().OffsetsPath()) {
		t.Errorf("no note of the follower: %s", errb.String())
	}
	waitJournal(t, sb, journal, "idle", "baseline", func(pts []watch.HistoryPoint) bool { return lastPoint(pts).Offsets["orders/0"] == 20 })
	rewinds := regexp.MustCompile(`(?m)^kaas_group_offset_rewinds_total\{group="idle"\} (\S+)$`)
	// The group is observed (its coordinator series) and, not rewound,
	// has no rewind counter yet: per-group counters appear at their first
	// change.
	idleSeen := regexp.MustCompile(`(?m)^kaas_group_coordinator_info\{group="idle",`)
	var page string
	sb.WaitFor(t, "the first refresh", 20*time.Second, func() bool {
		page = scrape(t, addr)
		return idleSeen.MatchString(page)
	})
	if m := rewinds.FindStringSubmatch(page); m != nil {
		t.Fatalf("rewinds before the rewind: %s", m[1])
	}

	// The rewind: an admin commit takes idle back to 0 (kaas does not fence it).
	commitAdmin(t, sb, "idle", map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0})
	var last string
	sb.WaitFor(t, "the rewind counted", 20*time.Second, func() bool {
		last = scrape(t, addr)
		m := rewinds.FindStringSubmatch(last)
		return m != nil && m[1] != "0"
	})
	if m := rewinds.FindStringSubmatch(last); m[1] != "4" {
		t.Fatalf("kaas_group_offset_rewinds_total{group=\"idle\"} = %s, want 4 (each rewound partition once)", m[1])
	}
	for _, want := range []string{`kaas_group_health{group="idle",state="REWIND"} 1`, "kaas_exporter_offsets_following 1", "kaas_exporter_journal_errors_total 0"} {
		if !strings.Contains(last, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	if !regexp.MustCompile(`(?m)^kaas_exporter_journal_records_total [1-9]`).MatchString(last) {
		t.Error("no journal records counted")
	}

	// The exporter's evaluation, as 'groups health --exporter' reads it:
	// the evidence is the follower's, naming the file change.
	r := runCLI(t, "", nil, "groups", "health", "--exporter", "http://"+addr, "-o", "json", "idle")
	v := decodeJSON[views.GroupsHealthView](t, r)
	if len(v.Groups) != 1 || v.Groups[0].State != inspect.HealthRewind || len(v.Groups[0].Evidence) != 4 {
		t.Fatalf("groups health --exporter: %+v", v.Groups)
	}
	if ev := v.Groups[0].Evidence[0]; ev.File != filepath.Join(sb.Layout().OffsetsPath(), "idle.json") || ev.Before != 20 || ev.After != 0 {
		t.Errorf("REWIND evidence %+v", ev)
	}

	// Ctrl-C stops it cleanly, the journal closed.
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	stopped = true
	if code := <-done; code != 0 {
		t.Fatalf("exporter exit %d: %s", code, errb.String())
	}

	// The journal the exporter wrote is what 'offsets history' reads.
	h := decodeJSON[inspect.OffsetHistoryView](t, runCLI(t, "", nil, "offsets", "history", "idle", "--journal", journal, "-o", "json"))
	n := 0
	for _, a := range h.Anomalies {
		if a.Kind == inspect.AnomalyRewind && a.Before == 20 && a.After == 0 {
			n++
		}
	}
	if n != 4 {
		t.Fatalf("offsets history: %d REWIND anomalies from 20 to 0, want 4: %+v", n, h.Anomalies)
	}
	if last := h.Partitions[0].Last; last == nil || *last != 0 {
		t.Errorf("history ends at %v, want 0", h.Partitions[0].Last)
	}
}
