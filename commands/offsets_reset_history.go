package commands

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

// historyResetFlags are offsets reset's restore specs and the rollback
// export, bound to o.
func historyResetFlags(o *resetOptions) []cli.Flag {
	const spec = "Reset specification (exactly one)"
	return []cli.Flag{
		&cli.StringFlag{Name: "to-history", Usage: "spec: the offsets the group had at `TIME` (from the --journal and kaasctl's backups; a date-time, epoch ms, or a duration back from now)", Category: spec},
		&cli.BoolFlag{Name: "to-history-before-anomaly", Usage: "spec: the offsets the group had right before its most recent incident (the latest run of anomalies, REWIND, VANISHED, ..., with no good commit between them) recorded since --history-since; earlier incidents are left alone", Category: spec},
		&cli.StringFlag{Name: "journal", Usage: "the offsets journal `DIR` for --to-history (recorded by 'kaasctl watch --offsets --journal DIR' or 'kaasctl exporter --journal DIR')", Category: "Restore from history", Destination: &o.journal},
		&cli.StringFlag{Name: "history-since", Usage: "--to-history-before-anomaly: only anomalies from `TIME` on count (default: the whole history)", Category: "Restore from history"},
		&cli.StringFlag{Name: "export-rollback", Usage: "write the rollback plan (every planned partition's offset before the reset) to `FILE`, for --from-file; an existing FILE is kept (refused) unless --overwrite-rollback", Category: "Safety", Destination: &o.exportRollback},
		&cli.BoolFlag{Name: "overwrite-rollback", Usage: "let --export-rollback replace an existing FILE (an earlier rollback is lost)", Category: "Safety", Destination: &o.overwriteRollback},
	}
}

// parseHistoryFlags reads --history-since into o (after the spec is
// known: --history-since goes with --to-history-before-anomaly).
func parseHistoryFlags(c *cli.Context, g *Globals, o *resetOptions) error {
	since, err := parseWhen("history-since", c.String("history-since"), g.Now(), g)
	if err != nil {
		return err
	}
	if completion.IsSet(c, "history-since") && o.spec.Kind != repair.ToHistoryBeforeAnomaly {
		return exit.UsageErrorf("--history-since goes with --to-history-before-anomaly")
	}
	o.historySince = since
	return nil
}

// exportRollback writes --export-rollback FILE before anything is written
// (repair.ExportRollbackFile) and says how to apply it.
func exportRollback(g *Globals, name string, overwrite bool, plans []*repair.GroupPlan) (*os.File, error) {
	if name == "" {
		return nil, nil
	}
	f, err := repair.ExportRollbackFile(name, overwrite, plans)
	if err != nil {
		return nil, err
	}
	views.NoteRollbackPlan(g, name, plans, g.GivenFlags())
	return f, nil
}
