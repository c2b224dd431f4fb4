package views

import (
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

// NoteMigration says, before volume migrate's actions, the generation the
// run assumes and when there is nothing to migrate.
func NoteMigration(g render.Notes, rep *repair.MigrateReport) {
	g.Notef("%s", rep.Generation.Summary())
	if rep.NothingToDo {
		g.Notef("nothing to migrate: %s holds no group files (already migrated, or never used)", rep.Source)
	}
}

// NoteMigrated says, after the actions, what a run that was neither refused
// nor failed did or would do.
func NoteMigrated(g render.Notes, rep *repair.MigrateReport) {
	if rep.Refused != "" || rep.Failed > 0 {
		return
	}
	switch {
	case rep.DryRun && rep.Changes > 0:
		g.Warnf("dry-run: nothing was changed; stop every old broker, then rerun with --execute (source files go to %s)", rep.Backup)
	case !rep.DryRun && rep.Changes > 0:
		g.Notef("migrated: offsets now in %s (sources kept in %s); start the 0.2.18 brokers, then check with 'kaasctl volume check'", rep.Target, rep.Backup)
	}
}
