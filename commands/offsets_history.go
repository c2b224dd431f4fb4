package commands

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
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

// partitionFilter reads --partition values.
func partitionFilter(vals []string) (func(string) bool, error) {
	if len(vals) == 0 {
		return func(string) bool { return true }, nil
	}
	var scopes []repair.TopicScope
	for _, v := range vals {
		if t, p, err := volume.SplitOffsetKey(v); err == nil && !strings.Contains(v, ":") {
			scopes = append(scopes, repair.TopicScope{Topic: t, Partitions: []int32{p}})
			continue
		}
		s, err := repair.ParseTopicScope(v)
		if err != nil {
			return nil, exit.UsageErrorf("--partition %q: use TOPIC/P, TOPIC:0,2 or TOPIC", v)
		}
		scopes = append(scopes, s)
	}
	return func(k string) bool {
		t, p, err := volume.SplitOffsetKey(k)
		if err != nil {
			return false
		}
		for _, s := range scopes {
			if s.Topic == t && (s.Partitions == nil || slices.Contains(s.Partitions, p)) {
				return true
			}
		}
		return false
	}, nil
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
	o.keep, err = partitionFilter(repeated(c, "partition"))
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
	v := inspect.BuildOffsetHistory(inspect.OffsetHistoryInput{Group: h.Group, Journal: h.Journal, Backups: h.Backups, Warnings: h.Warnings, Points: h.Points}, o.keep)
	if !o.since.IsZero() {
		v.Since = &o.since
	}
	if !o.until.IsZero() {
		v.Until = &o.until
	}
	if len(h.Points) == 0 {
		g.Warnf("group '%s': no history in range (journal %s, %d backups)", volume.DisplayName(o.group), views.OrNone(v.Journal), len(v.Backups))
	}
	t := render.NewTable("TIME", "GROUP", "PARTITION", "OFFSET", "PREVIOUS", "SOURCE", "KIND", "ANOMALY", "DETAIL")
	for _, r := range v.Rows {
		t.Add(render.Timestamp(r.Time), r.Group, r.Topic+"/"+strconv.Itoa(int(r.Partition)), render.OptInt(r.Offset), render.OptInt(r.Previous), r.Source, r.Kind, r.Anomaly, r.Detail)
	}
	return g.Printer.Print(render.Output{Data: v, Items: v.Rows, Table: t, Human: func(p *render.Printer) error {
		return writeHistoryHuman(p, v, o.timeline, g.GivenFlags())
	}})
}

// writeHistoryHuman is offsets history for people: a header line, the
// partitions table, the anomalies with the restore command, the gaps and,
// with --timeline, every point.
func writeHistoryHuman(p *render.Printer, v *inspect.OffsetHistoryView, timeline bool, flags string) error {
	w := p.Out
	src := []string{}
	if v.Journal != "" {
		src = append(src, "journal "+v.Journal)
	}
	src = append(src, render.Plural(len(v.Backups), "backup", "backups"))
	span := "no points"
	if v.First != nil {
		span = render.Timestamp(*v.First) + " → " + render.Timestamp(*v.Last)
	}
	fmt.Fprintf(w, "%s  %s · %s · %s · %s\n", p.Paint(render.Bold, "offsets history"), render.Shorten(v.Group, 80), strings.Join(src, ", "), render.Plural(len(v.Points), "point", "points"), span)
	if len(v.Partitions) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	if err := writeHistoryPartitions(p, v.Partitions); err != nil {
		return err
	}
	if len(v.Anomalies) > 0 {
		fmt.Fprintf(w, "\n%s\n", p.Paint(render.Bold, render.Plural(len(v.Anomalies), "anomaly", "anomalies")))
		for _, a := range v.Anomalies {
			fmt.Fprintf(w, "  %s  %s  %s\n", render.Timestamp(a.Time), p.Paint(render.Red, render.Pad(a.Kind, 9)), a.Detail)
		}
		fmt.Fprintf(w, "\nrestore the state before the latest incident (dry-run; add --execute):\n  kaasctl offsets reset --group %s --to-history-before-anomaly%s%s\n", shellQuote(v.Group), journalArg(v.Journal), flags)
	}
	writeHistoryGaps(p, v.Gaps)
	if timeline {
		fmt.Fprintf(w, "\n%s\n", p.Paint(render.Bold, "timeline"))
		srcW, kindW := 0, 0
		for _, pt := range v.Points {
			srcW, kindW = max(srcW, len(pt.Source)), max(kindW, len(pt.Kind))
		}
		for _, pt := range v.Points {
			writeTimelinePoint(p, w, pt, srcW, kindW)
		}
	}
	return nil
}

