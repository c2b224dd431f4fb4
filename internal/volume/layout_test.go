package volume

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mkfile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	mkfile(t, filepath.Join(data, "__cluster", "assignment.json"), "{}")
	split := t.TempDir() // the chart's control-plane mount: files directly
	mkfile(t, filepath.Join(split, "assignment.json"), "{}")
	other := t.TempDir()

	for _, tc := range []struct {
		name        string
		in          ResolveInput
		wantCluster string
		wantData    string
	}{
		{"data flag", ResolveInput{DataDirFlag: data}, filepath.Join(data, "__cluster"), data},
		{"cluster flag", ResolveInput{ClusterDirFlag: split}, split, ""},
		{"cluster flag keeps env data dir", ResolveInput{ClusterDirFlag: split, EnvDataDir: data}, split, data},
		{"env cluster", ResolveInput{EnvClusterDir: split, EnvDataDir: data}, split, data},
		{"env data", ResolveInput{EnvDataDir: data}, filepath.Join(data, "__cluster"), data},
		{"flag beats env", ResolveInput{DataDirFlag: data, EnvClusterDir: split}, filepath.Join(data, "__cluster"), data},
		{"data dir holding assignment.json", ResolveInput{DataDirFlag: split}, split, split},
		{"profile", ResolveInput{ProfileDataDir: data}, filepath.Join(data, "__cluster"), data},
		{"env beats profile", ResolveInput{EnvClusterDir: split, ProfileDataDir: other}, split, other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Resolve(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if l.ClusterDir != tc.wantCluster || l.DataDir != tc.wantData {
				t.Errorf("got cluster %q data %q, want %q %q", l.ClusterDir, l.DataDir, tc.wantCluster, tc.wantData)
			}
			if l.Source == "" {
				t.Error("source not recorded")
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	t.Parallel()
	if _, err := Resolve(ResolveInput{}); !errors.Is(err, ErrNoVolume) {
		t.Errorf("no input: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := Resolve(ResolveInput{ClusterDirFlag: missing})
	var fe *FileError
	if !errors.As(err, &fe) || fe.Path != missing || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing dir: %v", err)
	}
	f := filepath.Join(t.TempDir(), "file")
	mkfile(t, f, "x")
	if _, err := Resolve(ResolveInput{ClusterDirFlag: f}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file as dir: %v", err)
	}
	// A data dir without __cluster or assignment.json names the missing cluster dir.
	d := t.TempDir()
	if _, err := Resolve(ResolveInput{DataDirFlag: d}); err == nil || !strings.Contains(err.Error(), "__cluster") {
		t.Errorf("empty data dir: %v", err)
	}
}

// WriteRoot is the outermost volume dir holding a path, so a write checks
// DATA/__cluster too; a cluster dir named outside the data dir is its own
// root; a path outside the volume has none.
func TestWriteRoot(t *testing.T) {
	t.Parallel()
	l := Layout{DataDir: "/data", ClusterDir: "/data/__cluster"}
	split := Layout{DataDir: "/data", ClusterDir: "/control"}
	same := Layout{DataDir: "/vol", ClusterDir: "/vol"}
	for _, c := range []struct {
		l          Layout
		path, want string
	}{
		{l, "/data/__cluster/__consumer_offsets/g.json", "/data"},
		{l, "/data/__consumer_offsets/g.json", "/data"},
		{l, "/data/orders/0/manifest.json", "/data"},
		{l, "/elsewhere/g.json", ""},
		{l, "/data/../etc/passwd", ""},
		{split, "/control/__consumer_offsets/g.json", "/control"},
		{split, "/data/__consumer_offsets/g.json", "/data"},
		{same, "/vol/__consumer_offsets/g.json", "/vol"},
		{Layout{ClusterDir: "/data/__cluster"}, "/data/__cluster/x", "/data/__cluster"},
	} {
		if got := c.l.WriteRoot(c.path); got != c.want {
			t.Errorf("%+v WriteRoot(%s) = %q, want %q", c.l, c.path, got, c.want)
		}
	}
	if _, err := l.OpenWriteDir("/elsewhere", false); err == nil || !strings.Contains(err.Error(), "not inside the volume") {
		t.Errorf("OpenWriteDir outside the volume: %v", err)
	}
}
