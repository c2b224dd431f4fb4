package commands

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/labdata"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/views"
)

// staleTruth is one line of the real volume's log-ends.jsonl.
type staleTruth struct {
	Partition   string `json:"partition"`
	ManifestHWM int64  `json:"manifestHWM"`
	LogFirst    int64  `json:"logFirst"`
	LogEnd      int64  `json:"logEnd"`
}

// staleVolume copies the real Go-flavour volume whose manifests trail the
// log (lab-go-kaas/stale-manifests-volume) into a temp dir and returns its
// data dir and the truth by "topic/partition".
func staleVolume(t *testing.T) (string, map[string]staleTruth) {
	t.Helper()
	lab, err := labdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	dst := copyTree(t, filepath.Join(lab, "stale-manifests-volume"))
	f, err := os.Open(filepath.Join(dst, "log-ends.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	truth := map[string]staleTruth{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e staleTruth
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		truth[e.Partition] = e
	}
	if len(truth) != 9 {
		t.Fatalf("%d partitions in log-ends.jsonl", len(truth))
	}
	return filepath.Join(dst, "data"), truth
}

// committedOffsets reads every group file of the live dir of the volume.
func committedOffsets(t *testing.T, data string) map[string]map[string]int64 {
	t.Helper()
	dir := filepath.Join(data, "__cluster", "__consumer_offsets")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]int64{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		of, _, err := volume.ParseOffsetFile(filepath.Join(dir, e.Name()), b)
		if err != nil {
			continue
		}
		m := map[string]int64{}
		for _, en := range of.Entries {
			m[en.Topic+"/"+itoa32(en.Partition)] = en.Offset
		}
		out[e.Name()[:len(e.Name())-len(".json")]] = m
	}
	return out
}

