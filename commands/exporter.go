package commands

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

func init() {
	register(func() *cli.Command {
		return &cli.Command{
			Name:  "exporter",
			Usage: "serve Prometheus metrics for kaas: lag (messages and seconds), coordinators, moves, group health, volume findings",
			UsageText: "kaasctl exporter --data-dir /data -b kaas-0:9092 [--listen :10092] [--interval 15s]\n" +
				"kaasctl exporter --data-dir /data --once            (one refresh, metrics on stdout)",
			Description: "A long-running process fed from both sources. The volume: CD/assignment.json is followed with\n" +
				"fsnotify plus polling (each new version is compared with the last: coordinator moves are counted by\n" +
				"cause, and a refresh starts at once); each refresh reads assignment.json and the offset files. The\n" +
				"brokers: each refresh is one batched round, as 'groups describe --all' (ListGroups from every broker,\n" +
				"FindCoordinator, DescribeGroups and OffsetFetch per coordinator, one ListOffsets round): O(brokers)\n" +
				"requests however many groups. Lag in seconds is the age of the record at the committed offset: one\n" +
				"bounded Fetch per partition leader for the lagging partitions (up to 3 rounds when groups sit at\n" +
				"far-apart offsets of one partition), cached by (partition, offset), so it costs nothing while a\n" +
				"committed offset stands still; it is as old as the last refresh (at most --interval, or earlier on a\n" +
				"new assignment version).\n\n" +
				"A scrape serves the last refresh and does no I/O. Group health (OK, WARN, STALL, STOP, REWIND,\n" +
				"VANISHED, ERR; see 'kaasctl groups health') is evaluated over --window of refreshes; STOP, STALL\n" +
				"and WARN are claimed once the observations span --stop-after (so a restart does not page at once).\n\n" +
				"The default port 10092 is used by no well-known Kafka exporter (kafka_exporter 9308, kminion 8080,\n" +
				"kafka-lag-exporter and Burrow 8000, the JMX exporter 5556/7071). Endpoints: /metrics, /api/health\n" +
				"(group health as JSON, read by 'groups health --exporter URL'), /healthz (200 after the first refresh).\n" +
				"Alert rules, a scrape config, a Grafana dashboard and runbooks are in monitoring/.\n\n" +
				"Examples:\n" +
				"  kaasctl exporter --data-dir /data -b kaas-0:9092 --kaas-version 0.2.18\n" +
				"  kaasctl exporter --data-dir /data -b kaas-0:9092 --group-regex '^payments-' --partition-metrics=false\n" +
				"  kaasctl exporter --data-dir /data --once | grep kaas_group_health     # what a scrape would serve",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "listen", Value: exporter.DefaultListen, Usage: "serve metrics on `ADDR`"},
				&cli.DurationFlag{Name: "interval", Value: 15 * time.Second, Usage: "refresh every `D` (also refreshed at once on a new assignment version)"},
				&cli.DurationFlag{Name: "window", Value: 5 * time.Minute, Usage: "evaluate group health over the refreshes of the last `D`"},
				&cli.DurationFlag{Name: "stop-after", Value: time.Minute, Usage: "claim STOP, STALL or WARN only after `D` of observations (at most --window)"},
				&cli.StringFlag{Name: "group-regex", Usage: "only groups whose id matches `RE`"},
				&cli.IntFlag{Name: "max-groups", Value: 10000, Usage: "observe at most `N` groups (the first by id; 0: no cap); kaas_exporter_groups_dropped counts the rest"},
				&cli.BoolFlag{Name: "partition-metrics", Value: true, Usage: "emit per-partition series (committed offset, lag, lag seconds); --partition-metrics=false keeps only per-group series"},
				&cli.BoolFlag{Name: "lag-seconds", Value: true, Usage: "fetch record timestamps for lag in seconds (brokers only)"},
				&cli.DurationFlag{Name: "poll-interval", Value: time.Second, Usage: "how often the assignment watch polls besides fsnotify events"},
				&cli.BoolFlag{Name: "once", Usage: "refresh once, print the metrics (Prometheus text format) to stdout and exit"},
				&cli.StringFlag{Name: "journal", Usage: "also record every change of every offset file into the offsets journal `DIR`, as 'kaasctl watch --offsets --journal DIR' does (read it with 'kaasctl offsets history'); needs the volume", Category: "Offsets journal (--journal)"},
			}, offsetJournalFlags("Offsets journal (--journal)")...),
			Action: runExporterCmd,
		}
	})
}

