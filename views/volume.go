package views

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

// CheckOutput is volume check's report: a row per finding.
func CheckOutput(rep *inspect.CheckReport) render.Output {
	t := render.NewTable("SEVERITY", "CODE", "PATH", "MESSAGE", "FIX")
	for _, f := range rep.Findings {
		t.Add(string(f.Severity), f.Code, f.Path, f.Message, f.Fix)
	}
	return render.Output{Data: rep, Items: rep.Findings, Table: t, Human: func(p *render.Printer) error {
		return writeCheckHuman(p, rep)
	}}
}

// writeCheckHuman is volume check for people: the generation, each
// finding with its fix, and the verdict.
func writeCheckHuman(p *render.Printer, rep *inspect.CheckReport) error {
	fmt.Fprintf(p.Out, "%s\n\n", rep.Generation.Summary())
	for _, f := range rep.Findings {
		fmt.Fprintf(p.Out, "%-7s %s  %s\n", strings.ToUpper(string(f.Severity)), f.Code, volume.DisplayName(f.Path))
		fmt.Fprintf(p.Out, "        %s\n", f.Message)
		if f.Fix != "" {
			fmt.Fprintf(p.Out, "        fix: %s\n", f.Fix)
		}
	}
	if len(rep.Findings) > 0 {
		fmt.Fprintf(p.Out, "\n")
	}
	fmt.Fprintf(p.Out, "%s\n", checkSummaryLine(rep))
	return nil
}

func checkSummaryLine(rep *inspect.CheckReport) string {
	var parts []string
	for _, k := range []string{"assignment", "offsets", "txnSlots", "fences", "markers", "producerIds", "manifests", "partitionLogs"} {
		if n := rep.Summary.Checked[k]; n > 0 {
			parts = append(parts, k+" "+strconv.Itoa(n))
		}
	}
	checked := "nothing"
	if len(parts) > 0 {
		checked = strings.Join(parts, ", ")
	}
	verdict := "OK"
	if rep.Summary.Errors > 0 {
		verdict = "PROBLEMS FOUND"
	}
	return verdict + ": " + render.Plural(rep.Summary.Errors, "error", "errors") + ", " + render.Plural(rep.Summary.Warnings, "warning", "warnings") + ", " +
		strconv.Itoa(rep.Summary.Info) + " info  (checked " + checked + ")"
}

// PrintVolumeActions prints the actions of a repair or migration (data:
// its report), each with its RESULT; refused says the whole run was
// refused (nothing written). A run with no actions prints no table for
// people (its notes say why).
func PrintVolumeActions(p *render.Printer, data any, acts []repair.RepairAction, refused bool) error {
	if len(acts) == 0 && !p.Format.Machine() {
		return nil
	}
	return p.Print(VolumeActionsOutput(data, acts, refused))
}

// VolumeActionsOutput is the actions of a repair or migration (data: its
// report), each with its RESULT.
func VolumeActionsOutput(data any, acts []repair.RepairAction, refused bool) render.Output {
	t := render.NewTable("ACTION", "PATH", "DETAIL", "RESULT", "DEST+", "BACKUP+")
	for _, a := range acts {
		res := "planned"
		switch {
		case a.Action == repair.ActSkip:
			res = "skipped"
		case a.Action == repair.ActDenied:
			res = "not readable"
		case !a.Change:
			res = "not changed"
		case a.Error != "":
			res = "FAILED: " + a.Error
		case a.Done:
			res = "done"
		case refused:
			res = "refused"
		}
		t.Add(a.Action, a.Path, a.Detail, res, a.Dest, a.Backup)
	}
	return render.Output{Data: data, Items: acts, Table: t}
}

type VersionView struct {
	Version       string `json:"version"`
	Commit        string `json:"commit"`
	GoVersion     string `json:"goVersion"`
	Platform      string `json:"platform"`
	SupportedKaas string `json:"supportedKaas"`
}

// BuildInfo is the version document of a kaasctl of version that reads
// the kaas releases supported: the Go release and platform it runs on,
// and the commit it was built from when the build recorded one.
func BuildInfo(version, supported string) VersionView {
	v := VersionView{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, SupportedKaas: supported}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v.Commit = s.Value
			}
		}
	}
	return v
}

// VersionString is v's version with its commit's first 12 characters.
func VersionString(v VersionView) string {
	if v.Commit != "" {
		return v.Version + " (" + v.Commit[:min(12, len(v.Commit))] + ")"
	}
	return v.Version
}

// VersionOutput is the version and build, a line each.
func VersionOutput(v VersionView) render.Output {
	t := render.NewTable("FIELD", "VALUE")
	t.Add("version", v.Version)
	t.Add("commit", v.Commit)
	t.Add("go", v.GoVersion)
	t.Add("platform", v.Platform)
	t.Add("supported kaas", v.SupportedKaas)
	return render.Output{Data: v, Table: t}
}