// TestStaleManifestsDescribe: offline lag is the segments' log end minus
// the committed offset on every partition of the real volume, never the
// manifest's.
func TestStaleManifestsDescribe(t *testing.T) {
	t.Parallel()
	data, truth := staleVolume(t)
	committed := committedOffsets(t, data)
	out, errOut, code := runVol(t, "groups", "describe", "--all", "--data-dir", data, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	v := mustJSON[views.GroupsDescribeView](t, out)
	rows := 0
	for _, d := range v.Groups {
		var total int64
		for _, p := range d.Partitions {
			key := p.Topic + "/" + itoa32(p.Partition)
			tr, ok := truth[key]
			if !ok {
				t.Fatalf("%s: %s not in log-ends.jsonl", d.Group, key)
			}
			if _, inFile := committed[d.Group][key]; !inFile {
				// A partition of a topic the group commits on without an
				// offset: shown, its lag unknown, the group's incident.
				if p.Lag != nil || p.ResumeRule != inspect.ResumeNone || len(d.Incidents) == 0 || d.Incidents[0].Code != inspect.IncUncommittedPartitions {
					t.Errorf("%s %s: not in the file: lag %v rule %q incidents %+v", d.Group, key, p.Lag, p.ResumeRule, d.Incidents)
				}
				continue
			}
			if p.Committed != committed[d.Group][key] {
				t.Errorf("%s %s: committed %d, file says %d", d.Group, key, p.Committed, committed[d.Group][key])
			}
			// The committed offset says where it came from and as of when:
			// the offset file, dated by its modification time.
			if st, err := os.Stat(d.OffsetFile); err != nil || p.CommittedSource != inspect.CommittedFromFile || p.CommittedAsOf != st.ModTime().UTC().Format(time.RFC3339Nano) {
				t.Errorf("%s %s: committed from %q as of %q, want the file %s as of its mtime (%v)", d.Group, key, p.CommittedSource, p.CommittedAsOf, d.OffsetFile, err)
			}
			if p.Lag == nil || *p.Lag != tr.LogEnd-p.Committed || *p.HighWatermark != tr.LogEnd || p.LogEndSource != volume.SourceSegments {
				t.Errorf("%s %s: lag %v log end %v (%s), want %d (log end %d, manifest %d)", d.Group, key, p.Lag, p.HighWatermark, p.LogEndSource, tr.LogEnd-p.Committed, tr.LogEnd, tr.ManifestHWM)
			} else {
				total += *p.Lag
			}
			rows++
		}
		if d.TotalLag != total || d.ManifestFallbacks != 0 || (len(d.Partitions) > 0 && d.LagSource != "log end from the segment files (the last complete RecordBatch, as kaas recovers it on restart)") {
			t.Errorf("%s: total %d (want %d), fallbacks %d, source %q", d.Group, d.TotalLag, total, d.ManifestFallbacks, d.LagSource)
		}
	}
	if rows != 31 {
		t.Errorf("%d committed partitions, the volume has 31", rows)
	}
}

// writePartitionLog writes DATA/<tp>/ segment files in kaas's format
// holding the records [start, end).
func writePartitionLog(t *testing.T, data, tp string, start, end int64) {
	t.Helper()
	if err := volume.WriteRecords(filepath.Join(data, filepath.FromSlash(tp)), start, end, 1_700_000_000_000); err != nil {
		t.Fatal(err)
	}
}

type staleResetView struct {
	Groups []struct {
		Group string `json:"group"`
		Error string `json:"error"`
		Rows  []struct {
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
			Current   *int64 `json:"current"`
			New       int64  `json:"new"`
			LogEnd    *int64 `json:"logEnd"`
			LogSource string `json:"logSource"`
			Changed   bool   `json:"changed"`
			Clamped   bool   `json:"clamped"`
			Error     string `json:"error"`
		} `json:"rows"`
	} `json:"groups"`
}

// TestStaleManifestsOfflineReset: on the real volume, offline --to-latest
// plans the segments' log end on every partition (never the manifest's),
// --to-offset clamps to it, and --to-current --execute writes nothing.
func TestStaleManifestsOfflineReset(t *testing.T) {
	t.Parallel()
	data, truth := staleVolume(t)
	groups := []string{"g-alpha", "g-beta", "g-gamma", "g-delta"}
	args := func(extra ...string) []string {
		a := []string{"offsets", "reset", "--data-dir", data, "--offline", "--all-topics", "-o", "json"}
		for _, g := range groups {
			a = append(a, "-g", g)
		}
		return append(a, extra...)
	}
	out, errOut, code := runVol(t, args("--to-latest")...)
	if code != 0 {
		t.Fatalf("--to-latest: exit %d\n%s", code, errOut)
	}
	v := mustJSON[staleResetView](t, out)
	rows := 0
	for _, g := range v.Groups {
		for _, r := range g.Rows {
			tr := truth[r.Topic+"/"+itoa32(r.Partition)]
			if r.Error != "" || r.New != tr.LogEnd || r.LogSource != volume.SourceSegments || r.LogEnd == nil || *r.LogEnd != tr.LogEnd {
				t.Errorf("%s %s/%d: planned %d (%s, err %q), the log ends at %d (manifest %d)", g.Group, r.Topic, r.Partition, r.New, r.LogSource, r.Error, tr.LogEnd, tr.ManifestHWM)
			}
			rows++
		}
	}
	if rows == 0 {
		t.Fatal("no rows planned")
	}
	out, errOut, code = runVol(t, "offsets", "reset", "--data-dir", data, "--offline", "-g", "g-alpha", "--topic", "orders:0", "--to-offset", "700", "-o", "json")
	v = mustJSON[staleResetView](t, out)
	if code != 0 || len(v.Groups) != 1 || len(v.Groups[0].Rows) != 1 || v.Groups[0].Rows[0].New != truth["orders/0"].LogEnd || !v.Groups[0].Rows[0].Clamped {
		t.Errorf("--to-offset 700 on orders/0 (log end %d, manifest %d): exit %d %+v\n%s", truth["orders/0"].LogEnd, truth["orders/0"].ManifestHWM, code, v, errOut)
	}

	before := committedOffsets(t, data)
	raw := map[string][]byte{}
	od := filepath.Join(data, "__cluster", "__consumer_offsets")
	for _, g := range groups {
		b, _ := os.ReadFile(filepath.Join(od, g+".json"))
		raw[g] = b
	}
	out, errOut, code = runVol(t, args("--to-current", "--execute")...)
	if code != 0 {
		t.Fatalf("--to-current --execute: exit %d\n%s", code, errOut)
	}
	for _, g := range mustJSON[staleResetView](t, out).Groups {
		for _, r := range g.Rows {
			if r.Changed || r.Current == nil || r.New != *r.Current {
				t.Errorf("--to-current changed %s %s/%d: %+v", g.Group, r.Topic, r.Partition, r)
			}
		}
	}
	for _, g := range groups {
		b, _ := os.ReadFile(filepath.Join(od, g+".json"))
		if string(b) != string(raw[g]) {
			t.Errorf("--to-current rewrote %s", g)
		}
	}
	if after := committedOffsets(t, data); len(after) != len(before) {
		t.Errorf("group files changed: %d before, %d after", len(before), len(after))
	}
}

// TestStaleManifestsExporterOnce: exporter --once without brokers gives
// every partition of the real volume the lag log end − committed, and
// every group the sum (the manifests would say hundreds less).
func TestStaleManifestsExporterOnce(t *testing.T) {
	t.Parallel()
	data, truth := staleVolume(t)
	committed := committedOffsets(t, data)
	r := runCLI(t, "", nil, "exporter", "--once", "--data-dir", data, "--partition-metrics")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Err)
	}
	part := regexp.MustCompile(`(?m)^kaas_group_partition_lag\{group="([^"]+)",topic="([^"]+)",partition="(\d+)"\} (\d+)$`)
	group := regexp.MustCompile(`(?m)^kaas_group_lag\{group="([^"]+)"\} (\d+)$`)
	seen := 0
	for _, m := range part.FindAllStringSubmatch(r.Out, -1) {
		key := m[2] + "/" + m[3]
		c, ok := committed[m[1]][key]
		if !ok {
			t.Errorf("%s %s: not in the group's file", m[1], key)
			continue
		}
		if want := truth[key].LogEnd - c; m[4] != strconv.FormatInt(want, 10) {
			t.Errorf("%s %s: lag %s, want %d (log end %d − committed %d)", m[1], key, m[4], want, truth[key].LogEnd, c)
		}
		seen++
	}
	total := 0
	for _, m := range committed {
		total += len(m)
	}
	if seen != total || seen < 31 {
		t.Errorf("%d partition lags, the volume's group files hold %d", seen, total)
	}
	for _, m := range group.FindAllStringSubmatch(r.Out, -1) {
		var want int64
		for key, c := range committed[m[1]] {
			want += truth[key].LogEnd - c
		}
		if m[2] != strconv.FormatInt(want, 10) {
			t.Errorf("group %s: lag %s, want %d", m[1], m[2], want)
		}
	}
}

