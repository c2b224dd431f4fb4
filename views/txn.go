package views

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

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
		kv.Add("holds back", holdsLine(r.Holds))
		kv.Add("coordinator", OrNone(r.Coordinator)+"  (hash tier only, "+r.Tier+")")
		slot := r.SlotFile
		if r.WrongSlot {
			slot += "  WRONG SLOT: kaas looks in " + r.ExpectedSlotFile + " and never finds this entry"
		}
		if r.Undecodable {
			slot += "  UNDECODABLE: kaas cannot read this slot file, every id in it fails"
		}
		kv.Add("slot file", slot)
		if err := WriteKV(p, kv); err != nil {
			return err
		}
	}
	for _, id := range v.NotFound {
		if len(v.Transactions) > 0 {
			fmt.Fprintf(p.Out, "\n")
		}
		fmt.Fprintf(p.Out, "TRANSACTION %s: not found (kaas keeps it in %s)\n", volume.DisplayName(id), ExpectedSlots([]string{id}))
	}
	return nil
}

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

// TxnShow is how 'txn list' or 'txn describe' shows the transactions.
type TxnShow struct {
	// Describe: a block each for people instead of the table.
	Describe bool
	// Hanging: --hanging, the table leads with what each holds back.
	Hanging bool
	// Assumes names the kaas generation the volume is read as.
	Assumes string
}

// TxnOutput is the transactions: a row each, or with describe a block
// each for people.
func TxnOutput(v *TxnListView, show TxnShow) render.Output {
	t := txnTable(v.Transactions, show.Hanging)
	human := func(p *render.Printer) error { return txnDescribeHuman(p, v) }
	if !show.Describe {
		empty := "no transactions in " + v.TxnStateDir
		if v.Total > 0 {
			empty = "no transactions match"
		}
		if show.Hanging && v.Shown == 0 {
			empty = "no hanging transaction: none is Ongoing past its timeout or aborted without markers (" + show.Assumes + ")"
		}
		human = func(p *render.Printer) error {
			return FilteredTable(p, t, v.Shown, v.Total, "transactions", empty)
		}
	}
	return render.Output{Data: *v, Items: v.Transactions, Table: t, Human: human}
}

// txnTable is the transactions as table rows (-o table, wide, csv);
// with holds (--hanging) what each holds back comes first.
func txnTable(rows []inspect.TxnRow, holds bool) *render.TableData {
	t := render.NewTable("ID", "STATE", "PRODUCER-ID", "EPOCH", "PARTITIONS", "GROUPS", "ONGOING-SINCE", "TIMEOUT", "OVERDUE", "COORDINATOR", "SLOT", "TIER+", "DEADLINE+", "EXPECTED-SLOT+")
	if holds {
		t = render.NewTable("ID", "STATE", "PRODUCER-ID", "EPOCH", "HOLDS-BACK", "GROUPS", "ONGOING-SINCE", "TIMEOUT", "OVERDUE", "COORDINATOR", "SLOT", "PARTITIONS+", "TIER+", "DEADLINE+", "EXPECTED-SLOT+")
	}
	for _, r := range rows {
		cells := []string{r.ID, txnStateCell(r), strconv.FormatInt(r.ProducerID, 10), strconv.Itoa(int(r.Epoch)), strconv.Itoa(r.PartitionCount),
			strings.Join(r.Groups, ","), r.OngoingSince, timeoutCell(r), overdueCell(r), r.Coordinator,
			inspect.SlotBase(r.SlotFile), r.Tier, r.Deadline, r.ExpectedSlotFile}
		if holds {
			cells = slices.Insert(cells, 11, cells[4])
			cells[4] = holdsCell(r.Holds)
		}
		t.Add(cells...)
	}
	return t
}

// holdsCell names the partitions and groups a transaction holds back.
func holdsCell(hs []inspect.TxnHold) string {
	var parts []string
	for _, h := range hs {
		parts = append(parts, fmt.Sprintf("%s/%d (%s at %d)", h.Topic, h.Partition, h.Group, h.Committed))
	}
	return strings.Join(parts, " ")
}

// holdsLine is the holds for txn describe ("none found" when empty).
func holdsLine(hs []inspect.TxnHold) string {
	if len(hs) == 0 {
		return "none found (no group's committed offset sits on its first record; 'kaasctl groups describe --all --why' looks at every lagging partition)"
	}
	return render.Clean(holdsCell(hs))
}

func ExpectedSlots(ids []string) string {
	var out []string
	for _, id := range ids {
		out = append(out, grouphash.TxnSlotFile(id))
	}
	return strings.Join(out, ", ")
}

func txnStateCell(r inspect.TxnRow) string {
	s := r.State
	if r.Reaped && !r.Finished {
		s += " (reaped, no ABORT markers: not finished)"
	} else if r.Reaped {
		s += " (reaped)"
	}
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

// TxnNotFound is the ids asked for that no row has.
func TxnNotFound(ids []string, rows []inspect.TxnRow) []string {
	var out []string
	for _, id := range ids {
		if !slices.ContainsFunc(rows, func(r inspect.TxnRow) bool { return r.ID == id }) {
			out = append(out, id)
		}
	}
	return out
}

// TxnNotFoundError names the ids not found, the slot kaas would read for
// each, and an undecodable slot file that may hold one.
func TxnNotFoundError(notFound []string, bad []volume.Finding) error {
	msg := fmt.Sprintf("transactional id %s not found in any slot file (kaas would look in %s)", inspect.QuoteList(notFound), ExpectedSlots(notFound))
	for _, id := range notFound {
		for _, b := range bad {
			if filepath.Base(b.Path) == grouphash.TxnSlotFile(id) {
				msg += fmt.Sprintf("; %s could not be decoded, so %q may be in it", b.Path, id)
			}
		}
	}
	return errors.New(msg)
}
