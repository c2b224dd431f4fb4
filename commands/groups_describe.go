package commands

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/views"
)

// groupsDescribeOptions is 'groups describe' after flag parsing: every flag
// the command reads, typed and validated.
type groupsDescribeOptions struct {
	// sel is the groups named, or --all, or --regex compiled.
	sel observe.Selection
	lag *inspect.LagFilter
	// filter narrows partitions to --topic and --lagging-only.
	filter inspect.DescribeFilter
	// summaryOnly prints only the summary section (table, wide, csv).
	summaryOnly bool
	// drainWindow observes the described groups over a window for the
	// time to drain and the retention forecast (live only; 0: not).
	drainWindow time.Duration
	// view is one table instead of the blocks: offsets, members or state
	// (groups_describe_views.go; "": the blocks).
	view string
	// why: each lagging partition's blocker instead (groups_why.go).
	why whyOptions
}

func init() {
	register(Descriptor{
		Path:  "groups describe",
		Usage: "coordinator, members, committed offsets (file and live) and lag of groups",
		Docs: []FormatDoc{
			{Title: "groups describe", Doc: views.GroupsDescribeView{}, JSONL: "each group (groups[])", Rank: 30},
			{Title: "groups describe (with brokers)", Doc: views.GroupsDescribeLiveView{}, JSONL: "each group (groups[])", Rank: 40},
			{Title: "groups describe --why", Doc: views.GroupsWhyView{}, JSONL: "each group (groups[]) with its lagging partitions' blockers", Rank: 45},
		},
		Tool: &MCPTool{Name: "groups_describe", Title: "Describe groups", Input: mcpserver.GroupsDescribeInput{}, LiveDoc: views.GroupsDescribeLiveView{},
			Description: "Groups' members and committed offsets per partition (file and coordinator), log bounds, lag, and the read model's incidents."},
		Args:  "GROUP...",
		Build: leaf(describeFlags, checkGroupsDescribe, runGroupsDescribe),
	})
}

// describeFlags are groups describe's flags, bound to o.
func describeFlags(o *groupsDescribeOptions) []cli.Flag {
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "all", Aliases: []string{"all-groups"}, Usage: "describe every group on the volume", Destination: &o.sel.All},
		&cli.StringFlag{Name: "regex", Aliases: []string{"r"}, Usage: "describe every group whose id matches `RE`"},
		&cli.StringFlag{Name: "lag", Usage: "only groups whose total lag (live with brokers, else offline) matches `EXPR`: >N, >=N, <N, <=N, =N, !=N, N..M, or N (at least N)"},
		&cli.GenericFlag{Name: "topic", Aliases: []string{"t"}, Value: completion.Repeated(nil), Usage: "only partitions of `TOPIC` (repeatable or comma list); totals and lag count only these"},
		&cli.BoolFlag{Name: "lagging-only", Usage: "only partitions with lag above 0, and groups with any", Destination: &o.filter.LaggingOnly},
		&cli.BoolFlag{Name: "summary", Usage: "print only the summary section, one line per group (table, wide, csv)", Destination: &o.summaryOnly},
		&cli.StringSliceFlag{Name: "group", Aliases: []string{"g"}, Usage: "describe `GROUP` (repeatable; the same as naming it, as kafka-consumer-groups.sh --group)"},
		drainWindowFlag(&o.drainWindow),
	}, append(describeViewFlags(), whyFlags(&o.why)...)...)
}

// checkGroupsDescribe reads the selection and checks the flags
// (describeArgs), then refuses a describe that selects nothing.
func checkGroupsDescribe(c *cli.Context, _ *Globals, o *groupsDescribeOptions) error {
	if err := describeArgs(c, o); err != nil {
		return err
	}
	return o.checkSelection()
}

// describeArgs reads the GROUPs, --group, --topic, the view, --regex and
// --lag, and checks --drain-window and the --why flags.
func describeArgs(c *cli.Context, o *groupsDescribeOptions) error {
	o.sel.Names = append(c.Args().Slice(), splitList(c.StringSlice("group"))...)
	o.filter.Topics = topicFlag(c)
	var err error
	if o.view, err = parseDescribeView(c); err != nil {
		return err
	}
	if o.sel.Regex, err = compileRegex("regex", c.String("regex")); err != nil {
		return err
	}
	if o.lag, err = inspect.ParseLagFilter(c.String("lag")); err != nil {
		return exit.UsageErrorf("%v", err)
	}
	if err := checkDrainWindow(o.drainWindow); err != nil {
		return err
	}
	return checkWhy(c, &o.why)
}

