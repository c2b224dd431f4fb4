package commands

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

// groupsListOptions is 'groups list' after flag parsing.
type groupsListOptions struct {
	filter inspect.GroupFilter
	// topics: only groups with committed offsets on one of them (--topic).
	topics []string
	// drainWindow observes the listed groups for the time to drain
	// (--drain-window; live only).
	drainWindow time.Duration
	// states: only groups in these live states (--state; live only).
	states []string
}

func init() {
	register(Descriptor{
		Path:    "groups list",
		Usage:   "list every known group: offset files (both layouts) ∪ explicit assignment entries, with coordinator, tier and issue flags",
		Aliases: []string{"ls"},
		Docs: []FormatDoc{
			{Title: "groups list", Doc: views.GroupsListView{}, JSONL: "each group (groups[])", Rank: 20},
		},
		Tool: &MCPTool{Name: "groups_list", Title: "Consumer groups", Input: mcpserver.GroupsListInput{},
			Description: "Every consumer group from the volume and the brokers, with its coordinator, live state and issue flags."},
		Build: leaf(groupsListFlags, checkGroupsList, runGroupsList),
	})
}

// groupsListFlags are groups list's flags, bound to o.
func groupsListFlags(o *groupsListOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "coordinator", Usage: "only groups coordinated by broker `ID`", Destination: &o.filter.Coordinator},
		&cli.StringFlag{Name: "tier", Usage: "only groups routed by `TIER` (explicit, hash, hash-fallback, none)", Destination: &o.filter.Tier},
		&cli.BoolFlag{Name: "issues-only", Usage: "only groups with at least one issue flag", Destination: &o.filter.IssuesOnly},
		&cli.StringFlag{Name: "issue", Usage: "only groups carrying issue `FLAG` (e.g. legacyPlainMap)", Destination: &o.filter.Issue},
		&cli.StringFlag{Name: "regex", Aliases: []string{"r"}, Usage: "only groups whose id matches the Go regular expression `RE`"},
		&cli.StringFlag{Name: "state", Aliases: []string{"s"}, Usage: "only groups in live `STATES` (comma list, any case: stable,empty,dead,preparingrebalance,completingrebalance); needs brokers"},
		&cli.GenericFlag{Name: "topic", Aliases: []string{"t"}, Value: completion.Repeated(nil), Usage: "only groups with committed offsets on `TOPIC` (repeatable or comma list), from the files and live"},
		drainWindowFlag(&o.drainWindow),
	}
}

// checkGroupsList checks --tier, --issue and --drain-window and reads
// --regex, --topic and --state.
func checkGroupsList(c *cli.Context, _ *Globals, o *groupsListOptions) error {
	if err := inspect.CheckGroupFilter(o.filter); err != nil {
		return exit.UsageErrorf("%v", err)
	}
	var err error
	if o.filter.Regex, err = compileRegex("regex", c.String("regex")); err != nil {
		return err
	}
	o.topics = topicFlag(c)
	if err := checkDrainWindow(o.drainWindow); err != nil {
		return err
	}
	if o.states, err = inspect.ParseStates(c.String("state")); err != nil {
		return exit.UsageErrorf("%v", err)
	}
	return nil
}

// runGroupsList lists live (with brokers: groups_list_live.go) or from the
// volume alone.
func runGroupsList(ctx context.Context, g *Globals, o groupsListOptions) error {
	cl, err := g.LiveClient(ctx)
	if err != nil {
		return err
	}
	if cl != nil {
		defer cl.Close()
		return runGroupsListLive(ctx, g, cl, o)
	}
	if len(o.states) > 0 {
		return exit.UsageErrorf("--state needs live state: pass --brokers (or set KAASCTL_BROKERS or a profile)")
	}
	if o.drainWindow > 0 {
		return exit.UsageErrorf("--drain-window needs the brokers (the log ends are asked live)")
	}
	return runGroupsListOffline(g, o)
}

// runGroupsListOffline lists the groups of the volume; no broker is asked.
func runGroupsListOffline(g *Globals, o groupsListOptions) error {
	vol, err := readListVolume(g, o.topics)
	if err == nil && !vol.Has {
		_, err = g.Layout() // no volume named: the usage error
	}
	if err != nil {
		return err
	}
	var src views.GroupsSourcesView
	views.VolumeSources(&src, vol.Layout, vol.Assignment, vol.Scan)
	views.NoteOfflineList(g, vol, src.ExplicitCount, g.GenerationNote(vol.Layout))
	in := inspect.GroupsInput{Assignment: vol.Assignment, Files: vol.Files}
	if f := g.Printer.Format; len(o.topics) == 0 && (f == render.JSON || f == render.JSONL) {
		// One row at a time (views.StreamGroupsList).
		return views.StreamGroupsList(g.Printer, src, inspect.NewGroupRowSet(in), o.filter)
	}
	all := inspect.BuildGroupRows(in)
	rows := inspect.FilterGroups(all, o.filter)
	if len(o.topics) > 0 {
		rows = inspect.MatchTopics(rows, o.topics, vol.FileTopics, nil)
	}
	v := views.GroupsListView{Total: len(all), Shown: len(rows), Groups: rows, Sources: src}
	return g.Printer.Print(views.GroupsListOutput(g.Printer.Format, v))
}
