package commands

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/render"
)

// A command is one file registering one descriptor: this one, registered
// by a test file's init and nowhere else, is in the tree, its help, 'help
// formats' and the common flags its descriptor names.
func init() {
	register(Descriptor{
		Path:   "zz-registry-test",
		Usage:  "a command only a test registers",
		Hidden: true, // the app's page and the golden help pages stay as they are
		Common: fgOffline,
		Docs:   []FormatDoc{{Title: "zz-registry-test", Doc: registryTestView{}, JSONL: "each thing (things[])"}},
		Build: func() *cli.Command {
			flags := func(thing *string) []cli.Flag {
				return []cli.Flag{&cli.StringFlag{Name: "thing", Usage: "the `THING` to print", Destination: thing}}
			}
			c := leaf(flags, nil, func(_ context.Context, g *Globals, thing string) error {
				v := registryTestView{Things: []string{thing}}
				return g.Printer.Print(render.Output{Data: v, Items: v.Things})
			})()
			c.Description = "Registered from a test file.\n\nExamples:\n  kaasctl zz-registry-test --data-dir /data"
			return c
		},
	})
}

type registryTestView struct {
	Things []string `json:"things"`
}

func TestRegisteredCommandIsEverywhere(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", nil, "zz-registry-test", "--thing", "x", "-o", "json")
	var v registryTestView
	if r.Code != 0 || json.Unmarshal([]byte(r.Out), &v) != nil || len(v.Things) != 1 || v.Things[0] != "x" {
		t.Fatalf("run: exit %d %q %s", r.Code, r.Out, r.Err)
	}
	help := runCLI(t, "", nil, "help", "zz-registry-test")
	for _, want := range []string{"kaasctl zz-registry-test - a command only a test registers", "Registered from a test file.", "--thing THING", "--data-dir", "--kaas-version"} {
		if !strings.Contains(help.Out, want) {
			t.Errorf("help lacks %q:\n%s", want, help.Out)
		}
	}
	if strings.Contains(help.Out, "--sasl-user") || strings.Contains(help.Out, "--brokers") {
		t.Errorf("help lists connection flags its descriptor leaves out (fgOffline):\n%s", help.Out)
	}
	if got := flagGroupsOf([]string{"zz-registry-test"}); got != fgOffline {
		t.Errorf("flag groups %b, want %b", got, fgOffline)
	}
	f := runCLI(t, "", nil, "help", "formats", "zz-registry-test")
	if f.Code != 0 || !strings.Contains(f.Out, "zz-registry-test   (schemaVersion 1; jsonl: each thing (things[]))") || !strings.Contains(f.Out, "things[]") {
		t.Errorf("help formats zz-registry-test: exit %d\n%s%s", f.Code, f.Out, f.Err)
	}
	// Hidden: not in the app's list nor in the whole 'help formats'.
	if app := runCLI(t, "", nil, "--help"); strings.Contains(app.Out, "zz-registry-test") {
		t.Errorf("a hidden command is listed:\n%s", app.Out)
	}
	if all := runCLI(t, "", nil, "help", "formats"); strings.Contains(all.Out, "zz-registry-test") {
		t.Errorf("a hidden command's document is in the whole help formats")
	}
}
