package commands

import (
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestGroupsListStreamedMatchesDocument: offline json and jsonl are written
// a row at a time; they say what the materialised yaml document says, with
// and without a filter, on a damaged volume (ids that are not UTF-8, long
// names, corrupt files).
func TestGroupsListStreamedMatchesDocument(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	for _, filter := range [][]string{nil, {"--issues-only"}, {"--regex", "^g"}} {
		args := append([]string{"groups", "list", "--data-dir", vol}, filter...)
		jout, _, code := runVol(t, append(args, "-o", "json")...)
		if code != 0 {
			t.Fatalf("%v -o json: exit %d", filter, code)
		}
		yout, _, code := runVol(t, append(args, "-o", "yaml")...)
		if code != 0 {
			t.Fatalf("%v -o yaml: exit %d", filter, code)
		}
		var fromJSON, fromYAML map[string]any
		if err := json.Unmarshal([]byte(jout), &fromJSON); err != nil {
			t.Fatalf("%v: json: %v\n%s", filter, err, jout)
		}
		if err := yaml.Unmarshal([]byte(yout), &fromYAML); err != nil {
			t.Fatal(err)
		}
		jb, _ := json.Marshal(fromJSON)
		yb, _ := json.Marshal(fromYAML)
		if string(jb) != string(yb) {
			t.Errorf("%v: streamed json differs from the yaml document\njson: %s\nyaml: %s", filter, jb, yb)
		}
		groups := fromJSON["groups"].([]any)
		if int(fromJSON["shown"].(float64)) != len(groups) || len(groups) == 0 {
			t.Errorf("%v: shown %v, %d groups listed", filter, fromJSON["shown"], len(groups))
		}
		if filter == nil && fromJSON["total"] != fromJSON["shown"] {
			t.Errorf("no filter: total %v, shown %v", fromJSON["total"], fromJSON["shown"])
		}
		lout, _, code := runVol(t, append(args, "-o", "jsonl")...)
		lines := strings.Split(strings.TrimSuffix(lout, "\n"), "\n")
		if code != 0 || len(lines) != len(groups) {
			t.Fatalf("%v -o jsonl: exit %d, %d lines for %d groups", filter, code, len(lines), len(groups))
		}
		for i, l := range lines {
			var row map[string]any
			if err := json.Unmarshal([]byte(l), &row); err != nil {
				t.Fatalf("jsonl line %d: %v", i, err)
			}
			// Each line carries the document's schemaVersion and
			// generation; the rest is the document's row.
			if row["schemaVersion"] != fromJSON["schemaVersion"] {
				t.Errorf("jsonl line %d: schemaVersion %v, the document's %v", i, row["schemaVersion"], fromJSON["schemaVersion"])
			}
			if lg, _ := json.Marshal(row["generation"]); string(lg) == "null" || string(lg) != compactJSON(fromJSON["generation"]) {
				t.Errorf("jsonl line %d: generation %s, the document's %s", i, lg, compactJSON(fromJSON["generation"]))
			}
			delete(row, "schemaVersion")
			delete(row, "generation")
			rb, _ := json.Marshal(row)
			gb, _ := json.Marshal(groups[i])
			if string(rb) != string(gb) {
				t.Errorf("%v: jsonl line %d %s, json row %s", filter, i, rb, gb)
			}
		}
	}
}

// compactJSON is v as compact JSON.
func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
