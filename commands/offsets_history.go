package commands

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

func init() {
	registerSub("offsets", offsetsUsage, func() *cli.Command {
		return &cli.Command{
			Name:      "history",
			Usage:     "the timeline of a group's committed offsets per partition, with anomalies marked (from an offsets journal and kaasctl's backups)",
			ArgsUsage: "GROUP",
			UsageText: "kaasctl offsets history GROUP --journal DIR [--since TIME] [--until TIME] [--partition orders/0]... [--timeline]\n" +
				"kaasctl offsets history GROUP --journal DIR -o json|jsonl|csv",
			Description: "Reads the offsets journal that 'kaasctl watch --offsets --journal DIR' or 'kaasctl exporter --journal\n" +
				"DIR' records (DIR or DIR/offsets) and the backups kaasctl keeps beside every offset file it rewrote\n" +
				"(<file>.kaasctl-bak-<time>), and shows, per partition, how the group's committed offset moved:\n" +
				"first and last offset, changes, anomalies (REWIND: moved back, VANISHED: partition gone from the\n" +
				"file, PLAIN_MAP, CORRUPT, EMPTIED) and, on a terminal, a progress sparkline. --timeline lists every\n" +
				"recorded point.\n\n" +
				"-o csv and -o jsonl print one row per partition per point (time, partition, offset, previous,\n" +
				"source, kind, anomaly); -o json the whole document (see 'kaasctl help formats').\n\n" +
				"To go back to a moment: kaasctl offsets reset --group GROUP --to-history TIME --journal DIR\n" +
				"--data-dir DATA -b BROKER (or --to-history-before-anomaly: the last good state before the most\n" +
				"recent incident), dry-run first, --execute to apply; the table prints that command with the flags\n" +
				"given here. Anomalies are marked from the journal and between kaasctl's backups alike. A gap in\n" +
				"the journal (a record lost or unreadable) is listed; restores to a moment inside one are refused.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "journal", Aliases: []string{"j"}, Usage: "the offsets journal `DIR` recorded by 'watch --offsets --journal DIR' or 'exporter --journal DIR' (without it: kaasctl's backups only)"},
				&cli.StringFlag{Name: "since", Usage: "from `TIME` (" + timeUsage + ")"},
				&cli.StringFlag{Name: "until", Usage: "up to `TIME` (same forms as --since)"},
				&cli.GenericFlag{Name: "partition", Aliases: []string{"p"}, Value: &repeatedFlag{}, Usage: "only `TOPIC/P` (or TOPIC:0,2, or TOPIC; repeatable)"},
				&cli.BoolFlag{Name: "timeline", Usage: "also list every recorded point (table output)"},
			},
			Action: runOffsetsHistory,
		}
	})
}

// offsetsHistoryView is the machine document of offsets history.
type offsetsHistoryView struct {
	Group   string     `json:"group"`
	Journal string     `json:"journal"`
	Backups []string   `json:"backups"`
	Since   *time.Time `json:"since,omitempty"`
	Until   *time.Time `json:"until,omitempty"`
	// First and Last are the times of the first and last point.
	First      *time.Time         `json:"first,omitempty"`
	Last       *time.Time         `json:"last,omitempty"`
	Partitions []historyPartition `json:"partitions"`
	Points     []historyPoint     `json:"points"`
	Anomalies  []historyAnomaly   `json:"anomalies"`
	// Gaps are where the journal lost or cannot read records: the state
	// from Time until the next full snapshot (Until; null: none yet) is
	// not known, and restores to a moment in it are refused.
	Gaps     []historyGap `json:"gaps"`
	Warnings []string     `json:"warnings"`
	rows     []historyRow
}

type historyGap struct {
	Time    time.Time  `json:"time"`
	Until   *time.Time `json:"until"`
	Problem string     `json:"problem"`
}

type historyPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// First and Last are the first and last committed offsets seen (null
	// when the partition is not in the file then).
	First     *int64 `json:"first"`
	Last      *int64 `json:"last"`
	Min       int64  `json:"min"`
	Max       int64  `json:"max"`
	Changes   int    `json:"changes"`
	Anomalies int    `json:"anomalies"`
	spark     string
}

