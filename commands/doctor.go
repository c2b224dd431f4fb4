package commands

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

func init() {
	register(func() *cli.Command {
		return &cli.Command{
			Name:  "doctor",
			Usage: "every check, offline and live, as one ranked report with the fix for each finding (exit 3 on errors)",
			Description: "Offline (the volume): volume check (every file kaasctl understands), the explicit-entry audit\n" +
				"(entries naming dead or unknown brokers, duplicates, tiers that disagree) and overdue transactions.\n" +
				"Live (when brokers are given and answer): unreachable brokers, stale in-memory groups on\n" +
				"non-coordinators, FindCoordinator vs the coordinator computed from assignment.json, file-only groups.\n" +
				"Findings are ranked error > warning > info, then by blast radius (groups or files affected); each\n" +
				"carries the runbook step and concrete commands. When no broker answers, doctor says so and runs the\n" +
				"offline checks. Exit 3 when any error-level finding exists.\n\n" +
				"Examples:\n" +
				"  kaasctl doctor --data-dir /data\n" +
				"  kaasctl doctor --data-dir /data --brokers kaas-0.kaas:9092\n" +
				"  kaasctl doctor --data-dir /data -o json | jq '.findings[] | select(.severity==\"error\")'",
			Flags: []cli.Flag{
				severityFlag(),
				&cli.BoolFlag{Name: "offline", Usage: "skip the live checks even when brokers are configured"},
				nowFlag(),
			},
			Action: runDoctor,
		}
	})
}

// DoctorView is the machine document of 'doctor'.
type DoctorView struct {
	inspect.DoctorReport
	Sources GroupsSourcesView `json:"sources"`
}

