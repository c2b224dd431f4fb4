package views

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// PruneReport is how a prune run is reported: --export FILE ("-": CSV on
// stdout instead of the table) and whether it wrote (--execute).
type PruneReport struct {
	Export  string
	Execute bool
}

// ReportPrune prints the document (or the table) on p, the --export file,
// and the closing notes through g.
func ReportPrune(p *render.Printer, g render.Notes, o PruneReport, v *GroupsPruneView) error {
	if err := writePruneExport(p.Out, g, o.Export, v); err != nil {
		return err
	}
	for _, pg := range v.Groups {
		for _, w := range pg.Warnings {
			g.Warnf("group '%s': %s", volume.DisplayName(pg.Group), w)
		}
	}
	if o.Export != "-" {
		if err := PrintPrune(p, v); err != nil {
			return err
		}
	}
	pruneClosingNote(g, o, v)
	return nil
}

// writePruneExport writes --export FILE: the JSON document for .json, else
// one CSV row a partition ("-": CSV on stdout, instead of the table).
func writePruneExport(stdout io.Writer, g render.Notes, name string, v *GroupsPruneView) error {
	if name == "" {
		return nil
	}
	if name == "-" {
		return WritePruneCSV(stdout, v)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("--export: %w", err)
	}
	if strings.HasSuffix(strings.ToLower(name), ".json") {
		err = render.WriteJSONStreamed(f, v, "groups")
	} else {
		err = WritePruneCSV(f, v)
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
func pruneClosingNote(g render.Notes, o PruneReport, v *GroupsPruneView) {
	s := v.Summary
	switch {
	case !o.Execute:
		g.Notef("prune plan: %d of %s selected: %d file(s) to remove, %d to rewrite (%s), %d refused; %s",
			s.Selected, render.Plural(s.Scanned, "group", "groups"), s.Remove, s.Rewrite, render.Plural(s.Partitions, "partition", "partitions"), s.Refused, v.Generation.Assumes())
		g.Warnf("No action will be performed as the --execute option is missing: nothing was written. Rerun with --execute to apply this plan.")
	case s.Written > 0:
		g.Notef("prune done: %s written (%d partition(s) pruned), %d refused, %d failed; backups beside each file", render.Plural(s.Written, "group", "groups"), s.Partitions, s.Refused, s.Failed)
	default:
		g.Notef("prune: nothing was written")
	}
}

// ReportRestore prints groups prune --restore's document (or table) on p
// and tells the outcome through g; it returns the run's exit: an error
// when a file could not be restored, a refusal when one was refused.
func ReportRestore(p *render.Printer, g render.Notes, v *PruneRestoreView) error {
	if err := p.Print(RestoreOutput(v)); err != nil {
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
