package commands

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/render/views"
	"github.com/kaasctl/kaasctl/repair"
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
// the closing notes.
func reportPrune(g *Globals, o pruneOptions, v *views.GroupsPruneView) error {
	if err := writePruneExport(g, o.export, v); err != nil {
		return err
	}
	for _, pg := range v.Groups {
		for _, w := range pg.Warnings {
			g.Warnf("group '%s': %s", volume.DisplayName(pg.Group), w)
		}
	}
	if o.export != "-" {
		if err := views.PrintPrune(g.Printer, v); err != nil {
			return err
		}
	}
	pruneClosingNote(g, o, v)
	return nil
}

// writePruneExport writes --export FILE: the JSON document for .json, else
// one CSV row a partition ("-": CSV on stdout, instead of the table).
func writePruneExport(g *Globals, name string, v *views.GroupsPruneView) error {
	if name == "" {
		return nil
	}
	if name == "-" {
		return views.WritePruneCSV(g.IO.Out, v)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("--export: %w", err)
	}
	if strings.HasSuffix(strings.ToLower(name), ".json") {
		err = render.WriteJSONStreamed(f, v, "groups")
	} else {
		err = views.WritePruneCSV(f, v)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--export %s: %w", name, err)
	}
	g.Notef("plan written to %s", name)
	return nil
}

// pruneClosingNote is the run's last line on stderr.
func pruneClosingNote(g *Globals, o pruneOptions, v *views.GroupsPruneView) {
	s := v.Summary
	switch {
	case !o.mode.execute:
		g.Notef("prune plan: %d of %s selected: %d file(s) to remove, %d to rewrite (%s), %d refused; %s",
			s.Selected, render.Plural(s.Scanned, "group", "groups"), s.Remove, s.Rewrite, render.Plural(s.Partitions, "partition", "partitions"), s.Refused, v.Generation.Assumes())
		g.Warnf("No action will be performed as the --execute option is missing: nothing was written. Rerun with --execute to apply this plan.")
	case s.Written > 0:
		g.Notef("prune done: %s written (%d partition(s) pruned), %d refused, %d failed; backups beside each file", render.Plural(s.Written, "group", "groups"), s.Partitions, s.Refused, s.Failed)
	default:
		g.Notef("prune: nothing was written")
	}
}