func runDoctor(c *cli.Context) error {
	g, min, err := severityArgs(c)
	if err != nil {
		return err
	}
	now, err := nowFrom(c)
	if err != nil {
		return err
	}
	rep := &inspect.DoctorReport{Summary: inspect.CheckSummary{Checked: map[string]int{}}}
	v := DoctorView{}
	hasVolume := g.HasVolume()
	volFlags, brokerFlags := "", ""
	var (
		l     volume.Layout
		a     *volume.Assignment
		files []inspect.GroupFile
	)
	if hasVolume {
		if l, err = g.Layout(); err != nil {
			return err
		}
		volFlags = " --cluster-dir " + shellQuoteCmd(l.ClusterDir)
		if l.DataDir != "" {
			volFlags = " --data-dir " + shellQuoteCmd(l.DataDir)
		}
		res, err := volume.CheckVolume(l, now, volume.ScanOptions{})
		if err != nil {
			return err
		}
		rep.Summary.Checked = res.Checked
		root := l.DataDir
		if root == "" {
			root = l.ClusterDir
		}
		rep.Checks = append(rep.Checks, inspect.CheckRun{Name: inspect.CheckVolume, Ran: true})
		if a, _, err = volume.ReadAssignment(l.AssignmentPath()); err != nil {
			a = nil
			rep.Checks = append(rep.Checks, inspect.CheckRun{Name: inspect.CheckEntries, Note: "assignment.json unreadable (see the volume findings)"})
		} else {
			rep.AddEntryAudit(inspect.AuditEntries(a), volFlags)
			rep.Checks = append(rep.Checks, inspect.CheckRun{Name: inspect.CheckEntries, Ran: true})
		}
		rep.AddVolumeFindings(res.Findings, root, a != nil)
		slots, _, _ := volume.ReadTxnState(l) // problems are volume findings already
		rep.AddOverdueTxns(inspect.BuildTxnRows(slots, a, now), volFlags)
		rep.Checks = append(rep.Checks, inspect.CheckRun{Name: inspect.CheckTxn, Ran: true, Note: "evaluated at " + now.Format("2006-01-02T15:04:05Z")})
		if files, _, err = collectGroupFiles(g, l, volume.ScanOptions{}); err != nil {
			return err
		}
		volumeSources(&v.Sources, l, a, volume.ScanResult{Files: len(files), Generation: res.Generation})
	} else {
		for _, n := range []string{inspect.CheckVolume, inspect.CheckEntries, inspect.CheckTxn} {
			rep.Checks = append(rep.Checks, inspect.CheckRun{Name: n, Note: "no volume given (--data-dir or --cluster-dir)"})
		}
	}
	rep.Mode = "offline"
	switch {
	case c.Bool("offline"):
		rep.Checks = append(rep.Checks, inspect.CheckRun{Name: inspect.CheckLive, Note: "skipped (--offline)"})
	case !wantsBrokers(g):
		rep.Checks = append(rep.Checks, inspect.CheckRun{Name: inspect.CheckLive, Note: "no brokers given (--brokers, KAASCTL_BROKERS or a profile)"})
		if !hasVolume {
			return exit.UsageErrorf("nothing to check: give a volume (--data-dir/--cluster-dir) and/or brokers (--brokers)")
		}
	default:
		brokerFlags = g.ConnFlags()
		cl, badSeeds, cerr := doctorClient(c, g)
		for _, b := range badSeeds {
			f := inspect.DoctorFinding{Severity: volume.SevWarning, Check: inspect.CheckLive, Code: inspect.DocSeedUnreachable,
				Subjects: []string{b.Broker}, Message: "seed " + b.Error(),
				Fix:      "if that broker was removed on purpose, drop it from --brokers/KAASCTL_BROKERS/the profile; otherwise check its pod and logs",
				Commands: []string{"kaasctl config check" + brokerFlags}}
			if b.Silent {
				// It connects, so it is there: hung, overloaded, or a port
				// that speaks something else (TLS).
				f.Code = inspect.DocSeedSilent
				f.Fix = "the broker accepts connections but does not answer: it may be hung or overloaded (check its pod and logs; a restart of that broker is the usual cure), or the port expects TLS (--tls); raise --timeout if it is only slow"
			}
			rep.Add(f)
		}
		if cerr != nil {
			if exit.Code(cerr) == 2 {
				return cerr
			}
			rep.Checks = append(rep.Checks, inspect.CheckRun{Name: inspect.CheckLive, Note: "no broker answered: offline checks only"})
			rep.Add(inspect.DoctorFinding{Severity: volume.SevError, Check: inspect.CheckLive, Code: inspect.DocNoBrokerAnswers,
				Subjects: g.Conn().Brokers, BlastRadius: max(len(files), 1),
				Message:  "no broker answered: " + cerr.Error(),
				Fix:      "check the address, TLS and SASL settings ('kaasctl config check'), then the pods (kubectl get pods -l app=kaas); the report below is offline only",
				Commands: []string{"kaasctl config check" + brokerFlags}})
			g.Warnf("no broker answered (%v): offline checks only", cerr)
			break
		}
		defer cl.Close()
		rep.Mode = "merged"
		if !hasVolume {
			rep.Mode = "live"
		}
		if err := doctorLive(c, g, cl, rep, a, files, volFlags, brokerFlags, &v); err != nil {
			return err
		}
		rep.Checks = append(rep.Checks, inspect.CheckRun{Name: inspect.CheckLive, Ran: true})
	}
	rep.Finish()
	v.DoctorReport = *rep
	shown := make([]inspect.DoctorFinding, 0, len(rep.Findings))
	for _, f := range rep.Findings {
		if inspect.SeverityRank(f.Severity) <= inspect.SeverityRank(min) {
			shown = append(shown, f)
		}
	}
	v.Findings = shown
	if rep.Mode == "offline" {
		g.Notef("offline only: no broker was asked (live checks need --brokers)")
	}
	t := render.NewTable("SEVERITY", "CHECK", "CODE", "AFFECTED", "MESSAGE", "FIX", "COMMANDS+", "SUBJECTS+")
	for _, f := range shown {
		t.Add(string(f.Severity), f.Check, f.Code, fmt.Sprint(f.BlastRadius), f.Message, f.Fix, strings.Join(f.Commands, " ; "), strings.Join(f.Subjects, " "))
	}
	err = g.Printer.Print(render.Output{Data: v, Items: shown, Table: t, Human: func(p *render.Printer) error { return doctorHuman(p, &v) }})
	if err != nil {
		return err
	}
	if rep.Summary.Errors > 0 {
		return exit.ProblemsFound("%s", render.Plural(rep.Summary.Errors, "error-level finding", "error-level findings"))
	}
	return nil
}