// TestStaleManifestsVolumeCheck: volume check (and doctor) name every
// stale manifest of the real volume with how far it trails, and committed
// offsets beyond the real log end as a warning naming the groups.
func TestStaleManifestsVolumeCheck(t *testing.T) {
	t.Parallel()
	data, truth := staleVolume(t)
	// One group committed past the end of orders/1 (as after a manifest-
	// driven reset in reverse, or a log lost in a crash).
	od := filepath.Join(data, "__cluster", "__consumer_offsets")
	if err := os.WriteFile(filepath.Join(od, "g-ahead.json"), []byte(`{"offsets":{"orders/1":700,"orders/0":12}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runVol(t, "volume", "check", "--data-dir", data, "-o", "json")
	if code != 0 && code != 3 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var v struct {
		Findings []volume.Finding `json:"findings"`
		Summary  struct {
			Checked map[string]int `json:"checked"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	trails := map[string]string{}
	var beyond []volume.Finding
	for _, f := range v.Findings {
		switch f.Code {
		case volume.CodeManifestTrails:
			rel, _ := filepath.Rel(data, filepath.Dir(f.Path))
			trails[filepath.ToSlash(rel)] = f.Message
		case volume.CodeOffsetsBeyondLogEnd:
			beyond = append(beyond, f)
		}
	}
	for tp, tr := range truth {
		msg, ok := trails[tp]
		want := "trails the log by " + strconv.FormatInt(tr.LogEnd-tr.ManifestHWM, 10) + " records"
		if !ok || !strings.Contains(msg, want) || !strings.Contains(msg, "kaas generation") {
			t.Errorf("%s: finding %q, want %q", tp, msg, want)
		}
	}
	if len(beyond) != 1 || beyond[0].Path != "orders/1" || !strings.Contains(beyond[0].Message, "g-ahead") || !strings.Contains(beyond[0].Message, "OFFSET_OUT_OF_RANGE") || !strings.Contains(beyond[0].Message, "log end 640") {
		t.Errorf("beyond the log end: %+v", beyond)
	}
	if v.Summary.Checked["partitionLogs"] != 9 {
		t.Errorf("checked %v", v.Summary.Checked)
	}
	out, _, _ = runVol(t, "doctor", "--data-dir", data)
	for _, want := range []string{volume.CodeManifestTrails, volume.CodeOffsetsBeyondLogEnd} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor does not report %s:\n%s", want, out)
		}
	}
}
