package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render/views"
)

func offsetsVolume(t *testing.T) (data, od string) {
	t.Helper()
	data = t.TempDir()
	writeFile(t, data, "__cluster/assignment.json", `{"controllerEpoch":1,"assignmentVersion":1,"controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"}],"partitions":[]}`)
	writeFile(t, data, "__cluster/__consumer_offsets/app.json", `{"offsets":{"orders/0":10,"orders/1":20}}`)
	writeFile(t, data, "__cluster/__consumer_offsets/other.json", `{"offsets":{"audit/0":1}}`)
	return data, filepath.Join(data, "__cluster", "__consumer_offsets")
}

func TestWatchOffsetsOnce(t *testing.T) {
	t.Parallel()
	data, od := offsetsVolume(t)
	journal := filepath.Join(data, ".kaasctl-journal")
	r := runCLI(t, "", nil, "watch", "--offsets", "--data-dir", data, "--journal", journal, "--once", "-g", "app", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	var v views.WatchOffsetsView
	if err := json.Unmarshal([]byte(r.Out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Dir != od || v.Files != 2 || len(v.Events) != 1 || v.Events[0].Kind != "snapshot" || v.Events[0].Changed["orders/1"] != 20 {
		t.Errorf("%+v", v)
	}
	// The journal holds both groups (--group filters what is printed).
	segs, _ := filepath.Glob(filepath.Join(journal, "offsets", "offsets-*.jsonl"))
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	data2, _ := os.ReadFile(segs[0])
	if !strings.Contains(string(data2), `"group":"other"`) || !strings.Contains(string(data2), `"kind":"segment"`) {
		t.Errorf("journal:\n%s", data2)
	}
	// The table view of the baseline.
	r = runCLI(t, "", nil, "watch", "--offsets", "--data-dir", data, "--once")
	if r.Code != 0 || !strings.Contains(r.Out, "app  snapshot  orders/0=10 orders/1=20") {
		t.Errorf("exit %d\n%s%s", r.Code, r.Out, r.Err)
	}
}

func TestWatchOffsetsUsage(t *testing.T) {
	t.Parallel()
	data, _ := offsetsVolume(t)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--journal", filepath.Join(data, "journal")}, 4, "operator deletes unknown directories"},
		{[]string{"--assignment", "x.json"}, 2, "--assignment does not apply"},
		{[]string{"--journal-max-bytes", "lots"}, 2, "--journal-max-bytes"},
		{[]string{"--journal-max-age", "-1h"}, 2, "must not be negative"},
	} {
		r := runCLI(t, "", nil, append([]string{"watch", "--offsets", "--data-dir", data, "--once"}, tc.args...)...)
		if r.Code != tc.code || !strings.Contains(r.Err, tc.msg) {
			t.Errorf("%v: exit %d %q", tc.args, r.Code, r.Err)
		}
	}
	// The journal's age reads the one grammar: days work as anywhere.
	if r := runCLI(t, "", nil, "watch", "--offsets", "--data-dir", data, "--once", "--journal-max-age", "30d", "--journal-max-bytes", "500MiB"); r.Code != 0 {
		t.Errorf("--journal-max-age 30d --journal-max-bytes 500MiB: exit %d %s", r.Code, r.Err)
	}
}

// A watch restarted on its journal compares the first scan with where the
// last run left off: what happened in between is reported and flagged.
func TestWatchOffsetsResume(t *testing.T) {
	t.Parallel()
	data, od := offsetsVolume(t)
	journal := filepath.Join(t.TempDir(), "journal")
	if r := runCLI(t, "", nil, "watch", "--offsets", "--data-dir", data, "--journal", journal, "--once"); r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	// While nothing watches: a stale commit rewinds orders/1, and the
	// other group's file is removed.
	writeFile(t, od, "app.json", `{"offsets":{"orders/0":12,"orders/1":5}}`)
	os.Remove(filepath.Join(od, "other.json"))
	r := runCLI(t, "", nil, "watch", "--offsets", "--data-dir", data, "--journal", journal, "--once", "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Err, "resuming the journal: 2 groups") {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	var v views.WatchOffsetsView
	if err := json.Unmarshal([]byte(r.Out), &v); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, e := range v.Events {
		var as []string
		for _, a := range e.Anomalies {
			as = append(as, a.Kind)
		}
		kinds[e.Group] = e.Kind + ":" + strings.Join(as, ",")
	}
	if kinds["app"] != "change:REWIND" || kinds["other"] != "missing:VANISHED" || len(v.Events) != 2 {
		t.Errorf("events %v", kinds)
	}
	// Nothing changed since: a third run reports nothing.
	r = runCLI(t, "", nil, "watch", "--offsets", "--data-dir", data, "--journal", journal, "--once", "-o", "json")
	if err := json.Unmarshal([]byte(r.Out), &v); err != nil || len(v.Events) != 0 {
		t.Errorf("third run: %+v %v", v.Events, err)
	}
	// The history reads across the runs' segments.
	r = runCLI(t, "", nil, "offsets", "history", "app", "--journal", journal, "-o", "json")
	var hv inspect.OffsetHistoryView
	if err := json.Unmarshal([]byte(r.Out), &hv); err != nil || len(hv.Anomalies) != 1 || hv.Anomalies[0].Kind != "REWIND" {
		t.Errorf("history %+v %v %s", hv.Anomalies, err, r.Err)
	}
}

// watch --offsets started on a fresh Go-flavour volume before its first
// commit (no group file in either offsets dir: the generation cannot tell
// the live dir) watches every dir a generation could write, settles on the
// one the first commit lands in (the data dir's, as the Go flavour
// writes), says so, and records the rewind that follows.
func TestWatchOffsetsSettlesBeforeTheFirstCommit(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cd := filepath.Join(data, "__cluster")
	writeFile(t, cd, "assignment.json", safeAssignment)
	journal := t.TempDir()
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"kaasctl", "watch", "--offsets", "--data-dir", data, "--poll-interval", "10ms", "--count", "1", "--journal", journal, "-o", "jsonl"},
			&IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(); {
			select {
			case code := <-done:
				t.Fatalf("watch --offsets ended (exit %d) before %s:\n%s%s", code, what, out.String(), errb.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s:\n%s%s", what, out.String(), errb.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor("note that it watches every dir", func() bool {
		e := errb.String()
		return strings.Contains(e, "until the first one appears") && strings.Contains(e, filepath.Join(data, "__consumer_offsets")) && strings.Contains(e, filepath.Join(cd, "__consumer_offsets"))
	})
	od := filepath.Join(data, "__consumer_offsets")
	commit := func(off string) {
		writeFile(t, od, "app.json.tmp", `{"offsets":{"orders/0":`+off+`}}`)
		if err := os.Rename(filepath.Join(od, "app.json.tmp"), filepath.Join(od, "app.json")); err != nil {
			t.Fatal(err)
		}
	}
	commit("40")
	waitFor("settling on the data dir's offsets", func() bool {
		return strings.Contains(errb.String(), "settled on "+od) && strings.Contains(errb.String(), "Go / Rust ≤ 0.2.15")
	})
	// The note comes before the follower's first scan: a rewind written
	// before that scan would be its baseline, and no change would ever
	// come (on a loaded machine the watch then ran into the 90 s limit).
	waitFor("the first scan's baseline", func() bool { return strings.Contains(errb.String(), "baseline: 1 offset file") })
	commit("12") // a rewind
	var code int
	select {
	case code = <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("watch --offsets did not finish")
	}
	if code != 0 || !strings.Contains(out.String(), "REWIND") || !strings.Contains(out.String(), `"orders/0":12`) {
		t.Fatalf("exit %d: want the rewind recorded\n%s\n%s", code, out.String(), errb.String())
	}
	// The journal recorded it, for the offsets dir it settled on.
	r := runCLIWithin(t, nil, "offsets", "history", "app", "--journal", journal, "--data-dir", data, "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Out, "12") {
		t.Errorf("offsets history: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
}
