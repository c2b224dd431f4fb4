package commands

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// Every page of help kaasctl prints, held byte for byte under
// testdata/golden/help: the app's page, every command's --help (hidden
// ones too), every 'kaasctl help TOPIC', and 'help formats' whole, per
// command and for the exporter. Moving a help text, a flag or a document
// type must not change a byte of them.
func TestHelpPagesGolden(t *testing.T) {
	t.Parallel()
	pages := map[string][]string{
		"app.txt":              {"--help"},
		"formats.txt":          {"help", "formats"},
		"formats-exporter.txt": {"help", "formats", "exporter"},
	}
	for _, n := range topicNames() {
		pages["topic-"+n+".txt"] = []string{"help", n}
	}
	for _, path := range commandPaths(NewApp(&IOStreams{}).Commands, nil) {
		name := strings.Join(path, "_")
		pages["cmd-"+name+".txt"] = append(append([]string{}, path...), "--help")
		if r := runCLI(t, "", nil, append([]string{"help", "formats"}, path...)...); r.Code == 0 {
			pages["formats-"+name+".txt"] = append([]string{"help", "formats"}, path...)
		}
	}
	if len(pages) < 60 {
		t.Fatalf("only %d help pages found", len(pages))
	}
	for name, args := range pages {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, "", nil, args...)
			if r.Code != 0 {
				t.Fatalf("kaasctl %s: exit %d: %s", strings.Join(args, " "), r.Code, r.Err)
			}
			checkGolden(t, "help/"+name, []byte(r.Out))
		})
	}
}

// commandPaths lists the path of every command under cmds (parents and
// leaves, hidden ones too), leaving out the help sub-commands.
func commandPaths(cmds []*cli.Command, parent []string) [][]string {
	var out [][]string
	for _, c := range cmds {
		if c.Name == "help" {
			continue
		}
		path := append(append([]string{}, parent...), c.Name)
		if c.Name != "__complete" {
			out = append(out, path)
		}
		out = append(out, commandPaths(c.Subcommands, path)...)
	}
	return out
}
