package commands

import (
	"bytes"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/render"
)

func TestGlobalsForResolvesCommonFlags(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	ios := &IOStreams{Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	g, err := GlobalsFor(ios, "--data-dir", "/nowhere", "-o", "json", "-b", "k:9092", "-q")
	if err != nil {
		t.Fatal(err)
	}
	if g.Printer.Format != render.JSON || !g.Quiet || !g.HasVolume() || !g.HasBrokers() {
		t.Fatalf("globals not resolved: format %v quiet %v volume %v brokers %v", g.Printer.Format, g.Quiet, g.HasVolume(), g.HasBrokers())
	}
	if g.ConnFlags() != " --brokers k:9092" {
		t.Fatalf("ConnFlags = %q", g.ConnFlags())
	}
	if g.GivenFlags() != " --data-dir /nowhere --brokers k:9092" {
		t.Fatalf("GivenFlags = %q", g.GivenFlags())
	}
	if _, err := GlobalsFor(ios, "-o", "xml"); err == nil {
		t.Fatal("-o xml accepted")
	}
}

// GlobalsFor resolves the common flags in args (such as "--data-dir", dir,
// "-o", "json") over ios without running a command: a test builds the
// Globals a run function takes this way, then calls the run function
// directly with its options.
func GlobalsFor(ios *IOStreams, args ...string) (*Globals, error) {
	var g *Globals
	app := &cli.App{
		Name:     "kaasctl",
		Metadata: map[string]any{"io": ios},
		Writer:   ios.Out, ErrWriter: ios.Err,
		Flags: commonFlags(),
		Action: func(c *cli.Context) error {
			var err error
			g, err = globals(c)
			return err
		},
	}
	if err := app.Run(append([]string{"kaasctl"}, args...)); err != nil {
		return nil, err
	}
	return g, nil
}
