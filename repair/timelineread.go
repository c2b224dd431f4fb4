package repair

import (
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/render"
)

// What 'groups timeline' reads, one function per source: the offsets
// journal and backups (LoadGroupHistory), the events journal, the
// assignment versions and logs (as takeover trace reads them), kaasctl's
// write log. A source that is not there adds nothing; the story's notes
// say what that leaves unknown.

// TimelineReading is what groups timeline reads a group's story with:
// the group, the window and the page threshold, the --journal DIR, the
// --assignments and --logs, the volume (HasVolume false: none) and the
// generation's commit order, the run's clock, its standard input and
// progress lines, and where its notes and warnings go.
type TimelineReading struct {
	Group        string
	Since, Until time.Time
	PageRecords  int64
	Journal      string
	Assignments  []string
	Logs         []string
	HasVolume    bool
	Layout       volume.Layout
	OutOfOrder   string
	Now          time.Time
	Stdin        io.Reader
	Progress     func(string, int64) *render.Progress
	Notes        render.Notes
}

// ReadTimeline reads every source of the group's story.
func ReadTimeline(r TimelineReading) (inspect.TimelineInput, error) {
	in := inspect.TimelineInput{Group: r.Group, Since: r.Since, Until: r.Until, PageRecords: r.PageRecords, OutOfOrder: r.OutOfOrder}
	backups, err := timelineHistory(r, &in)
	if err != nil {
		return in, err
	}
	timelineEvents(r, &in)
	timelineMoves(r, &in)
	if r.HasVolume {
		in.Writes = timelineWrites(r, backups)
	}
	return in, nil
}

// warnAll tells each warning.
func warnAll(n render.Notes, warnings []string) {
	for _, w := range warnings {
		n.Warnf("%s", w)
	}
}

// timelineHistory reads the group's offsets history (the journal's points,
// the backups' too, which are kaasctl's rewrites) into in, and returns
// the backups read.
func timelineHistory(r TimelineReading, in *inspect.TimelineInput) ([]string, error) {
	src := HistorySource{Layout: r.Layout, Now: r.Now}
	if r.Journal != "" {
		if _, err := watch.ResolveOffsetJournal(r.Journal); err == nil {
			src.JournalDir = r.Journal
		} else {
			r.Notes.Warnf("%v (the story has no commits)", err)
		}
	}
	if src.JournalDir == "" && !r.HasVolume {
		return nil, nil
	}
	h, err := LoadGroupHistory(src, r.Group)
	if err != nil {
		return nil, err
	}
	warnAll(r.Notes, h.Warnings)
	in.History, in.Journal = h.Points, h.Journal
	return h.Backups, nil
}

// timelineEvents reads the group's membership and conditions from the
// events journal.
func timelineEvents(r TimelineReading, in *inspect.TimelineInput) {
	if r.Journal == "" {
		return
	}
	dir := watch.ResolveEventJournal(r.Journal)
	if dir == "" {
		r.Notes.Notef("%s holds no events journal (%s/): the membership was not recorded (the exporter and watch --offsets record it with --journal and brokers)", r.Journal, watch.EventJournalSubdir)
		return
	}
	res, err := watch.ReadEventJournal(dir, watch.EventReadOptions{Group: r.Group})
	if err != nil {
		r.Notes.Warnf("%v", err)
		return
	}
	warnAll(r.Notes, res.Warnings)
	in.Events, in.EventsDir = res.Records, dir
}

// timelineMoves reads the assignment versions (the journal's, the
// --assignments, the live file) and the logs, and keeps the group's
// coordinator moves as takeover trace finds them.
func timelineMoves(r TimelineReading, in *inspect.TimelineInput) {
	paths := append([]string(nil), r.Assignments...)
	if r.Journal != "" {
		paths = append(paths, r.Journal)
	}
	if r.HasVolume {
		if _, err := os.Stat(r.Layout.AssignmentPath()); err == nil {
			paths = append(paths, r.Layout.AssignmentPath())
		}
	}
	var hist volume.HistoryResult
	var src inspect.TraceSources
	if len(paths) > 0 {
		hist, src = inspect.ReadTraceHistory(r.Notes, paths, nil)
	}
	logs, _ := inspect.ReadTraceLogs(r.Notes, r.Stdin, r.Progress, "", r.Logs, &src)
	if len(hist.Snapshots) == 0 && len(logs) == 0 {
		return
	}
	tr := inspect.BuildTrace(inspect.TraceInput{Snapshots: hist.Snapshots, Logs: logs, Groups: []string{r.Group}, Filter: []string{r.Group}})
	in.Moves, in.Versions, in.LogEntries = tr.Events, len(tr.Versions), len(logs)
}

// timelineWrites are kaasctl's writes of the group: its write log, and
// the backups no record of the log accounts for (written before the log
// was kept).
func timelineWrites(r TimelineReading, backups []string) []inspect.KaasctlWrite {
	recs, warns, err := ReadWriteLog(r.Layout, r.Group)
	if err != nil {
		r.Notes.Warnf("%v", err)
	}
	warnAll(r.Notes, warns)
	var out []inspect.KaasctlWrite
	for _, rec := range recs {
		w := inspect.KaasctlWrite{Time: rec.Time, Command: rec.Command, Method: rec.Method, By: rec.By, File: rec.File, Partitions: []inspect.Rewound{}}
		for _, p := range rec.Partitions {
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
func loggedNear(recs []WriteRecord, at time.Time) bool {
	for _, rec := range recs {
		if d := rec.Time.Sub(at); d > -5*time.Second && d < 5*time.Second {
			return true
		}
	}
	return false
}
