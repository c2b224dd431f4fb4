package views

import (
	"fmt"
	"strings"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/render"
)

// The pages of 'kaasctl help formats': every machine document's fields,
// read from its type (render.Fields).

// ListedDoc is one machine document of a command: its title (the
// commands it is printed by, with what selects it), what -o jsonl prints,
// a value of its type, and whether its command is hidden.
type ListedDoc struct {
	Title, JSONL  string
	Doc           any
	Hidden        bool
	SchemaVersion int
}

// FormatsPage is the whole 'help formats': head, then every listed
// command's document (hidden commands' left out), then the exporter's
// pointer.
func FormatsPage(head string, docs []ListedDoc) string {
	var b strings.Builder
	b.WriteString(head)
	for _, d := range docs {
		if !d.Hidden {
			writeFormatDoc(&b, d)
		}
	}
	fmt.Fprintf(&b, "\nexporter   (Prometheus text format; kaasctl help formats exporter)\n")
	return b.String()
}

// FormatsPageFor is 'help formats COMMAND': intro, then the documents of
// the command q (and of its sub-commands; a hidden command's only when it
// is named); n is how many.
func FormatsPageFor(intro, q string, docs []ListedDoc) (page string, n int) {
	var b strings.Builder
	b.WriteString(intro)
	for _, d := range docs {
		for _, dc := range DocCommands(d.Title) {
			if dc == q || (!d.Hidden && strings.HasPrefix(dc, q+" ")) {
				if n == 0 {
					b.WriteString("\nJSON fields\n")
				}
				writeFormatDoc(&b, d)
				n++
				break
			}
		}
	}
	return b.String(), n
}

func writeFormatDoc(b *strings.Builder, d ListedDoc) {
	fmt.Fprintf(b, "\n%s   (schemaVersion %d; jsonl: %s)\n", d.Title, d.SchemaVersion, d.JSONL)
	for _, f := range render.Fields(d.Doc) {
		fmt.Fprintf(b, "  %-44s %s\n", f.Path, f.Kind)
	}
}

// DocCommands is the command part of a document's title:
// "txn list / txn describe" is two, "assignment diff OLD NEW" is
// "assignment diff", "groups describe (with brokers)" is "groups describe".
func DocCommands(name string) []string {
	var out []string
	for _, part := range strings.Split(name, " / ") {
		var words []string
		for _, w := range strings.Fields(part) {
			if strings.ToLower(w) != w || strings.HasPrefix(w, "[") || strings.HasPrefix(w, "(") || strings.HasPrefix(w, "-") {
				break
			}
			words = append(words, w)
		}
		out = append(out, strings.Join(words, " "))
	}
	return out
}

// ExporterFormatsPage documents the exporter's page after head: the
// families a refresh writes (from the exporter's own declarations), the
// label conventions, and /api/health's JSON fields.
func ExporterFormatsPage(head string) string {
	var b strings.Builder
	b.WriteString(head)
	for _, f := range exporter.Families() {
		labels := ""
		if len(f.Labels) > 0 {
			labels = "{" + strings.Join(f.Labels, ",") + "}"
		}
		fmt.Fprintf(&b, "  %s%s  %s\n      %s\n", f.Name, labels, f.Type, f.Help)
	}
	b.WriteString("\n/api/health (JSON; read by 'kaasctl groups health --exporter URL')\n")
	for _, f := range render.Fields(exporter.HealthDocument{}) {
		fmt.Fprintf(&b, "  %-44s %s\n", f.Path, f.Kind)
	}
	return b.String()
}

// FormatLines lists each -o format with what it is.
func FormatLines() string {
	var b strings.Builder
	for _, f := range render.Formats {
		fmt.Fprintf(&b, "  %-5s  %s\n", f, FormatDescriptions[f])
	}
	return b.String()
}

// OutputFormatDocs are the -o formats.
func OutputFormatDocs() []OutputFormatDoc {
	out := make([]OutputFormatDoc, 0, len(render.Formats))
	for _, f := range render.Formats {
		out = append(out, OutputFormatDoc{Name: string(f), Description: FormatDescriptions[f], Machine: f.Machine()})
	}
	return out
}

// FormatDescriptions say what each -o format is ('help formats' prints
// them too).
var FormatDescriptions = map[render.Format]string{
	render.Table: "for people: boxed on a terminal, aligned plain text when piped (easy to grep/cut)",
	render.Wide:  "the table with more columns",
	render.JSON:  "one JSON document; camelCase field names, [] rather than null for lists",
	render.JSONL: "one JSON object per line (streams: whois --stdin, watch)",
	render.YAML:  "the JSON document as YAML (same field names and order)",
	render.CSV:   "every column of the wide table, with a header row",
}

// DocumentFields is each listed document with its version and fields,
// as testdata/schema/documents.txt records them.
func DocumentFields(docs []ListedDoc) string {
	var b strings.Builder
	b.WriteString("# kaasctl's machine documents: each one's schemaVersion and fields, from the types\n" +
		"# 'kaasctl help formats' reads. A document whose fields change needs a new version\n" +
		"# (docSchemaVersions in commands/schema_versions.go); then record it with\n" +
		"#   go test ./commands -run TestDocumentFieldsVersioned -update\n")
	for _, d := range docs {
		if d.Hidden {
			continue // a hidden command's documents are no public contract
		}
		fmt.Fprintf(&b, "\n%s  schemaVersion %d\n", d.Title, d.SchemaVersion)
		if render.CarriesGeneration(d.Doc) {
			fmt.Fprintf(&b, "  %s  object (the run's kaas generation, added by render)\n", render.GenerationField)
		}
		for _, f := range render.Fields(d.Doc) {
			fmt.Fprintf(&b, "  %s  %s\n", f.Path, f.Kind)
		}
	}
	return b.String()
}
