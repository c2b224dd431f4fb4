package commands

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:    "txn list",
		Usage:   "list every transactional id in CD/txn_state/slot-*.json with state, producer id/epoch, overdue flag and coordinator",
		Aliases: []string{"ls"},
		Docs: []FormatDoc{
			{Title: "txn list / txn describe", Doc: views.TxnListView{}, JSONL: "each transaction (transactions[])", Rank: 210},
		},
		Build: leaf(txnListFlags, checkTxnList, runTxn),
	})
}

// txnListFlags are txn list's flags, bound to o.
func txnListFlags(o *txnOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "state", Usage: "only transactions in `STATE` (Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort); repeat or comma-separate"},
		&cli.BoolFlag{Name: "overdue", Usage: "only Ongoing transactions past ongoingSince + transactionTimeoutMs", Destination: &o.filter.Overdue},
		&cli.BoolFlag{Name: "hanging", Usage: "only transactions that will not end on the log by themselves (overdue, or aborted by a reaper that writes no markers), with the partitions and groups they hold back", Destination: &o.filter.Hanging},
		nowFlag(),
	}
}

// txnOptions is 'txn list' or 'txn describe' after flag parsing.
type txnOptions struct {
	describe bool
	filter   inspect.TxnFilter // describe: the ids asked for
	now      time.Time
}

// checkTxnList refuses arguments, reads --state and the run's clock.
func checkTxnList(c *cli.Context, g *Globals, o *txnOptions) error {
	if c.Args().Present() {
		return exit.UsageErrorf("txn list takes no arguments (did you mean 'txn describe %s'?)", c.Args().First())
	}
	for _, s := range c.StringSlice("state") {
		for _, p := range strings.Split(s, ",") {
			st, err := inspect.NormalizeTxnState(strings.TrimSpace(p))
			if err != nil {
				return exit.UsageErrorf("--state: %v", err)
			}
			o.filter.States = append(o.filter.States, st)
		}
	}
	o.now = g.Now().UTC()
	return nil
}

// runTxn reads the txn_state slots and prints the transactions the
// options select; an id asked for and not found is an error (exit 1).
func runTxn(_ context.Context, g *Globals, o txnOptions) error {
	l, err := g.Layout()
	if err != nil {
		return err
	}
	assignment := func() *volume.Assignment { return offlineAssignment(g, l) }
	all, bad := observe.TxnRows(l, assignment, o.now, g)
	rows := inspect.FilterTxns(all, o.filter)
	if o.describe || o.filter.Hanging {
		observe.AddTxnHolds(l, assignment, rows, o.now, g.GivenFlags(), g)
	}
	v := views.TxnListView{TxnStateDir: l.TxnStatePath(), Now: o.now.Format(time.RFC3339Nano), Total: len(all), Shown: len(rows), Transactions: rows, UnreadableSlots: bad}
	v.NotFound = views.TxnNotFound(o.filter.IDs, rows)
	if err := g.Printer.Print(views.TxnOutput(&v, views.TxnShow{Describe: o.describe, Hanging: o.filter.Hanging, Assumes: l.WithGeneration().Gen.Assumes()})); err != nil {
		return err
	}
	if len(v.NotFound) > 0 {
		return views.TxnNotFoundError(v.NotFound, bad)
	}
	// describe only cares about the slots of the ids asked for.
	if len(bad) > 0 && !o.describe {
		return fmt.Errorf("%s could not be decoded; their transactions are missing above (run 'kaasctl volume check')", render.Plural(len(bad), "slot file", "slot files"))
	}
	return nil
}
