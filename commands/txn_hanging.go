package commands

import (
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
)

// addTxnHolds fills each row's Holds: the partitions of the volume's
// groups whose committed offset sits on the transaction's first record
// (the read model's blockers over every group, offline).
func addTxnHolds(g *Globals, l volume.Layout, rows []inspect.TxnRow, now time.Time) {
	if len(rows) == 0 || l.DataDir == "" {
		return
	}
	holds, err := observe.TxnHolds(l, offlineAssignment(g, l), now, g.GivenFlags())
	if err != nil {
		g.Warnf("the groups it holds back are unknown: %v", err)
		return
	}
	for i := range rows {
		rows[i].Holds = holds[rows[i].ProducerID]
	}
}
