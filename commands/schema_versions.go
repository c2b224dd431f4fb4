package commands

import (
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
