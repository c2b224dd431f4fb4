package commands

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/helptext"
	"github.com/kaasctl/kaasctl/render"
)

func init() {
	addHelpTopicFunc("formats", "output formats, and the JSON fields of every command (kaasctl help formats COMMAND: one command's)", helpFormats)
}

// formatsIntro is the start of 'help formats', also printed before one
// command's fields.
func formatsIntro() string { return helptext.Page("formats-intro", nil) }

func helpFormats() string {
	var b strings.Builder
	b.WriteString(formatsIntro() + helptext.Page("formats-general", helptext.Vars{"base64Suffix": render.Base64Suffix}))
	for _, d := range formatDocs() {
		if !d.hidden {
			writeFormatDoc(&b, d.Title, d.JSONL, d.Doc)
		}
	}
	fmt.Fprintf(&b, "\nexporter   (Prometheus text format; kaasctl help formats exporter)\n")
	return b.String()
}

func writeFormatDoc(b *strings.Builder, command, jsonl string, doc any) {
	fmt.Fprintf(b, "\n%s   (jsonl: %s)\n", command, jsonl)
	for _, f := range render.Fields(doc) {
		fmt.Fprintf(b, "  %-44s %s\n", f.Path, f.Kind)
	}
}

// formatDocCommands is the command part of a document's title:
// "txn list / txn describe" is two, "assignment diff OLD NEW" is
// "assignment diff", "groups describe (with brokers)" is "groups describe".
func formatDocCommands(name string) []string {
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

// helpFormatsFor is 'kaasctl help formats COMMAND [SUBCOMMAND]': the
// formats and the fields of that command's documents only (of every
// subcommand's, for a parent such as 'groups').
func helpFormatsFor(cmds []*cli.Command, args []string) (string, error) {
	var path []string
	for _, a := range args {
		cmd := completion.FindCommand(cmds, a)
		if cmd == nil {
			cands := completion.CommandNames(cmds)
			if s := completion.Suggest(a, cands); s != "" {
				return "", exit.UsageErrorf("help formats: no command %q; did you mean %q?", strings.Join(append(path, a), " "), strings.Join(append(path, s), " "))
			}
			return "", exit.UsageErrorf("help formats: no command %q (kaasctl help formats lists every command's fields)", strings.Join(append(path, a), " "))
		}
		path = append(path, cmd.Name)
		cmds = cmd.Subcommands
	}
	q := strings.Join(path, " ")
	var b strings.Builder
	if q == "exporter" {
		b.WriteString(helpFormatsExporter())
		return b.String(), nil
	}
	b.WriteString(formatsIntro())
	n := 0
	for _, d := range formatDocs() {
		for _, dc := range formatDocCommands(d.Title) {
			// A hidden command's documents only when it is named.
			if dc == q || (!d.hidden && strings.HasPrefix(dc, q+" ")) {
				if n == 0 {
					b.WriteString("\nJSON fields\n")
				}
				writeFormatDoc(&b, d.Title, d.JSONL, d.Doc)
				n++
				break
			}
		}
	}
	if n == 0 {
		return "", exit.UsageErrorf("help formats: %s has no machine output (-o json); kaasctl help formats lists the commands that have", q)
	}
	return b.String(), nil
}

// helpFormatsExporter documents the exporter's page: the families a
// refresh writes (from the exporter's own declarations), the label
// conventions, and /api/health's JSON fields.
func helpFormatsExporter() string {
	var b strings.Builder
	b.WriteString(helptext.Page("formats-exporter", nil))
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
