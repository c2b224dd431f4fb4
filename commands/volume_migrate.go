package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/when"
	"github.com/kaasctl/kaasctl/repair"
)

func init() {
	registerSub("volume", volumeUsage, func() *cli.Command {
		return &cli.Command{
			Name:  "migrate",
			Usage: "upgrade step: move a Go / Rust <= 0.2.15 volume's live DATA/__consumer_offsets into CD/__consumer_offsets for 0.2.18 (dry-run unless --execute)",
			Description: "Before starting Rust 0.2.18 brokers on a volume written by the Go flavour or Rust <= 0.2.15, their\n" +
				"live offsets dir DATA/__consumer_offsets must move into the cluster dir: 0.2.18 never reads it and its\n" +
				"operator deletes it. This is an explicit upgrade step, never part of 'volume repair'.\n\n" +
				"  1. stop EVERY broker of the old generation (a running Go broker keeps writing the old dir and\n" +
				"     serves offsets from memory); with --brokers (or a profile) kaasctl refuses (exit 4) while any\n" +
				"     of them accepts a connection, and it always refuses while a file in the old dir was written\n" +
				"     within --quiet-period (live groups)\n" +
				"  2. kaasctl volume migrate --to 0.2.18 --data-dir /data            # the plan\n" +
				"  3. kaasctl volume migrate --to 0.2.18 --data-dir /data --execute  # then start the 0.2.18 brokers\n\n" +
				"Each group file is written into CD/__consumer_offsets (byte for byte; a plain map, which 0.2.18 reads as\n" +
				"EMPTY, as the v2 envelope) and verified, then the source is moved into\n" +
				"CD/.kaasctl-quarantine/<time>-<random>/data-dir/__consumer_offsets/ (nothing is deleted). A group already in the\n" +
				"target with the same offsets is not rewritten; one with different offsets is a conflict (exit 3), never\n" +
				"overwritten. The old dir is removed once empty. A second run finds nothing to do.\n" +
				"The volume's generation must be Go (detected, or --kaas-version go); when both dirs hold files kaasctl\n" +
				"refuses until the version is pinned.\n\n" +
				"Examples:\n" +
				"  kaasctl volume migrate --to 0.2.18 --data-dir /data\n" +
				"  kaasctl volume migrate --to 0.2.18 --data-dir /data --brokers kaas-0:9092 --execute   # refuses while kaas-0 answers\n" +
				"  kaasctl volume migrate --to 0.2.18 --data-dir /data --kaas-version go -x -o json | jq '.actions[] | select(.action == \"conflict\")'",
			Flags: volumeWriteFlags(
				&cli.StringFlag{Name: "to", Usage: "the kaas `VERSION` to migrate to: 0.2.18"},
				&cli.StringFlag{Name: "quiet-period", Value: "5m", Usage: "refuse while a file in the old offsets dir is younger than `DURATION` (a broker still writing); 0s skips the check"},
				followSymlinksFlag(""),
				nowFlag(),
			),
			Action: action(parseVolumeMigrate, runVolumeMigrate),
		}
	})
}

// volumeMigrateOptions is 'volume migrate' after flag parsing.
type volumeMigrateOptions struct {
	to      volume.Generation
	quiet   time.Duration // --quiet-period
	execute bool
	policy  repair.Policy
	now     time.Time
}

func parseVolumeMigrate(c *cli.Context) (volumeMigrateOptions, error) {
	var o volumeMigrateOptions
	var err error
	if o.execute, err = parseVolumeWrite(c, "migrate"); err != nil {
		return o, err
	}
	if o.to, err = volume.ParseKaasVersion(c.String("to")); err != nil {
		return o, exit.UsageErrorf("--to: %v", err)
	}
	if err := repair.CheckMigrationTarget(o.to); err != nil {
		return o, exit.UsageErrorf("%v", err)
	}
	o.quiet, err = when.ParseDuration(c.String("quiet-period"))
	if err != nil || o.quiet < 0 {
		return o, exit.UsageErrorf("--quiet-period %q: a duration such as 5m or 1h (0s: no check, when every old broker is known to be stopped)", c.String("quiet-period"))
	}
	o.policy = repair.Policy{FollowSymlinks: c.Bool("follow-symlinks")}
	o.now, err = nowFrom(c)
	return o, err
}

// runVolumeMigrate plans the migration, refuses while an old broker
// answers, executes with --execute, and reports.
func runVolumeMigrate(_ context.Context, g *Globals, o volumeMigrateOptions) error {
	if o.execute {
		if err := g.checkWriteSettings(); err != nil {
			return err
		}
	}
	l, err := g.Layout()
	if err != nil {
		return err
	}
	mo := repair.MigrateOptions{To: o.to, Execute: false, Now: o.now, QuietPeriod: o.quiet, Policy: o.policy}
	rep, err := repair.MigrateVolume(l, mo)
	if err != nil {
		return migrateError(err)
	}
	refusal := rep.Refused
	if refusal == "" && !rep.NothingToDo && g.HasBrokers() {
		if up := repair.ReachableBrokers(g.Conn().Brokers, min(g.Conn().Timeout, 3*time.Second)); len(up) > 0 {
			refusal = fmt.Sprintf("broker(s) %s accept connections: stop every broker of the old generation before migrating (a running Go broker keeps writing %s and serves offsets from memory)", strings.Join(up, ", "), rep.Source)
		}
	}
	if o.execute && refusal == "" && !rep.NothingToDo {
		mo.Execute = true
		if rep, err = repair.MigrateVolume(l, mo); err != nil {
			return migrateError(err)
		}
		refusal = rep.Refused
	}
	rep.Refused = refusal
	return reportMigration(g, rep)
}

// reportMigration prints the actions and the outcome; it returns the
// run's exit error.
func reportMigration(g *Globals, rep *repair.MigrateReport) error {
	refusal := rep.Refused
	g.Notef("%s", rep.Generation.Summary())
	if rep.NothingToDo {
		g.Notef("nothing to migrate: %s holds no group files (already migrated, or never used)", rep.Source)
	}
	if err := printVolumeActions(g, rep, rep.Actions, refusal != ""); err != nil {
		return err
	}
	switch {
	case refusal != "":
		return exit.Refusedf("volume migrate refused: %s", refusal)
	case rep.Failed > 0:
		return &exit.CodedError{Code: exit.Error, Err: fmt.Errorf("%d migration step(s) failed; see RESULT (every source file not marked done is still in %s)", rep.Failed, rep.Source)}
	case rep.DryRun && rep.Changes > 0:
		g.Warnf("dry-run: nothing was changed; stop every old broker, then rerun with --execute (source files go to %s)", rep.Backup)
	case !rep.DryRun && rep.Changes > 0:
		g.Notef("migrated: offsets now in %s (sources kept in %s); start the 0.2.18 brokers, then check with 'kaasctl volume check'", rep.Target, rep.Backup)
	}
	if rep.Conflicts > 0 || rep.Denied > 0 {
		return exit.ProblemsFound("%d conflicts, %d unreadable files: resolve them and rerun (nothing was overwritten)", rep.Conflicts, rep.Denied)
	}
	return nil
}

func migrateError(err error) error {
	var ue *repair.MigrateUsageError
	var re *repair.MigrateRefusedError
	switch {
	case errors.As(err, &ue):
		return exit.UsageErrorf("volume migrate: %v", err)
	case errors.As(err, &re):
		return exit.Refusedf("volume migrate refused: %v", err)
	}
	return err
}
