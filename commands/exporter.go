package commands

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/gctune"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:    "exporter",
		Usage:   "serve Prometheus metrics for kaas: lag (messages and seconds), coordinators, moves, group health, volume findings",
		Refuses: true,
		Build:   leaf(exporterFlags, checkExporter, runExporterCmd),
	})
}

// exporterFlags are the exporter's flags, bound to o.
func exporterFlags(o *exporterOptions) []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "listen", Value: exporter.DefaultListen, Usage: "serve metrics on `ADDR`, loopback only unless you expose it: --listen :10092 (every interface) or --listen POD_IP:10092 for a Prometheus on another host", Category: exporterHTTPCat, Destination: &o.listen},
		&cli.IntFlag{Name: "max-requests", Value: exporter.DefaultMaxRequests, Usage: "serve at most `N` requests for /metrics and /api/health at once; more wait up to 5s for a slot, then get 503 (a slow reader holds a refresh's page)", Category: exporterHTTPCat, Destination: &o.serve.MaxRequests},
		&cli.IntFlag{Name: "max-connections", Value: exporter.DefaultMaxConns, Usage: "keep at most `N` HTTP connections open; one more is answered 503 and closed", Category: exporterHTTPCat, Destination: &o.serve.MaxConns},
		completion.DurationFlag(&o.serve.WriteTimeout, "write-timeout", exporter.DefaultWriteTimeout, "cut off a client that has not read its whole answer within `D` (idle connections close after 1m, unfinished request headers after 10s)", exporterHTTPCat),
		completion.DurationFlag(&o.interval, "interval", 15*time.Second, "refresh every `D` (also refreshed at once on a new assignment version)"),
		completion.DurationFlag(&o.window, "window", 5*time.Minute, "evaluate group health over the refreshes of the last `D`"),
		completion.DurationFlag(&o.stopAfter, "stop-after", time.Minute, "claim STOP, STALL or WARN only after `D` of observations (at most --window)"),
		&cli.StringFlag{Name: "group-regex", Usage: "only groups whose id matches `RE`"},
		&cli.StringFlag{Name: "shard", Usage: "export only shard `K/N` of the groups (from 0: 0/3, 1/3, 2/3), split by the coordinator assignment.json names for each group (a shard per broker when N is the brokers listed); shard 0 also exports the cluster's series (assignment, brokers, findings). Run N exporters, each with its own K"},
		&cli.IntFlag{Name: "max-groups", Value: 10000, Usage: "observe at most `N` groups (the first by id; 0: no cap); kaas_exporter_groups_dropped counts the rest", Destination: &o.maxGroups},
		&cli.BoolFlag{Name: "partition-metrics", Usage: "also emit per-partition series (committed offset, lag, lag seconds, drain): one to six series per partition of every group, off by default (budget them before turning it on at scale)", Destination: &o.partitionMetrics},
		&cli.BoolFlag{Name: "lag-seconds", Value: true, Usage: "fetch record timestamps for lag in seconds (brokers only)", Destination: &o.lagSeconds},
		completion.DurationFlag(&o.servedCheck, "served-check-interval", time.Minute, "with the volume and the brokers, compare each partition's served log end with its segment files (read first) at most once per `D`, and at the first refresh after a new assignment.json version or an outage (when a leader comes to serve a stale end); refreshes in between keep the last answer (kaas_partition_served_behind_log_records). 0: every refresh (each reads every partition's segments: file-system round trips, many on NFS)"),
		completion.DurationFlag(&o.pollInterval, "poll-interval", time.Second, "how often the assignment watch and the offsets follower poll besides fsnotify events"),
		&cli.BoolFlag{Name: "follow-offsets", Value: true, Usage: "follow the live offsets dir between refreshes: rewinds and vanished partitions are seen as each file changes (--follow-offsets=false: compared between refreshes only)", Category: exporterOffsetsCat, Destination: &o.followOffsets},
		&cli.StringFlag{Name: "journal", Usage: "record every offset file change in `DIR`/offsets (as 'watch --offsets --journal'; read by 'offsets history' and 'offsets reset --to-history')", Category: exporterOffsetsCat},
		&cli.BoolFlag{Name: "once", Usage: "refresh once, print the metrics (Prometheus text format) to stdout and exit", Destination: &o.once},
		&cli.BoolFlag{Name: "probe", Usage: "probe every coordinator each --interval with a canary group, as 'kaasctl probe' (kaas_probe_* metrics; needs the volume and brokers)", Destination: &o.probe},
		&cli.StringFlag{Name: "probe-topic", Usage: "commit the canary offsets on partition 0 of `TOPIC` (default: the first topic listed)", Destination: &o.probeTopic},
	}, append(offsetJournalFlags(&o.journal, exporterOffsetsCat), churnFlags(&o.churn, exporterMembersCat)...)...)
}

