package commands

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

// Names of the flags every command accepts.
const (
	flagDataDir    = "data-dir"
	flagClusterDir = "cluster-dir"
	// flagLogDirs names a volume pool's extra log dirs (kaas's
	// KAAS_LOG_DIRS): partitions placed there are found in them.
	flagLogDirs = "log-dirs"
	flagOutput  = "output"
	flagQuiet   = "quiet"
	flagNoColor = "no-color"
	flagVerbose = "verbose"
	// flagKaasVersion pins the kaas generation of the volume (env
	// KAASCTL_KAAS_VERSION, profile kaasVersion); it wins over detection.
	flagKaasVersion = "kaas-version"
	envKaasVersion  = "KAASCTL_KAAS_VERSION"
)

// commonFlag is one of the flags every command accepts, and its group.
type commonFlag struct {
	flag  cli.Flag
	group flagGroup
}

// commonTable is the common flags, in the order help lists them: the
// volume's, the output's, then the connection's (liveFlag).
func commonTable() []commonFlag {
	t := []commonFlag{
		{&cli.StringFlag{Name: flagDataDir, Usage: "kaas data dir (KAAS_DATA_DIR); the cluster dir is DIR/__cluster, or DIR itself when it holds assignment.json", Category: "Volume"}, fgDataDir},
		{&cli.StringFlag{Name: flagClusterDir, Usage: "kaas cluster dir holding assignment.json (KAAS_CLUSTER_DIR)", Category: "Volume"}, fgClusterDir},
		{&cli.StringSliceFlag{Name: flagLogDirs, Usage: "the volume pool's other log `DIRS` beside the data dir (comma list, or KAAS_LOG_DIRS' JSON [{\"name\",\"path\"}]): partitions placed there are read from them", Category: "Volume"}, fgDataDir},
		{&cli.StringFlag{Name: flagKaasVersion, Usage: "the kaas `VERSION` that wrote the volume, instead of detecting it: " + volume.KaasVersionList() + ", or auto (" + envKaasVersion + ", profile kaasVersion)", Category: "Volume"}, fgGeneration},
		{&cli.StringFlag{Name: flagOutput, Aliases: []string{"o"}, Value: "table", Usage: "output format: table, wide, json, jsonl, yaml, csv", Category: "Output"}, fgOutput},
		{&cli.BoolFlag{Name: flagQuiet, Aliases: []string{"q"}, Usage: "no progress, notes or warnings on stderr (the exit code still tells)", Category: "Output"}, fgOutput},
		{&cli.BoolFlag{Name: flagNoColor, Usage: "no colour (also NO_COLOR=1)", Category: "Output"}, fgOutput},
		{&cli.BoolFlag{Name: flagVerbose, Aliases: []string{"v"}, Usage: "notes in full (why the kaas generation was detected or could not be)", Category: "Output"}, fgOutput},
	}
	for _, f := range wire.Flags() {
		g := fgBrokers
		switch {
		case f.Category == wire.CategoryProfile:
			g = fgProfile
		case f.Key == wire.KeyBrokers || f.Key == wire.KeyTimeout:
			g = fgReach
		}
		t = append(t, commonFlag{liveFlag(f), g})
	}
	return t
}

// commonFlags are the flags every command that reads the volume and talks
// to the brokers accepts; they are attached to each leaf command so they
// work after the command name as every example writes them.
func commonFlags() []cli.Flag {
	var out []cli.Flag
	for _, cf := range commonTable() {
		out = append(out, cf.flag)
	}
	return out
}

// flagGroup is a set of the common flags.
type flagGroup uint8

const (
	fgOutput     flagGroup = 1 << iota // -o, -q, --no-color
	fgDataDir                          // --data-dir
	fgClusterDir                       // --cluster-dir
	fgProfile                          // --profile, --config (a profile can name the volume)
	fgGeneration                       // --kaas-version (commands that read offset files)
	fgReach                            // --brokers, --timeout (enough to see whether a broker answers)
	fgBrokers                          // --command-config, --max-versions, TLS and SASL
	fgVolume               = fgDataDir | fgClusterDir
	fgAll                  = fgOutput | fgVolume | fgProfile | fgGeneration | fgReach | fgBrokers
	fgOffline              = fgOutput | fgVolume | fgProfile | fgGeneration
	// fgAssignment: offline commands that read assignment.json, journals
	// or logs but no offset file, so the generation does not apply.
	fgAssignment = fgOutput | fgVolume | fgProfile
	// fgNone: no common flag at all (completion).
	fgNone flagGroup = 1 << 7
)

