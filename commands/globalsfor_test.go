package commands

import (
	"bytes"
	"testing"

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
