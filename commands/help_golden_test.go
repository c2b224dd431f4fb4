package commands

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/helptext"
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
		if c.Name == "help" || strings.HasPrefix(c.Name, "zz-") { // zz-: registered by a test
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

// Every text file of internal/helptext is some command's, topic's or
// page's: a text whose command was renamed or removed is not left behind.
func TestEveryHelpTextIsUsed(t *testing.T) {
	t.Parallel()
	paths := map[string]bool{"kaasctl": true}
	for _, p := range commandPaths(NewApp(&IOStreams{}).Commands, nil) {
		paths[strings.Join(p, "_")] = true
	}
	pages := map[string]bool{"formats-intro.txt": true, "formats-general.txt": true, "formats-exporter.txt": true, "mcp-instructions.txt": true}
	names := helptext.Names()
	if len(names) < 40 {
		t.Fatalf("only %d help texts", len(names))
	}
	for _, n := range names {
		switch dir, file, _ := strings.Cut(n, "/"); {
		case dir == "topics":
			if _, ok := helpTopics[strings.TrimSuffix(file, ".txt")]; !ok {
				t.Errorf("%s: no such help topic", n)
			}
		case dir == "commands":
			if p := strings.TrimSuffix(strings.TrimSuffix(file, ".txt"), ".usage"); !paths[p] {
				t.Errorf("%s: no command %q", n, strings.ReplaceAll(p, "_", " "))
			}
		case !pages[n]:
			t.Errorf("%s: no page reads it", n)
		}
	}
}
