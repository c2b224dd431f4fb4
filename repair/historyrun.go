package repair

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// HistoryResetSpec finds each group's offsets at the moment req asks for
// (ResolveGroupRestore), tells g what each restore does, and returns the
// from-file spec (narrowed to scopes) the one reset path plans and
// executes.
func HistoryResetSpec(req HistoryRestore, groups []string, scopes []TopicScope, g render.Notes) (Spec, error) {
	if req.JournalDir == "" {
		g.Notef("no --journal: restoring from kaasctl's backups beside the offset files only")
	}
	var targets []HistoryTarget
	for _, group := range groups {
		gr, err := ResolveGroupRestore(req, group)
		for _, w := range gr.Warnings {
			g.Warnf("%s", w)
		}
		if err != nil {
			return Spec{}, err
		}
		noteGroupRestore(g, req.Spec, gr)
		targets = append(targets, gr.Target)
	}
	out, notes, err := HistoryRestoreSpec(targets, scopes, req.Spec.Origin)
	if err != nil {
		return Spec{}, err
	}
	for _, n := range notes {
		g.Warnf("%s", n)
	}
	return out, nil
}

// noteGroupRestore says what one group's restore goes back to and where
// that state comes from, and warns about partitions kept or moved back.
func noteGroupRestore(g render.Notes, spec Spec, gr GroupRestore) {
	t := gr.Target
	name := volume.DisplayName(t.Group)
	offsets := render.Plural(len(t.Offsets), "partition offset", "partition offsets")
	from := "journal"
	switch t.Point.Source {
	case "backup":
		from = "kaasctl's backup " + t.Point.File
	case "file":
		from = "the offset file as kaasctl's last rewrite left it, " + t.Point.File
	}
	if t.Anomaly != nil {
		g.Notef("group '%s': restoring the %s it had at %s (%s), right before the latest incident: %s", name, offsets, render.Timestamp(t.Point.Time), from, incidentText(t))
	} else {
		g.Notef("group '%s': restoring the %s it had at %s (last recorded at %s, %s)", name, offsets, render.Timestamp(spec.Time), render.Timestamp(t.Point.Time), from)
	}
	if len(gr.Extra) > 0 {
		g.Warnf("group '%s': %s committed since then (%s) kept as they are: a commit cannot remove partitions; use 'kaasctl offsets delete' if they must go", name, render.Plural(len(gr.Extra), "partition", "partitions"), strings.Join(gr.Extra, ", "))
	}
	if len(gr.MovedBack) > 0 {
		g.Warnf("group '%s': the restore moves %s back, so the group re-processes those records: %s (narrow it with --topic TOPIC:P to restore only the damaged partitions)", name, render.Plural(len(gr.MovedBack), "partition", "partitions"), strings.Join(gr.MovedBack, ", "))
	}
}

// incidentText is the incident a before-anomaly restore undoes: its first
// anomaly and when, the later ones in it, the earlier incidents left alone.
func incidentText(t HistoryTarget) string {
	what := t.Anomaly.Kind
	if t.Anomaly.Partition != "" {
		what += " of " + t.Anomaly.Partition
	}
	s := what + " at " + render.Timestamp(t.AnomalyTime)
	if t.Later > 0 {
		s += fmt.Sprintf("; %s in the same incident after it", render.Plural(t.Later, "more anomaly", "more anomalies"))
	}
	if t.EarlierIncidents > 0 {
		s += fmt.Sprintf("; %s before it left alone (name a moment with --to-history TIME to go further back)", render.Plural(t.EarlierIncidents, "earlier incident", "earlier incidents"))
	}
	return s
}

func errorsJoin(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// ExportRollbackFile writes --export-rollback FILE before anything is
// written: an existing FILE is refused unless overwrite. The file stays
// open: as each group is finished a comment line records it, so after an
// interruption the file says which groups the rollback concerns.
func ExportRollbackFile(name string, overwrite bool, plans []*GroupPlan) (*os.File, error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if overwrite {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(name, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, CheckRollbackTarget(name, false)
	}
	if err != nil {
		return nil, fmt.Errorf("--export-rollback: %w", err)
	}
	werr := ExportRollbackCSV(f, plans)
	if err := errorsJoin(werr, f.Sync()); err != nil {
		f.Close()
		return nil, fmt.Errorf("--export-rollback %s: %w", name, err)
	}
	return f, nil
}