// writeHistoryPartitions is the per-partition table, with the PROGRESS
// sparkline on a terminal.
func writeHistoryPartitions(p *render.Printer, parts []inspect.HistoryPartition) error {
	hdr := []string{"PARTITION", "FIRST", "LAST", "MIN", "MAX", "CHANGES", "ANOMALIES"}
	if p.TTY {
		hdr = append(hdr, "PROGRESS")
	}
	t := render.NewTable(hdr...)
	for _, hp := range parts {
		an := strconv.Itoa(hp.Anomalies)
		if hp.Anomalies > 0 {
			an = p.Paint(render.Red, an)
		}
		cells := []string{hp.Topic + "/" + strconv.Itoa(int(hp.Partition)), render.OptInt(hp.First), render.OptInt(hp.Last),
			strconv.FormatInt(hp.Min, 10), strconv.FormatInt(hp.Max, 10), strconv.Itoa(hp.Changes), an}
		if p.TTY {
			cells = append(cells, hp.Spark)
		}
		t.Add(cells...)
	}
	plain := *p
	plain.TTY = false // aligned text: the sparkline cells stay one column
	return plain.Table(t)
}

// writeHistoryGaps lists the gaps in the journal.
func writeHistoryGaps(p *render.Printer, gaps []inspect.HistoryGap) {
	if len(gaps) == 0 {
		return
	}
	w := p.Out
	fmt.Fprintf(w, "\n%s\n", p.Paint(render.Bold, render.Plural(len(gaps), "gap in the journal", "gaps in the journal")))
	for _, gp := range gaps {
		until := "no full snapshot after it yet"
		if gp.Until != nil {
			until = "until the full snapshot at " + render.Timestamp(*gp.Until)
		}
		fmt.Fprintf(w, "  %s  %s  %s: the offsets are not known (records are deltas), and restores to a moment in it are refused\n", render.Timestamp(gp.Time), p.Paint(render.Red, render.Pad("GAP", 9)), until)
		fmt.Fprintf(w, "      %s\n", render.Clean(gp.Problem))
	}
}

func journalArg(dir string) string {
	if dir == "" {
		return ""
	}
	return " --journal " + shellQuote(dir)
}

// writeTimelinePoint writes one point of --timeline, its source and kind
// padded to the widest of the timeline's.
func writeTimelinePoint(p *render.Printer, w io.Writer, pt inspect.HistoryPoint, srcW, kindW int) {
	var parts []string
	for _, k := range inspect.SortedOffsetKeys(pt.Changed) {
		parts = append(parts, k+"="+strconv.FormatInt(pt.Changed[k], 10))
	}
	for _, k := range pt.Removed {
		parts = append(parts, k+" removed")
	}
	switch {
	case pt.Kind == repair.KindBeforeRewrite:
		parts = []string{render.Plural(len(pt.Offsets), "partition", "partitions") + " (kaasctl's copy of the state before it rewrote the file)"}
	case pt.Source == "backup":
		parts = []string{render.Plural(len(pt.Offsets), "partition", "partitions") + " (kaasctl rewrote the file; last known from its copy before its next rewrite)"}
	case pt.Source == "file":
		parts = []string{render.Plural(len(pt.Offsets), "partition", "partitions") + " (kaasctl rewrote the file; the file as it is now)"}
	}
	if pt.Problem != "" {
		parts = append(parts, "unreadable: "+pt.Problem)
	}
	line := fmt.Sprintf("  %s  %-*s  %-*s  %s", render.Timestamp(pt.Time), srcW, pt.Source, kindW, pt.Kind, strings.Join(parts, " "))
	if len(pt.Anomalies) > 0 {
		line += "  " + p.Paint(render.Red, strings.Join(pt.Anomalies, ","))
	}
	fmt.Fprintln(w, line)
}
