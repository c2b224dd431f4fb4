package commands

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/render/views"
)

func init() {
	register(Descriptor{
		Path:  "txn describe",
		Usage: "one transactional id in full: state, producer id/epoch, partitions, groups, timing, coordinator, slot file",
		Build: func() *cli.Command {
			return &cli.Command{
				ArgsUsage: "ID...",
				Flags:     []cli.Flag{nowFlag()},
				Action:    action(parseTxnDescribe, runTxn),
			}
		},
	})
}

func parseTxnDescribe(c *cli.Context) (txnOptions, error) {
	o := txnOptions{describe: true}
	o.filter.IDs = c.Args().Slice()
	if len(o.filter.IDs) == 0 {
		return o, exit.UsageErrorf("name at least one transactional ID")
	}
	var err error
	o.now, err = nowFrom(c)
	return o, err
}

func txnDescribeHuman(p *render.Printer, v *TxnListView) error {
	for i, r := range v.Transactions {
		if i > 0 {
			fmt.Fprintf(p.Out, "\n")
		}
		fmt.Fprintf(p.Out, "TRANSACTION %s\n", volume.DisplayName(r.ID))
		kv := render.NewTable("FIELD", "VALUE")
		kv.Add("state", txnStateCell(r))
		kv.Add("producer id", strconv.FormatInt(r.ProducerID, 10))
		kv.Add("epoch", strconv.Itoa(int(r.Epoch)))
		if r.OngoingSince != "" {
			kv.Add("ongoing since", r.OngoingSince)
			kv.Add("deadline", r.Deadline+"  (ongoingSince + timeout)")
		}
		kv.Add("timeout", timeoutCell(r))
		if r.State == volume.TxnOngoing {
			age := inspect.FormatDurationMs(r.AgeMs) + " at " + v.Now
			if r.Overdue {
				age += "  OVERDUE by " + inspect.FormatDurationMs(r.OverdueByMs) + ": kaas's reaper (every 10 s, on every broker) should have aborted it; are all brokers down?"
			}
			kv.Add("open for", age)
		}
		var parts []string
		for _, tp := range r.Partitions {
			ps := make([]string, len(tp.Partitions))
			for j, n := range tp.Partitions {
				ps[j] = strconv.Itoa(int(n))
			}
			parts = append(parts, tp.Topic+"["+strings.Join(ps, ",")+"]")
		}
		kv.Add("partitions", strings.Join(parts, " "))
		kv.Add("groups", strings.Join(r.Groups, ", "))
		kv.Add("coordinator", views.OrNone(r.Coordinator)+"  (hash tier only, "+r.Tier+")")
		slot := r.SlotFile
		if r.WrongSlot {
			slot += "  WRONG SLOT: kaas looks in " + r.ExpectedSlotFile + " and never finds this entry"
		}
		if r.Undecodable {
			slot += "  UNDECODABLE: kaas cannot read this slot file, every id in it fails"
		}
		kv.Add("slot file", slot)
		if err := views.WriteKV(p, kv); err != nil {
			return err
		}
	}
	for _, id := range v.NotFound {
		if len(v.Transactions) > 0 {
			fmt.Fprintf(p.Out, "\n")
		}
		fmt.Fprintf(p.Out, "TRANSACTION %s: not found (kaas keeps it in %s)\n", volume.DisplayName(id), expectedSlots([]string{id}))
	}
	return nil
}
