package commands

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:  "offsets history",
		Usage: "the timeline of a group's committed offsets per partition, with anomalies marked (from an offsets journal and kaasctl's backups)",
		Docs: []FormatDoc{
			{Title: "offsets history", Doc: inspect.OffsetHistoryView{}, JSONL: "each partition at each point (TIME, PARTITION, OFFSET, PREVIOUS, SOURCE, KIND, ANOMALY as in csv)", Rank: 130},
		},
		Tool: &MCPTool{Name: "offsets_history", Title: "Offsets history", Input: mcpserver.OffsetsHistoryInput{},
			Description: "A group's committed offsets over time per partition (the journal and kaasctl's backups), with REWIND and VANISHED marked."},
		Args:  "GROUP",
		Build: leaf(offsetsHistoryFlags, checkOffsetsHistory, runOffsetsHistory),
	})
}

// offsetsHistoryFlags are offsets history's flags, bound to o.
func offsetsHistoryFlags(o *offsetsHistoryOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "journal", Aliases: []string{"j"}, Usage: "the offsets journal `DIR` recorded by 'watch --offsets --journal DIR' or 'exporter --journal DIR' (without it: kaasctl's backups only)", Destination: &o.journal},
		&cli.StringFlag{Name: "since", Usage: "from `TIME` (" + timeUsage + ")"},
		&cli.StringFlag{Name: "until", Usage: "up to `TIME` (same forms as --since)"},
		&cli.GenericFlag{Name: "partition", Aliases: []string{"p"}, Value: completion.Repeated(nil), Usage: "only `TOPIC/P` (or TOPIC:0,2, or TOPIC; repeatable)"},
		&cli.BoolFlag{Name: "timeline", Usage: "also list every recorded point (table output)", Destination: &o.timeline},
	}
}

// offsetsHistoryOptions is 'offsets history' after flag parsing.
type offsetsHistoryOptions struct {
	group        string
	journal      string    // --journal DIR ("": backups only)
	since, until time.Time // zero: open
	keep         func(string) bool
	timeline     bool
}

// checkOffsetsHistory reads the GROUP, the time flags (against the run's
// clock; a zone-less time is warned about) and --partition.
func checkOffsetsHistory(c *cli.Context, g *Globals, o *offsetsHistoryOptions) error {
	if c.NArg() != 1 {
		return exit.UsageErrorf("offsets history takes one GROUP (got %d arguments)", c.NArg())
	}
	o.group = c.Args().First()
	var err error
	if o.since, o.until, err = parseWindow(c.String("since"), c.String("until"), g); err != nil {
		return err
	}
	o.keep, err = repair.PartitionFilter(completion.RepeatedValues(c, "partition"))
	return err
}

// runOffsetsHistory reads the group's history (journal and backups) and
// prints its view.
func runOffsetsHistory(_ context.Context, g *Globals, o offsetsHistoryOptions) error {
	if o.keep == nil {
		o.keep = func(string) bool { return true }
	}
	var l volume.Layout
	if g.HasVolume() {
		var err error
		if l, err = g.Layout(); err != nil {
			return err
		}
	}
	if o.journal == "" && !g.HasVolume() {
		return exit.UsageErrorf("nothing to read: give --journal DIR (recorded by 'kaasctl watch --offsets --journal DIR' or 'kaasctl exporter --journal DIR') and/or --data-dir for kaasctl's backups")
	}
	h, err := repair.LoadGroupHistory(repair.HistorySource{JournalDir: o.journal, Layout: l, Since: o.since, Until: o.until, Now: g.Now()}, o.group)
	if err != nil {
		return err
	}
	for _, w := range h.Warnings {
		g.Warnf("%s", w)
	}
	v := inspect.BuildOffsetHistory(inspect.OffsetHistoryInput{Group: h.Group, Journal: h.Journal, Backups: h.Backups, Warnings: h.Warnings, Points: h.Points,
		Since: o.since, Until: o.until}, o.keep)
	if len(h.Points) == 0 {
		g.Warnf("group '%s': no history in range (journal %s, %d backups)", volume.DisplayName(o.group), views.OrNone(v.Journal), len(v.Backups))
	}
	return g.Printer.Print(views.HistoryOutput(v, o.timeline, g.GivenFlags()))
}
