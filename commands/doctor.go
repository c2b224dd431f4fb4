package commands

import (
	"context"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/render/views"
)

func init() {
	register(Descriptor{
		Path:  "doctor",
		Usage: "every check, offline and live, as one ranked report with the fix for each finding (exit 3 on errors)",
		Docs: []FormatDoc{
			{Title: "doctor", Doc: views.DoctorView{}, JSONL: "each finding", Rank: 170},
		},
		Build: func() *cli.Command {
			return &cli.Command{
				Flags: []cli.Flag{
					severityFlag(),
					&cli.BoolFlag{Name: "offline", Usage: "skip the live checks even when brokers are configured"},
					nowFlag(),
				},
				Action: action(parseDoctor, runDoctor),
			}
		},
	})
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

func parseDoctor(c *cli.Context) (doctorOptions, error) {
	min, err := inspect.ParseSeverity(c.String("severity"))
	if err != nil {
		return doctorOptions{}, exit.UsageErrorf("--severity: %v", err)
	}
	o := doctorOptions{minSeverity: min, offline: c.Bool("offline")}
	o.now, err = nowFrom(c)
	return o, err
}

// doctorNeeds: the volume, the brokers or both (the brokers not asked
// when offline); brokers that do not answer are findings, not errors.
func doctorNeeds(offline bool) sourceNeeds {
	return sourceNeeds{mode: connectReport, offline: offline,
		either: "nothing to check: give a volume (--data-dir/--cluster-dir) and/or brokers (--brokers)"}
}

func runDoctor(ctx context.Context, g *Globals, o doctorOptions) error {
	now := o.now
	if now.IsZero() {
		now = g.Now().UTC()
	}
	src, err := openSources(ctx, g, doctorNeeds(o.offline))
	if err != nil {
		return err
	}
	defer src.Close()
	rep := &inspect.DoctorReport{Mode: inspect.DoctorOffline, Summary: inspect.CheckSummary{Checked: map[string]int{}}}
	v := views.DoctorView{}
	vol, err := doctorVolumeChecks(g, src.layout, now, rep, &v.Sources)
	if err != nil {
		return err
	}
	if err := doctorLiveChecks(ctx, g, o, src, vol, rep, &v.Sources); err != nil {
		return err
	}
	rep.Finish()
	v.DoctorReport = *rep
	v.Findings = rep.AtLeast(o.minSeverity)
	for i := range v.Findings { // the fixes' commands run as printed
		v.Findings[i].Fix = inspect.FixWithFlags(v.Findings[i].Fix, g.GivenFlags())
	}
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

// doctorVolume is what the offline checks read that the live ones use.
type doctorVolume struct {
	// a is nil without a volume or when assignment.json is unreadable.
	a     *volume.Assignment
	files []inspect.GroupFile
	// logs are the partitions' log bounds the volume check read from their
	// segments, before any broker is asked.
	logs []volume.LogBounds
	// flags repeat the volume in a fix's commands (" --data-dir /data").
	flags string
}

// doctorVolumeChecks runs the offline checks on l (nil: no volume, they
// are recorded as not run): volume check, the explicit-entry audit and
// overdue transactions.
func doctorVolumeChecks(g *Globals, l *volume.Layout, now time.Time, rep *inspect.DoctorReport, sv *views.GroupsSourcesView) (doctorVolume, error) {
	var vol doctorVolume
	if l == nil {
		for _, n := range []string{inspect.CheckVolume, inspect.CheckEntries, inspect.CheckTxn} {
			rep.Skipped(n, "no volume given (--data-dir or --cluster-dir)")
		}
		return vol, nil
	}
	root, flag := l.ClusterDir, "--cluster-dir"
	if l.DataDir != "" {
		root, flag = l.DataDir, "--data-dir"
	}
	vol.flags = " " + flag + " " + shellQuoteCmd(root)
	// One scan of the offset files: the volume check's, which also keeps a
	// summary of each for the live checks.
	var prog *render.Progress
	res, err := observe.CheckVolume(*l, now, volume.ScanOptions{
		OnListed: func(n int) {
			vol.files = make([]inspect.GroupFile, 0, n)
			prog = g.Progress("reading offset files", int64(n))
		},
		OnItem: func(it *volume.OffsetScanItem) {
			vol.files = append(vol.files, inspect.SummarizeOffsetItem(it))
			prog.Add(1)
		}})
	prog.Done()
	if err != nil {
		return vol, err
	}
	rep.Summary.Checked = res.Checked
	vol.logs = res.LogBounds
	rep.Ran(inspect.CheckVolume, "")
	if res.Assignment == nil { // read once, by the volume check
		rep.Skipped(inspect.CheckEntries, "assignment.json unreadable (see the volume findings)")
	} else {
		vol.a = res.Assignment
		rep.AddEntryAudit(inspect.AuditEntries(vol.a), vol.flags)
		rep.Ran(inspect.CheckEntries, "")
	}
	rep.AddVolumeFindings(res.Findings, root, vol.a != nil, vol.flags)
	slots, _, _ := volume.ReadTxnState(*l) // problems are volume findings already
	rep.AddOverdueTxns(inspect.BuildTxnRows(slots, vol.a, now), vol.flags)
	rep.Ran(inspect.CheckTxn, "evaluated at "+now.Format("2006-01-02T15:04:05Z"))
	views.VolumeSources(sv, *l, vol.a, volume.ScanResult{Files: len(vol.files), Generation: res.Generation})
	return vol, nil
}

// doctorLiveChecks runs the live checks when brokers are configured and
// one answers; otherwise it records why they did not run.
func doctorLiveChecks(ctx context.Context, g *Globals, o doctorOptions, src *sources, vol doctorVolume, rep *inspect.DoctorReport, sv *views.GroupsSourcesView) error {
	switch {
	case o.offline:
		rep.Skipped(inspect.CheckLive, "skipped (--offline)")
		return nil
	case !src.wanted:
		rep.Skipped(inspect.CheckLive, "no brokers given (--brokers, KAASCTL_BROKERS or a profile)")
		return nil
	}
	rep.AddSeeds(src.badSeeds, g.ConnFlags())
	if src.connErr != nil {
		rep.AddNoBrokerAnswers(src.connErr, g.Conn().Brokers, len(vol.files), g.ConnFlags())
		g.Warnf("no broker answered (%v): offline checks only", src.connErr)
		return nil
	}
	rep.Mode = inspect.DoctorMerged
	if src.layout == nil {
		rep.Mode = inspect.DoctorLive
	}
	in := inspect.GroupsInput{Assignment: vol.a, Files: vol.files}
	var listed *inspect.ListedRows // the rows, built while the lookups are in flight
	gg, err := src.client.GatherGroups(ctx, wire.GroupRounds{Extra: inspect.VolumeGroupNames(vol.files, vol.a), Describe: true,
		OnListed: func(ls []wire.BrokerGroups) { listed = inspect.PrepareListedRows(in, src.layout != nil, ls) }})
	if err != nil {
		return err
	}
	facts, brokers := inspect.ListedLiveFacts(gg, listed, vol.a)
	sv.Live, sv.Brokers = true, brokers
	rep.AddLive(facts, vol.flags, g.ConnFlags())
	if src.layout != nil {
		doctorGroupStates(ctx, g, src, gg, vol, rep)
	}
	rep.Ran(inspect.CheckLive, "")
	return nil
}

// doctorGroupStates adds what the read model finds in the live state of
// every group a broker coordinates (offsets served but not filed,
// committed past the served end, file and coordinator disagreeing,
// partitions without an offset), and the partitions served below their
// segments.
func doctorGroupStates(ctx context.Context, g *Globals, src *sources, gg *wire.GatheredGroups, vol doctorVolume, rep *inspect.DoctorReport) {
	gi := src.layout.Gen
	states, err := observe.LiveStates(ctx, src.client, gg, *src.layout, vol.files, vol.logs, g.Now())
	if err != nil {
		g.Warnf("the groups' offset files were not compared with what their coordinators serve: %v", err)
	}
	paths := map[string]string{}
	for _, f := range vol.files {
		if f.Layout == volume.OffsetsCurrent {
			paths[f.Group] = f.Path
		}
	}
	rep.AddServedNotFiled(inspect.NotFiledOf(states, paths), gi.Gen, vol.flags, g.ConnFlags())
	rep.AddIncidents(inspect.CollectIncidents(states), gi, vol.flags, g.ConnFlags())
	behind, err := observe.ServedBehindAll(ctx, src.client, vol.logs, vol.a)
	if err != nil {
		g.Warnf("the partitions' served log ends were not compared with their segments: %v", err)
	}
	rep.AddServedBehindLog(behind, gi, vol.flags, g.ConnFlags())
}

// shellQuoteCmd quotes a value for a command line shown to the user.
func shellQuoteCmd(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"$`\\*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
