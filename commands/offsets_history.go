package commands

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render/views"
	"github.com/kaasctl/kaasctl/repair"
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
		Build: func() *cli.Command {
			return &cli.Command{
				ArgsUsage: "GROUP",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "journal", Aliases: []string{"j"}, Usage: "the offsets journal `DIR` recorded by 'watch --offsets --journal DIR' or 'exporter --journal DIR' (without it: kaasctl's backups only)"},
					&cli.StringFlag{Name: "since", Usage: "from `TIME` (" + timeUsage + ")"},
					&cli.StringFlag{Name: "until", Usage: "up to `TIME` (same forms as --since)"},
					&cli.GenericFlag{Name: "partition", Aliases: []string{"p"}, Value: &repeatedFlag{}, Usage: "only `TOPIC/P` (or TOPIC:0,2, or TOPIC; repeatable)"},
					&cli.BoolFlag{Name: "timeline", Usage: "also list every recorded point (table output)"},
				},
				Action: actionWith(parseOffsetsHistory, runOffsetsHistory),
			}
		},
	})
}

// offsetsHistoryOptions is 'offsets history' after flag parsing.
type offsetsHistoryOptions struct {
	group        string
	journal      string    // --journal DIR ("": backups only)
	since, until time.Time // zero: open
	keep         func(string) bool
	timeline     bool
}

// parseOffsetsHistory reads the flags; the time flags are read against
// the run's clock (g.Now) and may warn about a zone-less time.
func parseOffsetsHistory(c *cli.Context, g *Globals) (offsetsHistoryOptions, error) {
	o := offsetsHistoryOptions{journal: c.String("journal"), timeline: c.Bool("timeline")}
	if c.NArg() != 1 {
		return o, exit.UsageErrorf("offsets history takes one GROUP (got %d arguments)", c.NArg())
	}
	o.group = c.Args().First()
	var err error
	if o.since, o.until, err = parseWindow(c.String("since"), c.String("until"), g); err != nil {
		return o, err
	}
	o.keep, err = repair.PartitionFilter(repeated(c, "partition"))
	return o, err
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
