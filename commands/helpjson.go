package commands

import (
	"slices"

	"github.com/kaasctl/kaasctl/views"
	"github.com/kaasctl/kaasctl/views/helpjson"
)

// 'kaasctl --help-json' is the command tree as JSON (views/helpjson),
// walked from the tree the app builds (buildCommands, prepare).

func init() {
	registerAppDoc(FormatDoc{Title: "--help-json", Doc: views.HelpTree{}, JSONL: "the whole document", Rank: 240})
}

// helpTreeSource is what --help-json reads besides the tree: the common flags,
// the documents and exit codes of each command, and the flag values of
// commands' own.
func helpTreeSource() helpjson.Tree {
	return helpjson.Tree{Common: commonFlags(), OutputFlag: flagOutput, NoColorFlag: flagNoColor, LogDirsFlag: flagLogDirs,
		OwnEnv: ownFlagEnv, Documents: helpDocuments, ExitCodes: exitCodesOf}
}

// ownFlagEnv are the environment variables of commands' own flags.
var ownFlagEnv = map[string]string{"keep-backups": "KAASCTL_KEEP_BACKUPS"}

// helpDocuments are the formatDocs entries of the command at path.
func helpDocuments(path string) []views.HelpDocument {
	out := []views.HelpDocument{}
	for _, d := range formatDocs() {
		if slices.Contains(views.DocCommands(d.Title), path) {
			out = append(out, views.HelpDocument{Name: d.Title, SchemaVersion: docSchemaVersion(d.Title), JSONL: d.JSONL})
		}
	}
	return out
}
