package views

import (
	"fmt"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render"
)

// WhoisOutput is the answers: the scenario line and a row per key.
func WhoisOutput(wh *inspect.Whois, results []inspect.WhoisResult) render.Output {
	t := whoisTable(wh, results)
	return render.Output{
		Data:  results,
		Table: t,
		Human: func(p *render.Printer) error {
			fmt.Fprintln(p.Out, wh.Scenario)
			return p.Table(t)
		},
	}
}

func WhoisHeaders(wh *inspect.Whois, whatIf bool) []string {
	h := []string{"KEY"}
	if whatIf {
		h = append(h, "NOW", "THEN", "MOVES")
	} else {
		h = append(h, "COORDINATOR")
	}
	h = append(h, "TIER", "HASH SAYS", "SLOT")
	if wh.Kind == inspect.KindTxn {
		h = append(h, "TXN SLOT FILE")
	}
	return append(h, "PREFERRED+", "BROKERS+", "FNV1A32+", "EXPLICIT+", "NOTES")
}

func WhoisRow(r inspect.WhoisResult) []string {
	row := []string{r.Key}
	if r.CurrentCoordinator != nil {
		moves := "no"
		if *r.Moves {
			moves = "yes"
		}
		row = append(row, render.Dash(*r.CurrentCoordinator), render.Dash(r.Coordinator), moves)
	} else {
		row = append(row, render.Dash(r.Coordinator))
	}
	row = append(row, r.Tier, render.Dash(r.HashCoordinator), slotCell(r))
	if r.Kind == inspect.KindTxn {
		row = append(row, r.TxnSlotFile)
	}
	return append(row, r.Preferred, fmt.Sprintf("%d/%d alive", r.AliveBrokers, r.NumBrokers), r.FNV1a32, r.ExplicitBroker, strings.Join(r.Warnings, "; "))
}

func slotCell(r inspect.WhoisResult) string {
	if r.Slot < 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", r.Slot, r.NumBrokers)
}

func whoisTable(wh *inspect.Whois, rs []inspect.WhoisResult) *render.TableData {
	whatIf := len(rs) > 0 && rs[0].CurrentCoordinator != nil
	t := render.NewTable(WhoisHeaders(wh, whatIf)...)
	for _, r := range rs {
		t.Add(WhoisRow(r)...)
	}
	return t
}

// WhoisLiveResult is one key answered from the volume and by
// FindCoordinator (inspect.CompareWhois).
type WhoisLiveResult = inspect.WhoisLiveResult

// WhoisLiveOutput is the answers beside the wire's: the scenario line
// with the brokers that answered, and a row per key.
func WhoisLiveOutput(wh *inspect.Whois, rs []WhoisLiveResult, answered []string) render.Output {
	t := render.NewTable(WhoisLiveHeaders(wh)...)
	for _, r := range rs {
		t.Add(WhoisLiveRow(r)...)
	}
	return render.Output{Data: rs, Items: rs, Table: t, Human: func(p *render.Printer) error {
		fmt.Fprintf(p.Out, "%s; live: FindCoordinator answered by %s\n", wh.Scenario, OrNone(strings.Join(answered, ",")))
		return p.Table(t)
	}}
}

func WhoisLiveHeaders(wh *inspect.Whois) []string {
	h := []string{"KEY", "COORDINATOR", "WIRE", "AGREES", "TIER", "HASH SAYS", "SLOT"}
	if wh.Kind == inspect.KindTxn {
		h = append(h, "TXN SLOT FILE")
	}
	return append(h, "PREFERRED+", "BROKERS+", "FNV1A32+", "EXPLICIT+", "NOTES")
}

func WhoisLiveRow(r WhoisLiveResult) []string {
	agrees := "yes"
	switch {
	case !r.Compared:
		agrees = "unknown"
	case !r.Agrees:
		agrees = "NO"
	}
	wireCell := r.WireCoordinator
	if wireCell == "" {
		wireCell = "error"
		if r.Compared {
			wireCell = "none"
		}
	}
	row := []string{r.Key, render.Dash(r.Coordinator), wireCell, agrees, r.Tier, render.Dash(r.HashCoordinator), slotCell(r.WhoisResult)}
	if r.Kind == inspect.KindTxn {
		row = append(row, r.TxnSlotFile)
	}
	return append(row, r.Preferred, fmt.Sprintf("%d/%d alive", r.AliveBrokers, r.NumBrokers), r.FNV1a32, r.ExplicitBroker, strings.Join(r.Warnings, "; "))
}
