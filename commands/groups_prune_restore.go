package commands

import (
	"context"
	"fmt"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/render/views"
	"github.com/kaasctl/kaasctl/repair"
)

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
	v := &views.PruneRestoreView{Mode: "dry-run", Rollback: o.restore, Planned: render.Timestamp(rb.Header.Planned), Groups: items}
	if o.mode.execute {
		v.Mode = "execute"
	}
	return printRestore(g, v)
}

func printRestore(g *Globals, v *views.PruneRestoreView) error {
	if err := g.Printer.Print(views.RestoreOutput(v)); err != nil {
		return err
	}
	s := v.Summary
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
