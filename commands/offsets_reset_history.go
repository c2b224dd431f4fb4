package commands

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

// historyResetFlags are offsets reset's restore specs and the rollback export.
func historyResetFlags() []cli.Flag {
	const spec = "Reset specification (exactly one)"
	return []cli.Flag{
		&cli.StringFlag{Name: "to-history", Usage: "spec: the offsets the group had at `TIME` (from the --journal and kaasctl's backups; a date-time, epoch ms, or a duration back from now)", Category: spec},
		&cli.BoolFlag{Name: "to-history-before-anomaly", Usage: "spec: the offsets the group had right before its most recent incident (the latest run of anomalies, REWIND, VANISHED, ..., with no good commit between them) recorded since --history-since; earlier incidents are left alone", Category: spec},
		&cli.StringFlag{Name: "journal", Usage: "the offsets journal `DIR` for --to-history (recorded by 'kaasctl watch --offsets --journal DIR' or 'kaasctl exporter --journal DIR')", Category: "Restore from history"},
		&cli.StringFlag{Name: "history-since", Usage: "--to-history-before-anomaly: only anomalies from `TIME` on count (default: the whole history)", Category: "Restore from history"},
		&cli.StringFlag{Name: "export-rollback", Usage: "write the rollback plan (every planned partition's offset before the reset) to `FILE`, for --from-file; an existing FILE is kept (refused) unless --overwrite-rollback", Category: "Safety"},
		&cli.BoolFlag{Name: "overwrite-rollback", Usage: "let --export-rollback replace an existing FILE (an earlier rollback is lost)", Category: "Safety"},
	}
}

// parseHistorySpec reads --to-history / --to-history-before-anomaly.
func parseHistorySpec(c *cli.Context, flag string, g *Globals) (repair.Spec, error) {
	if flag == "to-history-before-anomaly" {
		return repair.Spec{Kind: repair.ToHistoryBeforeAnomaly, Origin: "--to-history-before-anomaly"}, nil
	}
	t, err := parseWhen("to-history", c.String(flag), g.Now(), g)
	if err != nil {
		return repair.Spec{}, err
	}
	return repair.Spec{Kind: repair.ToHistory, Time: t, Origin: "--to-history " + t.UTC().Format(time.RFC3339Nano)}, nil
}

// parseHistoryFlags reads --journal and --history-since into o (after the
// spec is known: --history-since goes with --to-history-before-anomaly).
func parseHistoryFlags(c *cli.Context, g *Globals, o *resetOptions) error {
	o.journal = c.String("journal")
	since, err := parseWhen("history-since", c.String("history-since"), g.Now(), g)
	if err != nil {
		return err
	}
	if isSet(c, "history-since") && o.spec.Kind != repair.ToHistoryBeforeAnomaly {
		return exit.UsageErrorf("--history-since goes with --to-history-before-anomaly")
	}
	o.historySince = since
	return nil
}

// historyResetSpec finds each group's offsets at the moment asked for
// (repair.ResolveGroupRestore), says what each restore does, and returns
// the from-file spec the one reset path plans and executes.
func historyResetSpec(g *Globals, l volume.Layout, groups []string, o resetOptions) (repair.Spec, error) {
	if o.journal == "" {
		g.Notef("no --journal: restoring from kaasctl's backups beside the offset files only")
	}
	req := repair.HistoryRestore{JournalDir: o.journal, Layout: l, Spec: o.spec, Since: o.historySince, Now: g.Now()}
	var targets []repair.HistoryTarget
	for _, group := range groups {
		gr, err := repair.ResolveGroupRestore(req, group)
		for _, w := range gr.Warnings {
			g.Warnf("%s", w)
		}
		if err != nil {
			return repair.Spec{}, err
		}
		noteGroupRestore(g, o.spec, gr)
		targets = append(targets, gr.Target)
	}
	out, notes, err := repair.HistoryRestoreSpec(targets, o.scopes, o.spec.Origin)
	if err != nil {
		return repair.Spec{}, err
	}
	for _, n := range notes {
		g.Warnf("%s", n)
	}
	return out, nil
}

