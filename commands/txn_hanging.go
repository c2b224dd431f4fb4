package commands

import (
	"fmt"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
)

// addTxnHolds fills each row's Holds: the partitions of the volume's
// groups whose committed offset sits on the transaction's first record
// (the read model's blockers over every group, offline).
func addTxnHolds(g *Globals, l volume.Layout, rows []inspect.TxnRow, now time.Time) {
	if len(rows) == 0 || l.DataDir == "" {
		return
	}
	src := observe.ReadBlockerSources(l, offlineAssignment(g, l), now, volume.DefaultRecordLimits())
	src.Flags = g.GivenFlags()
	bs, err := src.VolumeBlockers(offlineAssignment(g, l))
	if err != nil {
		g.Warnf("the groups it holds back are unknown: %v", err)
		return
	}
	holds := inspect.HoldsByProducer(bs)
	for i := range rows {
		rows[i].Holds = holds[rows[i].ProducerID]
	}
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
