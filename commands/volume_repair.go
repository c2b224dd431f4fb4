package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/when"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

func init() {
	registerSub("volume", volumeUsage, func() *cli.Command {
		return &cli.Command{
			Name:  "repair",
			Usage: "repair what is broken for the volume's own kaas generation: quarantine corrupt offset files, move stale *.tmp aside; on 0.2.18 also convert plain maps and rescue the legacy offsets dir (dry-run unless --execute)",
			Description: "It repairs only what is broken in the volume's own kaas generation (detected, or pinned with\n" +
				"--kaas-version; see 'kaasctl help volume'). On Go / Rust <= 0.2.15 and 0.2.16-0.2.17 a plain map is\n" +
				"offsets and DATA/__consumer_offsets is not legacy: nothing is converted or moved (moving an older\n" +
				"generation's live dir is 'kaasctl volume migrate --to 0.2.18', an upgrade step). When the generation\n" +
				"is undetermined only generation-independent fixes run (quarantine, stale *.tmp) and the rest is\n" +
				"listed as skipped. Every file it leaves alone is listed (action skip) with the reason.\n\n" +
				"What it repairs, and how (nothing is deleted but kaasctl's own backups beyond --keep-backups):\n" +
				"  convert           0.2.18 only: a plain-map offset file (0.2.18 reads it as EMPTY) is rewritten as\n" +
				"                    the v2 envelope; the old file is backed up beside it (<file>.kaasctl-bak-<time>)\n" +
				"  quarantine        an offset file kaas cannot decode is moved to CD/.kaasctl-quarantine/<time>-<random>/...;\n" +
				"                    the offsets kaasctl can still read are saved beside it as a --from-file CSV\n" +
				"  remove-tmp        a *.tmp file older than --tmp-older-than is moved into the quarantine dir\n" +
				"  migrate           0.2.18 only: a leftover DATA/__consumer_offsets/<g>.json is written into the cluster\n" +
				"                    dir and the legacy file moved into the quarantine dir\n" +
				"  legacy-duplicate  0.2.18 only: a legacy file identical to the live one is moved into the quarantine dir\n" +
				"  conflict          0.2.18 only: a group with different offsets in both dirs: reported, never overwritten\n" +
				"  skip              a file left alone, with the reason (sub-directories, names kaas cannot round-trip,\n" +
				"                    fixes that depend on an undetermined generation, dirs its generation does not read)\n" +
				"  permission-denied a file kaasctl may not read: reported with the permissions fix, exit 3\n" +
				"Every write is atomic (unique temp file, fsync, rename, fsync of the directory) and skipped if the\n" +
				"file changed since it was read; files keep their owner and mode; nothing is written through a link\n" +
				"inside the volume unless --follow-symlinks (see 'kaasctl help volume'). A second run finds nothing to do.\n" +
				"Exit 3 when conflicts or unreadable files remain.\n" +
				"Stop the brokers first if you can: a broker that has a group loaded rewrites its file on the next commit.\n\n" +
				"Examples:\n" +
				"  kaasctl volume repair --data-dir /data                 # the plan: nothing is written\n" +
				"  kaasctl volume repair --data-dir /data --execute       # then: kaasctl volume check --data-dir /data\n" +
				"  kaasctl volume repair --data-dir /data --tmp-older-than 24h --execute",
			Flags: volumeWriteFlags(
				&cli.StringFlag{Name: "tmp-older-than", Value: "1h", Usage: "*.tmp files at least this old are stale (`DURATION`: 30m, 1h, PT2H)"},
				followSymlinksFlag(""),
				keepBackupsFlag(""),
				nowFlag(),
			),
			Action: actionWith(parseVolumeRepair, runVolumeRepair),
		}
	})
}

// volumeRepairOptions is 'volume repair' after flag parsing.
type volumeRepairOptions struct {
	execute      bool
	tmpOlderThan time.Duration
	policy       repair.Policy
	now          time.Time
}

func parseVolumeRepair(c *cli.Context, g *Globals) (volumeRepairOptions, error) {
	var o volumeRepairOptions
	var err error
	if o.execute, err = parseVolumeWrite(c, "repair"); err != nil {
		return o, err
	}
	o.tmpOlderThan, err = when.ParseDuration(c.String("tmp-older-than"))
	if err != nil {
		return o, exit.UsageErrorf("--tmp-older-than %q: %v", c.String("tmp-older-than"), err)
	}
	if o.tmpOlderThan < volume.StaleTmpAge {
		return o, exit.UsageErrorf("--tmp-older-than %s: below %s a temp file may be a write in flight", o.tmpOlderThan, volume.StaleTmpAge)
	}
	if o.policy, err = parseWritePolicy(c, g); err != nil {
		return o, err
	}
	o.now, err = nowFrom(c)
	return o, err
}

// runVolumeRepair repairs (or, without execute, plans) what is broken for
// the volume's own generation and reports it.
func runVolumeRepair(_ context.Context, g *Globals, o volumeRepairOptions) error {
	if o.execute {
		if err := g.checkWriteSettings(); err != nil {
			return err
		}
	}
	l, err := g.Layout()
	if err != nil {
		return err
	}
	rep, err := repair.RepairVolume(l, repair.RepairOptions{Execute: o.execute, TmpOlderThan: o.tmpOlderThan, Now: o.now, Policy: o.policy})
	if err != nil {
		return err
	}
	g.Notef("%s", rep.Generation.Summary())
	if err := printVolumeActions(g, rep, rep.Actions, false); err != nil {
		return err
	}
	return reportRepair(g, l, rep)
}

// reportRepair says what the repair did and returns the run's exit error.
func reportRepair(g *Globals, l volume.Layout, rep *repair.RepairReport) error {
	if rep.Skipped > 0 {
		g.Notef("%s left alone on purpose (action skip, with the reason)", render.Plural(rep.Skipped, "file", "files"))
	}
	switch {
	case rep.Changes == 0 && rep.Conflicts == 0 && rep.Denied == 0:
		g.Notef("nothing to repair in %s", l.ClusterDir)
	case rep.DryRun && rep.Changes > 0:
		g.Warnf("dry-run: nothing was changed; rerun with --execute to make these %d changes (files set aside go to %s)", rep.Changes, rep.Quarantine)
	case !rep.DryRun && rep.Changes > rep.Failed:
		g.Notef("%d change(s) made; files set aside are in %s", rep.Changes-rep.Failed, rep.Quarantine)
	case !rep.DryRun && rep.Changes > 0:
		g.Notef("no change made: every planned repair failed (see RESULT)")
	}
	if rep.Failed > 0 {
		return &exit.CodedError{Code: exit.Error, Err: fmt.Errorf("%d repair(s) failed; see RESULT", rep.Failed)}
	}
	if rep.Denied > 0 {
		g.Warnf("%s kaasctl may not read: not judged, not moved; fix their permissions (see RESULT)", render.Plural(rep.Denied, "file", "files"))
	}
	if rep.Conflicts > 0 {
		g.Warnf("%d conflict(s) need a person: kaasctl does not choose between two different sets of offsets", rep.Conflicts)
	}
	if rep.Conflicts > 0 || rep.Denied > 0 {
		return exit.ProblemsFound("%d conflicts, %d unreadable files", rep.Conflicts, rep.Denied)
	}
	return nil
}
