package commands

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

// Volumes of each kaas generation, built from the Go-generation lab volume.

// goVolume is lab-phase1 as the Go-flavour cluster left it: offsets in
// DATA/__consumer_offsets.
func goVolume(t *testing.T) string { return copyVolume(t, "lab-phase1") }

// rustVolume is lab-phase1 as a Rust ≥ 0.2.16 broker keeps it: the offsets
// dir moved into the cluster dir.
func rustVolume(t *testing.T) string {
	t.Helper()
	vol := copyVolume(t, "lab-phase1")
	if err := os.Rename(filepath.Join(vol, "__consumer_offsets"), filepath.Join(vol, "__cluster", "__consumer_offsets")); err != nil {
		t.Fatal(err)
	}
	return vol
}

// fileHashes maps every regular file under dir (and every directory) to a
// hash of its content, so a test can say exactly what changed.
func fileHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			m[rel+"/"] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m[rel] = fmt.Sprintf("%x", sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sameHashes(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %s changed (%q → %q)", what, k, v, after[k])
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s: %s appeared", what, k)
		}
	}
}

func findingCodes(rep inspect.CheckReport) []string {
	var cs []string
	for _, f := range rep.Findings {
		cs = append(cs, f.Code)
	}
	return cs
}

// Issue 11's "Done when" for a Go-generation volume.
func TestGoVolumeDoneWhen(t *testing.T) {
	t.Parallel()
	vol := goVolume(t)
	live := filepath.Join(vol, "__consumer_offsets")
	// The Go broker's OffsetDelete leaves a plain map, which it reads as offsets.
	writeFile(t, live, "deleted-some.json", `{"lab-events/0":100,"lab-events/1":100,"lab-events/2":100}`)

	out, errOut, code := runVol(t, "volume", "check", "--data-dir", vol, "-o", "json")
	if code != 0 {
		t.Fatalf("volume check: exit %d\n%s\n%s", code, out, errOut)
	}
	rep := mustJSON[inspect.CheckReport](t, out)
	if rep.Generation.Name != "go" || rep.Generation.Source != "detected" || rep.Generation.LiveOffsetsDir != live || !strings.Contains(rep.Generation.Evidence, live) {
		t.Errorf("generation %+v", rep.Generation)
	}
	for _, f := range rep.Findings {
		switch f.Code {
		case volume.CodeLegacyOffsetsDir, volume.CodeOffsetsPlainMap, volume.CodeDuplicateGroupFile, volume.CodeAmbiguousGeneration:
			t.Errorf("Go volume: finding %s: %s", f.Code, f.Message)
		case volume.CodePlainMapOffsets:
			if f.Severity != volume.SevInfo || f.Fix != "" || !strings.Contains(f.Message, "read it as offsets") || !strings.Contains(f.Message, "Go / Rust ≤ 0.2.15") {
				t.Errorf("plain map on Go: %+v", f)
			}
		}
		if strings.Contains(strings.ToLower(f.Message+f.Fix), "legacy") || strings.Contains(f.Message, "EMPTY") {
			t.Errorf("Go volume: %s calls something legacy or empty: %s / %s", f.Code, f.Message, f.Fix)
		}
	}
	if !slices.Contains(findingCodes(rep), volume.CodePlainMapOffsets) {
		t.Errorf("no note for the plain map: %v", findingCodes(rep))
	}
	human, _, _ := runVol(t, "volume", "check", "--data-dir", vol)
	if !strings.HasPrefix(human, "kaas generation Go / Rust ≤ 0.2.15 (detected: ") {
		t.Errorf("volume check header: %q", strings.SplitN(human, "\n", 2)[0])
	}

	// Groups listed with their offsets, from the live dir, without issues.
	out, errOut, code = runVol(t, "groups", "list", "--data-dir", vol, "-o", "json")
	if code != 0 {
		t.Fatalf("groups list: exit %d %s", code, errOut)
	}
	gl := mustJSON[views.GroupsListView](t, out)
	if gl.Sources.Generation == nil || gl.Sources.Generation.Name != "go" || gl.Sources.OffsetsDir != live || gl.Sources.LegacyDir != "" {
		t.Errorf("sources %+v", gl.Sources)
	}
	want := map[string]int{"lab-group": 6, "g-beta": 6, "g-gamma": 6, "deleted-some": 3}
	for _, r := range gl.Groups {
		if n, ok := want[r.Group]; !ok || r.CommittedPartitions != n || len(r.Issues) != 0 || !slices.Equal(r.Sources, []string{"file"}) {
			t.Errorf("row %+v; want %d partitions, source file, no issue", r, n)
		}
		delete(want, r.Group)
	}
	if len(want) > 0 {
		t.Errorf("groups missing: %v", want)
	}
	if !strings.Contains(errOut, "kaas generation Go / Rust ≤ 0.2.15 (detected") {
		t.Errorf("the sources line does not name the generation: %s", errOut)
	}
	// describe shows the plain map's offsets.
	out, _, code = runVol(t, "groups", "describe", "deleted-some", "--data-dir", vol, "-o", "json")
	if code != 0 || !strings.Contains(out, `"committed": 100`) || !strings.Contains(out, `"generation": "go"`) {
		t.Errorf("describe of the plain map: exit %d\n%s", code, out)
	}

	// volume repair --execute leaves every live file byte-identical.
	before := fileHashes(t, vol)
	out, errOut, code = runVol(t, "volume", "repair", "--data-dir", vol, "--execute", "-o", "json")
	if code != 0 {
		t.Fatalf("repair: exit %d\n%s\n%s", code, out, errOut)
	}
	sameHashes(t, "volume repair --execute on a Go volume", before, fileHashes(t, vol))
	rr := mustJSON[repair.RepairReport](t, out)
	if rr.Changes != 0 || rr.Generation.Name != "go" {
		t.Errorf("repair planned changes on a Go volume: %+v", rr)
	}

	// An offline reset lands in DATA/__consumer_offsets/<group>.json. The
	// lab volume has manifests but no segment files, so the log end that
	// bounds --to-offset is unverified: the override is named.
	out, errOut, code = runVol(t, "offsets", "reset", "--data-dir", vol, "-g", "lab-group", "--topic", "lab-events:0", "--to-offset", "3", "--offline", "--allow-unverified-log-end", "--execute")
	if code != 0 {
		t.Fatalf("offline reset: exit %d\n%s\n%s", code, out, errOut)
	}
	f, _, err := volume.ReadOffsetFile(filepath.Join(live, "lab-group.json"))
	if err != nil || f.Format != volume.FormatEnvelope || len(f.Entries) != 6 || f.Entries[0].Offset != 3 {
		t.Errorf("the reset did not land in the live file: %+v %v", f, err)
	}
	if _, err := os.Stat(filepath.Join(vol, "__cluster", "__consumer_offsets")); err == nil {
		t.Errorf("the reset created CD/__consumer_offsets on a Go volume")
	}
	// And an offline delete too.
	if _, errOut, code := runVol(t, "offsets", "delete", "--data-dir", vol, "-g", "g-beta", "--topic", "lab-events:5", "--offline", "--execute"); code != 0 {
		t.Fatalf("offline delete: exit %d %s", code, errOut)
	}
	if f, _, err := volume.ReadOffsetFile(filepath.Join(live, "g-beta.json")); err != nil || len(f.Entries) != 5 {
		t.Errorf("the delete did not land in the live file: %+v %v", f, err)
	}
}

