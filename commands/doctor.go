package commands

import (
	"context"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:     "doctor",
		Usage:    "every check, offline and live, as one ranked report with the fix for each finding (exit 3 on errors)",
		Problems: &views.ExitProblem{Label: "volume check, doctor", When: "findings of error severity", Rank: 10},
		Docs: []FormatDoc{
			{Title: "doctor", Doc: views.DoctorView{}, JSONL: "each finding", Rank: 170},
		},
		Tool: &MCPTool{Name: "doctor", Title: "Doctor", Input: mcpserver.DoctorInput{},
			Description: "Every check of the volume and the brokers as one ranked report, with the fix for each finding."},
		Build: leaf(doctorFlags, checkDoctor, runDoctor),
	})
}

// doctorFlags are doctor's flags, bound to o.
func doctorFlags(o *doctorOptions) []cli.Flag {
	return []cli.Flag{
		severityFlag(),
		&cli.BoolFlag{Name: "offline", Usage: "skip the live checks even when brokers are configured", Destination: &o.offline},
		nowFlag(),
	}
}

// doctorOptions is 'doctor' after flag parsing.
type doctorOptions struct {
	// minSeverity: findings below it are counted, not shown.
	minSeverity volume.Severity
	// offline skips the live checks even when brokers are configured.
	offline bool
	// now evaluates ages and overdue transactions (zero: the run's clock).
	now time.Time
}

// checkDoctor reads --severity and the run's clock.
func checkDoctor(c *cli.Context, g *Globals, o *doctorOptions) error {
	var err error
	o.minSeverity, err = parseSeverity(c)
	o.now = g.Now().UTC()
	return err
}

// doctorNeeds: the volume, the brokers or both (the brokers not asked
// when offline); brokers that do not answer are findings, not errors.
func doctorNeeds(offline bool) observe.Needs {
	return observe.Needs{Connect: observe.ConnectReport, Offline: offline,
		Either: "nothing to check: give a volume (--data-dir/--cluster-dir) and/or brokers (--brokers)"}
}

func runDoctor(ctx context.Context, g *Globals, o doctorOptions) error {
	now := o.now
	if now.IsZero() {
		now = g.Now().UTC()
	}
	src, err := observe.OpenInputs(ctx, g, doctorNeeds(o.offline))
	if err != nil {
		return err
	}
	defer src.Close()
	rep := &inspect.DoctorReport{Mode: inspect.DoctorOffline, Summary: inspect.CheckSummary{Checked: map[string]int{}}}
	v := views.DoctorView{}
	if err := doctorChecks(ctx, g, o, src, now, rep, &v.Sources); err != nil {
		return err
	}
	v.Report(rep, o.minSeverity, g.GivenFlags())
	if rep.Mode == inspect.DoctorOffline {
		g.Notef("offline only: no broker was asked (live checks need --brokers)")
	}
	if err := g.Printer.Print(views.DoctorOutput(&v)); err != nil {
		return err
	}
	if rep.Summary.Errors > 0 {
		return exit.ProblemsFound("%s", render.Plural(rep.Summary.Errors, "error-level finding", "error-level findings"))
	}
	return nil
}

// doctorChecks runs the offline checks, then the live ones, into rep;
// the sources view says what was read.
func doctorChecks(ctx context.Context, g *Globals, o doctorOptions, src *observe.Inputs, now time.Time, rep *inspect.DoctorReport, sv *views.GroupsSourcesView) error {
	flags := ""
	if l := src.Layout; l != nil {
		root, flag := l.ClusterDir, "--cluster-dir"
		if l.DataDir != "" {
			root, flag = l.DataDir, "--data-dir"
		}
		flags = " " + flag + " " + shellQuoteCmd(root)
	}
	vol, err := observe.DoctorVolumeChecks(src.Layout, now, rep, flags, g.Progress)
	if err != nil {
		return err
	}
	if src.Layout != nil {
		views.VolumeSources(sv, *src.Layout, vol.Assignment, volume.ScanResult{Files: len(vol.Files), Generation: vol.Generation})
	}
	brokers, live, err := observe.DoctorLiveChecks(ctx, observe.DoctorLive{Offline: o.offline, Wanted: src.Wanted, Client: src.Client, BadSeeds: src.BadSeeds,
		ConnErr: src.ConnErr, Layout: src.Layout, ConnFlags: g.ConnFlags(), Brokers: g.Conn().Brokers, Now: g.Now(), Notes: g}, vol, rep)
	if live {
		sv.Live, sv.Brokers = true, brokers
	}
	return err
}

// shellQuoteCmd quotes a value for a command line shown to the user.
func shellQuoteCmd(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"$`\\*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
