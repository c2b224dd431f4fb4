package commands

import (
	"context"

	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

// runPruneRestore puts back the files a prune's rollback file holds:
// checked against the volume (the group's file here, as the prune left
// it), refused for a live group, written atomically and verified byte for
// byte.
func runPruneRestore(ctx context.Context, g *Globals, o pruneOptions) error {
	rb, err := repair.ReadRollbackFile(o.restore)
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
	return views.ReportRestore(g.Printer, g, v)
}
