package volume

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The volume model, generation by generation: where each generation's
// brokers keep live offsets, what every other offsets dir is to them, and
// that the Layout answers from the table (a pinned layout, the followed
// dir, the legacy dir, the scan's roles).
func TestVolumeModelPerGeneration(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cd := filepath.Join(data, ClusterSubdir)
	dataOff, cdOff := filepath.Join(data, OffsetsDir), filepath.Join(cd, OffsetsDir)
	os.MkdirAll(cd, 0o755)
	mkGroup(t, dataOff, "old")
	mkGroup(t, cdOff, "new")
	for _, c := range []struct {
		gen                 Generation
		live, other         string
		liveRole, otherRole string
		legacy              string
		plainMap, keeps     bool
	}{
		{GenGo, dataOff, cdOff, OffsetsCurrent, OffsetsNotRead, "", true, false},
		{Gen016, cdOff, dataOff, OffsetsCurrent, OffsetsPreMigration, "", true, true},
		{Gen018, cdOff, dataOff, OffsetsCurrent, OffsetsLegacy, dataOff, false, true},
	} {
		l := Layout{DataDir: data, ClusterDir: cd}.PinnedTo(c.gen, "test")
		if got, err := l.LiveOffsetsDir(); err != nil || got != c.live {
			t.Errorf("%s: live %q %v, want %s", c.gen, got, err, c.live)
		}
		if got := l.LiveOffsetsDirOf(c.gen); got != c.live {
			t.Errorf("%s: LiveOffsetsDirOf %q", c.gen, got)
		}
		if got := l.FollowedOffsetsDir(); got != c.live {
			t.Errorf("%s: followed %q", c.gen, got)
		}
		if got := l.LegacyOffsetsPath(); got != c.legacy {
			t.Errorf("%s: legacy %q, want %q", c.gen, got, c.legacy)
		}
		dirs := l.OffsetsDirs()
		if len(dirs) != 2 || dirs[0].Path != c.live || dirs[0].Role != c.liveRole || dirs[1].Path != c.other || dirs[1].Role != c.otherRole {
			t.Errorf("%s: dirs %+v", c.gen, dirs)
		}
		res, err := ScanOffsets(l, ScanOptions{}, func(*OffsetScanItem) error { return nil })
		if err != nil || len(res.Dirs) != 2 || res.Dirs[0].Role != c.liveRole || res.Dirs[1].Role != c.otherRole {
			t.Errorf("%s: scan %+v %v", c.gen, res.Dirs, err)
		}
		s, ok := c.gen.Spec()
		if !ok || s.PlainMapIsOffsets != c.plainMap || c.gen.PlainMapIsOffsets() != c.plainMap || s.Failover.Reloads != c.keeps || s.Failover.Source == "" || s.Failover.Summary == "" {
			t.Errorf("%s: spec %+v", c.gen, s)
		}
		if l.PartitionDir("orders", 3) != filepath.Join(data, "orders", "3") || l.PartitionDir(ClusterSubdir, 0) != "" {
			t.Errorf("%s: partition dir %q", c.gen, l.PartitionDir("orders", 3))
		}
		if l.TxnStatePath() != filepath.Join(cd, TxnStateDir) || l.FencesPath() != filepath.Join(cd, FencesDir) {
			t.Errorf("%s: txn dirs %s %s", c.gen, l.TxnStatePath(), l.FencesPath())
		}
	}
	// Only --cluster-dir: the Go generation's live dir cannot be found.
	if got := (Layout{ClusterDir: cd}).LiveOffsetsDirOf(GenGo); got != "" {
		t.Errorf("Go without a data dir: %q", got)
	}
	// The data dir is the cluster dir: one offsets dir, live everywhere.
	one := Layout{DataDir: cd, ClusterDir: cd}
	for _, g := range AllGenerations {
		if got := one.LiveOffsetsDirOf(g); got != cdOff {
			t.Errorf("%s, one dir: %q", g, got)
		}
	}
	if dirs := one.OffsetsDirs(); len(dirs) != 1 || dirs[0].Role != OffsetsCurrent {
		t.Errorf("one dir: %+v", dirs)
	}
}

