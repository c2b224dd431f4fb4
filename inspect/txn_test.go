package inspect

import (
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// A CompleteAbort above every fence-log epoch of its producer was aborted
// by the reaper; on Rust 0.2.18 (whose reaper writes no ABORT markers) it is
// not finished, on the Go flavour it is; an abort at the fenced epoch is an
// EndTxn abort and finished.
func TestMarkFinishedReaped(t *testing.T) {
	t.Parallel()
	slots := []*volume.TxnSlotFile{{Path: "slot-5.json", Slot: 5, Entries: []volume.TxnEntry{
		{ID: "reaped", PID: 7, Epoch: 1, State: volume.TxnCompleteAbort},
		{ID: "aborted", PID: 8, Epoch: 2, State: volume.TxnCompleteAbort},
		{ID: "committed", PID: 9, Epoch: 0, State: volume.TxnCompleteCommit},
		{ID: "open", PID: 10, Epoch: 0, State: volume.TxnOngoing},
	}}}
	pl := &volume.Plumbing{Fences: []*volume.FenceFile{{Entries: []volume.FenceEntry{{PID: 8, Epoch: 2}}}}}
	l := volume.Layout{DataDir: t.TempDir()}
	l.ClusterDir = l.DataDir + "/__cluster"
	for gen, reapedFinished := range map[volume.Generation]bool{volume.Gen018: false, volume.GenGo: true} {
		rows := BuildTxnRows(slots, nil, time.Now())
		MarkFinished(rows, pl, l.PinnedTo(gen, "test").Gen)
		got := map[string]TxnRow{}
		for _, r := range rows {
			got[r.ID] = r
		}
		if r := got["reaped"]; !r.Reaped || r.Finished != reapedFinished || (r.Note == "") == !reapedFinished {
			t.Errorf("%s: reaped %+v", gen, r)
		}
		if r := got["aborted"]; r.Reaped || !r.Finished {
			t.Errorf("%s: an EndTxn abort %+v", gen, r)
		}
		if !got["committed"].Finished || got["open"].Finished {
			t.Errorf("%s: %+v %+v", gen, got["committed"], got["open"])
		}
	}
}
