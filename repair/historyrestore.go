package repair

import (
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// HistoryRestore is a restore from history (offsets reset --to-history or
// --to-history-before-anomaly) as asked for, before any group is resolved.
type HistoryRestore struct {
	// JournalDir is the offsets journal ("": kaasctl's backups only).
	JournalDir string
	Layout     volume.Layout
	// Spec is ToHistory (the moment in Spec.Time) or ToHistoryBeforeAnomaly.
	Spec Spec
	// Since: before-anomaly only counts anomalies from then on (zero: all).
	Since time.Time
	// Now is the run's clock (zero: time.Now).
	Now time.Time
}

// GroupRestore is what a restore found for one group: the state it goes
// back to, and what the operator must know about it.
type GroupRestore struct {
	Target HistoryTarget
	// Warnings are the problems met reading the group's history.
	Warnings []string
	// Extra are partitions committed since that moment: a commit cannot
	// remove them, so they are kept as they are.
	Extra []string
	// MovedBack are the partitions the restore moves back (the group
	// re-processes their records).
	MovedBack []string
}

// ResolveGroupRestore finds the offsets group had at the moment asked
// for. A moment inside a gap of the journal is refused (exit 4) with the
// gap and the nearest sound times; Warnings are set even on error.
func ResolveGroupRestore(r HistoryRestore, group string) (GroupRestore, error) {
	src := HistorySource{JournalDir: r.JournalDir, Layout: r.Layout, Now: r.Now}
	if r.Spec.Kind == ToHistory {
		src.Since, src.Until = r.Spec.Time, r.Spec.Time
	} else {
		src.Since = r.Since
	}
	h, err := LoadGroupHistory(src, group)
	gr := GroupRestore{Warnings: h.Warnings}
	if err != nil {
		return gr, err
	}
	if r.Spec.Kind == ToHistory {
		if len(h.Points) == 0 {
			// Read up to the moment, the history holds nothing: what it
			// holds later says where it starts.
			if full, ferr := LoadGroupHistory(HistorySource{JournalDir: r.JournalDir, Layout: r.Layout, Now: r.Now}, group); ferr == nil && len(full.Points) > 0 {
				h.Points = full.Points[:1]
			}
		}
		gr.Target, err = TargetAt(h, r.Spec.Time)
	} else {
		gr.Target, err = TargetBeforeAnomaly(h, r.Since)
	}
	var gap *GapError
	if errors.As(err, &gap) {
		CompleteGap(src, gap)
		return gr, exit.Refusedf("%v", gap)
	}
	if err != nil {
		return gr, err
	}
	if err := checkRecordedDir(r.Layout, h, gr.Target); err != nil {
		return gr, err
	}
	gr.Extra = ExtraPartitions(r.Layout, gr.Target)
	gr.MovedBack = MovedBack(r.Layout, gr.Target)
	return gr, nil
}

// HistoryRestoreSpec is the from-file spec the one reset path plans and
// executes for the groups' targets, within scopes; a target that names no
// partition in scope is a usage error.
func HistoryRestoreSpec(targets []HistoryTarget, scopes []TopicScope, origin string) (Spec, []string, error) {
	out, notes, err := HistorySpec(targets, scopes, origin)
	if err != nil {
		return Spec{}, nil, exit.UsageErrorf("%v", err)
	}
	return out, notes, nil
}

// checkRecordedDir refuses a restore whose state a journal recorded for
// an offsets dir that is not one of this volume's: the journal names the
// file it followed (its segment header's dir), and another cluster's
// journal, or one recorded where the volume was mounted elsewhere, holds
// another group's offsets under the same name. Backups always lie beside
// this volume's files.
func checkRecordedDir(l volume.Layout, h GroupHistory, t HistoryTarget) error {
	if t.Point.Source != "journal" {
		return nil
	}
	dir := filepath.Dir(t.Point.File)
	if t.Point.File == "" {
		dir = ""
	}
	var here []string
	for _, d := range l.OffsetsDirs() {
		if dir != "" && volume.SameDir(dir, d.Path) {
			return nil
		}
		here = append(here, d.Path)
	}
	recorded := "no offsets dir (its segment header names none)"
	if dir != "" {
		recorded = "the offset file " + t.Point.File + " (offsets dir " + dir + ")"
	}
	return exit.Refusedf("group '%s': the journal %s recorded %s, which is not an offsets dir of this volume (%s): a journal of another cluster, or of this volume mounted at another path, would restore another group's offsets under the same name; nothing is restored. Pass the journal recorded for this volume, or run where the volume is mounted at the path the journal recorded",
		volume.DisplayName(h.Group), h.Journal, recorded, strings.Join(here, ", "))
}
