package views

import (
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

// NoteRepair says what volume repair did (on the volume clusterDir): the
// files left alone, the changes made or planned, and, when no repair
// failed, the files it may not read and the conflicts that need a person.
func NoteRepair(g render.Notes, clusterDir string, rep *repair.RepairReport) {
	if rep.Skipped > 0 {
		g.Notef("%s left alone on purpose (action skip, with the reason)", render.Plural(rep.Skipped, "file", "files"))
	}
	switch {
	case rep.Changes == 0 && rep.Conflicts == 0 && rep.Denied == 0:
		g.Notef("nothing to repair in %s", clusterDir)
	case rep.DryRun && rep.Changes > 0:
		g.Warnf("dry-run: nothing was changed; rerun with --execute to make these %d changes (files set aside go to %s)", rep.Changes, rep.Quarantine)
	case !rep.DryRun && rep.Changes > rep.Failed:
		g.Notef("%d change(s) made; files set aside are in %s", rep.Changes-rep.Failed, rep.Quarantine)
	case !rep.DryRun && rep.Changes > 0:
		g.Notef("no change made: every planned repair failed (see RESULT)")
	}
	if rep.Failed > 0 {
		return
	}
	if rep.Denied > 0 {
		g.Warnf("%s kaasctl may not read: not judged, not moved; fix their permissions (see RESULT)", render.Plural(rep.Denied, "file", "files"))
	}
	if rep.Conflicts > 0 {
		g.Warnf("%d conflict(s) need a person: kaasctl does not choose between two different sets of offsets", rep.Conflicts)
	}
}
