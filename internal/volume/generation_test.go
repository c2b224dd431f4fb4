package volume

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseKaasVersion(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Generation{
		"go": GenGo, "Go": GenGo, "0.1.190": GenGo, "0.1.0": GenGo, "0.0.9": GenGo, "0.2.0": GenGo, "0.2.15": GenGo,
		"v0.2.15-preview": GenGo, "0.2.16": Gen016, "0.2.17": Gen016, "v0.2.17-preview": Gen016, "0.2.18": Gen018,
		" 0.2.18 ": Gen018, "v0.2.18-preview": Gen018, "auto": GenUnknown, "": GenUnknown,
	} {
		got, err := ParseKaasVersion(in)
		if err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"rust", "0.2", "0.2.19", "0.3.0", "1.0.0", "0.2.x", "0.02.16", "0.2.-1", "0.2.16.1", "v", "-preview"} {
		if g, err := ParseKaasVersion(bad); err == nil || !strings.Contains(err.Error(), "0.2.18") {
			t.Errorf("%q: %q %v; want an error naming the accepted forms", bad, g, err)
		}
	}
}

// FuzzParseKaasVersion: never panics; whatever it accepts maps to a known
// generation (or auto), and the accepted form parses again the same way.
func FuzzParseKaasVersion(f *testing.F) {
	for _, s := range []string{"go", "0.1.190", "0.2.15", "v0.2.16-preview", "0.2.18", "auto", "0.2.999999999999999999999", "0..1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseKaasVersion(s)
		if err != nil {
			if g != GenUnknown {
				t.Fatalf("%q: error %v with generation %q", s, err, g)
			}
			return
		}
		if g != GenUnknown && !slices.Contains(AllGenerations, g) {
			t.Fatalf("%q: unknown generation %q", s, g)
		}
		if g2, err := ParseKaasVersion(strings.ToUpper(s)); err != nil || g2 != g {
			t.Fatalf("%q: case changes the answer: %q %v", s, g2, err)
		}
	})
}

func mkGroup(t *testing.T, dir, g string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, g+".json"), []byte(`{"offsets":{"t/0":1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDetectGeneration(t *testing.T) {
	t.Parallel()
	type want struct {
		gen       Generation
		source    string
		liveData  bool // live dir is DATA/__consumer_offsets
		liveKnown bool
		ambiguous bool
		cands     []string
	}
	for name, c := range map[string]struct {
		setup func(data, cd string)
		want  want
	}{
		"go":               {func(d, c string) { mkGroup(t, filepath.Join(d, OffsetsDir), "g") }, want{GenGo, GenSourceDetected, true, true, false, []string{}}},
		"go, no files yet": {func(d, c string) { os.MkdirAll(filepath.Join(d, OffsetsDir), 0o755) }, want{GenGo, GenSourceDetected, true, true, false, []string{}}},
		"rust":             {func(d, c string) { mkGroup(t, filepath.Join(c, OffsetsDir), "g") }, want{GenUnknown, GenSourceUndetermined, false, true, false, []string{"0.2.16", "0.2.18"}}},
		"rust, empty dir":  {func(d, c string) { os.MkdirAll(filepath.Join(c, OffsetsDir), 0o755) }, want{GenUnknown, GenSourceUndetermined, false, true, false, []string{"0.2.16", "0.2.18"}}},
		"both": {func(d, c string) {
			mkGroup(t, filepath.Join(d, OffsetsDir), "g")
			mkGroup(t, filepath.Join(c, OffsetsDir), "h")
		}, want{GenUnknown, GenSourceUndetermined, false, false, true, []string{"go", "0.2.16", "0.2.18"}}},
		"nothing": {func(d, c string) {}, want{GenUnknown, GenSourceUndetermined, false, false, false, []string{"go", "0.2.16", "0.2.18"}}},
		// A symlinked offsets dir pointing at the other one: one dir.
		"linked offsets dir": {func(d, c string) {
			mkGroup(t, filepath.Join(c, OffsetsDir), "g")
			os.Symlink(filepath.Join(c, OffsetsDir), filepath.Join(d, OffsetsDir))
		}, want{GenUnknown, GenSourceUndetermined, false, true, false, []string{"go", "0.2.16", "0.2.18"}}},
	} {
		data := t.TempDir()
		cd := filepath.Join(data, ClusterSubdir)
		os.MkdirAll(cd, 0o755)
		c.setup(data, cd)
		l := Layout{DataDir: data, ClusterDir: cd}
		gi := DetectGeneration(l)
		w := c.want
		liveWant := ""
		if w.liveKnown {
			liveWant = filepath.Join(cd, OffsetsDir)
			if w.liveData {
				liveWant = filepath.Join(data, OffsetsDir)
			}
		}
		if gi.Gen != w.gen || gi.Source != w.source || gi.LiveOffsetsDir != liveWant || gi.Ambiguous != w.ambiguous || !slices.Equal(gi.Candidates, w.cands) || gi.Evidence == "" {
			t.Errorf("%s: %+v", name, gi)
		}
		_, err := l.LiveOffsetsDir()
		if (err == nil) != w.liveKnown {
			t.Errorf("%s: LiveOffsetsDir error %v", name, err)
		}
		// A pin always names the live dir (the data dir is known).
		for _, g := range AllGenerations {
			p := l.PinnedTo(g, "test")
			if p.Gen.Gen != g || p.Gen.Source != GenSourcePinned || p.Gen.LiveOffsetsDir == "" || !strings.Contains(p.Gen.Evidence, gi.Evidence) {
				t.Errorf("%s pinned %s: %+v", name, g, p.Gen)
			}
		}
	}
}

func TestPlainMapVerdict(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		gi               GenerationInfo
		isOffsets, known bool
	}{
		{GenerationInfo{Gen: GenGo}, true, true},
		{GenerationInfo{Gen: Gen016}, true, true},
		{GenerationInfo{Gen: Gen018}, false, true},
		{GenerationInfo{cands: []Generation{Gen016, Gen018}}, false, false},
		{GenerationInfo{cands: []Generation{GenGo, Gen016}}, true, true},
		{GenerationInfo{}, false, false},
	} {
		if o, k := c.gi.PlainMapVerdict(); o != c.isOffsets || k != c.known {
			t.Errorf("%+v: %v %v", c.gi, o, k)
		}
	}
}

func TestSameDirSpellings(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	d := filepath.Join(base, "d")
	os.MkdirAll(d, 0o755)
	os.Symlink(d, filepath.Join(base, "link"))
	wd, _ := os.Getwd()
	rel, _ := filepath.Rel(wd, d)
	for _, other := range []string{d, d + "/", filepath.Join(base, "link"), rel, filepath.Join(base, "x", "..", "d")} {
		if !SameDir(d, other) {
			t.Errorf("%s and %s are one directory", d, other)
		}
	}
	os.MkdirAll(filepath.Join(base, "e"), 0o755)
	if SameDir(d, filepath.Join(base, "e")) || SameDir(d, "") {
		t.Error("different directories reported as one")
	}
}
