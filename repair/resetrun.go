package repair

import (
	"context"
	"io"
	"slices"
	"time"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/render"
)

// An offsets reset from what it asks: before the volume is touched, the
// --from-file plan read and held to Kafka's rules (PrepareReset); then
// the groups named, a restore from history turned into the from-file spec
// of the offsets then, and every group planned (PlanReset).

// ResetAsk is what offsets reset asks, as its flags give it.
type ResetAsk struct {
	Spec Spec
	// FromFile names the --from-file plan ("-": Stdin).
	FromFile string
	Stdin    io.Reader
	// AllTopics and Scopes are the partitions in scope.
	AllTopics bool
	Scopes    []TopicScope
	// Groups are named with --group (or every group: AllGroups); Multi:
	// several groups in play (--all-groups, or --group more than once).
	Groups    []string
	AllGroups bool
	Multi     bool
	// Journal and HistorySince are read by the restores from history.
	Journal      string
	HistorySince time.Time
}

// PrepareReset reads the --from-file plan into ask's spec (nothing for
// other specs) and applies Kafka's rules: every row is applied, so
// --topic and --all-topics are dropped with a warning; a file whose rows
// name no group goes with one --group only. It warns of what
// --allow-unverified-log-end lets through.
func PrepareReset(ask *ResetAsk, notes render.Notes, progress func(label string, total int64) *render.Progress) error {
	if ask.Spec.Kind == FromFile {
		fp, err := ReadFromFile(ask.FromFile, ask.Stdin, progress)
		if err != nil {
			return err
		}
		ask.Spec.File = fp
		if ask.AllTopics || len(ask.Scopes) > 0 {
			notes.Warnf("--from-file applies every row of the file; --topic and --all-topics are ignored with it (as kafka-consumer-groups.sh does)")
			ask.AllTopics, ask.Scopes = false, nil
		}
		if !fp.MultiGroup && ask.Multi {
			return exit.UsageErrorf("--from-file %s has topic,partition,offset rows, which name no group: with several groups kafka-consumer-groups.sh applies such a file to none of them, so kaasctl refuses. Give one --group, or use group,topic,partition,offset rows (what --export writes for several groups)", ask.FromFile)
		}
	}
	if ask.Spec.AllowUnverifiedLogEnd {
		notes.Warnf("%s: rows whose log end kaasctl could not verify are planned anyway and not clamped; manifest.json trails the log (kaas rewrites it only on takeover, roll and close)", UnverifiedFlag)
	}
	return nil
}

// PlanReset plans every group ask names over in, with a progress line
// over the partitions; it returns the plans and the spec as planned (a
// restore from history is planned as a from-file spec).
func PlanReset(ctx context.Context, in Inputs, ask ResetAsk, notes render.Notes, progress func(label string, total int64) *render.Progress) ([]*GroupPlan, Spec, error) {
	groups, err := WriteGroups(ctx, in.Layout, in.Client, notes, ask.Groups, ask.AllGroups)
	if err != nil {
		return nil, ask.Spec, err
	}
	if ask.Spec.Kind == ToGroup {
		// --all-groups never resets the source onto itself.
		groups = slices.DeleteFunc(groups, func(gr string) bool { return gr == ask.Spec.Source })
	}
	if ask.Spec.FromHistory() {
		req := HistoryRestore{JournalDir: ask.Journal, Layout: in.Layout, Spec: ask.Spec, Since: ask.HistorySince, Now: in.Now}
		if ask.Spec, err = HistoryResetSpec(req, groups, ask.Scopes, notes); err != nil {
			return nil, ask.Spec, err
		}
		ask.AllTopics, ask.Scopes = false, nil
	}
	prog := progress("planning (partitions)", int64(len(ask.Spec.File.Rows)))
	in.Progress = func(n int) { prog.Add(int64(n)) }
	plans, err := PlanGroups(ctx, in, ResetOptions{Groups: groups, AllTopics: ask.AllTopics, Scopes: ask.Scopes, Spec: ask.Spec})
	prog.Done()
	return plans, ask.Spec, err
}