// The table is consistent: every generation has exactly one live offsets
// dir, no location twice, versions ascending, and every release up to the
// newest maps to the row that covers it.
func TestVolumeModelTable(t *testing.T) {
	t.Parallel()
	prev := [3]int{}
	for i, s := range generationSpecs {
		live := 0
		var seen []Location
		for _, d := range s.OffsetsDirs {
			if d.Role == OffsetsCurrent {
				live++
			}
			if slices.Contains(seen, d.Loc) {
				t.Errorf("%s: %s listed twice", s.Gen, d.Loc)
			}
			seen = append(seen, d.Loc)
		}
		if live != 1 {
			t.Errorf("%s: %d live offsets dirs", s.Gen, live)
		}
		if i > 0 && cmpVersion(s.UpTo, prev) <= 0 {
			t.Errorf("%s: UpTo %v not after %v", s.Gen, s.UpTo, prev)
		}
		prev = s.UpTo
		v := strconv.Itoa(s.UpTo[0]) + "." + strconv.Itoa(s.UpTo[1]) + "." + strconv.Itoa(s.UpTo[2])
		if g, err := ParseKaasVersion(v); err != nil || g != s.Gen {
			t.Errorf("%s: %s parses as %s %v", s.Gen, v, g, err)
		}
		if s.ClusterSubdir != generationSpecs[0].ClusterSubdir {
			t.Errorf("%s: cluster subdir %q differs: Resolve needs the generation first", s.Gen, s.ClusterSubdir)
		}
	}
	for _, n := range []string{ClusterSubdir, OffsetsDir} {
		if !ReservedTopicName(n) {
			t.Errorf("%s is not reserved", n)
		}
	}
	if ReservedTopicName("orders") {
		t.Error("orders is reserved")
	}
}

