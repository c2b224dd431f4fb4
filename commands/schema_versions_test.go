package commands

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/views"
)

// recordedDoc is one document of testdata/schema/documents.txt.
type recordedDoc struct {
	version int
	fields  []string
}

// parseDocumentFields reads the recorded documents by name, in order.
func parseDocumentFields(text string) (map[string]recordedDoc, []string, error) {
	docs := map[string]recordedDoc{}
	var order []string
	cur := ""
	for i, line := range strings.Split(text, "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "  "):
			if cur == "" {
				return nil, nil, fmt.Errorf("line %d: a field before any document", i+1)
			}
			d := docs[cur]
			d.fields = append(d.fields, strings.TrimSpace(line))
			docs[cur] = d
		default:
			name, v, ok := strings.Cut(line, "  schemaVersion ")
			n, err := strconv.Atoi(v)
			if !ok || err != nil {
				return nil, nil, fmt.Errorf("line %d: %q is not \"NAME  schemaVersion N\"", i+1, line)
			}
			cur = name
			docs[name] = recordedDoc{version: n}
			order = append(order, name)
		}
	}
	return docs, order, nil
}

// diffFields says which fields one list has that the other lacks.
func diffFields(old, cur []string) string {
	var added, removed []string
	for _, f := range cur {
		if !slices.Contains(old, f) {
			added = append(added, f)
		}
	}
	for _, f := range old {
		if !slices.Contains(cur, f) {
			removed = append(removed, f)
		}
	}
	return fmt.Sprintf("added %q, removed %q", added, removed)
}

// checkDocumentVersions compares the documents now with the recorded
// ones: a field set that changed at the same version is an error that
// -update does not record (bumps is false); anything else that differs
// needs recording.
func checkDocumentVersions(now, was map[string]recordedDoc) (bumps, record []error) {
	for name, cur := range now {
		old, ok := was[name]
		switch {
		case !ok:
			record = append(record, fmt.Errorf("%s: a new document", name))
		case cur.version < old.version:
			bumps = append(bumps, fmt.Errorf("%s: schemaVersion %d is below the recorded %d: versions only go up", name, cur.version, old.version))
		case !slices.Equal(cur.fields, old.fields) && cur.version == old.version:
			bumps = append(bumps, fmt.Errorf("%s: its fields changed (%s) without a new schemaVersion: raise docSchemaVersions[%q] to %d", name, diffFields(old.fields, cur.fields), name, old.version+1))
		case !slices.Equal(cur.fields, old.fields) || cur.version != old.version:
			record = append(record, fmt.Errorf("%s: schemaVersion %d, fields %s", name, cur.version, diffFields(old.fields, cur.fields)))
		}
	}
	for name := range was {
		if _, ok := now[name]; !ok {
			record = append(record, fmt.Errorf("%s: no longer a document", name))
		}
	}
	return bumps, record
}

// TestDocumentFieldsVersioned: the field set of every machine document
// 'help formats' lists is recorded with its schemaVersion; a document
// whose fields change fails here until its version is raised, and the
// new fields are recorded (-update) only then.
func TestDocumentFieldsVersioned(t *testing.T) {
	t.Parallel()
	path := filepath.Join(repoRoot(t), "testdata", "schema", "documents.txt")
	text := views.DocumentFields(listedDocs())
	now, _, err := parseDocumentFields(text)
	if err != nil {
		t.Fatalf("documentFields does not parse back: %v", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil && !(errors.Is(err, os.ErrNotExist) && *updateGolden) {
		t.Fatalf("%v (run go test ./commands -run TestDocumentFieldsVersioned -update to create it)", err)
	}
	was, _, err := parseDocumentFields(string(raw))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	bumps, record := checkDocumentVersions(now, was)
	for _, e := range bumps {
		t.Error(e)
	}
	if *updateGolden && len(bumps) == 0 && (len(record) > 0 || len(raw) == 0) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, e := range record {
		t.Errorf("%v (record it: go test ./commands -run TestDocumentFieldsVersioned -update)", e)
	}
}

// The check itself: a field change at the same version is refused, a
// bumped one asks to be recorded, a lower version is refused.
func TestCheckDocumentVersions(t *testing.T) {
	t.Parallel()
	was := map[string]recordedDoc{"doc": {1, []string{"a  string"}}}
	for _, tc := range []struct {
		now           recordedDoc
		bumps, record int
	}{
		{recordedDoc{1, []string{"a  string"}}, 0, 0},
		{recordedDoc{1, []string{"a  string", "b  integer"}}, 1, 0},
		{recordedDoc{1, []string{"a  integer"}}, 1, 0},
		{recordedDoc{2, []string{"a  string", "b  integer"}}, 0, 1},
		{recordedDoc{0, []string{"a  string"}}, 1, 0},
	} {
		b, r := checkDocumentVersions(map[string]recordedDoc{"doc": tc.now}, was)
		if len(b) != tc.bumps || len(r) != tc.record {
			t.Errorf("%+v: bumps %v, record %v", tc.now, b, r)
		}
	}
	if _, r := checkDocumentVersions(map[string]recordedDoc{}, was); len(r) != 1 {
		t.Errorf("a document gone: %v", r)
	}
}
