package volume

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func histAsgBytes(epoch, version string) []byte {
	return []byte(`{"controllerEpoch":` + epoch + `,"assignmentVersion":` + version + `,"generatedAt":"2026-07-23T11:40:02Z","controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"}],"partitions":[]}`)
}

func TestLoadAssignmentHistory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	w("b", histAsgBytes("2", "1"))                    // any name
	w("a.json", histAsgBytes("1", "9"))               // same epoch, later version
	w("c.json", histAsgBytes("1", "10"))              //
	w("dup.json", histAsgBytes("1", "9"))             // identical duplicate
	w("conflict.json", histAsgBytes("1", "10")[:100]) // truncated: a problem
	w("z.json", []byte(`{"controllerEpoch":1,"assignmentVersion":10,"brokers":[],"partitions":[]}`))
	w("README", []byte("notes about these files\n"))
	w("assignment.json.tmp", histAsgBytes("9", "9"))
	w(".hidden.json", histAsgBytes("9", "9"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	extra := filepath.Join(t.TempDir(), "live.json")
	os.WriteFile(extra, histAsgBytes("2", "2"), 0o644)

	res := LoadAssignmentHistory([]string{dir, extra, filepath.Join(dir, "missing")})
	var keys []string
	for _, s := range res.Snapshots {
		e, v := s.Key()
		keys = append(keys, filepath.Base(s.Path)+":"+histItoa(e)+"/"+histItoa(v))
	}
	want := []string{"a.json:1/9", "c.json:1/10", "b:2/1", "live.json:2/2"}
	if !slices.Equal(keys, want) {
		t.Errorf("snapshots %v, want %v", keys, want)
	}
	if len(res.Duplicates) != 1 || filepath.Base(res.Duplicates[0]) != "dup.json" {
		t.Errorf("duplicates %v", res.Duplicates)
	}
	if len(res.Conflicts) != 1 || filepath.Base(res.Conflicts[0]) != "z.json" {
		t.Errorf("conflicts %v", res.Conflicts)
	}
	if len(res.Problems) != 2 {
		t.Errorf("problems %v", res.Problems)
	}
	if len(res.Skipped) != 1 || filepath.Base(res.Skipped[0]) != "README" {
		t.Errorf("skipped %v", res.Skipped)
	}
}

func histItoa(n int64) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return histItoa(n/10) + string(rune('0'+n%10))
}

func TestKnownOffsetGroups(t *testing.T) {
	t.Parallel()
	cd := t.TempDir()
	od := filepath.Join(cd, OffsetsDir)
	os.MkdirAll(filepath.Join(od, "a"), 0o755)
	for _, n := range []string{"orders.json", "billing.json", "orders.json.tmp", ".json", "notes.txt"} {
		os.WriteFile(filepath.Join(od, n), []byte("{}"), 0o644)
	}
	os.WriteFile(filepath.Join(od, "a", "b.json"), []byte("{}"), 0o644)
	data := t.TempDir()
	os.MkdirAll(filepath.Join(data, OffsetsDir), 0o755)
	os.WriteFile(filepath.Join(data, OffsetsDir, "legacy.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(data, OffsetsDir, "orders.json"), []byte("{}"), 0o644)
	got, err := Layout{ClusterDir: cd, DataDir: data}.KnownOffsetGroups()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"", "a/b", "billing", "legacy", "orders"}; !slices.Equal(got, want) {
		t.Errorf("groups %q, want %q", got, want)
	}
	if g, err := (Layout{ClusterDir: filepath.Join(cd, "nope")}).KnownOffsetGroups(); len(g) != 0 || err != nil {
		t.Errorf("missing dir: %v %v", g, err)
	}
}
