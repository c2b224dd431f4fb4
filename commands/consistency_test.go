package commands

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/labdata"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

// The one read model, checked from every surface: on a real kaas 0.2.18
// volume plus edge groups (committed past the segments' log end, ahead of
// a manifest-only log end, on a partition whose segments cannot be read),
// and on a volume whose generation is undetermined with a group in both
// offsets dirs, groups describe, groups health, the exporter, volume
// check and an offsets reset plan give the same committed offsets, lag
// and unknown counts for every group and partition.
func TestEverySurfaceReadsOneModel(t *testing.T) {
	t.Parallel()
	for _, fx := range []struct {
		name string
		make func(t *testing.T) string
		// want are partitions whose lag the fixture fixes (-1: unknown).
		want map[string]map[string]int64
	}{
		{"rust-0.2.18 and edges", rustEdgeVolume, map[string]map[string]int64{
			"g1":              {"events/0": 67, "orders/2": 133},
			"edge-past":       {"events/0": 0, "events/1": 164},
			"edge-manifest":   {"mtopic/0": -1, "mtopic/1": 15},
			"edge-unreadable": {"broken/0": -1, "events/2": 157},
		}},
		{"undetermined, both dirs", undeterminedVolume, map[string]map[string]int64{
			// The newest generation's live dir (the cluster dir) counts:
			// its offset is past the log end, the data dir's is not.
			"both": {"events/0": 0},
		}},
	} {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			vol := fx.make(t)
			describe := describedLags(t, vol)
			for g, parts := range fx.want {
				for k, lag := range parts {
					if got, ok := describe[g].parts[k]; !ok || got.lag != lag {
						t.Errorf("describe %s %s: lag %+v, want %d", g, k, got, lag)
					}
				}
			}
			checkHealthAgrees(t, vol, describe)
			checkExporterAgrees(t, vol, describe)
			checkVolumeCheckAgrees(t, vol, describe)
			checkResetPlanAgrees(t, vol, describe)
		})
	}
}

// partLag is one partition of a group as describe says: its lag (-1:
// unknown), the offset a consumer resumes from (-1: none), and whether the
// commit is past the log end.
type partLag struct {
	lag, resume int64
	past        bool
}

type groupLags struct {
	total   int64
	known   bool
	unknown int
	parts   map[string]partLag
}

func describedLags(t *testing.T, vol string) map[string]groupLags {
	t.Helper()
	out, errOut, code := runVol(t, "groups", "describe", "--all", "--data-dir", vol, "-o", "json")
	if code != 0 {
		t.Fatalf("describe: exit %d\n%s", code, errOut)
	}
	res := map[string]groupLags{}
	for _, d := range mustJSON[views.GroupsDescribeView](t, out).Groups {
		gl := groupLags{total: d.TotalLag, known: d.LagKnown, unknown: d.LagUnknown, parts: map[string]partLag{}}
		for _, p := range d.Partitions {
			pl := partLag{lag: -1, resume: -1, past: p.BeyondLogEnd}
			if p.Lag != nil {
				pl.lag = *p.Lag
			}
			if p.ResumeRule == inspect.ResumeFile {
				pl.resume = p.Committed
			}
			gl.parts[p.Topic+"/"+strconv.Itoa(int(p.Partition))] = pl
		}
		res[d.Group] = gl
	}
	return res
}

func checkHealthAgrees(t *testing.T, vol string, describe map[string]groupLags) {
	t.Helper()
	out, errOut, _ := runVol(t, "groups", "health", "--data-dir", vol, "--window", "10ms", "--interval", "10ms", "-o", "json")
	v := mustJSON[views.GroupsHealthView](t, out)
	if len(v.Groups) != len(describe) {
		t.Errorf("health has %d groups, describe %d\n%s", len(v.Groups), len(describe), errOut)
	}
	for _, h := range v.Groups {
		d := describe[h.Group]
		if h.Lag != d.total || h.LagKnown != d.known || h.LagUnknown != d.unknown {
			t.Errorf("health %s: lag %d known %v unknown %d; describe %d %v %d", h.Group, h.Lag, h.LagKnown, h.LagUnknown, d.total, d.known, d.unknown)
		}
	}
}

func checkExporterAgrees(t *testing.T, vol string, describe map[string]groupLags) {
	t.Helper()
	out, errOut, code := runVol(t, "exporter", "--once", "--partition-metrics", "--max-groups", "0", "--data-dir", vol)
	if code != 0 {
		t.Fatalf("exporter: exit %d\n%s", code, errOut)
	}
	m := parseMetrics(t, out)
	for g, d := range describe {
		lag, ok := metricValue(m, "kaas_group_lag", map[string]string{"group": g})
		if ok != d.known || ok && int64(lag) != d.total {
			t.Errorf("exporter %s: kaas_group_lag %v (present %v); describe %d known %v", g, lag, ok, d.total, d.known)
		}
		u, ok := metricValue(m, "kaas_group_lag_unknown_partitions", map[string]string{"group": g})
		if ok != (d.unknown > 0) || ok && int(u) != d.unknown {
			t.Errorf("exporter %s: %v unknown partitions (present %v); describe %d", g, u, ok, d.unknown)
		}
		for k, p := range d.parts {
			topic, part, _ := strings.Cut(k, "/")
			labels := map[string]string{"group": g, "topic": topic, "partition": part}
			pl, ok := metricValue(m, "kaas_group_partition_lag", labels)
			if (p.lag >= 0) != ok || ok && int64(pl) != p.lag {
				t.Errorf("exporter %s %s: partition lag %v (present %v); describe %d", g, k, pl, ok, p.lag)
			}
			c, ok := metricValue(m, "kaas_group_partition_committed_offset", labels)
			if (p.resume >= 0) != ok || ok && int64(c) != p.resume {
				t.Errorf("exporter %s %s: committed %v (present %v); describe resumes from %d", g, k, c, ok, p.resume)
			}
		}
	}
}

