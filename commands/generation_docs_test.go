package commands

import (
	"encoding/json"
	"strings"
	"testing"
)

// docGeneration is the generation a document (or each element of an
// array document) carries.
func docGeneration(t *testing.T, name, out string) []string {
	t.Helper()
	type doc struct {
		SchemaVersion int `json:"schemaVersion"`
		Generation    *struct {
			Name   string `json:"generation"`
			Source string `json:"source"`
		} `json:"generation"`
	}
	var docs []doc
	if strings.HasPrefix(strings.TrimSpace(out), "[") {
		if err := json.Unmarshal([]byte(out), &docs); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
	} else {
		var d doc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		docs = append(docs, d)
	}
	var gens []string
	for _, d := range docs {
		if d.SchemaVersion < 1 || d.Generation == nil {
			t.Errorf("%s: schemaVersion %d, generation %v\n%s", name, d.SchemaVersion, d.Generation, out)
			continue
		}
		gens = append(gens, d.Generation.Name+"/"+d.Generation.Source)
	}
	return gens
}

// The views that had no generation of their own name the one the run
// assumed (render adds it beside schemaVersion): whois, groups health,
// txn list, plan assignment and offsets history on a pinned 0.2.18
// volume; probe on the sandbox, pinned too (its fresh volume does not
// tell 0.2.16 from 0.2.18). version and
// --help-json, about kaasctl itself, carry none.
func TestEveryVolumeDocumentNamesItsGeneration(t *testing.T) {
	t.Parallel()
	v := plantWhyVolume(t)
	vol := []string{"--data-dir", v.dir, "--kaas-version", "0.2.18"}
	for _, args := range [][]string{
		{"whois", "g-open", "g-marker"},
		{"groups", "health", "--window", "200ms", "--interval", "100ms"},
		{"txn", "list"},
		{"plan", "assignment", "g-open", "--members", "2", "--add", "1", "--assignor", "range"},
		{"offsets", "history", "g-open"},
	} {
		name := strings.Join(args, " ")
		r := runCLI(t, "", nil, append(append(args, vol...), "-o", "json")...)
		if r.Code != 0 && r.Code != 3 {
			t.Fatalf("%s: exit %d\n%s", name, r.Code, r.Err)
		}
		for _, g := range docGeneration(t, name, r.Out) {
			if g != "0.2.18/pinned" {
				t.Errorf("%s: generation %s, want 0.2.18/pinned", name, g)
			}
		}
	}
	sb := liveSB(t)
	r := live(t, sb, "probe", "--data-dir", sb.Layout().DataDir, "--kaas-version", "0.2.18", "-o", "json")
	if gens := docGeneration(t, "probe", r.Out); len(gens) != 1 || gens[0] != "0.2.18/pinned" {
		t.Errorf("probe: exit %d, generation %v\n%s", r.Code, gens, r.Err)
	}
	for _, args := range [][]string{{"version", "-o", "json"}, {"whois", "--help-json"}} {
		r := runCLI(t, "", nil, args...)
		if strings.Contains(r.Out[:min(len(r.Out), 200)], `"generation"`) {
			t.Errorf("%v names a generation:\n%.300s", args, r.Out)
		}
	}
}