// checkSelection refuses a describe that selects nothing, or names and
// --all/--regex at once.
func (o groupsDescribeOptions) checkSelection() error {
	if len(o.sel.Names) == 0 && !o.sel.SelectAll() {
		return exit.UsageErrorf("name at least one GROUP (or --group GROUP), or use --all or --regex RE")
	}
	if len(o.sel.Names) > 0 && o.sel.SelectAll() {
		return exit.UsageErrorf("give GROUP names or --all/--regex, not both")
	}
	return nil
}

// runGroupsDescribe describes the groups o selects: live when brokers are
// configured (groups_describe_live.go), else from the volume alone.
func runGroupsDescribe(ctx context.Context, g *Globals, o groupsDescribeOptions) error {
	cl, err := g.LiveClient(ctx)
	if err != nil {
		return err
	}
	if cl != nil {
		defer cl.Close()
	}
	if o.why.on {
		return runGroupsWhy(ctx, g, cl, o)
	}
	if cl != nil {
		return runGroupsDescribeLive(ctx, g, cl, o)
	}
	if o.drainWindow > 0 {
		return exit.UsageErrorf("--drain-window needs the brokers (the log end and log start are asked live)")
	}
	if err := viewNeedsBrokers(o.view); err != nil {
		return err
	}
	return runGroupsDescribeOffline(g, o)
}

// readDescribeVolume reads the volume for a describe: the assignment and
// the selected groups' offset files (observe.ReadVolume).
func readDescribeVolume(g *Globals, o groupsDescribeOptions) (*observe.VolumeRead, error) {
	l, err := g.Layout()
	if err != nil {
		return nil, err
	}
	return observe.ReadVolume(l, offlineAssignmentFor(g, l, o.sel.Scope()), o.sel)
}

// runGroupsDescribeOffline describes from the volume alone: offsets from
// the offset files, log bounds from the segment files.
func runGroupsDescribeOffline(g *Globals, o groupsDescribeOptions) error {
	vol, err := readDescribeVolume(g, o)
	if err != nil {
		return err
	}
	selected := inspect.SelectGroups(vol.KnownNames(), o.sel.Names, o.sel.All, o.sel.Regex)
	v := views.GroupsDescribeView{}
	views.VolumeSources(&v.Sources, vol.Layout, vol.Assignment, vol.Scan)
	views.WarnGeneration(g, vol.Scan)
	res := inspect.DescribeOffline(inspect.OfflineDescribeInput{Selected: selected, Known: vol.Known, Files: vol.Files,
		Assignment: vol.Assignment, State: vol.State, Filter: o.filter, Lag: o.lag})
	v.Groups, v.NotFound = res.Groups, res.NotFound
	noteLeftOut(g, o.filter, res.LeftOut)
	flushLogs(g, vol.Logs)
	if vol.Logs == nil {
		g.Warnf("the data dir is unknown (only --cluster-dir given): no segment files, so lag is unknown; pass --data-dir")
	}
	g.Notef("offline: offsets from the volume, log ends from the segment files; no broker was asked; %s", g.GenerationNote(vol.Layout))
	if err := g.Printer.Print(views.DescribeOutput(g.Printer.Format, &v, o.view, o.summaryOnly)); err != nil {
		return err
	}
	if err := inspect.OfflineNotFoundError(v.NotFound, vol.Scan.Findings); err != nil {
		return err
	}
	if len(selected) == 0 {
		g.Notef("no group matches")
	}
	return nil
}

// flushLogs prints the findings of the partitions read, one line per kind,
// and names every manifest fallback.
func flushLogs(g *Globals, lg *observe.Logs) {
	fs, fallbacks := lg.Flush()
	g.WarnFindings(fs)
	if fallbacks != "" {
		g.Warnf("%s", fallbacks)
	}
}
