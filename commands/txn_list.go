package commands

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

const txnUsage = "transactions: state from the txn_state slot files"

// TxnListView is the machine document of 'txn list' and 'txn describe'.
type TxnListView struct {
	TxnStateDir  string           `json:"txnStateDir"`
	Now          string           `json:"now"`
	Total        int              `json:"total"`
	Shown        int              `json:"shown"`
	Transactions []inspect.TxnRow `json:"transactions"`
	// UnreadableSlots are slot files kaasctl could not decode (kaas cannot either).
	UnreadableSlots []volume.Finding `json:"unreadableSlots"`
	NotFound        []string         `json:"notFound,omitempty"`
}

func init() {
	registerSub("txn", txnUsage, func() *cli.Command {
		return &cli.Command{
			Name:    "list",
			Aliases: []string{"ls"},
			Usage:   "list every transactional id in CD/txn_state/slot-*.json with state, producer id/epoch, overdue flag and coordinator",
			Description: "Overdue: an Ongoing transaction past ongoingSinceMs + transactionTimeoutMs (kaas's reaper aborts it\n" +
				"without writing abort markers, so read_committed consumers can stall). The coordinator is the hash\n" +
				"tier's (transactional ids have no explicit entries).\n\n" +
				"Examples:\n" +
				"  kaasctl txn list --data-dir /data\n" +
				"  kaasctl txn list --data-dir /data --overdue -o json\n" +
				"  kaasctl txn list --data-dir /data --state Ongoing,PrepareCommit",
			Flags: []cli.Flag{
				&cli.StringSliceFlag{Name: "state", Usage: "only transactions in `STATE` (Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort); repeat or comma-separate"},
				&cli.BoolFlag{Name: "overdue", Usage: "only Ongoing transactions past ongoingSince + transactionTimeoutMs"},
				nowFlag(),
			},
			Action: func(c *cli.Context) error { return runTxn(c, false) },
		}
	})
}

// loadTxnRows reads the slots and builds every row.
func loadTxnRows(g *Globals, l volume.Layout, now time.Time) ([]inspect.TxnRow, []volume.Finding) {
	slots, fs, errs := volume.ReadTxnState(l)
	g.WarnFindings(fs)
	var bad []volume.Finding
	for _, fe := range errs {
		bad = append(bad, volume.Finding{Severity: volume.SevError, Code: volume.CodeTxnCorrupt, Path: fe.Path, Message: fe.Problem})
		g.Warnf("%s: %s", fe.Path, fe.Problem)
	}
	a := offlineAssignment(g, l)
	return inspect.BuildTxnRows(slots, a, now), bad
}

func runTxn(c *cli.Context, describe bool) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	var f inspect.TxnFilter
	if describe {
		f.IDs = c.Args().Slice()
		if len(f.IDs) == 0 {
			return exit.UsageErrorf("name at least one transactional ID")
		}
	} else {
		if c.Args().Present() {
			return exit.UsageErrorf("txn list takes no arguments (did you mean 'txn describe %s'?)", c.Args().First())
		}
		for _, s := range c.StringSlice("state") {
			for _, p := range strings.Split(s, ",") {
				st, err := inspect.NormalizeTxnState(strings.TrimSpace(p))
				if err != nil {
					return exit.UsageErrorf("--state: %v", err)
				}
				f.States = append(f.States, st)
			}
		}
		f.Overdue = c.Bool("overdue")
	}
	now, err := nowFrom(c)
	if err != nil {
		return err
	}
	l, err := g.Layout()
	if err != nil {
		return err
	}
	all, bad := loadTxnRows(g, l, now)
	rows := inspect.FilterTxns(all, f)
	v := TxnListView{TxnStateDir: l.TxnStatePath(), Now: now.Format(time.RFC3339Nano), Total: len(all), Shown: len(rows), Transactions: rows, UnreadableSlots: bad}
	for _, id := range f.IDs {
		found := false
		for _, r := range rows {
			found = found || r.ID == id
		}
		if !found {
			v.NotFound = append(v.NotFound, id)
		}
	}
	t := render.NewTable("ID", "STATE", "PRODUCER-ID", "EPOCH", "PARTITIONS", "GROUPS", "ONGOING-SINCE", "TIMEOUT", "OVERDUE", "COORDINATOR", "SLOT", "TIER+", "DEADLINE+", "EXPECTED-SLOT+")
	for _, r := range rows {
		t.Add(r.ID, txnStateCell(r), strconv.FormatInt(r.ProducerID, 10), strconv.Itoa(int(r.Epoch)), strconv.Itoa(r.PartitionCount),
			strings.Join(r.Groups, ","), r.OngoingSince, timeoutCell(r), overdueCell(r), r.Coordinator,
			inspect.SlotBase(r.SlotFile), r.Tier, r.Deadline, r.ExpectedSlotFile)
	}
	var human func(p *render.Printer) error
	if describe {
		human = func(p *render.Printer) error { return txnDescribeHuman(p, &v) }
	} else {
		empty := "no transactions in " + l.TxnStatePath()
		if len(all) > 0 {
			empty = "no transactions match"
		}
		human = func(p *render.Printer) error { return filteredTable(p, t, len(rows), len(all), "transactions", empty) }
	}
	if err := g.Printer.Print(render.Output{Data: v, Items: rows, Table: t, Human: human}); err != nil {
		return err
	}
	if len(v.NotFound) > 0 {
		msg := fmt.Sprintf("transactional id %s not found in any slot file (kaas would look in %s)", quoteList(v.NotFound), expectedSlots(v.NotFound))
		for _, id := range v.NotFound {
			for _, b := range bad {
				if filepath.Base(b.Path) == grouphash.TxnSlotFile(id) {
					msg += fmt.Sprintf("; %s could not be decoded, so %q may be in it", b.Path, id)
				}
			}
		}
		return errors.New(msg)
	}
	// describe only cares about the slots of the ids asked for.
	if len(bad) > 0 && !describe {
		return fmt.Errorf("%s could not be decoded; their transactions are missing above (run 'kaasctl volume check')", render.Plural(len(bad), "slot file", "slot files"))
	}
	return nil
}

func expectedSlots(ids []string) string {
	var out []string
	for _, id := range ids {
		out = append(out, grouphash.TxnSlotFile(id))
	}
	return strings.Join(out, ", ")
}

func txnStateCell(r inspect.TxnRow) string {
	s := r.State
	if r.Undecodable {
		s += " (slot undecodable)"
	} else if r.WrongSlot {
		s += " (wrong slot)"
	}
	return s
}

func overdueCell(r inspect.TxnRow) string {
	if !r.Overdue {
		return ""
	}
	return "OVERDUE by " + inspect.FormatDurationMs(r.OverdueByMs)
}

func timeoutCell(r inspect.TxnRow) string {
	if r.TransactionTimeoutMs == 0 {
		return ""
	}
	return inspect.FormatDurationMs(int64(r.TransactionTimeoutMs))
}
