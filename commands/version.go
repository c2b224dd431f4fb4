package commands

import (
	"context"

	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

// Version is set at build time with -ldflags "-X .../commands.Version=v1.2.3".
var Version = "dev"

// kaasctl's write log names the version that wrote each record.
func init() { repair.WriteLogVersion = Version }

// SupportedKaas names the kaas releases whose volume layout kaasctl reads.
const SupportedKaas = "kaas v0.2.16-preview … v0.2.18-preview (cluster-dir offsets) and older releases / the Go flavour (offsets in DATA/__consumer_offsets, their live dir; the generation is detected or pinned with --kaas-version)"

// buildInfo is kaasctl's version and build (views.BuildInfo).
func buildInfo() views.VersionView { return views.BuildInfo(Version, SupportedKaas) }

// versionString is the version with its commit (views.VersionString).
func versionString() string { return views.VersionString(buildInfo()) }

func init() {
	register(Descriptor{
		Path:   "version",
		Usage:  "print kaasctl's version, build and the kaas releases it supports",
		Common: fgOutput,
		Docs: []FormatDoc{
			{Title: "version", Doc: views.VersionView{}, JSONL: "the whole document", Rank: 230},
		},
		Build: leaf(nil, nil, runVersion),
	})
}

// versionOptions is 'version' after flag parsing: it has no flags of its
// own.
type versionOptions struct{}

func runVersion(_ context.Context, g *Globals, _ versionOptions) error {
	return g.Printer.Print(views.VersionOutput(buildInfo()))
}
