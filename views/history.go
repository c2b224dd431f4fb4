package views

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

// HistoryOutput is the history: a row per partition and point, or the
// partitions, anomalies, gaps (and with timeline every point) for people;
// flags are repeated in the restore command it prints.
func HistoryOutput(v *inspect.OffsetHistoryView, timeline bool, flags string) render.Output {
	t := render.NewTable("TIME", "GROUP", "PARTITION", "OFFSET", "PREVIOUS", "SOURCE", "KIND", "ANOMALY", "DETAIL")
	for _, r := range v.Rows {
		t.Add(render.Timestamp(r.Time), r.Group, r.Topic+"/"+strconv.Itoa(int(r.Partition)), render.OptInt(r.Offset), render.OptInt(r.Previous), r.Source, r.Kind, r.Anomaly, r.Detail)
	}
	return render.Output{Data: v, Items: v.Rows, Table: t, Human: func(p *render.Printer) error {
		return WriteHistoryHuman(p, v, timeline, flags)
	}}
}

// WriteHistoryHuman is offsets history for people: a header line, the
// partitions table, the anomalies with the restore command, the gaps and,
// with --timeline, every point.
func WriteHistoryHuman(p *render.Printer, v *inspect.OffsetHistoryView, timeline bool, flags string) error {
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
		fmt.Fprintf(w, "\nrestore the state before the latest incident (dry-run; add --execute):\n  kaasctl offsets reset --group %s --to-history-before-anomaly%s%s\n", render.ShellQuote(v.Group), journalArg(v.Journal), flags)
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
	return " --journal " + render.ShellQuote(dir)
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
