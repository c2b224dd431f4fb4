package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/gctune"
	"github.com/kaasctl/kaasctl/internal/helptext"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/views"
)

// flagBrokerCount is the sandbox's number of brokers (never --brokers,
// which is a host list everywhere else).
const flagBrokerCount = "broker-count"

func init() {
	register(Descriptor{
		Path:     "sandbox",
		Usage:    "run an in-process kaas-compatible cluster on loopback (for trying kaasctl and for tests)",
		Refuses:  true,
		Common:   fgOutput | fgDataDir | fgGeneration,
		HelpVars: helptext.Vars{"limits": sandbox.Limits},
		Build:    leaf(sandboxFlags, checkSandbox, runSandbox),
	})
}

// sandboxFlags are sandbox's flags, bound to o.
func sandboxFlags(o *sandboxOptions) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: flagBrokerCount, Aliases: []string{"n"}, Value: 3, Usage: "number of brokers, kaas-0 … kaas-<N-1> (1-64)", Destination: &o.Brokers},
		// --brokers is a host list in every other command; here it
		// is refused with a pointer to --broker-count.
		&cli.StringFlag{Name: "brokers", Aliases: []string{"b"}, Hidden: true},
		&cli.StringFlag{Name: "listen", Usage: "HOST:PORT of kaas-0; kaas-i listens on PORT+i (default: random loopback ports)", Destination: &o.Listen},
		&cli.BoolFlag{Name: "demo", Usage: "seed topics orders and payments and run consumer groups that produce, consume and commit in the background", Destination: &o.Demo},
		&cli.StringFlag{Name: "placement", Value: string(sandbox.PlacementRendezvous), Usage: "how the controller places explicit group entries: rendezvous (kaas today) or hash (kaas's design)"},
		&cli.StringFlag{Name: "failover", Usage: "what a new controller does with the explicit entries: reload (Rust kaas) or drop (the Go flavour: its first version has none); default: the emulated generation's (--kaas-version)"},
		&cli.StringFlag{Name: "log-dir", Usage: "directory for kaas-N.log (default DATA/" + sandbox.StateDirName + "/logs)", Destination: &o.LogDir},
		&cli.StringFlag{Name: "control", Value: "127.0.0.1:0", Usage: "HOST:PORT of the HTTP control endpoint (\"\" or off to disable)"},
		&cli.StringSliceFlag{Name: "topic", Usage: "create topic NAME:PARTITIONS at start (repeatable), e.g. --topic orders:6"},
		&cli.BoolFlag{Name: "force", Usage: "use a data dir whose assignment.json was not written by a kaasctl sandbox", Destination: &o.Force},
		&cli.BoolFlag{Name: "keep", Usage: "keep the temporary data dir on exit (without --data-dir it is removed)", Destination: &o.Keep},
		&cli.BoolFlag{Name: "stale-groups", Usage: "behave like older kaas: a broker keeps listing the groups that move away from it until it restarts (the \"deleted group reappears\" symptom)", Destination: &o.StaleGroups},
	}
}

// sandboxOptions is 'sandbox' after flag parsing.
type sandboxOptions struct {
	Brokers     int // kaas-0 … kaas-<Brokers-1>
	DataDir     string
	Listen      string
	LogDir      string
	Control     string // HOST:PORT of the HTTP control endpoint; "" for none
	Placement   sandbox.Placement
	Failover    sandbox.Failover
	Topics      []sandbox.Topic // --topic, and the demo's topics with --demo
	Demo        bool
	Force       bool
	Keep        bool
	StaleGroups bool
}

