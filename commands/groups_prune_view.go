package commands

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// GroupsPruneView is 'groups prune -o json': the plan (dry-run) or what
// was written, a group at a time.
type GroupsPruneView struct {
	Mode string `json:"mode"` // dry-run | execute
	// Path: live (the brokers were asked) or offline.
	Path       string                `json:"path"`
	Generation volume.GenerationInfo `json:"generation"`
	OffsetsDir string                `json:"offsetsDir"`
	Journal    string                `json:"journal,omitempty"`
	Selectors  []string              `json:"selectors"`
	MinAge     string                `json:"minAge,omitempty"`
	AgeFrom    string                `json:"ageFrom,omitempty"`
	MaxGroups  int                   `json:"maxGroups"`
	Rollback   string                `json:"rollback,omitempty"`
	Summary    pruneSummary          `json:"summary"`
	Groups     []*inspect.PruneGroup `json:"groups"`
}

// pruneSummary counts the plan and what was done.
type pruneSummary struct {
	// Scanned: groups read; Selected: groups some selector took; Remove
	// and Rewrite: the groups the plan writes, by action; Refused: groups
	// with something selected but refused; Partitions: the partitions that
	// go; RefusedPartitions those kept although selected.
	Scanned           int `json:"scanned"`
	Selected          int `json:"selected"`
	Remove            int `json:"remove"`
	Rewrite           int `json:"rewrite"`
	Refused           int `json:"refused"`
	Partitions        int `json:"partitions"`
	RefusedPartitions int `json:"refusedPartitions"`
	// After --execute.
	Written     int `json:"written"`
	Failed      int `json:"failed"`
	Cached      int `json:"cached"`
	StillListed int `json:"stillListed"`
	Interrupted int `json:"interrupted"`
}

// view is the run's document.
func (r *pruneRun) view() *GroupsPruneView {
	v := &GroupsPruneView{Mode: "dry-run", Path: "live", Generation: r.gen, MaxGroups: r.o.maxGroups, Rollback: r.o.rollback, Groups: r.groups, Selectors: r.o.ask.Selectors()}
	if r.o.mode.execute {
		v.Mode = "execute"
	}
	if r.cl == nil {
		v.Path = "offline"
	}
	if v.Groups == nil {
		v.Groups = []*inspect.PruneGroup{}
	}
	v.OffsetsDir, _ = r.l.LiveOffsetsDir()
	if r.journal != nil {
		v.Journal = r.journal.Dir
	}
	if r.o.ask.Empty {
		v.MinAge, v.AgeFrom = r.o.ask.MinAge.String(), r.o.ask.AgeFrom
	}
	s := &v.Summary
	s.Scanned, s.Selected = r.scanned, len(r.groups)
	for _, pg := range r.groups {
		switch {
		case !pg.Writes():
			s.Refused++
		case pg.Action == inspect.PruneRemove:
			s.Remove++
		default:
			s.Rewrite++
		}
		if pg.Refused == "" {
			s.RefusedPartitions += pg.Refusals()
		} else {
			s.RefusedPartitions += len(pg.Rows)
		}
		if pg.Writes() {
			s.Partitions += pg.PrunedRows()
		}
	}
	a := r.applied
	s.Written, s.Failed, s.Cached, s.Interrupted, s.StillListed = a.written, a.failed, a.cached, a.interrupted, len(r.stillListed)
	return v
}

// report prints the document (or the table), the --export file, and the
// closing notes.
func (r *pruneRun) report() error {
	v := r.view()
	if err := r.writeExport(v); err != nil {
		return err
	}
	for _, pg := range r.groups {
		for _, w := range pg.Warnings {
			r.g.Warnf("group '%s': %s", volume.DisplayName(pg.Group), w)
		}
	}
	if r.o.export != "-" {
		if err := r.print(v); err != nil {
			return err
		}
	}
	r.closingNote(v)
	return nil
}

func (r *pruneRun) print(v *GroupsPruneView) error {
	switch r.g.Printer.Format {
	case render.JSON:
		return render.WriteJSONStreamed(r.g.Printer.Out, v, "groups")
	case render.JSONL, render.YAML:
		return r.g.Printer.Print(render.Output{Data: v, Items: v.Groups})
	}
	out := render.Output{Data: v, Items: v.Groups, Table: pruneTable(v)}
	if len(v.Groups) == 0 {
		out.Human = func(*render.Printer) error { return nil }
	}
	return r.g.Printer.Print(out)
}