// Which common flags a command's help lists is its descriptor's Common
// (registry.go), so it shows only what applies: commands that never talk
// to the brokers do not list the connection, TLS and SASL flags. They
// still accept them, hidden and without effect, so one KAASCTL_ARGS or
// alias ("--data-dir D --brokers B") works with every command, as the
// runbooks use it. A parent's Common covers its sub-commands unless one
// has its own; a command none names shows them all.

// commonFlagsFor returns the common flags, those outside groups hidden.
func commonFlagsFor(groups flagGroup) []cli.Flag {
	var out []cli.Flag
	for _, cf := range commonTable() {
		out = append(out, cf.flag)
		if groups&cf.group != 0 {
			continue
		}
		switch f := cf.flag.(type) {
		case *cli.StringFlag:
			f.Hidden = true
		case *cli.BoolFlag:
			f.Hidden = true
		case *cli.StringSliceFlag:
			f.Hidden = true
		default:
			panic("commonFlagsFor: cannot hide " + completion.FlagName(f))
		}
	}
	return out
}

// Globals is what the common flags resolve to for one command run.
type Globals struct {
	IO      *IOStreams
	Printer *render.Printer
	Quiet   bool
	// Verbose (-v) prints notes in full (the generation's evidence).
	Verbose bool
	vin     volume.ResolveInput
	conn    *wire.Connection // connection settings and profile (liveflags.go)
	// brokersFlag: --brokers was given on the command line.
	brokersFlag bool
	// given and connFlags are the command-line flags to repeat in a
	// printed next step (givenFlags, connFlagsText), read once from the
	// command line so that run functions need no cli.Context.
	given, connFlags string
}

// globals reads the common flags.
func globals(c *cli.Context) (*Globals, error) {
	ios := iosFrom(c)
	if err := pinClock(c, ios); err != nil {
		return nil, err
	}
	f, err := render.ParseFormat(c.String(flagOutput))
	if err != nil {
		return nil, exit.UsageErrorf("%v", err)
	}
	color := ios.OutTTY && !c.Bool(flagNoColor) && ios.getenv("NO_COLOR") == "" && ios.getenv("TERM") != "dumb"
	g := &Globals{
		IO:      ios,
		Printer: &render.Printer{Format: f, Out: ios.Out, Err: ios.Err, TTY: ios.OutTTY, Color: color},
		Quiet:   c.Bool(flagQuiet),
		Verbose: c.Bool(flagVerbose),
		vin: volume.ResolveInput{
			ClusterDirFlag: c.String(flagClusterDir),
			DataDirFlag:    c.String(flagDataDir),
			EnvClusterDir:  ios.getenv("KAAS_CLUSTER_DIR"),
			EnvDataDir:     ios.getenv("KAAS_DATA_DIR"),
			LogDirsFlag:    c.StringSlice(flagLogDirs),
			EnvLogDirs:     ios.getenv("KAAS_LOG_DIRS"),
			// Only the flag commonFlags attaches (a command's own
			// --kaas-version, such as volume migrate's target, is not a pin).
			KaasVersionFlag: kaasVersionFlag(c),
			EnvKaasVersion:  ios.getenv(envKaasVersion),
		},
	}
	if err := g.applyConn(c); err != nil {
		return nil, err
	}
	// One generation decision for every command and input: a pin that
	// does not parse is a usage error whether or not a volume is read.
	if _, _, err := volume.PinnedGeneration(g.vin); err != nil {
		return nil, exit.UsageErrorf("%v", err)
	}
	g.brokersFlag = completion.IsSet(c, wire.KeyBrokers)
	g.given = givenFlags(c)
	g.connFlags = connFlagsText(c, g)
	g.Printer.Generation = g.generationDoc
	return g, nil
}

// generationDoc is the generation every document about a volume or
// cluster carries (render.Printer.Generation): the volume's, pinned or
// detected; else the pinned one; else unknown.
func (g *Globals) generationDoc() any {
	gi := g.Generation()
	return &gi
}

// GivenFlags is the volume, generation and connection flags given on the
// command line, to repeat in a printed next step (see givenFlags).
func (g *Globals) GivenFlags() string { return g.given }

