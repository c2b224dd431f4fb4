package commands

import (
	"context"
	"fmt"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

// PruneRestoreView is 'groups prune --restore FILE -o json'.
type PruneRestoreView struct {
	Mode     string                `json:"mode"` // dry-run | execute
	Rollback string                `json:"rollback"`
	Planned  string                `json:"planned"` // when the prune was planned
	Groups   []*repair.RestoreItem `json:"groups"`
	Summary  restoreSummary        `json:"summary"`
}

type restoreSummary struct {
	Planned   int `json:"planned"`
	Restored  int `json:"restored"`
	Unchanged int `json:"unchanged"`
	Refused   int `json:"refused"`
	Failed    int `json:"failed"`
}

// runPruneRestore puts back the files a prune's rollback file holds:
// checked against the volume (the group's file here, as the prune left
// it), refused for a live group, written atomically and verified byte for
// byte.
func runPruneRestore(ctx context.Context, g *Globals, o pruneOptions) error {
	f, _, err := safefs.OpenFollow(o.restore)
	if err != nil {
		return exit.UsageErrorf("--restore: %v", err)
	}
	rb, err := repair.ParseRollback(f, o.restore)
	f.Close()
	if err != nil {
		return err
	}
	l, cl, err := writeTarget(ctx, g, o.mode)
	if err != nil {
		return err
	}
	if cl != nil {
		defer cl.Close()
	}
	in := repair.Inputs{Layout: l, Client: cl, Now: g.Now(), Policy: o.mode.policy}
	items := repair.PlanRestore(in, rb)
	if o.mode.execute {
		repair.ApplyRestore(ctx, cl, in, items, g.Now)
	}
	v := &PruneRestoreView{Mode: "dry-run", Rollback: o.restore, Planned: render.Timestamp(rb.Header.Planned), Groups: items}
	if o.mode.execute {
		v.Mode = "execute"
	}
	return printRestore(g, v)
}

func printRestore(g *Globals, v *PruneRestoreView) error {
	s := &v.Summary
	t := render.NewTable("GROUP", "PRUNED", "OUTCOME", "DETAIL", "PATH+", "BACKUP+")
	for _, it := range v.Groups {
		switch it.Outcome {
		case repair.RestorePlanned:
			s.Planned++
		case repair.RestoreRestored:
			s.Restored++
		case repair.RestoreUnchanged:
			s.Unchanged++
		case repair.RestoreRefused:
			s.Refused++
		default:
			s.Failed++
		}
		t.Add(volume.DisplayName(it.Group), it.Action, it.Outcome, it.Detail, it.Path, it.Backup)
	}
	if v.Groups == nil {
		v.Groups = []*repair.RestoreItem{}
	}
	if err := g.Printer.Print(render.Output{Data: v, Items: v.Groups, Table: t}); err != nil {
		return err
	}
	if v.Mode == "dry-run" {
		g.Warnf("No action will be performed as the --execute option is missing: nothing was restored. Rerun with --execute to put %s back.", render.Plural(s.Planned, "file", "files"))
	}
	switch {
	case s.Failed > 0:
		return &exit.CodedError{Code: exit.Error, Err: fmt.Errorf("%d file(s) could not be restored; see DETAIL", s.Failed)}
	case s.Refused > 0:
		return exit.Refusedf("%d file(s) not restored: each says why (DETAIL)", s.Refused)
	}
	if v.Mode == "execute" {
		g.Notef("restore done: %d file(s) restored byte-identical, %d already as before", s.Restored, s.Unchanged)
	}
	return nil
}
