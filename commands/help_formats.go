package commands

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/helptext"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	addHelpTopicFunc("formats", "output formats, and the JSON fields of every command (kaasctl help formats COMMAND: one command's)", helpFormats)
}

// formatsIntro is the start of 'help formats', also printed before one
// command's fields.
func formatsIntro() string {
	return helptext.Page("formats-intro", helptext.Vars{"formats": views.FormatLines()})
}

func helpFormats() string {
	general := helptext.Page("formats-general", helptext.Vars{"base64Suffix": render.Base64Suffix})
	return views.FormatsPage(formatsIntro()+general, listedDocs())
}

// listedDocs is every command's documents as 'help formats' lists them.
func listedDocs() []views.ListedDoc {
	var out []views.ListedDoc
	for _, d := range formatDocs() {
		out = append(out, views.ListedDoc{Title: d.Title, JSONL: d.JSONL, Doc: d.Doc, Hidden: d.hidden, SchemaVersion: docSchemaVersion(d.Title)})
	}
	return out
}

// helpFormatsFor is 'kaasctl help formats COMMAND [SUBCOMMAND]': the
// formats and the fields of that command's documents only (of every
// subcommand's, for a parent such as 'groups').
func helpFormatsFor(cmds []*cli.Command, args []string) (string, error) {
	path, a, s, ok := completion.WalkPath(cmds, args, nil)
	switch {
	case !ok && s != "":
		return "", exit.UsageErrorf("help formats: no command %q; did you mean %q?", strings.Join(append(path, a), " "), strings.Join(append(path, s), " "))
	case !ok:
		return "", exit.UsageErrorf("help formats: no command %q (kaasctl help formats lists every command's fields)", strings.Join(append(path, a), " "))
	}
	q := strings.Join(path, " ")
	if q == "exporter" {
		return views.ExporterFormatsPage(helptext.Page("formats-exporter", nil)), nil
	}
	page, n := views.FormatsPageFor(formatsIntro(), q, listedDocs())
	if n == 0 {
		return "", exit.UsageErrorf("help formats: %s has no machine output (-o json); kaasctl help formats lists the commands that have", q)
	}
	return page, nil
}