// ConnFlags is the connection flags in effect, to repeat in a printed fix
// line (see connFlagsText).
func (g *Globals) ConnFlags() string { return g.connFlags }

// kaasVersionFlag is the --kaas-version pin given on the command line.
func kaasVersionFlag(c *cli.Context) string {
	if !completion.IsSet(c, flagKaasVersion) {
		return ""
	}
	return c.String(flagKaasVersion)
}

// Generation is the kaas generation a command assumes, decided once for
// every input (volume.RunGeneration).
func (g *Globals) Generation() volume.GenerationInfo { return volume.RunGeneration(g.vin) }

// Layout resolves the volume from flags and environment, with the kaas
// generation it assumes (pinned, or detected from the volume).
func (g *Globals) Layout() (volume.Layout, error) {
	l, err := volume.Resolve(g.vin)
	if err == volume.ErrNoVolume {
		return l, exit.UsageErrorf("%v", err)
	}
	var pe *volume.PinError
	if errors.As(err, &pe) {
		return l, exit.UsageErrorf("%v", err)
	}
	return l, err
}

// GenerationNote is the sources line's clause on the kaas generation:
// short (the generation and its source), in full with -v. 'volume check'
// and doctor always give it in full.
func (g *Globals) GenerationNote(l volume.Layout) string {
	if g.Verbose {
		return l.Gen.Summary()
	}
	return l.Gen.Short()
}

// HasVolume reports whether any source names a volume.
func (g *Globals) HasVolume() bool { return g.vin.NamesVolume() }

// Notef prints a note on stderr unless --quiet.
func (g *Globals) Notef(format string, a ...any) {
	if g.Quiet {
		return
	}
	fmt.Fprintf(g.IO.Err, "kaasctl: %s\n", render.CleanText(fmt.Sprintf(format, a...)))
}

// WarnAll prints each warning (Warnf).
func (g *Globals) WarnAll(warnings []string) {
	for _, w := range warnings {
		g.Warnf("%s", w)
	}
}

// Warnf prints a warning on stderr unless --quiet (the exit code still
// tells what went wrong).
func (g *Globals) Warnf(format string, a ...any) {
	if g.Quiet {
		return
	}
	fmt.Fprintf(g.IO.Err, "warning: %s\n", render.CleanText(fmt.Sprintf(format, a...)))
}

// WarnFindings prints the warning- and error-level findings of a read, one
// line per kind: the first finding of a code, and how many more there are
// and where to see them all.
func (g *Globals) WarnFindings(fs []volume.Finding) {
	if g.Quiet {
		return
	}
	for _, w := range views.FindingWarnings(fs, g.GivenFlags()) {
		g.Warnf("%s", w)
	}
}

func iosFrom(c *cli.Context) *IOStreams {
	if ios, ok := c.App.Metadata["io"].(*IOStreams); ok {
		return ios
	}
	return System()
}

// Now is the run's clock (IOStreams.Now).
func (g *Globals) Now() time.Time { return g.IO.now() }

// Progress returns a progress line on stderr for long work: shown only on a
// terminal, not with --quiet, and only after a second; nil (a no-op) otherwise.
func (g *Globals) Progress(label string, total int64) *render.Progress {
	return render.NewProgress(g.IO.Err, g.IO.ErrTTY, g.Quiet, label, total)
}

// givenFlags is the volume, generation and connection flags the user gave
// on this command line, as arguments to repeat (" --data-dir /data -b
// k:9092"), so that a command kaasctl prints for the next step runs as
// printed against the same volume and brokers. Output flags are left out;
// no flag takes a secret (passwords come from a file or an environment
// variable named by a flag).
func givenFlags(c *cli.Context) string {
	var b strings.Builder
	for _, cf := range commonTable() {
		name := completion.FlagName(cf.flag)
		if cf.group == fgOutput || !completion.IsSet(c, name) {
			continue
		}
		switch cf.flag.(type) {
		case *cli.BoolFlag:
			if c.Bool(name) {
				b.WriteString(" --" + name)
			}
		case *cli.StringSliceFlag:
			for _, v := range c.StringSlice(name) {
				b.WriteString(" --" + name + " " + render.ShellQuote(v))
			}
		default:
			b.WriteString(" --" + name + " " + render.ShellQuote(c.String(name)))
		}
	}
	return b.String()
}