// checkVolumeCheckAgrees: every partition describe finds committed past
// the segments' log end is a volume check finding naming its group, and
// no other partition is.
func checkVolumeCheckAgrees(t *testing.T, vol string, describe map[string]groupLags) {
	t.Helper()
	out, _, _ := runVol(t, "volume", "check", "--data-dir", vol, "-o", "json")
	rep := mustJSON[inspect.CheckReport](t, out)
	past := 0
	for _, d := range describe {
		for _, p := range d.parts {
			if p.past {
				past++
			}
		}
	}
	beyond := 0
	for _, f := range rep.Findings {
		if f.Code == volume.CodeOffsetsBeyondLogEnd {
			_, names, _ := strings.Cut(f.Message, "committed offsets of ")
			names, _, _ = strings.Cut(names, " (up to")
			beyond += len(strings.Split(names, ", "))
		}
	}
	if beyond != past {
		t.Errorf("volume check names %d group partitions past the log end, describe %d", beyond, past)
	}
	for g, d := range describe {
		for k, p := range d.parts {
			if !p.past {
				continue
			}
			found := false
			for _, f := range rep.Findings {
				found = found || f.Code == volume.CodeOffsetsBeyondLogEnd && f.Path == k && strings.Contains(f.Message, g)
			}
			if !found {
				t.Errorf("volume check has no %s finding for %s of %s", volume.CodeOffsetsBeyondLogEnd, k, g)
			}
		}
	}
}

// checkResetPlanAgrees: a --to-current plan's current offsets are the
// offsets describe counts from.
func checkResetPlanAgrees(t *testing.T, vol string, describe map[string]groupLags) {
	t.Helper()
	for g, d := range describe {
		out, errOut, _ := runVol(t, "offsets", "reset", "-g", g, "--all-topics", "--to-current", "--offline", "--data-dir", vol, "-o", "json")
		v := mustJSON[struct {
			Groups []repair.GroupPlan `json:"groups"`
		}](t, out)
		if len(v.Groups) != 1 {
			t.Fatalf("reset plan of %s: %s\n%s", g, out, errOut)
		}
		for _, r := range v.Groups[0].Rows {
			k := r.Topic + "/" + strconv.Itoa(int(r.Partition))
			if p, ok := d.parts[k]; ok && p.resume >= 0 && (r.Current == nil || *r.Current != p.resume) {
				t.Errorf("reset plan %s %s: current %v; describe resumes from %d", g, k, r.Current, p.resume)
			}
		}
	}
}

// rustEdgeVolume is the real 0.2.18 volume of ../shared/testdata with
// three edge groups.
func rustEdgeVolume(t *testing.T) string {
	vol := labVolumeCopy(t, "lab-rust-kaas", "volume-0.2.18", "data")
	od := filepath.Join(vol, "__cluster", "__consumer_offsets")
	// Past the segments' end on events/0 (it ends at 167).
	writeFile(t, od, "edge-past.json", `{"offsets":{"events/0":400,"events/1":3}}`)
	// mtopic has manifests and no segments: 0 is committed ahead of its
	// manifest (lag unknown: the manifest trails the log), 1 behind it.
	for p, hwm := range []int{10, 20} {
		dir := filepath.Join(vol, "mtopic", strconv.Itoa(p))
		writeFile(t, dir, "manifest.json", `{"epoch":1,"highWatermark":`+strconv.Itoa(hwm)+`,"logStartOffset":0}`)
	}
	writeFile(t, od, "edge-manifest.json", `{"offsets":{"mtopic/0":15,"mtopic/1":5}}`)
	// broken/0's active segment is a FIFO: it cannot be read.
	bdir := filepath.Join(vol, "broken", "0")
	if err := os.MkdirAll(bdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(bdir, volume.SegmentLogName(0, 0)), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, od, "edge-unreadable.json", `{"offsets":{"broken/0":4,"events/2":10}}`)
	return vol
}

// undeterminedVolume has group files in both offsets dirs (nothing pinned:
// the generation is undetermined), one group in both with other offsets.
func undeterminedVolume(t *testing.T) string {
	vol := labVolumeCopy(t, "lab-rust-kaas", "volume-0.2.18", "data")
	writeFile(t, filepath.Join(vol, "__cluster", "__consumer_offsets"), "both.json", `{"offsets":{"events/0":400}}`)
	writeFile(t, filepath.Join(vol, "__consumer_offsets"), "both.json", `{"offsets":{"events/0":7}}`)
	return vol
}

// labVolumeCopy copies a volume of ../shared/testdata into a temp dir.
func labVolumeCopy(t *testing.T, parts ...string) string {
	t.Helper()
	dir, err := labdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	return copyTree(t, filepath.Join(append([]string{filepath.Dir(dir)}, parts...)...))
}
