package commands

import (
	"context"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

// A prune's plan and writes are repair.PruneRun's; this file hands it the
// options and the run's notes, progress, clock and signal, and prints
// what it did.

// newPruneRun is the prune o asks over the volume l and the brokers cl
// (nil: offline).
func newPruneRun(ctx context.Context, g *Globals, o pruneOptions, l volume.Layout, cl *wire.Client) (*repair.PruneRun, error) {
	return repair.NewPruneRun(ctx, repair.PruneConfig{Layout: l, Client: cl, Ask: o.ask, Journal: o.journal, Picks: o.picks,
		MaxGroups: o.maxGroups, Execute: o.mode.execute, Policy: o.mode.policy, Rollback: o.rollback, OverwriteRollback: o.overwrite,
		Notes: g, Progress: func(label string, total int64) repair.ProgressLine { return g.Progress(label, total) },
		Now: g.Now, Flags: g.GivenFlags()})
}

// reportPrune prints the document (or the table), the --export file, and
// the closing notes (views.ReportPrune).
func reportPrune(g *Globals, o pruneOptions, v *views.GroupsPruneView) error {
	return views.ReportPrune(g.Printer, g, views.PruneReport{Export: o.export, Execute: o.mode.execute}, v)
}