// checkSandbox reads the data dir, --failover, --placement, --control and
// the topics, and refuses what a sandbox does not take.
func checkSandbox(c *cli.Context, _ *Globals, o *sandboxOptions) error {
	o.DataDir = c.String(flagDataDir)
	if c.Args().Present() {
		return exit.UsageErrorf("sandbox takes no arguments (got %q)", c.Args().First())
	}
	if c.String(flagClusterDir) != "" {
		return exit.UsageErrorf("--cluster-dir is not used by sandbox: its cluster dir is always DATA/__cluster (pass --data-dir)")
	}
	o.Failover = sandbox.Failover(strings.ToLower(c.String("failover")))
	if o.Failover != "" && o.Failover != sandbox.FailoverReload && o.Failover != sandbox.FailoverDrop {
		return exit.UsageErrorf("--failover must be reload or drop, got %q", c.String("failover"))
	}
	o.Placement = sandbox.Placement(strings.ToLower(c.String("placement")))
	if o.Placement != sandbox.PlacementRendezvous && o.Placement != sandbox.PlacementHash {
		return exit.UsageErrorf("--placement must be rendezvous or hash, got %q", c.String("placement"))
	}
	if completion.IsSet(c, "brokers") {
		return exit.UsageErrorf("sandbox has no --brokers: that flag is a list of host:port in every other command; give the number of brokers with --broker-count N (-n N), e.g. --broker-count %s", c.String("brokers"))
	}
	if o.Brokers < 1 || o.Brokers > sandbox.MaxBrokers {
		return exit.UsageErrorf("--broker-count must be between 1 and %d, got %d", sandbox.MaxBrokers, o.Brokers)
	}
	if addr := c.String("control"); addr != "off" {
		o.Control = addr
	}
	var err error
	o.Topics, err = sandbox.TopicsOf(c.StringSlice("topic"), o.Demo)
	return err
}

func runSandbox(ctx context.Context, g *Globals, o sandboxOptions) error {
	gctune.Sandbox()
	dataDir, temp, err := sandbox.DataDirFor(o.DataDir, o.Force)
	if err != nil {
		return err
	}
	if temp && !o.Keep {
		defer os.RemoveAll(dataDir)
	}
	sb, err := sandbox.New(sandbox.Options{
		Brokers: o.Brokers, DataDir: dataDir, Listen: o.Listen, Placement: o.Placement, Failover: o.Failover,
		LogDir: o.LogDir, Topics: o.Topics, AutoCreateTopics: true, Persist: true, Generation: g.Generation().Gen,
	})
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	defer sb.Close()
	sb.EmulateStaleGroups(o.StaleGroups) // internal/sandbox/stale.go
	// The marker that makes this volume a sandbox's (see sandbox.CheckDataDir).
	_ = os.MkdirAll(filepath.Join(sb.Layout().DataDir, sandbox.StateDirName), 0o755)
	quit := sandbox.NewQuitRequest()
	info, cleanup, err := startSandbox(sb, o, temp, quit)
	defer cleanup()
	if err != nil {
		return err
	}
	if !g.Quiet || g.Printer.Format.Machine() {
		if err := views.PrintSandboxInfo(g.Printer, info); err != nil {
			return err
		}
	}
	return serveSandbox(ctx, g, sb, quit, info)
}

// startSandbox starts what runs beside the brokers and says where it
// all is.
func startSandbox(sb *sandbox.Sandbox, o sandboxOptions, temp bool, quit *sandbox.QuitRequest) (views.SandboxInfo, func(), error) {
	st, cleanup, err := sb.StartBeside(o.Control, o.Demo, quit)
	l := sb.Layout()
	info := views.SandboxInfo{Bootstrap: strings.Join(sb.Bootstrap(), ","), Brokers: sb.BrokerIDs(), DataDir: l.DataDir, ClusterDir: l.ClusterDir,
		LogDir: sb.LogDir(), Control: st.Control, StateFile: st.StateFile, Placement: string(o.Placement), Demo: o.Demo, TempDir: temp, Keep: o.Keep}
	return info, cleanup, err
}

// serveSandbox runs the sandbox in the foreground (commands typed on
// stdin) until a signal, the control endpoint's quit, or 'quit'.
func serveSandbox(ctx context.Context, g *Globals, sb *sandbox.Sandbox, quit *sandbox.QuitRequest, info views.SandboxInfo) error {
	ctx, stop := untilSignal(ctx)
	defer stop()
	views.SandboxStopping(g.IO.Err, sb.Console(ctx, g.IO.In, quit.Done(), g.IO.Out, g.IO.Err))
	if !g.Printer.Format.Machine() && !g.Quiet {
		views.SandboxStopped(g.IO.Out, info)
	}
	return nil
}
