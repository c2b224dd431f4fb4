package volume

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func codes(fs []Finding) string {
	var cs []string
	for _, f := range fs {
		cs = append(cs, string(f.Severity)+":"+f.Code)
	}
	return strings.Join(cs, ",")
}

func TestParseOffsetFile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, format, entries, findings, err string
	}{
		{"envelope", `{"offsets":{"orders/1":998,"orders/0":1042,"a/b/0":17},"metadata":{"orders/0":"host-a"}}`, FormatEnvelope, "a/b/0=17,orders/0=1042(host-a),orders/1=998", "", ""},
		{"plain map", `{"orders/0":12,"orders/1":7}`, FormatPlainMap, "orders/0=12,orders/1=7", "error:offsets.legacyPlainMap", ""},
		{"empty object", `{}`, FormatEnvelope, "", "info:offsets.noOffsets", ""},
		{"bad key and value", `{"offsets":{"x":1,"t/y":2,"t/0":"3","t/1":-1}}`, FormatEnvelope, "t/1=-1",
			"error:offsets.badValue,warning:offsets.negativeOffset,warning:offsets.badKey,warning:offsets.badKey", ""},
		{"unknown field", `{"offsets":{"t/0":1},"epoch":3}`, FormatEnvelope, "t/0=1", "warning:offsets.unknownFields", ""},
		{"orphan metadata", `{"offsets":{"t/0":1},"metadata":{"t/1":"m"}}`, FormatEnvelope, "t/0=1", "info:offsets.metadataWithoutOffset", ""},
		{"null metadata", `{"offsets":{"t/0":1},"metadata":null}`, FormatEnvelope, "t/0=1", "error:offsets.badValue", ""},
		{"empty", ``, "", "", "", "file is empty"},
		{"truncated", `{"offsets":{"t/0":1`, "", "", "", "truncated JSON"},
		{"null offsets", `{"offsets":null}`, "", "", "", `"offsets" is null`},
		{"array", `[1]`, "", "", "", "wrong type"},
		{"json null", `null`, "", "", "", "JSON null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			of, fs, err := ParseOffsetFile("g.json", []byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "g.json: ") {
					t.Fatalf("err %v, want one naming the file and containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var es []string
			for _, e := range of.Entries {
				s := fmt.Sprintf("%s/%d=%d", e.Topic, e.Partition, e.Offset)
				if e.Metadata != "" {
					s += "(" + e.Metadata + ")"
				}
				es = append(es, s)
			}
			if of.Format != c.format || strings.Join(es, ",") != c.entries {
				t.Errorf("format %s entries %v; want %s %s", of.Format, es, c.format, c.entries)
			}
			if got := codes(fs); got != c.findings {
				t.Errorf("findings %s; want %s", got, c.findings)
			}
		})
	}
}

func TestNameProblems(t *testing.T) {
	t.Parallel()
	if ps := NameProblems("orders-app"); len(ps) != 0 {
		t.Errorf("plain name: %v", ps)
	}
	for _, g := range []string{"a/b", strings.Repeat("x", 247), "bad\xff", "", "nul\x00"} {
		if len(NameProblems(g)) == 0 {
			t.Errorf("%q: no problem reported", g)
		}
	}
	if len(NameProblems(strings.Repeat("x", 246))) != 0 {
		t.Error("246 bytes is still writable")
	}
	if DisplayName("bad\xffname") != `bad\xffname` || DisplayName("ok") != "ok" || DisplayName("a\nb") != `a\nb` {
		t.Error("DisplayName escapes wrongly")
	}
}

