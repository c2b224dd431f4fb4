package commands

import (
	"fmt"
	"strings"

	"github.com/kaasctl/kaasctl/render"
)

// docSchemaVersions is the schemaVersion of each machine document, by its
// name in formatDocs; a document not listed is at version 1. Every JSON
// and YAML document carries it as its first field (render adds it where
// it prints). When a document's fields change (one added, removed,
// renamed, or of another kind), raise its number here:
// TestDocumentFieldsVersioned fails until you do, then records the new
// fields with -update (testdata/schema/documents.txt).
var docSchemaVersions = map[string]int{}

// docSchemaVersion is the schema version of the formatDocs entry named.
func docSchemaVersion(name string) int {
	if v, ok := docSchemaVersions[name]; ok {
		return v
	}
	return render.DefaultSchemaVersion
}

// generationFreeDocs are the documents that name no kaas generation, and
// why; every other document carries the one the run assumes (render adds
// it as "generation" after schemaVersion, unless the document has a
// generation field of its own).
var generationFreeDocs = map[string]string{
	"version":     "kaasctl's own build: no volume or cluster is read",
	"--help-json": "kaasctl's command tree: no volume or cluster is read",
}

// registerSchema tells render a document's schema version and whether
// it names no generation; register and registerAppDoc call it for each
// document as it is registered.
func registerSchema(d FormatDoc) {
	render.RegisterSchema(d.Doc, docSchemaVersion(d.Title))
	if _, free := generationFreeDocs[d.Title]; free {
		render.RegisterGenerationFree(d.Doc)
	}
}

// documentFields is each formatDocs document with its version and fields,
// as testdata/schema/documents.txt records them.
func documentFields() string {
	var b strings.Builder
	b.WriteString("# kaasctl's machine documents: each one's schemaVersion and fields, from the types\n" +
		"# 'kaasctl help formats' reads. A document whose fields change needs a new version\n" +
		"# (docSchemaVersions in commands/schema_versions.go); then record it with\n" +
		"#   go test ./commands -run TestDocumentFieldsVersioned -update\n")
	for _, d := range formatDocs() {
		if d.hidden {
			continue // a hidden command's documents are no public contract
		}
		fmt.Fprintf(&b, "\n%s  schemaVersion %d\n", d.Title, docSchemaVersion(d.Title))
		if render.CarriesGeneration(d.Doc) {
			fmt.Fprintf(&b, "  %s  object (the run's kaas generation, added by render)\n", render.GenerationField)
		}
		for _, f := range render.Fields(d.Doc) {
			fmt.Fprintf(&b, "  %s  %s\n", f.Path, f.Kind)
		}
	}
	return b.String()
}
