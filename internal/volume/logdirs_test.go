package volume

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A partition placed in a pool log dir is found there once the dir is
// given (as paths or as kaas's KAAS_LOG_DIRS JSON), every listing covers
// both dirs, and a missing partition's note says whether pool dirs were
// given.
func TestPoolLogDirs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	data, fast := filepath.Join(root, "data"), filepath.Join(root, "fast")
	for _, d := range []string{filepath.Join(data, ClusterSubdir), filepath.Join(data, "orders", "0"), filepath.Join(data, "orders", "2"), filepath.Join(fast, "orders", "1"), filepath.Join(fast, "events", "0")} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(data, ClusterSubdir, AssignmentFile), []byte(`{"controllerEpoch":1,"assignmentVersion":1,"brokers":[]}`), 0o644)
	for _, in := range []ResolveInput{
		{DataDirFlag: data, LogDirsFlag: []string{fast}},
		{DataDirFlag: data, EnvLogDirs: `[{"name":"fast","path":"` + fast + `","defaultEligible":true}]`},
	} {
		l, err := Resolve(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.PartitionDir("orders", 1); got != filepath.Join(fast, "orders", "1") {
			t.Errorf("orders/1 in %s, want the pool dir", got)
		}
		if got := l.PartitionDir("orders", 0); got != filepath.Join(data, "orders", "0") {
			t.Errorf("orders/0 in %s", got)
		}
		var names []string
		for _, tp := range PartitionDirs(l) {
			names = append(names, tp.Topic+"/"+string(rune('0'+tp.Partition)))
		}
		if strings.Join(names, " ") != "events/0 orders/0 orders/1 orders/2" {
			t.Errorf("partition dirs %v", names)
		}
		if !strings.Contains(l.PoolNote(), fast) {
			t.Errorf("note %q", l.PoolNote())
		}
	}
	l, _ := Resolve(ResolveInput{DataDirFlag: data})
	if len(PartitionDirs(l)) != 2 || !strings.Contains(l.PoolNote(), "--log-dirs") {
		t.Errorf("without the pool dir: %v, %q", PartitionDirs(l), l.PoolNote())
	}
	if _, err := Resolve(ResolveInput{DataDirFlag: data, LogDirsFlag: []string{filepath.Join(root, "nope")}}); err == nil {
		t.Error("a pool dir that does not exist was accepted")
	}
	if _, err := Resolve(ResolveInput{DataDirFlag: data, EnvLogDirs: `[{"name":"x"}]`}); err == nil {
		t.Error("a KAAS_LOG_DIRS entry without a path was accepted")
	}
}

// parseLogDirs never panics and returns paths only when it returns no error.
func FuzzParseLogDirs(f *testing.F) {
	f.Add(`[{"name":"fast","path":"/vols/fast","defaultEligible":true}]`)
	f.Add("/vols/a, /vols/b")
	f.Fuzz(func(t *testing.T, v string) {
		dirs, err := parseLogDirs(v)
		if err != nil && dirs != nil {
			t.Errorf("%q: dirs %v with error %v", v, dirs, err)
		}
		for _, d := range dirs {
			if d == "" {
				t.Errorf("%q: an empty dir", v)
			}
		}
	})
}
