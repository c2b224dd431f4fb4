package commands

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
)

func init() {
	register(Descriptor{
		Path:  "volume check",
		Usage: "validate every file kaasctl understands; findings with severity, path and the fix (exit 3 on errors)",
		Docs: []FormatDoc{
			{Title: "volume check", Doc: inspect.CheckReport{}, JSONL: "each finding (findings[])", Rank: 180},
		},
		Build: func() *cli.Command {
			return &cli.Command{
				Flags: []cli.Flag{
					severityFlag(),
					nowFlag(),
				},
				Action: action(parseVolumeCheck, runVolumeCheck),
			}
		},
	})
}

// volumeCheckOptions is 'volume check' after flag parsing.
type volumeCheckOptions struct {
	min volume.Severity // --severity
	now time.Time
}

func parseVolumeCheck(c *cli.Context) (volumeCheckOptions, error) {
	var o volumeCheckOptions
	var err error
	if o.min, err = parseSeverity(c); err != nil {
		return o, err
	}
	o.now, err = nowFrom(c)
	return o, err
}

// runVolumeCheck checks every file of the volume and prints the findings;
// exit 3 on an error-level finding.
func runVolumeCheck(_ context.Context, g *Globals, o volumeCheckOptions) error {
	l, err := g.Layout()
	if err != nil {
		return err
	}
	res, err := observe.CheckVolume(l, o.now, volume.ScanOptions{})
	if err != nil {
		return err
	}
	rep := inspect.BuildCheckReport(l, res, o.min)
	for i := range rep.Findings { // the fixes' commands run as printed
		rep.Findings[i].Fix = inspect.FixWithFlags(rep.Findings[i].Fix, g.GivenFlags())
	}
	t := render.NewTable("SEVERITY", "CODE", "PATH", "MESSAGE", "FIX")
	for _, f := range rep.Findings {
		t.Add(string(f.Severity), f.Code, f.Path, f.Message, f.Fix)
	}
	err = g.Printer.Print(render.Output{Data: rep, Items: rep.Findings, Table: t, Human: func(p *render.Printer) error {
		return writeCheckHuman(p, &rep)
	}})
	if err != nil {
		return err
	}
	if rep.Summary.Errors > 0 {
		return exit.ProblemsFound("%d error-level findings", rep.Summary.Errors)
	}
	return nil
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
