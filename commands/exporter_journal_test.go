package commands

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// exporter --journal records the offset files' changes while it serves, as
// watch --offsets --journal does, so offsets history reads them (REWIND
// included) without a second process.
func TestExporterJournal(t *testing.T) {
	data, cd := safeVolume(t)
	od := filepath.Join(cd, "__consumer_offsets")
	journal := filepath.Join(t.TempDir(), "journal")
	l, err := volume.Resolve(volume.ResolveInput{DataDirFlag: data})
	if err != nil {
		t.Fatal(err)
	}
	var errb lockedBuffer
	g := &Globals{IO: &IOStreams{Out: io.Discard, Err: &errb, Getenv: func(string) string { return "" }},
		Printer: &render.Printer{Format: render.Table, Out: io.Discard, Err: &errb}}
	o := exporterOptions{listen: "127.0.0.1:0", interval: time.Hour, window: time.Hour, pollInterval: 10 * time.Millisecond,
		journal: offsetJournalParams{Dir: journal, MaxBytes: 1 << 30, SegmentAge: time.Hour, Poll: 10 * time.Millisecond}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan string, 1)
	go func() { done <- runExporter(ctx, g, &exporter.Source{Layout: &l}, o, func(a string) { ready <- a }) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("exporter did not start: %v\n%s", err, errb.String())
	}
	commit := func(off string) {
		tmp := filepath.Join(od, "g.json.tmp")
		os.WriteFile(tmp, []byte(`{"offsets":{"orders/0":`+off+`}}`), 0o644)
		os.Rename(tmp, filepath.Join(od, "g.json"))
	}
	var r cliResult
	for deadline, off := time.Now().Add(30*time.Second), 9; ; off++ {
		commit(strconv.Itoa(off))
		time.Sleep(50 * time.Millisecond)
		commit("2") // a rewind: what a stale commit does
		time.Sleep(50 * time.Millisecond)
		r = runCLI(t, "", nil, "offsets", "history", "g", "--journal", journal, "-o", "json")
		if strings.Contains(r.Out, `"REWIND"`) {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("no REWIND in the exporter's journal: exit %d\n%s%s\nexporter: %s", r.Code, r.Out, r.Err, errb.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("exporter: %v", err)
	}
	if !strings.Contains(errb.String(), "offsets journal: "+filepath.Join(journal, "offsets")) {
		t.Errorf("exporter did not say where it journals: %s", errb.String())
	}
	// --journal needs the volume, and is not for --once.
	if r := runCLI(t, "", nil, "exporter", "--once", "--data-dir", data, "--journal", journal); r.Code != 2 || !strings.Contains(r.Err, "--once") {
		t.Errorf("--once --journal: exit %d %s", r.Code, r.Err)
	}
}