// noteGroupRestore says what one group's restore goes back to and where
// that state comes from, and warns about partitions kept or moved back.
func noteGroupRestore(g *Globals, spec repair.Spec, gr repair.GroupRestore) {
	t := gr.Target
	name := volume.DisplayName(t.Group)
	offsets := render.Plural(len(t.Offsets), "partition offset", "partition offsets")
	from := "journal"
	switch t.Point.Source {
	case "backup":
		from = "kaasctl's backup " + t.Point.File
	case "file":
		from = "the offset file as kaasctl's last rewrite left it, " + t.Point.File
	}
	if t.Anomaly != nil {
		g.Notef("group '%s': restoring the %s it had at %s (%s), right before the latest incident: %s", name, offsets, render.Timestamp(t.Point.Time), from, incidentText(t))
	} else {
		g.Notef("group '%s': restoring the %s it had at %s (last recorded at %s, %s)", name, offsets, render.Timestamp(spec.Time), render.Timestamp(t.Point.Time), from)
	}
	if len(gr.Extra) > 0 {
		g.Warnf("group '%s': %s committed since then (%s) kept as they are: a commit cannot remove partitions; use 'kaasctl offsets delete' if they must go", name, render.Plural(len(gr.Extra), "partition", "partitions"), strings.Join(gr.Extra, ", "))
	}
	if len(gr.MovedBack) > 0 {
		g.Warnf("group '%s': the restore moves %s back, so the group re-processes those records: %s (narrow it with --topic TOPIC:P to restore only the damaged partitions)", name, render.Plural(len(gr.MovedBack), "partition", "partitions"), strings.Join(gr.MovedBack, ", "))
	}
}

// incidentText is the incident a before-anomaly restore undoes: its first
// anomaly and when, the later ones in it, the earlier incidents left alone.
func incidentText(t repair.HistoryTarget) string {
	what := t.Anomaly.Kind
	if t.Anomaly.Partition != "" {
		what += " of " + t.Anomaly.Partition
	}
	s := what + " at " + render.Timestamp(t.AnomalyTime)
	if t.Later > 0 {
		s += fmt.Sprintf("; %s in the same incident after it", render.Plural(t.Later, "more anomaly", "more anomalies"))
	}
	if t.EarlierIncidents > 0 {
		s += fmt.Sprintf("; %s before it left alone (name a moment with --to-history TIME to go further back)", render.Plural(t.EarlierIncidents, "earlier incident", "earlier incidents"))
	}
	return s
}

// exportRollback writes --export-rollback FILE before anything is written.
// The file stays open (nil without the flag): as each group is finished a
// comment line records it, so after an interruption the file says which
// groups the rollback concerns.
func exportRollback(g *Globals, name string, overwrite bool, plans []*repair.GroupPlan) (*os.File, error) {
	if name == "" {
		return nil, nil
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if overwrite {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(name, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, repair.CheckRollbackTarget(name, false)
	}
	if err != nil {
		return nil, fmt.Errorf("--export-rollback: %w", err)
	}
	werr := repair.ExportRollbackCSV(f, plans)
	if err := errorsJoin(werr, f.Sync()); err != nil {
		f.Close()
		return nil, fmt.Errorf("--export-rollback %s: %w", name, err)
	}
	scope := " --all-groups"
	if len(plans) <= 10 {
		scope = ""
		for _, gp := range plans {
			scope += " --group " + render.ShellQuote(gp.Group)
		}
	}
	g.Notef("rollback plan: %s (apply with: kaasctl offsets reset%s --from-file %s%s --execute)", name, scope, render.ShellQuote(name), g.GivenFlags())
	return f, nil
}

func errorsJoin(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
