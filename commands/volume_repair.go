package commands

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/when"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:     "volume repair",
		Usage:    "repair what is broken for the volume's own kaas generation: quarantine corrupt offset files, move stale *.tmp aside; on 0.2.18 also convert plain maps and rescue the legacy offsets dir (dry-run unless --execute)",
		Problems: &views.ExitProblem{Label: "volume repair", When: "conflicts it leaves to a person (a group with different\n                                 offsets in both layouts), in a dry run as with --execute;\n                                 a dry run with only changes to make exits 0", Rank: 20},
		Refuses:  true,
		Docs: []FormatDoc{
			{Title: "volume repair", Doc: repair.RepairReport{}, JSONL: "each action (actions[])", Rank: 190},
		},
		Tool: &MCPTool{Name: "volume_repair_plan", Title: "Plan a volume repair", Input: mcpserver.VolumeRepairInput{}, Plan: true,
			Description: "Plans (dry run) the volume's repairs (quarantines, stale temp files, plain-map conversions on 0.2.18); returns the plan and the command a person runs to apply it. Never writes."},
		Build: leaf(volumeRepairFlags, checkVolumeRepair, runVolumeRepair),
	})
}

// volumeRepairFlags are volume repair's flags, bound to o.
func volumeRepairFlags(o *volumeRepairOptions) []cli.Flag {
	return volumeWriteFlags(&o.execute,
		&cli.StringFlag{Name: "tmp-older-than", Value: "1h", Usage: "*.tmp files at least this old are stale (`DURATION`: 30m, 1h, PT2H)"},
		followSymlinksFlag(""),
		keepBackupsFlag(""),
		nowFlag(),
	)
}

// volumeRepairOptions is 'volume repair' after flag parsing.
type volumeRepairOptions struct {
	execute      bool
	tmpOlderThan time.Duration
	policy       repair.Policy
	now          time.Time
}

// checkVolumeRepair reads --tmp-older-than (not below a write in
// flight's age), the write policy and the run's clock.
func checkVolumeRepair(c *cli.Context, g *Globals, o *volumeRepairOptions) error {
	if err := checkVolumeWrite(c, "repair", o.execute); err != nil {
		return err
	}
	var err error
	o.tmpOlderThan, err = when.ParseDuration(c.String("tmp-older-than"))
	if err != nil {
		return exit.UsageErrorf("--tmp-older-than %q: %v", c.String("tmp-older-than"), err)
	}
	if o.tmpOlderThan < volume.StaleTmpAge {
		return exit.UsageErrorf("--tmp-older-than %s: below %s a temp file may be a write in flight", o.tmpOlderThan, volume.StaleTmpAge)
	}
	o.now = g.Now().UTC()
	o.policy, err = parseWritePolicy(c, g)
	return err
}

// runVolumeRepair repairs (or, without execute, plans) what is broken for
// the volume's own generation and reports it.
func runVolumeRepair(_ context.Context, g *Globals, o volumeRepairOptions) error {
	if o.execute {
		if err := g.CheckWriteSettings(); err != nil {
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
	if err := views.PrintVolumeActions(g.Printer, rep, rep.Actions, false); err != nil {
		return err
	}
	views.NoteRepair(g, l.ClusterDir, rep)
	return rep.ExitErr()
}
