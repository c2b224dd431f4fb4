package commands

import (
	"os"
	"path/filepath"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/repair"
)

// What 'groups timeline' reads, one function per source: the offsets
// journal and backups (repair.LoadGroupHistory), the events journal, the
// assignment versions and logs (as takeover trace reads them), kaasctl's
// write log. A source that is not there adds nothing; the story's notes
// say what that leaves unknown.

// readTimelineInput reads every source of the group's story.
func readTimelineInput(g *Globals, o groupsTimelineOptions) (inspect.TimelineInput, error) {
	in := inspect.TimelineInput{Group: o.group, Since: o.since, Until: o.until, PageRecords: o.pageRecords}
	var l volume.Layout
	if g.HasVolume() {
		var err error
		if l, err = g.Layout(); err != nil {
			return in, err
		}
		in.OutOfOrder = commitOrder(l.WithGeneration().Gen)
	}
	backups, err := timelineHistory(g, o, l, &in)
	if err != nil {
		return in, err
	}
	timelineEvents(g, o, &in)
	timelineMoves(g, o, l, &in)
	if g.HasVolume() {
		in.Writes = timelineWrites(g, l, o.group, backups)
	}
	return in, nil
}

// timelineHistory reads the group's offsets history (the journal's points,
// the backups' too, which are kaasctl's rewrites) into in, and returns
// the backups read.
func timelineHistory(g *Globals, o groupsTimelineOptions, l volume.Layout, in *inspect.TimelineInput) ([]string, error) {
	src := repair.HistorySource{Layout: l, Now: g.Now()}
	if o.journal != "" {
		if _, err := watch.ResolveOffsetJournal(o.journal); err == nil {
			src.JournalDir = o.journal
		} else {
			g.Warnf("%v (the story has no commits)", err)
		}
	}
	if src.JournalDir == "" && !g.HasVolume() {
		return nil, nil
	}
	h, err := repair.LoadGroupHistory(src, o.group)
	if err != nil {
		return nil, err
	}
	g.WarnAll(h.Warnings)
	in.History, in.Journal = h.Points, h.Journal
	return h.Backups, nil
}

// timelineEvents reads the group's membership and conditions from the
// events journal.
func timelineEvents(g *Globals, o groupsTimelineOptions, in *inspect.TimelineInput) {
	if o.journal == "" {
		return
	}
	dir := watch.ResolveEventJournal(o.journal)
	if dir == "" {
		g.Notef("%s holds no events journal (%s/): the membership was not recorded (the exporter and watch --offsets record it with --journal and brokers)", o.journal, watch.EventJournalSubdir)
		return
	}
	res, err := watch.ReadEventJournal(dir, watch.EventReadOptions{Group: o.group})
	if err != nil {
		g.Warnf("%v", err)
		return
	}
	g.WarnAll(res.Warnings)
	in.Events, in.EventsDir = res.Records, dir
}

// timelineMoves reads the assignment versions (the journal's, the
// --assignments, the live file) and the logs, and keeps the group's
// coordinator moves as takeover trace finds them.
func timelineMoves(g *Globals, o groupsTimelineOptions, l volume.Layout, in *inspect.TimelineInput) {
	paths := append([]string(nil), o.assignments...)
	if o.journal != "" {
		paths = append(paths, o.journal)
	}
	if g.HasVolume() {
		if _, err := os.Stat(l.AssignmentPath()); err == nil {
			paths = append(paths, l.AssignmentPath())
		}
	}
	var hist volume.HistoryResult
	var src inspect.TraceSources
	if len(paths) > 0 {
		hist, src = inspect.ReadTraceHistory(g, paths, nil)
	}
	logs, _ := inspect.ReadTraceLogs(g, g.IO.In, g.Progress, "", o.logs, &src)
	if len(hist.Snapshots) == 0 && len(logs) == 0 {
		return
	}
	tr := inspect.BuildTrace(inspect.TraceInput{Snapshots: hist.Snapshots, Logs: logs, Groups: []string{o.group}, Filter: []string{o.group}})
	in.Moves, in.Versions, in.LogEntries = tr.Events, len(tr.Versions), len(logs)
}

// timelineWrites are kaasctl's writes of the group: its write log, and
// the backups no record of the log accounts for (written before the log
// was kept).
func timelineWrites(g *Globals, l volume.Layout, group string, backups []string) []inspect.KaasctlWrite {
	recs, warns, err := repair.ReadWriteLog(l, group)
	if err != nil {
		g.Warnf("%v", err)
	}
	g.WarnAll(warns)
	var out []inspect.KaasctlWrite
	for _, r := range recs {
		w := inspect.KaasctlWrite{Time: r.Time, Command: r.Command, Method: r.Method, By: r.By, File: r.File, Partitions: []inspect.Rewound{}}
		for _, p := range r.Partitions {
			w.Partitions = append(w.Partitions, inspect.Rewound{Partition: p.Partition, Before: p.Before, After: p.After})
		}
		out = append(out, w)
	}
	for _, b := range backups {
		at, ok := volume.BackupTime(filepath.Base(b))
		if !ok || loggedNear(recs, at) {
			continue
		}
		out = append(out, inspect.KaasctlWrite{Time: at, Command: "rewrite (the command is not recorded)", Method: "file", File: b, Backup: b, Partitions: []inspect.Rewound{}})
	}
	return out
}

// loggedNear reports whether the write log has a record within a few
// seconds of a backup's time (the same write).
func loggedNear(recs []repair.WriteRecord, at time.Time) bool {
	for _, r := range recs {
		if d := r.Time.Sub(at); d > -5*time.Second && d < 5*time.Second {
			return true
		}
	}
	return false
}
