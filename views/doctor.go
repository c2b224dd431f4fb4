package views

import (
	"fmt"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// DoctorView is the machine document of 'doctor'.
type DoctorView struct {
	inspect.DoctorReport
	Sources GroupsSourcesView `json:"sources"`
}

// Report finishes rep and shows its findings at minSeverity or above,
// their fixes' commands with the run's flags (so they run as printed).
func (v *DoctorView) Report(rep *inspect.DoctorReport, minSeverity volume.Severity, flags string) {
	rep.Finish()
	v.DoctorReport = *rep
	v.Findings = rep.AtLeast(minSeverity)
	for i := range v.Findings { // the fixes' commands run as printed
		v.Findings[i].Fix = inspect.FixWithFlags(v.Findings[i].Fix, flags)
	}
}

// DoctorOutput is the report: findings as a table, or in human form
// grouped by severity with their fixes.
func DoctorOutput(v *DoctorView) render.Output {
	t := render.NewTable("SEVERITY", "CHECK", "CODE", "AFFECTED", "MESSAGE", "FIX", "COMMANDS+", "SUBJECTS+")
	for _, f := range v.Findings {
		t.Add(string(f.Severity), f.Check, f.Code, fmt.Sprint(f.BlastRadius), f.Message, f.Fix, strings.Join(f.Commands, " ; "), strings.Join(f.Subjects, " "))
	}
	return render.Output{Data: v, Items: v.Findings, Table: t, Human: func(p *render.Printer) error { return doctorHuman(p, v) }}
}

func doctorHuman(p *render.Printer, v *DoctorView) error {
	var ran, skipped []string
	for _, c := range v.Checks {
		if c.Ran {
			ran = append(ran, c.Name)
		} else {
			skipped = append(skipped, c.Name+" ("+c.Note+")")
		}
	}
	fmt.Fprintf(p.Out, "kaasctl doctor: %s; checks run: %s\n", v.Mode, OrNone(strings.Join(ran, ", ")))
	if len(skipped) > 0 {
		fmt.Fprintf(p.Out, "not run: %s\n", strings.Join(skipped, "; "))
	}
	if gi := v.Sources.Generation; gi != nil {
		fmt.Fprintf(p.Out, "%s\n", gi.Summary())
	}
	if len(v.Sources.Brokers) > 0 {
		fmt.Fprintf(p.Out, "%s\n", BrokersLine(v.Sources.Brokers))
	}
	for _, sev := range []volume.Severity{volume.SevError, volume.SevWarning, volume.SevInfo} {
		var fs []inspect.DoctorFinding
		for _, f := range v.Findings {
			if f.Severity == sev {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			continue
		}
		title := map[volume.Severity]string{volume.SevError: "ERRORS", volume.SevWarning: "WARNINGS", volume.SevInfo: "INFO"}[sev]
		fmt.Fprintf(p.Out, "\n%s (%d)\n", title, len(fs))
		for i, f := range fs {
			fmt.Fprintf(p.Out, "%2d. [%s] %s  (affects %d)\n", i+1, f.Check, f.Code, f.BlastRadius)
			fmt.Fprintf(p.Out, "    %s\n", f.Message)
			if len(f.Subjects) > 0 && (f.BlastRadius > 1 || !strings.Contains(f.Message, f.Subjects[0])) {
				more := ""
				if f.BlastRadius > len(f.Subjects) {
					more = fmt.Sprintf(" … and %d more", f.BlastRadius-len(f.Subjects))
				}
				fmt.Fprintf(p.Out, "    affected: %s%s\n", strings.Join(f.Subjects, ", "), more)
			}
			fmt.Fprintf(p.Out, "    fix: %s\n", f.Fix)
			for _, cmd := range f.Commands {
				fmt.Fprintf(p.Out, "      $ %s\n", cmd)
			}
		}
	}
	fmt.Fprintf(p.Out, "\n")
	verdict := "HEALTHY"
	switch {
	case v.Summary.Errors > 0:
		verdict = "PROBLEMS FOUND"
	case v.Summary.Warnings > 0:
		verdict = "WARNINGS"
	}
	fmt.Fprintf(p.Out, "%s: %s, %s, %d info\n", verdict, render.Plural(v.Summary.Errors, "error", "errors"), render.Plural(v.Summary.Warnings, "warning", "warnings"), v.Summary.Info)
	return nil
}
