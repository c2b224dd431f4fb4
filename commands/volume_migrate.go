package commands

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
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
			Action: runVolumeMigrate,
		}
	})
}

func runVolumeMigrate(c *cli.Context) error {
	g, err := volumeWriteStart(c, "migrate")
	if err != nil {
		return err
	}
	to, err := volume.ParseKaasVersion(c.String("to"))
	if err != nil {
		return exit.UsageErrorf("--to: %v", err)
	}
	if err := repair.CheckMigrationTarget(to); err != nil {
		return exit.UsageErrorf("%v", err)
	}
	quiet, err := time.ParseDuration(c.String("quiet-period"))
	if err != nil || quiet < 0 {
		return exit.UsageErrorf("--quiet-period %q: a duration such as 5m or 1h (0s: no check, when every old broker is known to be stopped)", c.String("quiet-period"))
	}
	l, now, err := layoutNow(c, g)
	if err != nil {
		return err
	}
	pol := repair.Policy{FollowSymlinks: c.Bool("follow-symlinks")}
	rep, err := repair.MigrateVolume(l, repair.MigrateOptions{To: to, Execute: false, Now: now, QuietPeriod: quiet, Policy: pol})
	if err != nil {
		return migrateError(err)
	}
	refusal := rep.Refused
	if refusal == "" && !rep.NothingToDo && g.HasBrokers() {
		if up := reachableBrokers(g.Conn().Brokers, min(g.Conn().Timeout, 3*time.Second)); len(up) > 0 {
			refusal = fmt.Sprintf("broker(s) %s accept connections: stop every broker of the old generation before migrating (a running Go broker keeps writing %s and serves offsets from memory)", strings.Join(up, ", "), rep.Source)
		}
	}
	if c.Bool("execute") && refusal == "" && !rep.NothingToDo {
		if rep, err = repair.MigrateVolume(l, repair.MigrateOptions{To: to, Execute: true, Now: now, QuietPeriod: quiet, Policy: pol}); err != nil {
			return migrateError(err)
		}
		refusal = rep.Refused
	}
	rep.Refused = refusal
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

// reachableBrokers returns the brokers that accept a TCP connection.
func reachableBrokers(brokers []string, timeout time.Duration) []string {
	type res struct {
		i  int
		up bool
	}
	ch := make(chan res, len(brokers))
	for i, b := range brokers {
		go func() {
			conn, err := net.DialTimeout("tcp", b, timeout)
			if err == nil {
				conn.Close()
			}
			ch <- res{i, err == nil}
		}()
	}
	up := make([]bool, len(brokers))
	for range brokers {
		r := <-ch
		up[r.i] = r.up
	}
	var out []string
	for i, b := range brokers {
		if up[i] {
			out = append(out, b)
		}
	}
	return out
}
