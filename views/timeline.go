package views

import (
	"fmt"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render"
)

// TimelineOutput is groups timeline's story: a table of events (every
// column in csv and wide), then the counts and the notes.
func TimelineOutput(tl *inspect.Timeline) render.Output {
	t := render.NewTable("TIME", "SOURCE", "EVENT", "AUTHOR", "DETAIL", "SEVERITY+", "EVIDENCE+", "WHY+")
	for _, e := range tl.Events {
		author, why := "", ""
		if a := e.Attribution; a != nil {
			author, why = a.Author, a.Who+": "+a.Why
			if !a.Certain {
				author += "?"
			}
		}
		t.Add(render.Timestamp(e.Time), e.Source, e.Kind, render.Dash(author), e.Summary, render.Dash(e.Severity), e.Evidence, render.Dash(why))
	}
	return render.Output{Data: tl, Items: tl.Events, Table: t, Human: func(p *render.Printer) error {
		fmt.Fprintf(p.Out, "group %s: %s\n", render.Clean(tl.Group), timelineSpan(tl))
		if len(tl.Events) > 0 {
			if err := p.Table(t); err != nil {
				return err
			}
		}
		return writeTimelineFooter(p, tl)
	}}
}

// timelineSpan is "12 events from … to …".
func timelineSpan(tl *inspect.Timeline) string {
	if len(tl.Events) == 0 {
		return "no event in range"
	}
	return fmt.Sprintf("%s from %s to %s", render.Plural(len(tl.Events), "event", "events"), render.Timestamp(tl.Events[0].Time), render.Timestamp(tl.Events[len(tl.Events)-1].Time))
}

// writeTimelineFooter is the commits by author, the sources read, and
// the notes.
func writeTimelineFooter(p *render.Printer, tl *inspect.Timeline) error {
	var lines []string
	if tl.Commits > 0 {
		parts := make([]string, 0, len(tl.ByAuthor))
		for _, a := range tl.ByAuthor {
			parts = append(parts, fmt.Sprintf("%s %d", a.Author, a.Commits))
		}
		lines = append(lines, "", fmt.Sprintf("%s (%s), %s", render.Plural(tl.Commits, "commit", "commits"), strings.Join(parts, ", "), render.Plural(tl.Rewinds, "rewind", "rewinds")))
	}
	lines = append(lines, "")
	for _, s := range tl.Sources {
		lines = append(lines, fmt.Sprintf("%-12s %s (%s)", s.Name, s.Read, render.Plural(s.Events, "event", "events")))
	}
	for _, n := range tl.Notes {
		lines = append(lines, p.Paint(render.Bold, "note: ")+n)
	}
	return render.Lines(p.Out, lines...)
}