// pruneTable is one row a partition (a group with an empty file, one
// row); the group's reason on its first row.
func pruneTable(v *GroupsPruneView) *render.TableData {
	executed := v.Mode == "execute"
	hdr := []string{"GROUP", "ACTION", "TOPIC", "PARTITION", "OFFSET", "SELECTOR"}
	if executed {
		hdr = append(hdr, "RESULT")
	}
	t := render.NewTable(append(hdr, "WHY", "DETAIL+")...)
	for _, pg := range v.Groups {
		rows := pg.Rows
		if len(rows) == 0 {
			rows = []inspect.PruneRow{{Topic: "-", Partition: -1, Offset: -1, Selector: pg.Selector}}
		}
		for i, row := range rows {
			n := row.Notes()
			cells := []string{volume.DisplayName(pg.Group), pruneActionCell(pg, n), row.Topic, partCell(row.Partition), partCell64(row.Offset), row.Selector}
			if executed {
				cells = append(cells, render.Dash(n.Result))
			}
			cells = append(cells, pruneWhy(pg, n, i == 0), n.Detail)
			t.Add(cells...)
		}
	}
	return t
}

func pruneActionCell(pg *inspect.PruneGroup, row inspect.PruneRowNotes) string {
	switch {
	case pg.Refused != "" || row.Refused != "":
		return "refused"
	case pg.Action == inspect.PruneRemove:
		return "remove file"
	}
	return "delete"
}

// pruneWhy is a row's explanation: its refusal, else its reason (a
// whole group's reason on its first row).
func pruneWhy(pg *inspect.PruneGroup, row inspect.PruneRowNotes, first bool) string {
	var parts []string
	if first && pg.Refused != "" {
		parts = append(parts, "REFUSED: "+pg.Refused)
	}
	if row.Refused != "" {
		parts = append(parts, "REFUSED: "+row.Refused)
	}
	if first && pg.Reason != "" {
		parts = append(parts, pg.Reason)
	}
	if row.Reason != "" && (pg.Selector == "" || first) {
		parts = append(parts, row.Reason)
	}
	return strings.Join(parts, "; ")
}

func partCell(p int32) string {
	if p < 0 {
		return "-"
	}
	return strconv.Itoa(int(p))
}

func partCell64(o int64) string {
	if o < 0 {
		return "-"
	}
	return strconv.FormatInt(o, 10)
}

// writeExport writes --export FILE: the JSON document for .json, else one
// CSV row a partition ("-": CSV on stdout, instead of the table).
func (r *pruneRun) writeExport(v *GroupsPruneView) error {
	name := r.o.export
	if name == "" {
		return nil
	}
	if name == "-" {
		return writePruneCSV(r.g.IO.Out, v)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("--export: %w", err)
	}
	if strings.HasSuffix(strings.ToLower(name), ".json") {
		err = render.WriteJSONStreamed(f, v, "groups")
	} else {
		err = writePruneCSV(f, v)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--export %s: %w", name, err)
	}
	r.g.Notef("plan written to %s", name)
	return nil
}

// pruneCSVHeader is the --export CSV's columns.
var pruneCSVHeader = []string{"group", "action", "topic", "partition", "offset", "selector", "refused", "reason", "result"}

func writePruneCSV(w io.Writer, v *GroupsPruneView) error {
	cw := csv.NewWriter(w)
	cw.Write(pruneCSVHeader)
	for _, pg := range v.Groups {
		for _, r := range pg.Rows {
			row := r.Notes()
			refused := row.Refused
			if pg.Refused != "" {
				refused = pg.Refused
			}
			reason := row.Reason
			if pg.Reason != "" && reason != "" {
				reason = pg.Reason + "; " + reason
			} else if pg.Reason != "" {
				reason = pg.Reason
			}
			cw.Write([]string{pg.Group, pg.Action, r.Topic, strconv.Itoa(int(r.Partition)), strconv.FormatInt(r.Offset, 10), r.Selector, refused, reason, row.Result})
		}
	}
	cw.Flush()
	return cw.Error()
}

// closingNote is the run's last line on stderr.
func (r *pruneRun) closingNote(v *GroupsPruneView) {
	s := v.Summary
	switch {
	case !r.o.mode.execute:
		r.g.Notef("prune plan: %d of %s selected: %d file(s) to remove, %d to rewrite (%s), %d refused; %s",
			s.Selected, render.Plural(s.Scanned, "group", "groups"), s.Remove, s.Rewrite, render.Plural(s.Partitions, "partition", "partitions"), s.Refused, r.gen.Assumes())
		r.g.Warnf("No action will be performed as the --execute option is missing: nothing was written. Rerun with --execute to apply this plan.")
	case s.Written > 0:
		r.g.Notef("prune done: %s written (%d partition(s) pruned), %d refused, %d failed; backups beside each file", render.Plural(s.Written, "group", "groups"), s.Partitions, s.Refused, s.Failed)
	default:
		r.g.Notef("prune: nothing was written")
	}
}