// exporterOptions is 'kaasctl exporter' after flag parsing.
type exporterOptions struct {
	listen           string
	interval         time.Duration
	window           time.Duration
	stopAfter        time.Duration
	filter           *regexp.Regexp
	maxGroups        int
	partitionMetrics bool
	lagSeconds       bool
	pollInterval     time.Duration
	// journal, when its Dir is set, records the offset files' changes
	// while the exporter serves (--journal).
	journal offsetJournalParams
}

func exporterOptionsFrom(c *cli.Context) (exporterOptions, error) {
	o := exporterOptions{listen: c.String("listen"), interval: c.Duration("interval"), window: c.Duration("window"), stopAfter: c.Duration("stop-after"),
		maxGroups: c.Int("max-groups"), partitionMetrics: c.Bool("partition-metrics"), lagSeconds: c.Bool("lag-seconds"),
		pollInterval: c.Duration("poll-interval")}
	var err error
	if o.filter, err = compileRegex("group-regex", c.String("group-regex")); err != nil {
		return o, err
	}
	if o.interval <= 0 || o.window <= 0 || o.pollInterval <= 0 {
		return o, exit.UsageErrorf("--interval, --window and --poll-interval must be positive")
	}
	if o.stopAfter < 0 || o.stopAfter > o.window {
		return o, exit.UsageErrorf("--stop-after %s must be between 0 and --window %s", o.stopAfter, o.window)
	}
	if o.maxGroups < 0 {
		return o, exit.UsageErrorf("--max-groups must be 0 (no cap) or more")
	}
	if jd := c.String("journal"); jd != "" {
		if c.Bool("once") {
			return o, exit.UsageErrorf("--journal records while the exporter runs; it does not go with --once")
		}
		if o.journal, err = offsetJournalParamsFrom(c, jd); err != nil {
			return o, err
		}
	}
	return o, nil
}

// healthOptions: a plain map is a hazard only on a volume known to be
// 0.2.18 (its brokers read it as empty); minSpan is --stop-after.
func healthOptions(gen volume.Generation, minSpan time.Duration) inspect.HealthOptions {
	return inspect.HealthOptions{PlainMapIsEmpty: gen.Known() && !gen.PlainMapIsOffsets(), MinSpan: minSpan}
}

// exporterSource connects the sources the globals name: the volume, the
// brokers, or both (at least one).
//
// With longRunning, brokers that do not answer yet do not stop the start:
// the exporter serves what it sees (kaas_broker_reachable 0, groups ERR)
// and recovers when they answer; one-shot commands fail at once instead.
func exporterSource(c *cli.Context, g *Globals, filter *regexp.Regexp, maxGroups int, lagSeconds bool, longRunning bool) (*exporter.Source, func(), error) {
	src := &exporter.Source{Filter: filter, MaxGroups: maxGroups, LagSeconds: lagSeconds}
	if g.HasVolume() {
		l, err := g.Layout()
		if err != nil {
			return nil, nil, err
		}
		// The generation (pinned with --kaas-version, or detected) decides
		// whether a plain-map offset file is a hazard (only on 0.2.18).
		l = l.WithGeneration()
		src.Layout = &l
		src.Generation = l.Gen.Gen
	}
	var cl *wire.Client
	var err error
	switch {
	case longRunning && wantsBrokers(c, g):
		cl, err = uncheckedClient(g)
	default:
		cl, err = liveClient(c, g)
	}
	if err != nil {
		return nil, nil, err
	}
	closeFn := func() {}
	if cl != nil {
		src.Client = cl
		closeFn = cl.Close
	}
	if src.Layout == nil && src.Client == nil {
		return nil, nil, exit.UsageErrorf("nothing to observe: give the volume (--data-dir/--cluster-dir or KAAS_DATA_DIR) and/or the brokers (--brokers or KAASCTL_BROKERS)")
	}
	return src, closeFn, nil
}

