package observe

import (
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// TxnRows reads the slots and builds every row (txn list and describe);
// assignment is the volume's assignment, read after the slots.
func TxnRows(l volume.Layout, assignment func() *volume.Assignment, now time.Time, rep Reporter) ([]inspect.TxnRow, []volume.Finding) {
	slots, fs, errs := volume.ReadTxnState(l)
	rep.WarnFindings(fs)
	var bad []volume.Finding
	for _, fe := range errs {
		bad = append(bad, volume.Finding{Severity: volume.SevError, Code: volume.CodeTxnCorrupt, Path: fe.Path, Message: fe.Problem})
		rep.Warnf("%s: %s", fe.Path, fe.Problem)
	}
	rows := inspect.BuildTxnRows(slots, assignment(), now)
	pl, _, _ := volume.ReadPlumbing(l, now) // volume check reports its problems
	inspect.MarkFinished(rows, pl, l.WithGeneration().Gen)
	return rows, bad
}

// AddTxnHolds fills each row's Holds: the partitions of the volume's
// groups whose committed offset sits on the transaction's first record
// (the read model's blockers over every group, offline).
// assignment is the volume's assignment, read only when there is a row.
func AddTxnHolds(l volume.Layout, assignment func() *volume.Assignment, rows []inspect.TxnRow, now time.Time, flags string, notes render.Notes) {
	if len(rows) == 0 || l.DataDir == "" {
		return
	}
	holds, err := TxnHolds(l, assignment(), now, flags)
	if err != nil {
		notes.Warnf("the groups it holds back are unknown: %v", err)
		return
	}
	for i := range rows {
		rows[i].Holds = holds[rows[i].ProducerID]
	}
}