type historyPoint struct {
	Time      time.Time        `json:"time"`
	Source    string           `json:"source"` // journal | backup | file
	Kind      string           `json:"kind"`   // snapshot | change | corrupt | missing | before-rewrite
	File      string           `json:"file"`
	Format    string           `json:"format"`
	Changed   map[string]int64 `json:"changed"`
	Removed   []string         `json:"removed"`
	Problem   string           `json:"problem,omitempty"`
	Anomalies []string         `json:"anomalies"` // kinds, as flagged at this point
	// Offsets is the group's full committed set after this point.
	Offsets map[string]int64 `json:"offsets"`
	// Unsound: rebuilt across a gap in the journal (see gaps).
	Unsound bool `json:"unsound,omitempty"`
}

type historyAnomaly struct {
	Time      time.Time `json:"time"`
	Kind      string    `json:"kind"`
	Partition string    `json:"partition,omitempty"`
	Before    int64     `json:"before"`
	After     int64     `json:"after"`
	Detail    string    `json:"detail"`
}

// historyRow is one partition at one point (-o csv, -o jsonl).
type historyRow struct {
	Time      time.Time `json:"time"`
	Group     string    `json:"group"`
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	Offset    *int64    `json:"offset"`   // null: removed
	Previous  *int64    `json:"previous"` // null: not in the file before
	Source    string    `json:"source"`
	Kind      string    `json:"kind"`
	Anomaly   string    `json:"anomaly"`
	Detail    string    `json:"detail"`
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

func runOffsetsHistory(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.NArg() != 1 {
		return exit.UsageErrorf("offsets history takes one GROUP (got %d arguments)", c.NArg())
	}
	group := c.Args().First()
	now := g.Now()
	since, err := parseWhen("since", c.String("since"), now, g)
	if err != nil {
		return err
	}
	until, err := parseWhen("until", c.String("until"), now, g)
	if err != nil {
		return err
	}
	if !since.IsZero() && !until.IsZero() && until.Before(since) {
		return exit.UsageErrorf("--until (%s) is before --since (%s)", until.Format(time.RFC3339), since.Format(time.RFC3339))
	}
	keep, err := partitionFilter(repeated(c, "partition"))
	if err != nil {
		return err
	}
	var l volume.Layout
	if g.HasVolume() {
		if l, err = g.Layout(); err != nil {
			return err
		}
	}
	if c.String("journal") == "" && !g.HasVolume() {
		return exit.UsageErrorf("nothing to read: give --journal DIR (recorded by 'kaasctl watch --offsets --journal DIR' or 'kaasctl exporter --journal DIR') and/or --data-dir for kaasctl's backups")
	}
	h, err := repair.LoadGroupHistory(repair.HistorySource{JournalDir: c.String("journal"), Layout: l, Since: since, Until: until}, group)
	if err != nil {
		return err
	}
	for _, w := range h.Warnings {
		g.Warnf("%s", w)
	}
	v := buildHistoryView(h, keep)
	if !since.IsZero() {
		v.Since = &since
	}
	if !until.IsZero() {
		v.Until = &until
	}
	if len(h.Points) == 0 {
		g.Warnf("group '%s': no history in range (journal %s, %d backups)", volume.DisplayName(group), orNone(v.Journal), len(v.Backups))
	}
	t := render.NewTable("TIME", "GROUP", "PARTITION", "OFFSET", "PREVIOUS", "SOURCE", "KIND", "ANOMALY", "DETAIL")
	for _, r := range v.rows {
		t.Add(render.Timestamp(r.Time), r.Group, r.Topic+"/"+strconv.Itoa(int(r.Partition)), render.OptInt(r.Offset), render.OptInt(r.Previous), r.Source, r.Kind, r.Anomaly, r.Detail)
	}
	timeline := c.Bool("timeline")
	return g.Printer.Print(render.Output{Data: v, Items: v.rows, Table: t, Human: func(p *render.Printer) error {
		return writeHistoryHuman(p, v, timeline, g.GivenFlags())
	}})
}

func buildHistoryView(h repair.GroupHistory, keep func(string) bool) *offsetsHistoryView {
	v := &offsetsHistoryView{Group: h.Group, Journal: h.Journal, Backups: h.Backups, Warnings: h.Warnings,
		Partitions: []historyPartition{}, Points: []historyPoint{}, Anomalies: []historyAnomaly{}, Gaps: []historyGap{}, rows: []historyRow{}}
	if len(h.Points) > 0 {
		f, l := h.Points[0].Time, h.Points[len(h.Points)-1].Time
		v.First, v.Last = &f, &l
	}
	type series struct {
		hp     *historyPartition
		times  []time.Time
		vals   []*int64
		marked []bool
	}
	parts := map[string]*series{}
	get := func(k string) *series {
		s := parts[k]
		if s == nil {
			t, p, _ := volume.SplitOffsetKey(k)
			s = &series{hp: &historyPartition{Topic: t, Partition: p}}
			parts[k] = s
		}
		return s
	}
	var prev map[string]int64
	for i, pt := range h.Points {
		hp := historyPoint{Time: pt.Time, Source: pt.Source, Kind: pt.Kind, File: pt.File, Format: pt.Format,
			Changed: filterOffsets(pt.Changed, keep), Removed: []string{}, Problem: pt.Problem, Anomalies: []string{}, Offsets: filterOffsets(pt.Offsets, keep), Unsound: pt.Unsound}
		if pt.Kind == watch.RecGap {
			gp := historyGap{Time: pt.Time, Problem: pt.Problem}
			for _, later := range h.Points[i+1:] {
				if !later.Unsound {
					t := later.Time
					gp.Until = &t
					break
				}
			}
			v.Gaps = append(v.Gaps, gp)
			v.Points = append(v.Points, hp)
			continue // the offsets did not move: the state is not known
		}
		for _, k := range pt.Removed {
			if keep(k) {
				hp.Removed = append(hp.Removed, k)
			}
		}
		anom := map[string]watch.JournalAnomaly{}
		for _, a := range pt.Anomalies {
			if a.Partition != "" && !keep(a.Partition) {
				continue
			}
			hp.Anomalies = append(hp.Anomalies, a.Kind)
			v.Anomalies = append(v.Anomalies, historyAnomaly{Time: pt.Time, Kind: a.Kind, Partition: a.Partition, Before: a.Before, After: a.After, Detail: a.Detail})
			if a.Partition != "" {
				anom[a.Partition] = a
			}
		}
		v.Points = append(v.Points, hp)
		// Rows: every partition whose offset changed, appeared or vanished
		// at this point (a backup's full copy shows as changes against the
		// state before it).
		keys := map[string]bool{}
		for k := range pt.Offsets {
			if o, ok := prev[k]; !ok || o != pt.Offsets[k] {
				keys[k] = true
			}
		}
		for k := range prev {
			if _, ok := pt.Offsets[k]; !ok {
				keys[k] = true
			}
		}
		for k := range anom {
			keys[k] = true
		}
		ks := make([]string, 0, len(keys))
		for k := range keys {
			if keep(k) {
				ks = append(ks, k)
			}
		}
		slices.SortFunc(ks, compareOffsetKeys)
		for _, k := range ks {
			s := get(k)
			row := historyRow{Time: pt.Time, Group: h.Group, Topic: s.hp.Topic, Partition: s.hp.Partition, Source: pt.Source, Kind: pt.Kind}
			if o, ok := pt.Offsets[k]; ok {
				row.Offset = &o
			}
			if o, ok := prev[k]; ok {
				row.Previous = &o
			}
			if a, ok := anom[k]; ok {
				row.Anomaly, row.Detail = a.Kind, a.Detail
				s.hp.Anomalies++
			}
			v.rows = append(v.rows, row)
			s.hp.Changes++
			s.times = append(s.times, pt.Time)
			s.vals = append(s.vals, row.Offset)
			s.marked = append(s.marked, row.Anomaly != "")
		}
		prev = pt.Offsets
	}
	ks := make([]string, 0, len(parts))
	for k := range parts {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, compareOffsetKeys)
	var t0, t1 time.Time
	if v.First != nil {
		t0, t1 = *v.First, *v.Last
	}
	for _, k := range ks {
		s := parts[k]
		first := true
		for _, o := range s.vals {
			if o == nil {
				continue
			}
			if s.hp.First == nil {
				x := *o
				s.hp.First = &x
			}
			if first || *o < s.hp.Min {
				s.hp.Min = *o
			}
			if first || *o > s.hp.Max {
				s.hp.Max = *o
			}
			first = false
		}
		if n := len(s.vals); n > 0 && s.vals[n-1] != nil {
			x := *s.vals[n-1]
			s.hp.Last = &x
		}
		s.hp.spark = render.Sparkline(s.times, s.vals, s.marked, t0, t1, 24)
		v.Partitions = append(v.Partitions, *s.hp)
	}
	return v
}

func filterOffsets(m map[string]int64, keep func(string) bool) map[string]int64 {
	out := map[string]int64{}
	for k, o := range m {
		if keep(k) {
			out[k] = o
		}
	}
	return out
}

func writeHistoryHuman(p *render.Printer, v *offsetsHistoryView, timeline bool, flags string) error {
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
	hdr := []string{"PARTITION", "FIRST", "LAST", "MIN", "MAX", "CHANGES", "ANOMALIES"}
	if p.TTY {
		hdr = append(hdr, "PROGRESS")
	}
	t := render.NewTable(hdr...)
	for _, hp := range v.Partitions {
		an := strconv.Itoa(hp.Anomalies)
		if hp.Anomalies > 0 {
			an = p.Paint(render.Red, an)
		}
		cells := []string{hp.Topic + "/" + strconv.Itoa(int(hp.Partition)), render.OptInt(hp.First), render.OptInt(hp.Last),
			strconv.FormatInt(hp.Min, 10), strconv.FormatInt(hp.Max, 10), strconv.Itoa(hp.Changes), an}
		if p.TTY {
			cells = append(cells, hp.spark)
		}
		t.Add(cells...)
	}
	plain := *p
	plain.TTY = false // aligned text: the sparkline cells stay one column
	if err := plain.Table(t); err != nil {
		return err
	}
	if len(v.Anomalies) > 0 {
		fmt.Fprintf(w, "\n%s\n", p.Paint(render.Bold, render.Plural(len(v.Anomalies), "anomaly", "anomalies")))
		for _, a := range v.Anomalies {
			fmt.Fprintf(w, "  %s  %s  %s\n", render.Timestamp(a.Time), p.Paint(render.Red, render.Pad(a.Kind, 9)), a.Detail)
		}
		fmt.Fprintf(w, "\nrestore the state before the latest incident (dry-run; add --execute):\n  kaasctl offsets reset --group %s --to-history-before-anomaly%s%s\n", shellQuote(v.Group), journalArg(v.Journal), flags)
	}
	if len(v.Gaps) > 0 {
		fmt.Fprintf(w, "\n%s\n", p.Paint(render.Bold, render.Plural(len(v.Gaps), "gap in the journal", "gaps in the journal")))
		for _, gp := range v.Gaps {
			until := "no full snapshot after it yet"
			if gp.Until != nil {
				until = "until the full snapshot at " + render.Timestamp(*gp.Until)
			}
			fmt.Fprintf(w, "  %s  %s  %s: the offsets are not known (records are deltas), and restores to a moment in it are refused\n", render.Timestamp(gp.Time), p.Paint(render.Red, render.Pad("GAP", 9)), until)
			fmt.Fprintf(w, "      %s\n", render.Clean(gp.Problem))
		}
	}
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

func journalArg(dir string) string {
	if dir == "" {
		return ""
	}
	return " --journal " + shellQuote(dir)
}

// writeTimelinePoint writes one point of --timeline, its source and kind
// padded to the widest of the timeline's.
func writeTimelinePoint(p *render.Printer, w io.Writer, pt historyPoint, srcW, kindW int) {
	var parts []string
	for _, k := range sortedOffsetKeys(pt.Changed) {
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
