package commands

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/when"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:     "volume migrate",
		Usage:    "upgrade step: move a Go / Rust <= 0.2.15 volume's live DATA/__consumer_offsets into CD/__consumer_offsets for 0.2.18 (dry-run unless --execute)",
		Problems: &views.ExitProblem{Label: "volume migrate", When: "conflicts or unreadable files it leaves to a person", Rank: 110},
		Refuses:  true,
		Common:   fgOffline | fgReach,
		Docs: []FormatDoc{
			{Title: "volume migrate", Doc: repair.MigrateReport{}, JSONL: "each action (actions[])", Rank: 200},
		},
		Build: leaf(volumeMigrateFlags, checkVolumeMigrate, runVolumeMigrate),
	})
}

// volumeMigrateFlags are volume migrate's flags, bound to o.
func volumeMigrateFlags(o *volumeMigrateOptions) []cli.Flag {
	return volumeWriteFlags(&o.execute,
		&cli.StringFlag{Name: "to", Usage: "the kaas `VERSION` to migrate to: 0.2.18"},
		&cli.StringFlag{Name: "quiet-period", Value: "5m", Usage: "refuse while a file in the old offsets dir is younger than `DURATION` (a broker still writing); 0s skips the check"},
		followSymlinksFlag(""),
		nowFlag(),
	)
}

// volumeMigrateOptions is 'volume migrate' after flag parsing.
type volumeMigrateOptions struct {
	to      volume.Generation
	quiet   time.Duration // --quiet-period
	execute bool
	policy  repair.Policy
	now     time.Time
}

// checkVolumeMigrate reads the target (--to), --quiet-period, the links
// policy and the run's clock.
func checkVolumeMigrate(c *cli.Context, g *Globals, o *volumeMigrateOptions) error {
	if err := checkVolumeWrite(c, "migrate", o.execute); err != nil {
		return err
	}
	var err error
	if o.to, err = volume.ParseKaasVersion(c.String("to")); err != nil {
		return exit.UsageErrorf("--to: %v", err)
	}
	if err := repair.CheckMigrationTarget(o.to); err != nil {
		return exit.UsageErrorf("%v", err)
	}
	o.quiet, err = when.ParseDuration(c.String("quiet-period"))
	if err != nil || o.quiet < 0 {
		return exit.UsageErrorf("--quiet-period %q: a duration such as 5m or 1h (0s: no check, when every old broker is known to be stopped)", c.String("quiet-period"))
	}
	o.policy = repair.Policy{FollowSymlinks: c.Bool("follow-symlinks")}
	o.now = g.Now().UTC()
	return nil
}

// runVolumeMigrate plans the migration, refuses while an old broker
// answers, executes with --execute (repair.Migrate), and reports.
func runVolumeMigrate(_ context.Context, g *Globals, o volumeMigrateOptions) error {
	if o.execute {
		if err := g.CheckWriteSettings(); err != nil {
			return err
		}
	}
	l, err := g.Layout()
	if err != nil {
		return err
	}
	var brokers []string
	if g.HasBrokers() {
		brokers = g.Conn().Brokers
	}
	rep, err := repair.Migrate(l, repair.MigrateOptions{To: o.to, Execute: o.execute, Now: o.now, QuietPeriod: o.quiet, Policy: o.policy}, brokers, g.Conn().Timeout)
	if err != nil {
		return err
	}
	return reportMigration(g, rep)
}

// reportMigration prints the actions and the outcome; it returns the
// run's exit error.
func reportMigration(g *Globals, rep *repair.MigrateReport) error {
	views.NoteMigration(g, rep)
	if err := views.PrintVolumeActions(g.Printer, rep, rep.Actions, rep.Refused != ""); err != nil {
		return err
	}
	views.NoteMigrated(g, rep)
	return rep.ExitErr()
}
