package volume

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A volume pool (kaas gh #221, KAAS_LOG_DIRS): log dirs beside the data
// dir, each holding <topic>/<partition> dirs of the partitions placed there
// (placement lives in the KafkaTopic's status, which kaasctl does not
// read), so a partition is looked up in the data dir and then in each pool
// dir.

// logDirs is the pool's dirs from --log-dirs or KAAS_LOG_DIRS: paths
// (comma-separated) or kaas's JSON ([{"name":"fast","path":"/vols/fast"}]);
// each must be a directory.
func (in ResolveInput) logDirs() ([]string, error) {
	src, vals := "--log-dirs", in.LogDirsFlag
	if len(vals) == 0 && strings.TrimSpace(in.EnvLogDirs) != "" {
		src, vals = "KAAS_LOG_DIRS", []string{in.EnvLogDirs}
	}
	var out []string
	for _, v := range vals {
		dirs, err := parseLogDirs(v)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %v", src, v, err)
		}
		for _, d := range dirs {
			if err := checkDir(d, src); err != nil {
				return nil, err
			}
			out = append(out, filepath.Clean(d))
		}
	}
	return out, nil
}

// parseLogDirs reads one value: kaas's JSON list, or comma-separated paths.
func parseLogDirs(v string) ([]string, error) {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[") {
		var ents []struct {
			Name string `json:"name"`
			Path string `json:"path"`
		}
		if err := json.Unmarshal([]byte(v), &ents); err != nil {
			return nil, fmt.Errorf("not KAAS_LOG_DIRS JSON ([{\"name\":\"fast\",\"path\":\"/vols/fast\"}]): %v", err)
		}
		var out []string
		for _, e := range ents {
			if e.Path == "" {
				return nil, fmt.Errorf("entry %q has no path", e.Name)
			}
			out = append(out, e.Path)
		}
		return out, nil
	}
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out, nil
}

// partitionRoots are the dirs partition dirs hang from: the data dir
// (the generation's partition root), then every pool dir.
func (l Layout) partitionRoots() []string {
	var roots []string
	if d := l.Path(Location{l.spec().Partitions, ""}); d != "" {
		roots = append(roots, d)
	}
	return append(roots, l.LogDirs...)
}

// PoolNote says where a partition dir was looked for, for a message about
// one that is not there: the pool dirs given, or that none were.
func (l Layout) PoolNote() string {
	if len(l.LogDirs) == 0 {
		return "no pool log dir was given: if the cluster has a volume pool (KAAS_LOG_DIRS), give its dirs with --log-dirs"
	}
	return "looked in the data dir and the pool dirs " + strings.Join(l.LogDirs, ", ")
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
