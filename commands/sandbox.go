package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/gctune"
	"github.com/kaasctl/kaasctl/internal/helptext"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render/views"
)

// flagBrokerCount is the sandbox's number of brokers (never --brokers,
// which is a host list everywhere else).
const flagBrokerCount = "broker-count"

func init() {
	register(Descriptor{
		Path:     "sandbox",
		Usage:    "run an in-process kaas-compatible cluster on loopback (for trying kaasctl and for tests)",
		Common:   fgOutput | fgDataDir | fgGeneration,
		HelpVars: helptext.Vars{"limits": sandbox.Limits},
		Build: func() *cli.Command {
			return &cli.Command{
				Flags: []cli.Flag{
					&cli.IntFlag{Name: flagBrokerCount, Aliases: []string{"n"}, Value: 3, Usage: "number of brokers, kaas-0 … kaas-<N-1> (1-64)"},
					// --brokers is a host list in every other command; here it
					// is refused with a pointer to --broker-count.
					&cli.StringFlag{Name: "brokers", Aliases: []string{"b"}, Hidden: true},
					&cli.StringFlag{Name: "listen", Usage: "HOST:PORT of kaas-0; kaas-i listens on PORT+i (default: random loopback ports)"},
					&cli.BoolFlag{Name: "demo", Usage: "seed topics orders and payments and run consumer groups that produce, consume and commit in the background"},
					&cli.StringFlag{Name: "placement", Value: string(sandbox.PlacementRendezvous), Usage: "how the controller places explicit group entries: rendezvous (kaas today) or hash (kaas's design)"},
					&cli.StringFlag{Name: "failover", Usage: "what a new controller does with the explicit entries: reload (Rust kaas) or drop (the Go flavour: its first version has none); default: the emulated generation's (--kaas-version)"},
					&cli.StringFlag{Name: "log-dir", Usage: "directory for kaas-N.log (default DATA/" + sandbox.StateDirName + "/logs)"},
					&cli.StringFlag{Name: "control", Value: "127.0.0.1:0", Usage: "HOST:PORT of the HTTP control endpoint (\"\" or off to disable)"},
					&cli.StringSliceFlag{Name: "topic", Usage: "create topic NAME:PARTITIONS at start (repeatable), e.g. --topic orders:6"},
					&cli.BoolFlag{Name: "force", Usage: "use a data dir whose assignment.json was not written by a kaasctl sandbox"},
					&cli.BoolFlag{Name: "keep", Usage: "keep the temporary data dir on exit (without --data-dir it is removed)"},
					&cli.BoolFlag{Name: "stale-groups", Usage: "behave like older kaas: a broker keeps listing the groups that move away from it until it restarts (the \"deleted group reappears\" symptom)"},
				},
				Action: action(parseSandbox, runSandbox),
			}
		},
	})
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

func parseSandbox(c *cli.Context) (sandboxOptions, error) {
	o := sandboxOptions{DataDir: c.String(flagDataDir), Listen: c.String("listen"), LogDir: c.String("log-dir"), Demo: c.Bool("demo"),
		Force: c.Bool("force"), Keep: c.Bool("keep"), StaleGroups: c.Bool("stale-groups"), Brokers: c.Int(flagBrokerCount)}
	if c.Args().Present() {
		return o, exit.UsageErrorf("sandbox takes no arguments (got %q)", c.Args().First())
	}
	if c.String(flagClusterDir) != "" {
		return o, exit.UsageErrorf("--cluster-dir is not used by sandbox: its cluster dir is always DATA/__cluster (pass --data-dir)")
	}
	o.Failover = sandbox.Failover(strings.ToLower(c.String("failover")))
	if o.Failover != "" && o.Failover != sandbox.FailoverReload && o.Failover != sandbox.FailoverDrop {
		return o, exit.UsageErrorf("--failover must be reload or drop, got %q", c.String("failover"))
	}
	o.Placement = sandbox.Placement(strings.ToLower(c.String("placement")))
	if o.Placement != sandbox.PlacementRendezvous && o.Placement != sandbox.PlacementHash {
		return o, exit.UsageErrorf("--placement must be rendezvous or hash, got %q", c.String("placement"))
	}
	if isSet(c, "brokers") {
		return o, exit.UsageErrorf("sandbox has no --brokers: that flag is a list of host:port in every other command; give the number of brokers with --broker-count N (-n N), e.g. --broker-count %s", c.String("brokers"))
	}
	if o.Brokers < 1 || o.Brokers > sandbox.MaxBrokers {
		return o, exit.UsageErrorf("--broker-count must be between 1 and %d, got %d", sandbox.MaxBrokers, o.Brokers)
	}
	if addr := c.String("control"); addr != "off" {
		o.Control = addr
	}
	var err error
	o.Topics, err = sandboxTopics(c.StringSlice("topic"), o.Demo)
	return o, err
}

// sandboxTopics is the topics of --topic specs, and the demo's topics not
// given with --demo.
func sandboxTopics(specs []string, demo bool) ([]sandbox.Topic, error) {
	var topics []sandbox.Topic
	for _, spec := range specs {
		t, err := parseTopicSpec(spec)
		if err != nil {
			return nil, exit.UsageErrorf("--topic %q: %v", spec, err)
		}
		topics = append(topics, t)
	}
	if demo {
		for _, t := range sandbox.DemoTopics {
			if !hasTopic(topics, t.Name) {
				topics = append(topics, t)
			}
		}
	}
	return topics, nil
}

func runSandbox(ctx context.Context, g *Globals, o sandboxOptions) error {
	gctune.Sandbox()
	dataDir, temp := o.DataDir, false
	if dataDir == "" {
		var err error
		if dataDir, err = os.MkdirTemp("", "kaasctl-sandbox-"); err != nil {
			return err
		}
		temp = true
	} else if err := checkSandboxDir(dataDir, o.Force); err != nil {
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
	// The marker that makes this volume a sandbox's (see checkSandboxDir).
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

// startSandbox starts what runs beside the brokers: the control endpoint,
// the demo consumers, and the state file. cleanup undoes what was started,
// also when err is not nil.
func startSandbox(sb *sandbox.Sandbox, o sandboxOptions, temp bool, quit *sandbox.QuitRequest) (info views.SandboxInfo, cleanup func(), err error) {
	var undo []func()
	cleanup = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	control := ""
	if o.Control != "" {
		cs, err := sb.ServeControl(o.Control, quit.Request)
		if err != nil {
			return info, cleanup, err
		}
		undo = append(undo, func() { cs.Close() })
		control = cs.URL()
	}
	if o.Demo {
		if err := sb.StartDemo(); err != nil {
			return info, cleanup, err
		}
	}
	stateFile, err := sb.WriteStateFile(control)
	if err != nil {
		return info, cleanup, fmt.Errorf("write state file: %w", err)
	}
	undo = append(undo, func() { os.Remove(stateFile) })
	l := sb.Layout()
	info = views.SandboxInfo{Bootstrap: strings.Join(sb.Bootstrap(), ","), Brokers: sb.BrokerIDs(), DataDir: l.DataDir, ClusterDir: l.ClusterDir,
		LogDir: sb.LogDir(), Control: control, StateFile: stateFile, Placement: string(o.Placement), Demo: o.Demo, TempDir: temp, Keep: o.Keep}
	return info, cleanup, nil
}

// serveSandbox runs the sandbox in the foreground (commands typed on
// stdin) until a signal, the control endpoint's quit, or 'quit'.
func serveSandbox(ctx context.Context, g *Globals, sb *sandbox.Sandbox, quit *sandbox.QuitRequest, info views.SandboxInfo) error {
	ctx, stop := untilSignal(ctx)
	defer stop()
	switch sb.Console(ctx, g.IO.In, quit.Done(), g.IO.Out, g.IO.Err) {
	case sandbox.StopCanceled:
		fmt.Fprintf(g.IO.Err, "kaasctl sandbox: signal received, stopping\n")
	case sandbox.StopControl:
		fmt.Fprintf(g.IO.Err, "kaasctl sandbox: quit requested on the control endpoint, stopping\n")
	}
	if !g.Printer.Format.Machine() && !g.Quiet {
		views.SandboxStopped(g.IO.Out, info)
	}
	return nil
}

func parseTopicSpec(spec string) (sandbox.Topic, error) {
	name, parts, ok := strings.Cut(spec, ":")
	t := sandbox.Topic{Name: name, Partitions: 3}
	if ok {
		var n int
		if _, err := fmt.Sscanf(parts, "%d", &n); err != nil || fmt.Sprint(n) != parts {
			return t, fmt.Errorf("partitions %q is not a number", parts)
		}
		t.Partitions = int32(n)
	}
	if t.Partitions < 1 || t.Partitions > 10000 {
		return t, fmt.Errorf("partitions must be between 1 and 10000")
	}
	return t, nil
}

func hasTopic(ts []sandbox.Topic, name string) bool {
	for _, t := range ts {
		if t.Name == name {
			return true
		}
	}
	return false
}

// checkSandboxDir refuses a volume that looks like a real kaas cluster's:
// the sandbox writes assignment.json, which kaasctl otherwise never does.
func checkSandboxDir(dataDir string, force bool) error {
	st, err := os.Stat(dataDir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil // created by the sandbox
	case err != nil:
		return err
	case !st.IsDir():
		return exit.UsageErrorf("--data-dir %s is not a directory", dataDir)
	}
	a := volume.DataDirLayout(dataDir, "").AssignmentPath()
	if _, err := os.Stat(a); err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dataDir, sandbox.StateDirName)); err == nil || force {
		if pid := sandbox.RunningPID(dataDir); pid > 0 {
			return exit.Refusedf("another kaasctl sandbox (pid %d) is running on %s; stop it first", pid, dataDir)
		}
		return nil
	}
	return exit.Refusedf("%s exists and was not written by a kaasctl sandbox; the sandbox would overwrite it. Use an empty dir, or --force if this really is a scratch volume", a)
}
