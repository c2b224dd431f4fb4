package commands

import (
	"context"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/render"
)

// Version is set at build time with -ldflags "-X .../commands.Version=v1.2.3".
var Version = "dev"

// SupportedKaas names the kaas releases whose volume layout kaasctl reads.
const SupportedKaas = "kaas v0.2.16-preview … v0.2.18-preview (cluster-dir offsets) and older releases / the Go flavour (offsets in DATA/__consumer_offsets, their live dir; the generation is detected or pinned with --kaas-version)"

type versionView struct {
	Version       string `json:"version"`
	Commit        string `json:"commit"`
	GoVersion     string `json:"goVersion"`
	Platform      string `json:"platform"`
	SupportedKaas string `json:"supportedKaas"`
}

func buildInfo() versionView {
	v := versionView{Version: Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, SupportedKaas: SupportedKaas}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v.Commit = s.Value
			}
		}
	}
	return v
}

func versionString() string {
	v := buildInfo()
	if v.Commit != "" {
		return v.Version + " (" + v.Commit[:min(12, len(v.Commit))] + ")"
	}
	return v.Version
}

func init() {
	register(Descriptor{
		Path:   "version",
		Usage:  "print kaasctl's version, build and the kaas releases it supports",
		Common: fgOutput,
		Docs: []FormatDoc{
			{Title: "version", Doc: versionView{}, JSONL: "the whole document", Rank: 230},
		},
		Build: func() *cli.Command {
			return &cli.Command{
				Action: action(parseVersion, runVersion),
			}
		},
	})
}

// versionOptions is 'version' after flag parsing: it has no flags of its
// own.
type versionOptions struct{}

// parseVersion has nothing to read: 'version' takes no flags of its own.
func parseVersion(*cli.Context) (versionOptions, error) { return versionOptions{}, nil }

func runVersion(_ context.Context, g *Globals, _ versionOptions) error {
	v := buildInfo()
	t := render.NewTable("FIELD", "VALUE")
	t.Add("version", v.Version)
	t.Add("commit", v.Commit)
	t.Add("go", v.GoVersion)
	t.Add("platform", v.Platform)
	t.Add("supported kaas", v.SupportedKaas)
	return g.Printer.Print(render.Output{Data: v, Table: t})
}
