package views

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

// GroupsPruneView is 'groups prune -o json': the plan (dry-run) or what
// was written, a group at a time.
type GroupsPruneView = repair.PruneReport

// PrintPrune prints a prune's plan or what it wrote on p: the document
// streamed group by group (json), or a row a partition.
func PrintPrune(p *render.Printer, v *GroupsPruneView) error {
	switch p.Format {
	case render.JSON:
		return render.WriteJSONStreamed(p.Out, v, "groups")
	case render.JSONL, render.YAML:
		return p.Print(render.Output{Data: v, Items: v.Groups})
	}
	out := render.Output{Data: v, Items: v.Groups, Table: pruneTable(v)}
	if len(v.Groups) == 0 {
		out.Human = func(*render.Printer) error { return nil }
	}
	return p.Print(out)
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

// pruneCSVHeader is the --export CSV's columns.
var pruneCSVHeader = []string{"group", "action", "topic", "partition", "offset", "selector", "refused", "reason", "result"}

// WritePruneCSV writes the plan as CSV, a row a partition (--export).
func WritePruneCSV(w io.Writer, v *GroupsPruneView) error {
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

// PruneRestoreView is 'groups prune --restore FILE -o json'.
type PruneRestoreView struct {
	Mode     string                `json:"mode"` // dry-run | execute
	Rollback string                `json:"rollback"`
	Planned  string                `json:"planned"` // when the prune was planned
	Groups   []*repair.RestoreItem `json:"groups"`
	Summary  RestoreSummary        `json:"summary"`
}

// RestoreSummary counts a restore's groups by outcome.
type RestoreSummary struct {
	Planned   int `json:"planned"`
	Restored  int `json:"restored"`
	Unchanged int `json:"unchanged"`
	Refused   int `json:"refused"`
	Failed    int `json:"failed"`
}

// RestoreOutput is a restore's table, a row per group, its summary
// counted from the outcomes.
func RestoreOutput(v *PruneRestoreView) render.Output {
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
	return render.Output{Data: v, Items: v.Groups, Table: t}
}