// uncheckedClient is Globals.Client without the initial connection check.
func uncheckedClient(g *Globals) (*wire.Client, error) {
	if g.conn == nil {
		return nil, errors.New("connection settings were not resolved")
	}
	if g.conn.err != nil {
		return nil, exit.UsageErrorf("%v", g.conn.err)
	}
	if g.conn.fileErr != nil && g.conn.explicit {
		return nil, exit.UsageErrorf("%v", g.conn.fileErr)
	}
	if len(g.conn.settings.Brokers) == 0 {
		return nil, exit.UsageErrorf("%v", wire.ErrNoBrokers)
	}
	wire.SoftwareVersion = Version
	return wire.NewClient(g.conn.settings)
}

func runExporterCmd(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.Args().Present() {
		return exit.UsageErrorf("exporter takes no arguments; got %q", c.Args().First())
	}
	o, err := exporterOptionsFrom(c)
	if err != nil {
		return err
	}
	src, closeFn, err := exporterSource(c, g, o.filter, o.maxGroups, o.lagSeconds, !c.Bool("once"))
	if err != nil {
		return err
	}
	defer closeFn()
	if c.Bool("once") {
		return exporterOnce(c.Context, g, src, o)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runExporter(ctx, g, src, o, nil)
}

func newExporter(g *Globals, src *exporter.Source, o exporterOptions) *exporter.Exporter {
	opt := exporter.Options{Source: src, Interval: o.interval, Window: o.window, PartitionMetrics: o.partitionMetrics,
		Health: healthOptions(src.Generation, o.stopAfter), PollInterval: o.pollInterval, Version: Version, Revision: buildInfo().Commit,
		Logf: func(format string, a ...any) { g.Warnf(format, a...) }, Notef: func(format string, a ...any) { g.Notef(format, a...) }}
	if src.Layout != nil {
		opt.AssignmentPath = src.Layout.AssignmentPath()
	}
	wire.SoftwareVersion = Version
	return exporter.New(opt)
}

// runExporter serves until ctx is done; ready, when set, is told the
// address it listens on.
func runExporter(ctx context.Context, g *Globals, src *exporter.Source, o exporterOptions, ready func(addr string)) error {
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", o.listen, err)
	}
	var journalDone chan error
	if o.journal.Dir != "" {
		if src.Layout == nil {
			ln.Close()
			return exit.UsageErrorf("--journal follows the offset files: give the volume (--data-dir/--cluster-dir or KAAS_DATA_DIR)")
		}
		run, err := offsetJournalFollower(g, *src.Layout, o.journal)
		if err != nil {
			ln.Close()
			return err
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		journalDone = make(chan error, 1)
		go func() { journalDone <- run(ctx) }()
		defer func() {
			cancel()
			if err := <-journalDone; err != nil && !errors.Is(err, context.Canceled) {
				g.Warnf("offsets journal: %v", err)
			}
		}()
	}
	e := newExporter(g, src, o)
	srv := &http.Server{Handler: e.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	what := []string{}
	if src.Layout != nil {
		what = append(what, "volume "+src.Layout.ClusterDir)
	}
	if src.Client != nil {
		what = append(what, "brokers "+strings.Join(src.Client.Settings.Brokers, ","))
	}
	g.Notef("exporter: serving http://%s/metrics (%s; refresh every %s, health window %s)", ln.Addr(), strings.Join(what, " + "), o.interval, o.window)
	if ready != nil {
		ready(ln.Addr().String())
	}
	runErr := e.Run(ctx)
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return runErr
}

// exporterOnce refreshes once and prints what a scrape would serve.
func exporterOnce(ctx context.Context, g *Globals, src *exporter.Source, o exporterOptions) error {
	e := newExporter(g, src, o)
	obs := e.Refresh(ctx)
	keep := func(name string) bool { return !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") }
	if err := e.WriteMetrics(g.IO.Out, keep); err != nil {
		return err
	}
	g.Notef("exporter: one refresh of %s in %s", plural(len(obs.Groups), "group", "groups"), obs.Duration.Round(time.Millisecond))
	if obs.WireErr != "" {
		return fmt.Errorf("brokers: %s", obs.WireErr)
	}
	return nil
}
