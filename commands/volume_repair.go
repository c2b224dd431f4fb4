package commands

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

func init() {
	registerSub("volume", volumeUsage, func() *cli.Command {
		return &cli.Command{
			Name:  "repair",
			Usage: "convert legacy offset files, quarantine corrupt ones, move stale *.tmp aside, migrate the legacy offsets dir (dry-run unless --execute)",
			Description: "What it repairs, and how (nothing is ever deleted):\n" +
				"  convert           a legacy plain-map offset file (kaas v0.2.18 reads it as EMPTY) is rewritten as\n" +
				"                    the v2 envelope; the old file is backed up beside it (<file>.kaasctl-bak-<time>)\n" +
				"  quarantine        an offset file kaas cannot decode is moved to CD/.kaasctl-quarantine/<time>/...;\n" +
				"                    the offsets kaasctl can still read are saved beside it as a --from-file CSV\n" +
				"  remove-tmp        a *.tmp file older than --tmp-older-than is moved into the quarantine dir\n" +
				"  migrate           DATA/__consumer_offsets/<g>.json (kaas <= 0.2.15) is written into the cluster dir\n" +
				"                    and the legacy file moved into the quarantine dir\n" +
				"  legacy-duplicate  a legacy file identical to the current one is moved into the quarantine dir\n" +
				"  conflict          a group with different offsets in both layouts: reported, never overwritten\n" +
				"Every write is atomic (unique temp file, fsync, rename, fsync of the directory) and skipped if the\n" +
				"file changed since it was read. A second run finds nothing to do. Exit 3 when conflicts remain.\n" +
				"Stop the brokers first if you can: a broker that has a group loaded rewrites its file on the next commit.\n\n" +
				"Examples:\n" +
				"  kaasctl volume repair --data-dir /data                 # the plan: nothing is written\n" +
				"  kaasctl volume repair --data-dir /data --execute       # then: kaasctl volume check --data-dir /data\n" +
				"  kaasctl volume repair --data-dir /data --tmp-older-than 24h --execute",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "dry-run", Usage: "only list what would change (the default)"},
				&cli.BoolFlag{Name: "execute", Aliases: []string{"x"}, Usage: "make the changes"},
				&cli.StringFlag{Name: "tmp-older-than", Value: "1h", Usage: "*.tmp files at least this old are stale (`DURATION`: 30m, 1h, PT2H)"},
				nowFlag(),
			},
			Action: runVolumeRepair,
		}
	})
}

func runVolumeRepair(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.NArg() > 0 {
		return exit.UsageErrorf("volume repair takes no arguments (got %q)", c.Args().First())
	}
	if c.Bool("dry-run") && c.Bool("execute") {
		return exit.UsageErrorf("Option \"[repair]\" only accepts one of [execute] and [dry-run]")
	}
	age, err := time.ParseDuration(c.String("tmp-older-than"))
	if err != nil {
		age, err = repair.ParseDuration(c.String("tmp-older-than"))
		if err != nil {
			return exit.UsageErrorf("--tmp-older-than %q: a duration such as 30m, 1h or PT2H", c.String("tmp-older-than"))
		}
	}
	if age < volume.StaleTmpAge {
		return exit.UsageErrorf("--tmp-older-than %s: below %s a temp file may be a write in flight", age, volume.StaleTmpAge)
	}
	l, now, err := layoutNow(c, g)
	if err != nil {
		return err
	}
	rep, err := repair.RepairVolume(l, repair.RepairOptions{Execute: c.Bool("execute"), TmpOlderThan: age, Now: now})
	if err != nil {
		return err
	}
	t := render.NewTable("ACTION", "PATH", "DETAIL", "RESULT", "DEST+", "BACKUP+")
	for _, a := range rep.Actions {
		res := "planned"
		switch {
		case !a.Change:
			res = "not changed"
		case a.Error != "":
			res = "FAILED: " + a.Error
		case a.Done:
			res = "done"
		}
		t.Add(a.Action, a.Path, a.Detail, res, a.Dest, a.Backup)
	}
	if err := g.Printer.Print(render.Output{Data: rep, Items: rep.Actions, Table: t}); err != nil {
		return err
	}
	switch {
	case rep.Changes == 0 && rep.Conflicts == 0:
		g.Notef("nothing to repair in %s", l.ClusterDir)
	case rep.DryRun && rep.Changes > 0:
		g.Warnf("dry-run: nothing was changed; rerun with --execute to make these %d changes (files set aside go to %s)", rep.Changes, rep.Quarantine)
	case !rep.DryRun && rep.Changes > 0:
		g.Notef("%d change(s) made; files set aside are in %s", rep.Changes-rep.Failed, rep.Quarantine)
	}
	if rep.Failed > 0 {
		return &exit.CodedError{Code: exit.Error, Err: fmt.Errorf("%d repair(s) failed; see RESULT", rep.Failed)}
	}
	if rep.Conflicts > 0 {
		g.Warnf("%d conflict(s) need a person: kaasctl does not choose between two different sets of offsets", rep.Conflicts)
		return exit.ProblemsFound("%d conflicts", rep.Conflicts)
	}
	return nil
}
