package commands

import (
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/repair"
)

// readTimelineInput reads every source of the group's story
// (repair.ReadTimeline): the volume's when one is given.
func readTimelineInput(g *Globals, o groupsTimelineOptions) (inspect.TimelineInput, error) {
	r := repair.TimelineReading{Group: o.group, Since: o.since, Until: o.until, PageRecords: o.pageRecords, Journal: o.journal,
		Assignments: o.assignments, Logs: o.logs, HasVolume: g.HasVolume(), Now: g.Now(), Stdin: g.IO.In, Progress: g.Progress, Notes: g}
	if r.HasVolume {
		var err error
		if r.Layout, err = g.Layout(); err != nil {
			return inspect.TimelineInput{Group: o.group, Since: o.since, Until: o.until, PageRecords: o.pageRecords}, err
		}
		r.OutOfOrder = commitOrder(r.Layout.WithGeneration().Gen)
	}
	return repair.ReadTimeline(r)
}