func TestGenerationDetectionPinAndUsage(t *testing.T) {
	t.Parallel()
	goVol, rustVol := goVolume(t), rustVolume(t)
	gen := func(env map[string]string, args ...string) (*volume.GenerationInfo, cliResult) {
		t.Helper()
		r := runCLI(t, "", env, append([]string{"groups", "list", "-o", "json"}, args...)...)
		if r.Code != 0 {
			return nil, r
		}
		var v views.GroupsListView
		if err := jsonUnmarshal(r.Out, &v); err != nil {
			t.Fatal(err)
		}
		return v.Sources.Generation, r
	}
	cases := []struct {
		name   string
		env    map[string]string
		args   []string
		want   string
		source string
		cands  []string
	}{
		{"go detected", nil, []string{"--data-dir", goVol}, "go", "detected", []string{}},
		{"rust undetermined", nil, []string{"--data-dir", rustVol}, "unknown", "undetermined", []string{"0.2.16", "0.2.18"}},
		{"pin Go version", nil, []string{"--data-dir", rustVol, "--kaas-version", "0.1.190"}, "go", "pinned", []string{}},
		{"pin Rust 0.2.15 is Go", nil, []string{"--data-dir", rustVol, "--kaas-version", "v0.2.15-preview"}, "go", "pinned", []string{}},
		{"env pin", map[string]string{"KAASCTL_KAAS_VERSION": "0.2.17"}, []string{"--data-dir", rustVol}, "0.2.16", "pinned", []string{}},
		{"flag beats env", map[string]string{"KAASCTL_KAAS_VERSION": "0.2.17"}, []string{"--data-dir", rustVol, "--kaas-version", "0.2.18"}, "0.2.18", "pinned", []string{}},
		{"auto beats env", map[string]string{"KAASCTL_KAAS_VERSION": "0.2.17"}, []string{"--data-dir", goVol, "--kaas-version", "auto"}, "go", "detected", []string{}},
	}
	for _, c := range cases {
		gi, r := gen(c.env, c.args...)
		if gi == nil {
			t.Errorf("%s: exit %d %s", c.name, r.Code, r.Err)
			continue
		}
		if gi.Name != c.want || gi.Source != c.source || !slices.Equal(gi.Candidates, c.cands) || gi.Evidence == "" {
			t.Errorf("%s: %+v", c.name, gi)
		}
	}
	// The env pin's source is named in the evidence.
	if gi, _ := gen(map[string]string{"KAASCTL_KAAS_VERSION": "0.2.17"}, "--data-dir", rustVol); gi == nil || !strings.Contains(gi.Evidence, "KAASCTL_KAAS_VERSION 0.2.17") {
		t.Errorf("env pin evidence %+v", gi)
	}
	// Bad values: usage errors naming the accepted forms.
	for _, bad := range []string{"rust", "0.3.0", "0.2", "1.0.0", "0.2.x"} {
		r := runCLI(t, "", nil, "volume", "check", "--data-dir", goVol, "--kaas-version", bad)
		if r.Code != 2 || !strings.Contains(r.Err, "0.2.18") || !strings.Contains(r.Err, "go") {
			t.Errorf("--kaas-version %q: exit %d %s", bad, r.Code, r.Err)
		}
	}
	if r := runCLI(t, "", map[string]string{"KAASCTL_KAAS_VERSION": "banana"}, "groups", "list", "--data-dir", goVol); r.Code != 2 || !strings.Contains(r.Err, "KAASCTL_KAAS_VERSION") {
		t.Errorf("bad env pin: exit %d %s", r.Code, r.Err)
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func TestGenerationProfileKey(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	cfg := filepath.Join(home, "config.yaml")
	env := map[string]string{"KAASCTL_CONFIG": cfg, "HOME": home}
	vol := rustVolume(t)
	if r := runCLI(t, "", env, "config", "set-profile", "lab", "--data-dir", vol, "--kaas-version", "nope", "--use"); r.Code != 2 || !strings.Contains(r.Err, "0.2.18") {
		t.Fatalf("bad profile pin: exit %d %s", r.Code, r.Err)
	}
	if r := runCLI(t, "", env, "config", "set-profile", "lab", "--data-dir", vol, "--kaas-version", "0.2.18", "--use"); r.Code != 0 {
		t.Fatalf("set-profile: exit %d %s", r.Code, r.Err)
	}
	data, _ := os.ReadFile(cfg)
	if !strings.Contains(string(data), "kaasVersion: 0.2.18") {
		t.Errorf("profile file:\n%s", data)
	}
	r := runCLI(t, "", env, "volume", "check", "-o", "json")
	rep := mustJSON[inspect.CheckReport](t, r.Out)
	if rep.Generation.Name != "0.2.18" || rep.Generation.Source != "pinned" || !strings.Contains(rep.Generation.Evidence, "profile kaasVersion") {
		t.Errorf("profile pin: %+v", rep.Generation)
	}
	// The flag beats the profile.
	r = runCLI(t, "", env, "volume", "check", "-o", "json", "--kaas-version", "0.2.16")
	if rep := mustJSON[inspect.CheckReport](t, r.Out); rep.Generation.Name != "0.2.16" {
		t.Errorf("flag over profile: %+v", rep.Generation)
	}
	if r := runCLI(t, "", env, "config", "show"); !strings.Contains(r.Out, "kaas-version") || !strings.Contains(r.Out, "0.2.18") {
		t.Errorf("config show:\n%s", r.Out)
	}
	if r := runCLI(t, "", env, "config", "set-profile", "lab", "--unset", "kaas-version"); r.Code != 0 {
		t.Fatalf("unset: %d %s", r.Code, r.Err)
	}
	if data, _ := os.ReadFile(cfg); strings.Contains(string(data), "kaasVersion") {
		t.Errorf("--unset kaas-version left:\n%s", data)
	}
}

// A plain map means different things per generation.
func TestPlainMapPerGeneration(t *testing.T) {
	t.Parallel()
	plain := `{"lab-events/0":12,"lab-events/1":7}`
	for _, c := range []struct {
		pin      string
		code     string
		sev      volume.Severity
		checkRC  int
		repairAc string
	}{
		{"", volume.CodePlainMapUndetermined, volume.SevWarning, 0, repair.ActSkip},
		{"0.2.16", volume.CodePlainMapOffsets, volume.SevInfo, 0, ""},
		{"go", volume.CodePlainMapOffsets, volume.SevInfo, 0, ""},
		{"0.2.18", volume.CodeOffsetsPlainMap, volume.SevError, 3, repair.ActConvert},
	} {
		vol := rustVolume(t)
		cd := filepath.Join(vol, "__cluster", "__consumer_offsets")
		writeFile(t, cd, "plain.json", plain)
		args := []string{"--data-dir", vol}
		if c.pin != "" {
			args = append(args, "--kaas-version", c.pin)
		}
		if c.pin == "go" {
			// Pinned to Go, CD is a dir its brokers never read.
			out, _, _ := runVol(t, append([]string{"volume", "check", "-o", "json"}, args...)...)
			if cs := findingCodes(mustJSON[inspect.CheckReport](t, out)); !slices.Contains(cs, volume.CodeOffsetsDirNotRead) {
				t.Errorf("pinned go over a CD-only volume: %v", cs)
			}
			continue
		}
		out, _, rc := runVol(t, append([]string{"volume", "check", "-o", "json"}, args...)...)
		rep := mustJSON[inspect.CheckReport](t, out)
		var got *volume.Finding
		for i, f := range rep.Findings {
			if strings.HasSuffix(f.Path, "plain.json") {
				got = &rep.Findings[i]
			}
		}
		if rc != c.checkRC || got == nil || got.Code != c.code || got.Severity != c.sev {
			t.Errorf("pin %q: exit %d finding %+v", c.pin, rc, got)
			continue
		}
		if c.pin == "" && (!strings.Contains(got.Message, "undetermined") || !strings.Contains(got.Fix, "--kaas-version")) {
			t.Errorf("undetermined plain map must say so and how to pin: %+v", got)
		}
		before := fileHashes(t, vol)
		out, errOut, rc := runVol(t, append([]string{"volume", "repair", "--execute", "-o", "json"}, args...)...)
		rr := mustJSON[repair.RepairReport](t, out)
		var act string
		for _, a := range rr.Actions {
			if strings.HasSuffix(a.Path, "plain.json") {
				act = a.Action
				if a.Action == repair.ActSkip && !strings.Contains(a.Detail, "generation") {
					t.Errorf("skip without the reason: %+v", a)
				}
			}
		}
		if act != c.repairAc || rc != 0 {
			t.Errorf("pin %q: repair action %q exit %d, want %q\n%s", c.pin, act, rc, c.repairAc, errOut)
		}
		if c.repairAc != repair.ActConvert {
			sameHashes(t, "repair with pin "+c.pin, before, fileHashes(t, vol))
		}
	}
}

// Both offsets dirs hold group files: one finding names both and the
// groups in each; nothing is migrated, repaired or written across them.
func TestAmbiguousGeneration(t *testing.T) {
	t.Parallel()
	vol := goVolume(t)
	cd := filepath.Join(vol, "__cluster", "__consumer_offsets")
	writeFile(t, cd, "g-beta.json", `{"offsets":{"lab-events/0":1}}`)
	writeFile(t, cd, "newer.json", `{"offsets":{"lab-events/0":2}}`)
	out, _, code := runVol(t, "volume", "check", "--data-dir", vol, "-o", "json")
	rep := mustJSON[inspect.CheckReport](t, out)
	if code != 0 || !rep.Generation.Ambiguous || rep.Generation.Name != "unknown" || rep.Generation.LiveOffsetsDir != "" {
		t.Errorf("exit %d generation %+v", code, rep.Generation)
	}
	var amb []volume.Finding
	for _, f := range rep.Findings {
		switch f.Code {
		case volume.CodeAmbiguousGeneration:
			amb = append(amb, f)
		case volume.CodeLegacyOffsetsDir, volume.CodeDuplicateGroupFile, volume.CodeOffsetsPlainMap:
			t.Errorf("ambiguous volume: %s", f.Code)
		}
	}
	if len(amb) != 1 {
		t.Fatalf("%d ambiguity findings: %v", len(amb), findingCodes(rep))
	}
	m := amb[0].Message
	for _, want := range []string{filepath.Join(vol, "__consumer_offsets"), cd, "only in " + filepath.Join(vol, "__consumer_offsets") + ": g-gamma, lab-group", "only in " + cd + ": newer", "in both: g-beta"} {
		if !strings.Contains(m, want) {
			t.Errorf("ambiguity finding lacks %q: %s", want, m)
		}
	}
	if !strings.Contains(amb[0].Fix, "--kaas-version") {
		t.Errorf("fix %q", amb[0].Fix)
	}
	// groups list warns and flags the rows.
	out, errOut, _ := runVol(t, "groups", "list", "--data-dir", vol, "-o", "json")
	if !strings.Contains(errOut, "cannot be told") {
		t.Errorf("groups list does not warn: %s", errOut)
	}
	for _, r := range mustJSON[views.GroupsListView](t, out).Groups {
		if !r.HasIssue(inspect.IssueOffsetsDirUnknown) {
			t.Errorf("row %s: %v", r.Group, r.Issues)
		}
	}
	// repair --execute moves nothing across dirs; a reset refuses; migrate refuses.
	before := fileHashes(t, vol)
	out, _, code = runVol(t, "volume", "repair", "--data-dir", vol, "--execute", "-o", "json")
	rr := mustJSON[repair.RepairReport](t, out)
	if code != 0 || rr.Changes != 0 || rr.Skipped == 0 {
		t.Errorf("repair on an ambiguous volume: exit %d %+v", code, rr)
	}
	sameHashes(t, "repair on an ambiguous volume", before, fileHashes(t, vol))
	_, errOut, code = runVol(t, "offsets", "reset", "--data-dir", vol, "-g", "g-beta", "--all-topics", "--to-offset", "0", "--offline", "--execute")
	if code == 0 || !strings.Contains(errOut, "--kaas-version") {
		t.Errorf("offline reset on an ambiguous volume: exit %d %s", code, errOut)
	}
	_, errOut, code = runVol(t, "volume", "migrate", "--to", "0.2.18", "--data-dir", vol, "--execute")
	if code != 4 || !strings.Contains(errOut, "--kaas-version go") {
		t.Errorf("migrate on an ambiguous volume: exit %d %s", code, errOut)
	}
	sameHashes(t, "writes on an ambiguous volume", before, fileHashes(t, vol))
	// Pinned to 0.2.18 the data-dir files are legacy, with the groups at risk.
	out, _, _ = runVol(t, "volume", "check", "--data-dir", vol, "--kaas-version", "0.2.18", "-o", "json")
	for _, f := range mustJSON[inspect.CheckReport](t, out).Findings {
		if f.Code == volume.CodeLegacyOffsetsDir && (!strings.Contains(f.Message, "groups at risk: g-beta, g-gamma, lab-group") || !strings.Contains(f.Message, ": g-gamma, lab-group")) {
			t.Errorf("legacy finding does not list the groups at risk: %s", f.Message)
		}
	}
}

// The chart's split layout (KAAS_DATA_DIR equal to the cluster dir) and
// one directory spelled two ways: live files are never "legacy duplicates
// of themselves" and repair changes nothing.
func TestOneDirectorySpelledTwoWays(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	cl := filepath.Join(base, "cluster")
	src := goVolume(t)
	if err := os.MkdirAll(cl, 0o755); err != nil {
		t.Fatal(err)
	}
	cp := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Dir(to), filepath.Base(to), string(b))
	}
	cp(filepath.Join(src, "__cluster", "assignment.json"), filepath.Join(cl, "assignment.json"))
	for _, g := range []string{"lab-group", "g-beta", "g-gamma"} {
		cp(filepath.Join(src, "__consumer_offsets", g+".json"), filepath.Join(cl, "__consumer_offsets", g+".json"))
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(cl, link); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, cl)
	if err != nil {
		t.Fatal(err)
	}
	spellings := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"same string", nil, []string{"--data-dir", cl, "--cluster-dir", cl}},
		{"relative and absolute", nil, []string{"--data-dir", rel, "--cluster-dir", cl}},
		{"trailing slash", nil, []string{"--data-dir", cl + "/", "--cluster-dir", cl}},
		{"symlink", nil, []string{"--data-dir", link, "--cluster-dir", cl}},
		{"chart split layout (env)", map[string]string{"KAAS_DATA_DIR": cl, "KAAS_CLUSTER_DIR": link}, nil},
		{"data dir holding assignment.json", nil, []string{"--data-dir", cl}},
	}
	for _, s := range spellings {
		before := fileHashes(t, cl)
		r := runCLI(t, "", s.env, append([]string{"volume", "check", "-o", "json"}, s.args...)...)
		rep := mustJSON[inspect.CheckReport](t, r.Out)
		if r.Code != 0 || !rep.Generation.SameDir || rep.Generation.LiveOffsetsDir == "" || rep.Summary.Warnings != 0 || rep.Summary.Errors != 0 {
			t.Errorf("%s: exit %d generation %+v findings %v", s.name, r.Code, rep.Generation, findingCodes(rep))
		}
		r = runCLI(t, "", s.env, append([]string{"groups", "list", "-o", "json"}, s.args...)...)
		gl := mustJSON[views.GroupsListView](t, r.Out)
		if len(gl.Groups) != 3 || gl.Sources.OffsetFiles != 3 {
			t.Errorf("%s: groups list %d groups from %d files", s.name, len(gl.Groups), gl.Sources.OffsetFiles)
		}
		for _, row := range gl.Groups {
			if len(row.Issues) != 0 || len(row.Files) != 1 {
				t.Errorf("%s: row %+v", s.name, row)
			}
		}
		r = runCLI(t, "", s.env, append([]string{"volume", "repair", "--execute", "-o", "json"}, s.args...)...)
		rr := mustJSON[repair.RepairReport](t, r.Out)
		if r.Code != 0 || rr.Changes != 0 {
			t.Errorf("%s: repair exit %d %+v", s.name, r.Code, rr)
		}
		sameHashes(t, s.name+": volume repair --execute", before, fileHashes(t, cl))
		if _, err := os.Stat(filepath.Join(cl, "__consumer_offsets", "lab-group.json")); err != nil {
			t.Fatalf("%s: the live file is gone: %v", s.name, err)
		}
		// migrate refuses: there is one offsets dir.
		r = runCLI(t, "", s.env, append([]string{"volume", "migrate", "--to", "0.2.18", "--execute", "--kaas-version", "go"}, s.args...)...)
		if r.Code != 2 || !strings.Contains(r.Err, "one directory") {
			t.Errorf("%s: migrate exit %d %s", s.name, r.Code, r.Err)
		}
		sameHashes(t, s.name+": volume migrate", before, fileHashes(t, cl))
	}
}