// Paths of the volume are the volume model's: no package outside
// internal/volume names kaas's directories (as a string literal or through
// this package's name constants) or asks for an offsets dir by location
// instead of by role or generation. A later kaas generation with a new
// directory is then a change inside internal/volume alone.
func TestNoVolumePathsOutsideVolume(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	literals := map[string]bool{}
	for _, s := range generationSpecs {
		literals[strconv.Quote(s.ClusterSubdir)] = true
		for _, loc := range []Location{s.TxnState, s.ProducerFences, s.MarkerQueue, s.ProducerIDs} {
			literals[strconv.Quote(loc.Rel)] = true
		}
		for _, d := range s.OffsetsDirs {
			literals[strconv.Quote(d.Loc.Rel)] = true
		}
	}
	literals[strconv.Quote(ManifestFile)] = true
	selectors := map[string]bool{"OffsetsDir": true, "ClusterSubdir": true, "TxnStateDir": true, "FencesDir": true, "MarkerQueueDir": true, "ProducerIDsDir": true, "OffsetsPath": true, "DataOffsetsPath": true, "ManifestFile": true}
	checked := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == filepath.Join("internal", "volume") || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BasicLit:
				if x.Kind == token.STRING && literals[x.Value] {
					t.Errorf("%s: names kaas's directory %s: ask volume.Layout", fset.Position(x.Pos()), x.Value)
				}
			case *ast.SelectorExpr:
				if selectors[x.Sel.Name] {
					if id, ok := x.X.(*ast.Ident); ok && id.Name == "volume" {
						t.Errorf("%s: volume.%s outside internal/volume: ask volume.Layout", fset.Position(x.Pos()), x.Sel.Name)
					} else if !ok || id.Name != "volume" {
						// a method call l.OffsetsPath() on a Layout
						if x.Sel.Name == "OffsetsPath" || x.Sel.Name == "DataOffsetsPath" {
							t.Errorf("%s: %s() picks an offsets dir by location: ask by role or generation (LiveOffsetsDir, OffsetsDirs, LiveOffsetsDirOf)", fset.Position(x.Pos()), x.Sel.Name)
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d files checked under %s", checked, root)
	}
}

// A later kaas generation that moves the offsets into a new directory is
// one more row of the table: with a hypothetical 0.3.0 whose brokers keep
// offsets in CD/offsets (and leave CD/__consumer_offsets as legacy), the
// version parses, detection finds it from where group files are, every
// offsets dir gets its role, the scan reads the new dir as live, and the
// older generations see the new dir as one they never read. Nothing
// outside this package changes (TestNoVolumePathsOutsideVolume).
func TestVolumeModelNewGeneration(t *testing.T) {
	// No t.Parallel(): it swaps the package's table and restores it.
	saved, savedAll := generationSpecs, AllGenerations
	defer func() { generationSpecs, AllGenerations = saved, savedAll }()
	const gen030 Generation = "0.3.0"
	locNew := Location{RootCluster, "offsets"}
	next := GenerationSpec{Gen: gen030, Label: "Rust 0.3.0", Family: "Rust", From: "0.3.0", Short: "0.3.0", UpTo: [3]int{0, 3, 0},
		OffsetsDirs:       []OffsetsDirSpec{{locNew, OffsetsCurrent}, {locClusterOffsets, OffsetsLegacy}},
		PlainMapIsOffsets: false, ClusterSubdir: ClusterSubdir, Partitions: RootData,
		TxnState: locTxnState, ProducerFences: locProducerFences, MarkerQueue: locMarkerQueue, ProducerIDs: locProducerIDs,
		Failover: rustFailover}
	generationSpecs = append(slices.Clone(saved), next)
	AllGenerations = append(slices.Clone(savedAll), gen030)

	if g, err := ParseKaasVersion("v0.3.0-preview"); err != nil || g != gen030 {
		t.Fatalf("0.3.0 parses as %q %v", g, err)
	}
	if _, err := ParseKaasVersion("0.3.1"); err == nil || !strings.Contains(err.Error(), "up to 0.3.0") {
		t.Errorf("0.3.1: %v", err)
	}
	data := t.TempDir()
	cd := filepath.Join(data, ClusterSubdir)
	newDir := filepath.Join(cd, "offsets")
	mkGroup(t, newDir, "orders-app")
	l, err := Resolve(ResolveInput{DataDirFlag: data})
	if err != nil {
		t.Fatal(err)
	}
	if l.Gen.Gen != gen030 || l.Gen.LiveOffsetsDir != newDir || !strings.Contains(l.Gen.Evidence, "only Rust 0.3.0 brokers keep offsets in the cluster dir") {
		t.Fatalf("detected %+v", l.Gen)
	}
	dirs := l.OffsetsDirs()
	roles := map[string]string{}
	for _, d := range dirs {
		roles[d.Path] = d.Role
	}
	if len(dirs) != 3 || dirs[0].Path != newDir || roles[newDir] != OffsetsCurrent || roles[filepath.Join(cd, OffsetsDir)] != OffsetsLegacy || roles[filepath.Join(data, OffsetsDir)] != OffsetsNotRead {
		t.Errorf("dirs %+v", dirs)
	}
	var seen []string
	res, err := ScanOffsets(l, ScanOptions{}, func(it *OffsetScanItem) error {
		seen = append(seen, it.Group+"@"+it.Layout)
		return nil
	})
	if err != nil || !slices.Equal(seen, []string{"orders-app@" + OffsetsCurrent}) || res.Files != 1 {
		t.Errorf("scan %v %+v %v", seen, res, err)
	}
	// Pinned to 0.2.18, the new dir is one its brokers never read.
	p := l.PinnedTo(Gen018, "test")
	for _, d := range p.OffsetsDirs() {
		if d.Path == newDir && d.Role != OffsetsNotRead {
			t.Errorf("0.2.18 sees %s as %s", d.Path, d.Role)
		}
	}
	if p.FollowedOffsetsDir() != filepath.Join(cd, OffsetsDir) || l.FollowedOffsetsDir() != newDir {
		t.Errorf("followed %s / %s", p.FollowedOffsetsDir(), l.FollowedOffsetsDir())
	}
	// A Go volume is still told apart.
	goData := t.TempDir()
	os.MkdirAll(filepath.Join(goData, ClusterSubdir), 0o755)
	mkGroup(t, filepath.Join(goData, OffsetsDir), "g")
	if gi := DetectGeneration(DataDirLayout(goData, "test")); gi.Gen != GenGo {
		t.Errorf("Go volume with a 0.3.0 row: %+v", gi)
	}
}
