package views

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

// ResetView is the machine document of offsets reset and offsets delete.
type ResetView struct {
	Command string              `json:"command"` // reset | delete
	Mode    string              `json:"mode"`    // dry-run | execute
	Path    string              `json:"path"`    // live | offline
	Spec    string              `json:"spec,omitempty"`
	Forced  bool                `json:"forced"`
	Groups  []*repair.GroupPlan `json:"groups"`
	Summary resetSummary        `json:"summary"`
	rows    []*repair.ResetRow
}

type resetSummary struct {
	Groups     int `json:"groups"`
	Partitions int `json:"partitions"`
	Changed    int `json:"changed"`
	Refused    int `json:"refused"`
	Skipped    int `json:"skipped"`
	Errors     int `json:"errors"`
	Failed     int `json:"failed"`
	Cached     int `json:"cached"`
}

// BuildResetView is the document of a write run of cmd (reset, delete):
// executed or a dry run, through the brokers (live) or offline, forced.
func BuildResetView(cmd string, execute, live, forced bool, spec string, plans []*repair.GroupPlan) *ResetView {
	v := &ResetView{Command: cmd, Mode: "dry-run", Path: "live", Spec: spec, Forced: forced, Groups: plans}
	if execute {
		v.Mode = "execute"
	}
	if !live {
		v.Path = "offline"
	}
	v.Summary.Groups = len(plans)
	n := 0
	for _, gp := range plans {
		n += len(gp.Rows)
	}
	v.rows = make([]*repair.ResetRow, 0, n)
	for _, gp := range plans {
		switch gp.Outcome {
		case repair.OutcomeRefused:
			v.Summary.Refused++
		case repair.OutcomeError:
			v.Summary.Errors++
		case repair.OutcomeSkipped:
			v.Summary.Skipped++
		}
		v.Summary.Failed += gp.Failed
		for i := range gp.Rows {
			r := &gp.Rows[i]
			v.Summary.Partitions++
			if r.Changed {
				v.Summary.Changed++
			}
			if r.Result == repair.ResultCached {
				v.Summary.Cached++
			}
			v.rows = append(v.rows, r)
		}
	}
	return v
}

func rowNotes(r repair.ResetRow, gp *repair.GroupPlan) string {
	var ns []string
	if gp != nil && r.Result == "" {
		switch gp.Outcome {
		case repair.OutcomeRefused:
			ns = append(ns, fmt.Sprintf("not written: group refused (state %s)", gp.State))
		case repair.OutcomeError:
			if r.Error == "" {
				ns = append(ns, "not written: the group cannot be planned")
			}
		}
	}
	if r.Error != "" {
		ns = append(ns, "error: "+r.Error)
	}
	ns = append(ns, r.Warnings...)
	if r.Detail != "" && r.Result != repair.ResultOK && r.Result != repair.ResultUnchanged {
		ns = append(ns, r.Detail)
	}
	return strings.Join(ns, "; ")
}

// PrintResetView prints a write run's plan (or what was written) on p.
func PrintResetView(p *render.Printer, v *ResetView) error {
	switch p.Format {
	case render.JSON:
		// Group by group: a plan of a million rows is never one document
		// in memory.
		return p.PrintStreamed(v, "groups")
	case render.JSONL, render.YAML:
		return p.Print(render.Output{Data: v, Items: v.rows})
	}
	out := render.Output{Data: v, Items: v.rows, Table: resetTable(v)}
	if len(v.rows) == 0 {
		// Nothing planned (every group refused, skipped or unplannable):
		// the errors on stderr say why; no bare header on stdout.
		out.Human = func(*render.Printer) error { return nil }
	}
	return p.Print(out)
}

// resetTable is the plan (or what was written) one row a partition.
func resetTable(v *ResetView) *render.TableData {
	executed := v.Mode == "execute"
	plan := map[string]*repair.GroupPlan{}
	for _, gp := range v.Groups {
		plan[gp.Group] = gp
	}
	hdr := []string{"GROUP", "TOPIC", "PARTITION", "CURRENT", "NEW", "LOG-START", "LOG-END"}
	if v.Command == "delete" {
		hdr = []string{"GROUP", "TOPIC", "PARTITION", "OFFSET", "ACTION"}
	}
	if executed {
		hdr = append(hdr, "RESULT")
	}
	t := render.NewTable(append(hdr, "NOTES")...)
	for _, r := range v.rows {
		var cells []string
		if v.Command == "delete" {
			action := "delete"
			if !r.Changed {
				action = "none"
			}
			cells = []string{volume.DisplayName(r.Group), r.Topic, strconv.Itoa(int(r.Partition)), render.OptInt(r.Current), action}
		} else {
			nw := strconv.FormatInt(r.New, 10)
			if r.Error != "" {
				nw = "-"
			}
			end := render.OptInt(r.LogEnd)
			if r.LogSource == volume.SourceManifest {
				end += " (manifest, unverified)"
			}
			cells = []string{volume.DisplayName(r.Group), r.Topic, strconv.Itoa(int(r.Partition)), render.OptInt(r.Current), nw, render.OptInt(r.LogStart), end}
		}
		if executed {
			cells = append(cells, render.Dash(r.Result))
		}
		t.Add(append(cells, rowNotes(*r, plan[r.Group]))...)
	}
	return t
}

func GroupOutcomeText(gp *repair.GroupPlan) string {
	switch gp.Outcome {
	case repair.OutcomeWritten:
		if gp.Failed > 0 {
			return fmt.Sprintf("written, but %d partition(s) failed or did not verify", gp.Failed)
		}
		how := "verified in the file"
		if gp.Method == "commit" {
			how = "committed, verified in the file and with OffsetFetch"
		}
		return fmt.Sprintf("written (%d partition(s) %s)", len(gp.Rows), how)
	case repair.OutcomeUnchanged:
		return "unchanged (already at the target)"
	case repair.OutcomeInterrupted:
		return "not written (interrupted)"
	case repair.OutcomeRefused:
		return "not written (refused)"
	case repair.OutcomeSkipped:
		return "not written (skipped)"
	case repair.OutcomeError:
		return "not written (cannot be planned)"
	}
	return gp.Outcome
}