const (
	exporterOffsetsCat = "Offsets follower and journal"
	exporterHTTPCat    = "HTTP server"
	exporterMembersCat = "Membership (with brokers)"
)

// exporterOptions is 'kaasctl exporter' after flag parsing.
type exporterOptions struct {
	// followOffsets runs the offsets follower (with a volume); journal
	// records what it sees (journal.dir "" : in memory only).
	followOffsets    bool
	journal          observe.JournalSpec
	listen           string
	interval         time.Duration
	window           time.Duration
	stopAfter        time.Duration
	filter           *regexp.Regexp
	maxGroups        int
	shard            *inspect.Shard
	partitionMetrics bool
	lagSeconds       bool
	servedCheck      time.Duration
	pollInterval     time.Duration
	serve            exporter.ServeOptions
	// probe runs the coordinator probe (on probeTopic, "": the first).
	probe      bool
	probeTopic string
	// once refreshes once and prints the metrics instead of serving.
	once bool
	// churn: CHURN's threshold and the rewinds' severity.
	churn churnSpec
}

// checkExporter reads --journal, --group-regex and --shard and checks
// how the flags combine.
func checkExporter(c *cli.Context, _ *Globals, o *exporterOptions) error {
	if c.Args().Present() {
		return exit.UsageErrorf("exporter takes no arguments; got %q", c.Args().First())
	}
	if o.servedCheck < 0 {
		return exit.UsageErrorf("--served-check-interval must be 0 (every refresh) or more; got %s", o.servedCheck)
	}
	if o.probeTopic != "" && !o.probe {
		return exit.UsageErrorf("--probe-topic goes with --probe")
	}
	if err := checkOffsetJournal(c, &o.journal); err != nil {
		return err
	}
	if err := o.churn.check(); err != nil {
		return err
	}
	var err error
	if o.journal.Dir != "" && o.once {
		return exit.UsageErrorf("--journal records offset file changes while the exporter runs; --once refreshes once and exits")
	}
	if o.journal.Dir != "" && !o.followOffsets {
		return exit.UsageErrorf("--journal records what the offsets follower sees; it needs --follow-offsets")
	}
	if o.filter, err = compileRegex("group-regex", c.String("group-regex")); err != nil {
		return err
	}
	if o.interval <= 0 || o.window <= 0 || o.pollInterval <= 0 {
		return exit.UsageErrorf("--interval, --window and --poll-interval must be positive")
	}
	if o.stopAfter < 0 || o.stopAfter > o.window {
		return exit.UsageErrorf("--stop-after %s must be between 0 and --window %s", o.stopAfter, o.window)
	}
	if o.serve.MaxRequests < 1 || o.serve.MaxConns < 1 || o.serve.WriteTimeout <= 0 {
		return exit.UsageErrorf("--max-requests and --max-connections must be 1 or more, --write-timeout positive")
	}
	if o.maxGroups < 0 {
		return exit.UsageErrorf("--max-groups must be 0 (no cap) or more")
	}
	if c.IsSet("shard") {
		sh, err := inspect.ParseShard(c.String("shard"))
		if err != nil {
			return exit.UsageErrorf("--shard: %v", err)
		}
		o.shard = &sh
	}
	return nil
}