// doctorLive runs the live checks.
func doctorLive(c *cli.Context, g *Globals, cl *wire.Client, rep *inspect.DoctorReport, a *volume.Assignment, files []inspect.GroupFile,
	volFlags, brokerFlags string, v *DoctorView) error {
	var volumeGroups []string
	for _, f := range files {
		volumeGroups = append(volumeGroups, f.Group)
	}
	if a != nil {
		for _, e := range a.ConsumerGroups {
			volumeGroups = append(volumeGroups, e.GroupID)
		}
	}
	lr, err := gatherLiveGroups(c.Context, cl, volumeGroups, a)
	if err != nil {
		return err
	}
	v.Sources.Live, v.Sources.Brokers = true, lr.brokers
	var rows []inspect.GroupRow
	if g.HasVolume() {
		rows = inspect.BuildGroupRows(inspect.GroupsInput{Assignment: a, Files: files, Extra: lr.answers.LiveGroupNames()})
	} else {
		rows = inspect.BrokersOnlyRows(lr.answers.LiveGroupNames())
	}
	inspect.MergeLive(rows, lr.answers)
	answers := make([]inspect.BrokerAnswer, len(lr.brokers))
	for i, b := range lr.brokers {
		answers[i] = inspect.BrokerAnswer{Node: b.Node, Broker: b.Broker, Answered: b.Answered, Error: b.Error}
	}
	facts := inspect.BuildLiveFacts(rows, lr.answers, answers, a)
	rep.AddLive(facts, volFlags, brokerFlags)
	return nil
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
	fmtf(p.Out, "kaasctl doctor: %s; checks run: %s\n", v.Mode, orNone(strings.Join(ran, ", ")))
	if len(skipped) > 0 {
		fmtf(p.Out, "not run: %s\n", strings.Join(skipped, "; "))
	}
	if gi := v.Sources.Generation; gi != nil {
		fmtf(p.Out, "%s\n", gi.Summary())
	}
	if len(v.Sources.Brokers) > 0 {
		fmtf(p.Out, "%s\n", brokersLine(v.Sources.Brokers))
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
		fmtf(p.Out, "\n%s (%d)\n", title, len(fs))
		for i, f := range fs {
			fmtf(p.Out, "%2d. [%s] %s  (affects %d)\n", i+1, f.Check, f.Code, f.BlastRadius)
			fmtf(p.Out, "    %s\n", f.Message)
			if len(f.Subjects) > 0 && (f.BlastRadius > 1 || !strings.Contains(f.Message, f.Subjects[0])) {
				more := ""
				if f.BlastRadius > len(f.Subjects) {
					more = fmt.Sprintf(" … and %d more", f.BlastRadius-len(f.Subjects))
				}
				fmtf(p.Out, "    affected: %s%s\n", strings.Join(f.Subjects, ", "), more)
			}
			fmtf(p.Out, "    fix: %s\n", f.Fix)
			for _, cmd := range f.Commands {
				fmtf(p.Out, "      $ %s\n", cmd)
			}
		}
	}
	fmtf(p.Out, "\n")
	verdict := "HEALTHY"
	switch {
	case v.Summary.Errors > 0:
		verdict = "PROBLEMS FOUND"
	case v.Summary.Warnings > 0:
		verdict = "WARNINGS"
	}
	fmtf(p.Out, "%s: %s, %s, %d info\n", verdict, render.Plural(v.Summary.Errors, "error", "errors"), render.Plural(v.Summary.Warnings, "warning", "warnings"), v.Summary.Info)
	return nil
}

// shellQuoteCmd quotes a value for a command line shown to the user.
func shellQuoteCmd(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"$`\\*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// doctorClient connects like Globals.Client but hands back the seeds that
// did not answer, so they become findings instead of bare warnings.
func doctorClient(c *cli.Context, g *Globals) (*wire.Client, []*wire.BrokerError, error) {
	if g.conn.err != nil {
		return nil, nil, exit.UsageErrorf("%v", g.conn.err)
	}
	if g.conn.fileErr != nil && g.conn.explicit {
		return nil, nil, exit.UsageErrorf("%v", g.conn.fileErr)
	}
	cl, err := wire.NewClient(g.Conn())
	if err != nil {
		return nil, nil, err
	}
	_, bad, err := cl.Check(c.Context)
	if err != nil {
		cl.Close()
		return nil, bad, err
	}
	return cl, bad, nil
}