func TestVolumeMigrate(t *testing.T) {
	t.Parallel()
	vol := goVolume(t)
	old := filepath.Join(vol, "__consumer_offsets")
	cd := filepath.Join(vol, "__cluster", "__consumer_offsets")
	writeFile(t, old, "deleted-some.json", `{"lab-events/0":100}`)
	os.Chtimes(filepath.Join(old, "deleted-some.json"), volT0, volT0)
	orig := fileHashes(t, old)
	origBytes := map[string][]byte{}
	for _, g := range []string{"lab-group", "g-beta", "g-gamma"} {
		origBytes[g], _ = os.ReadFile(filepath.Join(old, g+".json"))
	}

	// --to values it cannot do.
	for _, to := range []string{"", "0.2.16", "go", "0.9.0"} {
		if _, errOut, code := runVol(t, "volume", "migrate", "--data-dir", vol, "--to", to); code != 2 || !strings.Contains(errOut, "0.2.18") {
			t.Errorf("--to %q: exit %d %s", to, code, errOut)
		}
	}
	// Live groups (files written within the quiet period) refuse.
	if _, errOut, code := runVol(t, "volume", "migrate", "--data-dir", vol, "--to", "0.2.18", "--now", "2026-07-23T10:01:00Z", "--execute"); code != 4 || !strings.Contains(errOut, "Stop every broker") {
		t.Errorf("fresh files: exit %d %s", code, errOut)
	}
	// --quiet-period 0s is accepted and skips the check (a dry run here).
	if out, errOut, code := runVol(t, "volume", "migrate", "--data-dir", vol, "--to", "0.2.18", "--now", "2026-07-23T10:01:00Z", "--quiet-period", "0s", "-o", "json"); code != 0 ||
		mustJSON[repair.MigrateReport](t, out).Refused != "" {
		t.Errorf("--quiet-period 0s: exit %d %s %s", code, out, errOut)
	}
	if _, errOut, code := runVol(t, "volume", "migrate", "--data-dir", vol, "--to", "0.2.18", "--quiet-period", "-1m"); code != 2 || !strings.Contains(errOut, "--quiet-period") {
		t.Errorf("--quiet-period -1m: exit %d %s", code, errOut)
	}
	// A reachable broker refuses.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, errOut, code := runVol(t, "volume", "migrate", "--data-dir", vol, "--to", "0.2.18", "--now", volNow, "--brokers", ln.Addr().String(), "--execute"); code != 4 || !strings.Contains(errOut, ln.Addr().String()) {
		t.Errorf("reachable broker: exit %d %s", code, errOut)
	}
	sameHashes(t, "refused migrations", orig, fileHashes(t, old))
	// Dry run: the plan, nothing written.
	out, _, code := runVol(t, "volume", "migrate", "--data-dir", vol, "--to", "0.2.18", "--now", volNow, "-o", "json")
	mr := mustJSON[repair.MigrateReport](t, out)
	if code != 0 || !mr.DryRun || mr.Changes != 5 || mr.Source != old || mr.Target != cd {
		t.Errorf("dry run: exit %d %+v", code, mr)
	}
	sameHashes(t, "dry run", orig, fileHashes(t, old))
	// A group already in the target with other offsets is a conflict, never overwritten.
	writeFile(t, cd, "g-gamma.json", `{"offsets":{"lab-events/0":1}}`)
	writeFile(t, cd, "lab-group.json", string(origBytes["lab-group"]))
	out, errOut, code := runVol(t, "volume", "migrate", "--data-dir", vol, "--to", "0.2.18", "--now", volNow, "--kaas-version", "go", "--execute", "-o", "json")
	mr = mustJSON[repair.MigrateReport](t, out)
	if code != 3 || mr.Conflicts != 1 || mr.Failed != 0 {
		t.Fatalf("migrate: exit %d %+v\n%s", code, mr, errOut)
	}
	acts := map[string]string{}
	for _, a := range mr.Actions {
		acts[a.Group] = a.Action
	}
	if acts["g-beta"] != repair.ActMigrate || acts["g-gamma"] != repair.ActConflict || acts["lab-group"] != repair.ActAlreadyMigrated || acts["deleted-some"] != repair.ActMigrate {
		t.Errorf("actions %v", acts)
	}
	if b, _ := os.ReadFile(filepath.Join(cd, "g-beta.json")); string(b) != string(origBytes["g-beta"]) {
		t.Errorf("g-beta not byte-identical after the migration: %s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(cd, "g-gamma.json")); string(b) != `{"offsets":{"lab-events/0":1}}` {
		t.Errorf("the conflicting target was overwritten: %s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(cd, "deleted-some.json")); string(b) != `{"offsets":{"lab-events/0":100}}` {
		t.Errorf("plain map not written as the envelope: %s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(old, "g-gamma.json")); string(b) != string(origBytes["g-gamma"]) {
		t.Errorf("the conflicting source was touched: %s", b)
	}
	for _, g := range []string{"g-beta", "lab-group"} {
		if b, err := os.ReadFile(filepath.Join(mr.Backup, g+".json")); err != nil || string(b) != string(origBytes[g]) {
			t.Errorf("%s: backup %v %q", g, err, b)
		}
	}
	// Resolve the conflict by hand; the rerun finishes and removes the old dir.
	os.Remove(filepath.Join(cd, "g-gamma.json"))
	out, errOut, code = runVol(t, "volume", "migrate", "--data-dir", vol, "--to", "0.2.18", "--now", "2026-07-23T12:05:00Z", "--kaas-version", "go", "--execute", "-o", "json")
	if code != 0 {
		t.Fatalf("rerun: exit %d %s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(old); err == nil {
		t.Errorf("the old dir remains")
	}
	// Idempotent: nothing to do, and the volume now reads as Rust ≥ 0.2.16.
	out, _, code = runVol(t, "volume", "migrate", "--data-dir", vol, "--to", "0.2.18", "--execute", "-o", "json")
	if mr := mustJSON[repair.MigrateReport](t, out); code != 0 || !mr.NothingToDo || len(mr.Actions) != 0 {
		t.Errorf("third run: exit %d %+v", code, mr)
	}
	out, _, _ = runVol(t, "groups", "list", "--data-dir", vol, "-o", "json")
	gl := mustJSON[views.GroupsListView](t, out)
	if len(gl.Groups) != 4 || gl.Sources.OffsetsDir != cd || slices.Equal(gl.Sources.Generation.Candidates, []string{}) {
		t.Errorf("after the migration: %+v", gl.Sources)
	}
}

func TestPermissionDeniedIsItsOwnFinding(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	vol := goVolume(t)
	p := filepath.Join(vol, "__consumer_offsets", "g-beta.json")
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(p, 0o644)
	out, _, code := runVol(t, "volume", "check", "--data-dir", vol, "-o", "json")
	rep := mustJSON[inspect.CheckReport](t, out)
	if code != 3 || !slices.Contains(findingCodes(rep), volume.CodePermissionDenied) || slices.Contains(findingCodes(rep), volume.CodeOffsetsCorrupt) {
		t.Errorf("check: exit %d %v", code, findingCodes(rep))
	}
	for _, f := range rep.Findings {
		if f.Code == volume.CodePermissionDenied && (!strings.Contains(f.Fix, "chmod") || strings.Contains(f.Fix, "quarantine")) {
			t.Errorf("fix %q", f.Fix)
		}
	}
	out, _, code = runVol(t, "volume", "repair", "--data-dir", vol, "--execute", "-o", "json")
	rr := mustJSON[repair.RepairReport](t, out)
	if code != 3 || rr.Denied != 1 || rr.Changes != 0 {
		t.Errorf("repair: exit %d %+v", code, rr)
	}
	if st, err := os.Lstat(p); err != nil || st.Mode().Perm() != 0 {
		t.Errorf("the unreadable file was touched: %v %v", st, err)
	}
	out, _, _ = runVol(t, "groups", "list", "--data-dir", vol, "-o", "json")
	for _, r := range mustJSON[views.GroupsListView](t, out).Groups {
		if r.Group == "g-beta" && (!r.HasIssue(inspect.IssuePermissionDenied) || r.HasIssue(inspect.IssueCorruptFile)) {
			t.Errorf("row %+v", r)
		}
	}
}

// volume repair lists every file it skips, with the reason.
func TestRepairListsSkippedFiles(t *testing.T) {
	t.Parallel()
	vol := goVolume(t)
	live := filepath.Join(vol, "__consumer_offsets")
	writeFile(t, filepath.Join(live, "team"), "a.json", `{"offsets":{"t/0":1}}`)
	writeFile(t, live, longGroup+".json", `{"offsets":{"t/0":1}}`)
	writeFile(t, live, invalidGroup+".json", `{"offsets":{"t/0":1}}`)
	out, _, code := runVol(t, "volume", "repair", "--data-dir", vol, "-o", "json")
	rr := mustJSON[repair.RepairReport](t, out)
	if code != 0 || rr.Skipped != 3 {
		t.Fatalf("exit %d %+v", code, rr)
	}
	for _, a := range rr.Actions {
		if a.Action != repair.ActSkip || a.Change || a.Detail == "" {
			t.Errorf("action %+v", a)
		}
	}
}

// Rust 0.2.16–0.2.17: the broker migrates DATA/__consumer_offsets itself at
// boot; kaasctl reports the files waiting for it and moves nothing.
func TestGen016PreMigrationDir(t *testing.T) {
	t.Parallel()
	vol := rustVolume(t)
	old := filepath.Join(vol, "__consumer_offsets")
	writeFile(t, old, "g-beta.json", `{"offsets":{"lab-events/0":1}}`)
	writeFile(t, old, "waiting.json", `{"lab-events/0":5}`)
	out, _, code := runVol(t, "volume", "check", "--data-dir", vol, "--kaas-version", "0.2.17", "-o", "json")
	rep := mustJSON[inspect.CheckReport](t, out)
	if code != 0 || rep.Generation.Name != "0.2.16" || rep.Generation.LiveOffsetsDir != filepath.Join(vol, "__cluster", "__consumer_offsets") {
		t.Fatalf("exit %d %+v", code, rep.Generation)
	}
	var pre *volume.Finding
	for i, f := range rep.Findings {
		switch f.Code {
		case volume.CodePreMigrationDir:
			pre = &rep.Findings[i]
		case volume.CodeLegacyOffsetsDir, volume.CodeOffsetsPlainMap:
			t.Errorf("0.2.16: %s: %s", f.Code, f.Message)
		}
	}
	if pre == nil || !strings.Contains(pre.Message, "not yet in the live dir: waiting") || !strings.Contains(pre.Message, "0.2.16–0.2.17") {
		t.Errorf("pre-migration finding %+v", pre)
	}
	before := fileHashes(t, vol)
	out, _, code = runVol(t, "volume", "repair", "--data-dir", vol, "--kaas-version", "0.2.17", "--execute", "-o", "json")
	rr := mustJSON[repair.RepairReport](t, out)
	if code != 0 || rr.Changes != 0 || rr.Skipped != 2 {
		t.Errorf("repair on 0.2.16: exit %d %+v", code, rr)
	}
	sameHashes(t, "repair on 0.2.16", before, fileHashes(t, vol))
	if _, errOut, code := runVol(t, "volume", "migrate", "--to", "0.2.18", "--data-dir", vol, "--kaas-version", "0.2.17"); code != 2 || !strings.Contains(errOut, "boot") {
		t.Errorf("migrate on 0.2.16: exit %d %s", code, errOut)
	}
}

// A link planted as CD/.kaasctl-quarantine: volume check reports it, and
// volume migrate writes nothing (it used to copy every group into the
// cluster dir and then fail to set the sources aside, leaving the volume
// with both offsets dirs full and its generation undeterminable).
func TestVolumeMigratePlantedQuarantine(t *testing.T) {
	t.Parallel()
	vol := goVolume(t)
	orig := fileHashes(t, vol)
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(vol, "__cluster", ".kaasctl-quarantine")); err != nil {
		t.Fatal(err)
	}
	out, _, code := runVol(t, "volume", "check", "--data-dir", vol)
	if code != 0 || !strings.Contains(out, "volume.quarantineNotDir") || !strings.Contains(out, elsewhere) {
		t.Errorf("volume check: exit %d\n%s", code, out)
	}
	out, errOut, code := runVol(t, "volume", "migrate", "--data-dir", vol, "--to", "0.2.18", "--now", volNow, "--execute")
	if code != 1 || !strings.Contains(out, "nothing was written") {
		t.Errorf("migrate: exit %d\n%s%s", code, out, errOut)
	}
	if ents, _ := os.ReadDir(filepath.Join(vol, "__cluster", "__consumer_offsets")); len(ents) != 0 {
		t.Errorf("migrate wrote into the cluster dir: %v", ents)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("migrate wrote through the link: %v", ents)
	}
	os.Remove(filepath.Join(vol, "__cluster", ".kaasctl-quarantine"))
	os.Remove(filepath.Join(vol, "__cluster", "__consumer_offsets"))
	sameHashes(t, "refused migration", orig, fileHashes(t, vol))
}

// A dry-run names the quarantine run dir by its form (<time>-<random>), not
// by a concrete name the real run will not use; the real run names a dir
// that exists.
func TestDryRunQuarantineDirIsHonest(t *testing.T) {
	t.Parallel()
	vol := goVolume(t)
	out, errOut, code := runVol(t, "volume", "migrate", "--data-dir", vol, "--to", "0.2.18", "--now", volNow)
	if code != 0 || !strings.Contains(errOut, filepath.Join(".kaasctl-quarantine", repair.DryRunRunDir, "data-dir")) {
		t.Errorf("migrate dry-run: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = runVol(t, "volume", "migrate", "--data-dir", vol, "--to", "0.2.18", "--now", volNow, "-o", "json")
	if mr := mustJSON[repair.MigrateReport](t, out); !strings.Contains(mr.Backup, repair.DryRunRunDir) {
		t.Errorf("migrate dry-run backup %q", mr.Backup)
	}
	out, _, _ = runVol(t, "volume", "repair", "--data-dir", vol, "-o", "json")
	if rr := mustJSON[repair.RepairReport](t, out); filepath.Base(rr.Quarantine) != repair.DryRunRunDir {
		t.Errorf("repair dry-run quarantine %q", rr.Quarantine)
	}
	out, errOut, code = runVol(t, "volume", "migrate", "--data-dir", vol, "--to", "0.2.18", "--now", volNow, "--kaas-version", "go", "--execute", "-o", "json")
	mr := mustJSON[repair.MigrateReport](t, out)
	if st, err := os.Stat(mr.Backup); code != 0 || strings.Contains(mr.Backup, "<") || err != nil || !st.IsDir() {
		t.Errorf("migrate: exit %d backup %q: %v\n%s", code, mr.Backup, err, errOut)
	}
}

// One generation decision for every input: a --kaas-version that does not
// parse is a usage error on every command, with or without a volume, and
// a pin decides the generation of an --assignment file too (whois's
// failover model), instead of "undetermined, assuming the newest".
func TestKaasVersionPinEverywhere(t *testing.T) {
	t.Parallel()
	a := writeFile(t, t.TempDir(), "assignment.json", `{"controllerEpoch":1,"assignmentVersion":3,"controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"},{"id":"kaas-1","health":"alive"}],"partitions":[],"consumerGroups":[{"groupId":"a","broker":"kaas-1"}]}`)
	for _, args := range [][]string{
		{"whois", "a", "--assignment", a, "--kaas-version", "bogus"},
		{"groups", "list", "--brokers", "127.0.0.1:1", "--kaas-version", "bogus"},
	} {
		r := runCLIWithin(t, nil, args...)
		if r.Code != 2 || !strings.Contains(r.Err, `kaas version "bogus"`) {
			t.Errorf("%v: exit %d, want 2 naming the value\n%s", args, r.Code, r.Err)
		}
	}
	r := runCLIWithin(t, map[string]string{"KAASCTL_KAAS_VERSION": "0.3.9"}, "whois", "a", "--assignment", a)
	if r.Code != 2 || !strings.Contains(r.Err, "KAASCTL_KAAS_VERSION") {
		t.Errorf("a bad pin in the environment: exit %d\n%s", r.Code, r.Err)
	}
	r = runCLIWithin(t, nil, "whois", "a", "--assignment", a, "--what-if-down", "kaas-0", "--kaas-version", "go")
	if r.Code != 0 || !strings.Contains(r.Err+r.Out, "assuming kaas Go / Rust ≤ 0.2.15, pinned") || strings.Contains(r.Err+r.Out, "undetermined") ||
		!strings.Contains(r.Out, "drop model") {
		t.Errorf("--kaas-version go with an --assignment file: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
}