// exporterSource connects the sources the globals name: the volume, the
// brokers, or both (at least one).
//
// With observe.ConnectUnchecked (long-running), brokers that do not answer yet do
// not stop the start: the exporter serves what it sees
// (kaas_broker_reachable 0, groups ERR) and recovers when they answer;
// one-shot commands (observe.ConnectChecked) fail at once instead.
func exporterSource(ctx context.Context, g *Globals, filter *regexp.Regexp, maxGroups int, lagSeconds bool, mode observe.Connect) (*observe.Source, func(), error) {
	s, err := observe.OpenInputs(ctx, g, observe.Needs{Connect: mode,
		Either: "nothing to observe: give the volume (--data-dir/--cluster-dir or KAAS_DATA_DIR) and/or the brokers (--brokers or KAASCTL_BROKERS)"})
	if err != nil {
		return nil, nil, err
	}
	src := &observe.Source{Filter: filter, MaxGroups: maxGroups, LagSeconds: lagSeconds, Layout: s.Layout, Client: s.Client, Blockers: s.Layout != nil}
	return src, s.Close, nil
}

// runExporterCmd is 'kaasctl exporter': one refresh printed (--once), or
// served until SIGINT/SIGTERM or ctx is done.
func runExporterCmd(ctx context.Context, g *Globals, o exporterOptions) error {
	gctune.Server()
	mode := observe.ConnectUnchecked
	if o.once {
		mode = observe.ConnectChecked
	}
	src, closeFn, err := exporterSource(ctx, g, o.filter, o.maxGroups, o.lagSeconds, mode)
	if err != nil {
		return err
	}
	defer closeFn()
	src.ServedCheckInterval = max(o.servedCheck, time.Nanosecond) // 0: every refresh
	src.Shard = o.shard
	if o.probe && (src.Layout == nil || src.Client == nil) {
		return exit.UsageErrorf("--probe needs the volume (the canary ids follow assignment.json's routing) and the brokers")
	}
	if o.once {
		return exporterOnce(ctx, g, src, o)
	}
	ctx, stop := untilSignal(ctx)
	defer stop()
	return runExporter(ctx, g, src, o, nil)
}

func newExporter(g *Globals, src *observe.Source, o exporterOptions, offsets *exporter.OffsetsFollow) *exporter.Exporter {
	opt := exporter.Options{Source: src, Interval: o.interval, Window: o.window, PartitionMetrics: o.partitionMetrics, Offsets: offsets, TuneMemory: !o.once,
		Health: inspect.HealthOptionsFor(src.Gen(), o.stopAfter), PollInterval: o.pollInterval, Version: Version, Revision: buildInfo().Commit,
		Logf: func(format string, a ...any) { g.Warnf(format, a...) }, Notef: func(format string, a ...any) { g.Notef(format, a...) }}
	if src.Layout != nil {
		opt.AssignmentPath = src.Layout.AssignmentPath()
	}
	if o.probe {
		opt.Probe = &exporter.ProbeOptions{Topic: o.probeTopic, Owned: repair.CanaryOwner(*src.Layout)}
	}
	var gi volume.GenerationInfo
	if src.Layout != nil {
		gi = src.Layout.WithGeneration().Gen
	}
	var events *watch.EventJournal
	if src.Client != nil && !o.once {
		events = o.journal.EventJournal("exporter", o.interval)
	}
	opt.Members = o.churn.exporterMembers(gi, events)
	return exporter.New(opt)
}

// runExporter serves until ctx is done; ready, when set, is told the
// address it listens on.
func runExporter(ctx context.Context, g *Globals, src *observe.Source, o exporterOptions, ready func(addr string)) error {
	offsets, err := exporter.FollowOffsetsOf(src, exporter.OffsetsSetup{On: o.followOffsets, Journal: o.journal, PollInterval: o.pollInterval}, g)
	if err != nil {
		return err
	}
	if offsets != nil && offsets.Journal != nil {
		defer offsets.Journal.Close()
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", o.listen, err)
	}
	e := newExporter(g, src, o, offsets)
	defer e.Close()
	views.NoteServing(g, ln.Addr(), src.Layout, src.Client, o.interval, o.window)
	if ready != nil {
		ready(ln.Addr().String())
	}
	return e.Serve(ctx, ln, o.serve)
}

// exporterOnce refreshes once and prints what a scrape would serve.
func exporterOnce(ctx context.Context, g *Globals, src *observe.Source, o exporterOptions) error {
	obs, err := newExporter(g, src, o, nil).Once(ctx, g.IO.Out, o.probe)
	if err != nil {
		return err
	}
	views.NoteRefreshed(g, len(obs.Groups), obs.Duration, obs.Dropped, o.maxGroups)
	if obs.WireErr != "" {
		return fmt.Errorf("brokers: %s", obs.WireErr)
	}
	return nil
}
