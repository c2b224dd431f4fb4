package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// Names of the flags every command accepts.
const (
	flagDataDir    = "data-dir"
	flagClusterDir = "cluster-dir"
	flagOutput     = "output"
	flagQuiet      = "quiet"
	flagNoColor    = "no-color"
)

// commonFlags are attached to every leaf command, so they work after the
// command name as every example writes them.
func commonFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: flagDataDir, Usage: "kaas data dir (KAAS_DATA_DIR); the cluster dir is DIR/__cluster, or DIR itself when it holds assignment.json", Category: "Volume"},
		&cli.StringFlag{Name: flagClusterDir, Usage: "kaas cluster dir holding assignment.json (KAAS_CLUSTER_DIR)", Category: "Volume"},
		&cli.StringFlag{Name: flagOutput, Aliases: []string{"o"}, Value: "table", Usage: "output format: table, wide, json, jsonl, yaml, csv", Category: "Output"},
		&cli.BoolFlag{Name: flagQuiet, Aliases: []string{"q"}, Usage: "no progress, notes or warnings on stderr (the exit code still tells)", Category: "Output"},
		&cli.BoolFlag{Name: flagNoColor, Usage: "no colour (also NO_COLOR=1)", Category: "Output"},
	}, liveFlags()...)
}

// Globals is what the common flags resolve to for one command run.
type Globals struct {
	IO      *IOStreams
	Printer *render.Printer
	Quiet   bool
	vin     volume.ResolveInput
	conn    *connState // connection settings and profile (liveflags.go)
}

// globals reads the common flags.
func globals(c *cli.Context) (*Globals, error) {
	ios := iosFrom(c)
	f, err := render.ParseFormat(c.String(flagOutput))
	if err != nil {
		return nil, exit.UsageErrorf("%v", err)
	}
	color := ios.OutTTY && !c.Bool(flagNoColor) && ios.getenv("NO_COLOR") == "" && ios.getenv("TERM") != "dumb"
	g := &Globals{
		IO:      ios,
		Printer: &render.Printer{Format: f, Out: ios.Out, Err: ios.Err, TTY: ios.OutTTY, Color: color},
		Quiet:   c.Bool(flagQuiet),
		vin: volume.ResolveInput{
			ClusterDirFlag: c.String(flagClusterDir),
			DataDirFlag:    c.String(flagDataDir),
			EnvClusterDir:  ios.getenv("KAAS_CLUSTER_DIR"),
			EnvDataDir:     ios.getenv("KAAS_DATA_DIR"),
		},
	}
	if err := g.applyConn(c); err != nil {
		return nil, err
	}
	return g, nil
}

// Layout resolves the volume from flags and environment.
func (g *Globals) Layout() (volume.Layout, error) {
	l, err := volume.Resolve(g.vin)
	if err == volume.ErrNoVolume {
		return l, exit.UsageErrorf("%v", err)
	}
	return l, err
}

// HasVolume reports whether any source names a volume.
func (g *Globals) HasVolume() bool {
	v := g.vin
	return v.ClusterDirFlag != "" || v.DataDirFlag != "" || v.EnvClusterDir != "" || v.EnvDataDir != "" ||
		v.ProfileClusterDir != "" || v.ProfileDataDir != ""
}

// Notef prints a note on stderr unless --quiet.
func (g *Globals) Notef(format string, a ...any) {
	if g.Quiet {
		return
	}
	fmtf(g.IO.Err, "kaasctl: "+format+"\n", a...)
}

// Warnf prints a warning on stderr unless --quiet (the exit code still
// tells what went wrong).
func (g *Globals) Warnf(format string, a ...any) {
	if g.Quiet {
		return
	}
	fmtf(g.IO.Err, "warning: "+format+"\n", a...)
}

// WarnFindings prints the warning- and error-level findings of a read, one
// line per kind: the first finding of a code, and how many more there are
// and where to see them all.
func (g *Globals) WarnFindings(fs []volume.Finding) {
	if g.Quiet {
		return
	}
	more := map[string]int{}
	var order []int
	for i, f := range fs {
		if f.Severity == volume.SevInfo {
			continue
		}
		n, seen := more[f.Code]
		if !seen {
			order = append(order, i)
			more[f.Code] = f.Repeats
			continue
		}
		more[f.Code] = n + 1 + f.Repeats
	}
	for _, i := range order {
		f := fs[i]
		if n := more[f.Code]; n > 0 {
			g.Warnf("%s: %s (and %s like it: 'kaasctl volume check' lists every one)", f.Path, f.Message, plural(n, "more", "more"))
			continue
		}
		g.Warnf("%s: %s", f.Path, f.Message)
	}
}

func iosFrom(c *cli.Context) *IOStreams {
	if ios, ok := c.App.Metadata["io"].(*IOStreams); ok {
		return ios
	}
	return System()
}

// Progress returns a progress line on stderr for long work: shown only on a
// terminal, not with --quiet, and only after a second; nil (a no-op) otherwise.
func (g *Globals) Progress(label string, total int64) *render.Progress {
	return render.NewProgress(g.IO.Err, g.IO.ErrTTY, g.Quiet, label, total)
}
