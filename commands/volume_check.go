package commands

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:     "volume check",
		Usage:    "validate every file kaasctl understands; findings with severity, path and the fix (exit 3 on errors)",
		Problems: &views.ExitProblem{Label: "volume check, doctor", When: "findings of error severity", Rank: 10},
		Docs: []FormatDoc{
			{Title: "volume check", Doc: inspect.CheckReport{}, JSONL: "each finding (findings[])", Rank: 180},
		},
		Tool: &MCPTool{Name: "volume_check", Title: "Volume check", Input: mcpserver.VolumeCheckInput{},
			Description: "Every file of the volume kaasctl understands, checked: findings with severity, path and fix."},
		Build: leaf(func(*volumeCheckOptions) []cli.Flag { return []cli.Flag{severityFlag(), nowFlag()} }, checkVolumeCheck, runVolumeCheck),
	})
}

// volumeCheckOptions is 'volume check' after flag parsing.
type volumeCheckOptions struct {
	min volume.Severity // --severity
	now time.Time
}

// checkVolumeCheck reads --severity and the run's clock.
func checkVolumeCheck(c *cli.Context, g *Globals, o *volumeCheckOptions) error {
	var err error
	o.min, err = parseSeverity(c)
	o.now = g.Now().UTC()
	return err
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
	if err := g.Printer.Print(views.CheckOutput(&rep)); err != nil {
		return err
	}
	if rep.Summary.Errors > 0 {
		return exit.ProblemsFound("%d error-level findings", rep.Summary.Errors)
	}
	return nil
}