// writeOffsets creates n offset files in dir named g-00000.json ...
func writeOffsets(t testing.TB, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		body := fmt.Sprintf(`{"offsets":{"orders/0":%d,"orders/1":%d}}`, i, i+1)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("g-%05d.json", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestScanOffsetsOrderAndLayouts(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	l := Layout{DataDir: data, ClusterDir: filepath.Join(data, ClusterSubdir)}
	writeOffsets(t, l.OffsetsPath(), 300)
	writeOffsets(t, l.DataOffsetsPath(), 3)
	// Both dirs hold files: only a pin to 0.2.18 makes the data-dir one legacy.
	l = l.PinnedTo(Gen018, "test")
	sub := filepath.Join(l.OffsetsPath(), "team")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "a.json"), []byte(`{"offsets":{"t/0":1}}`), 0o644)
	os.WriteFile(filepath.Join(l.OffsetsPath(), "g-00001.json.tmp"), []byte(`{}`), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(l.OffsetsPath(), "g-00001.json.tmp"), old, old)
	os.WriteFile(filepath.Join(l.OffsetsPath(), "README"), []byte(`x`), 0o644)

	// Window 5 runs one or two files a worker at a time; the defaults
	// (Workers and Window 0) runs of 16.
	for _, workers := range []int{1, 3, 16, 0} {
		window := 5
		if workers == 0 {
			window = 0
		}
		var got []string
		sr, err := ScanOffsets(l, ScanOptions{Workers: workers, Window: window}, func(it *OffsetScanItem) error {
			if it.Err != nil {
				t.Errorf("%s: %v", it.Path, it.Err)
			}
			got = append(got, it.Layout+":"+it.Group)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 304 || sr.Files != 304 {
			t.Fatalf("workers %d: %d items (%d files)", workers, len(got), sr.Files)
		}
		if got[0] != "current:g-00000" || got[299] != "current:g-00299" || got[300] != "current:team/a" || got[301] != "legacy:g-00000" || got[303] != "legacy:g-00002" {
			t.Fatalf("workers %d: order %v ... %v", workers, got[:2], got[298:])
		}
		if c := codes(sr.Findings); c != "info:volume.unknownFile,warning:volume.staleTmpFile,warning:volume.legacyOffsetsDir" {
			t.Errorf("dir findings %s", c)
		}
	}
}

// TestScanOffsetsStopsAndBounds: the scan stops at the callback's error,
// and OnItem sees each item the callback took, in order, but not the one
// it failed on.
func TestScanOffsetsStopsAndBounds(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	l := Layout{DataDir: data, ClusterDir: data}
	writeOffsets(t, l.OffsetsPath(), 200)
	stop := errors.New("stop")
	n := 0
	var took, seen []string
	_, err := ScanOffsets(l, ScanOptions{Workers: 4, Window: 8, OnItem: func(it *OffsetScanItem) { seen = append(seen, it.Group) }}, func(it *OffsetScanItem) error {
		n++
		if n == 10 {
			return stop
		}
		took = append(took, it.Group)
		return nil
	})
	if err != stop || n != 10 {
		t.Fatalf("err %v after %d items; want the callback's error after 10", err, n)
	}
	if len(seen) != 9 || !slices.Equal(seen, took) {
		t.Fatalf("OnItem saw %v; the callback took %v", seen, took)
	}
}

func TestScanOffsetsNamesOnlyAndMissingDir(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	l := Layout{DataDir: data, ClusterDir: filepath.Join(data, ClusterSubdir)}
	sr, err := ScanOffsets(l, ScanOptions{}, func(*OffsetScanItem) error { t.Fatal("no files expected"); return nil })
	if err != nil || codes(sr.Findings) != "info:volume.generationUnknown,info:offsets.noOffsetsDir" {
		t.Fatalf("missing dir: %v %s", err, codes(sr.Findings))
	}
	writeOffsets(t, l.OffsetsPath(), 2)
	_, err = ScanOffsets(l, ScanOptions{NamesOnly: true}, func(it *OffsetScanItem) error {
		if it.File != nil || it.Err != nil {
			t.Errorf("NamesOnly read %s", it.Path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadIntoLimit(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte(strings.Repeat("a", 10000)), 0o644)
	data, err := readFileLimited(p)
	if err != nil || len(data) != 10000 {
		t.Fatalf("%d bytes, %v", len(data), err)
	}
}

// TestScanOffsetsSubdirFiles: group ids with "/" put files in
// sub-directories, which the scan reads by path (the offsets dir's own
// files by name in it): every file is read, in group order.
func TestScanOffsetsSubdirFiles(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	l := Layout{DataDir: data, ClusterDir: filepath.Join(data, ClusterSubdir)}.PinnedTo(Gen018, "test")
	writeOffsets(t, l.OffsetsPath(), 3) // g-00000.json …: before team-*/ in group order
	n := 12
	for i := range n {
		sub := filepath.Join(l.OffsetsPath(), fmt.Sprintf("team-%03d", i))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "app.json"), []byte(fmt.Sprintf(`{"offsets":{"t/0":%d}}`, i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	_, err := ScanOffsets(l, ScanOptions{}, func(it *OffsetScanItem) error {
		defer func() { i++ }()
		if i < 3 {
			if want := fmt.Sprintf("g-%05d", i); it.Err != nil || it.File == nil || it.Group != want || it.InSubdir {
				t.Errorf("item %d: %s %+v %v, want %s (the offsets dir's own)", i, it.Group, it.File, it.Err, want)
			}
			return nil
		}
		k := i - 3
		want := fmt.Sprintf("team-%03d/app", k)
		if it.Err != nil || it.File == nil || it.Group != want || !it.InSubdir || it.File.Entries[0].Offset != int64(k) {
			t.Errorf("item %d: %s %+v %v, want %s at offset %d", i, it.Group, it.File, it.Err, want, k)
		}
		return nil
	})
	if err != nil || i != n+3 {
		t.Fatalf("%d items, err %v; want %d", i, err, n+3)
	}
}
