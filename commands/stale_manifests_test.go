package commands

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/kaasctl/kaasctl/internal/labdata"
	"github.com/kaasctl/kaasctl/internal/volume"
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
	src := filepath.Join(lab, "stale-manifests-volume")
	dst := filepath.Join(t.TempDir(), "vol")
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
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
	v := mustJSON[GroupsDescribeView](t, out)
	rows := 0
	for _, d := range v.Groups {
		var total int64
		for _, p := range d.Partitions {
			key := p.Topic + "/" + itoa32(p.Partition)
			tr, ok := truth[key]
			if !ok {
				t.Fatalf("%s: %s not in log-ends.jsonl", d.Group, key)
			}
			if p.Committed != committed[d.Group][key] {
				t.Errorf("%s %s: committed %d, file says %d", d.Group, key, p.Committed, committed[d.Group][key])
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
