package inspect

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// TxnRow is one transactional id from the slot files.
type TxnRow struct {
	ID                   string                      `json:"id"`
	ProducerID           int64                       `json:"producerId"`
	Epoch                int16                       `json:"epoch"`
	State                string                      `json:"state"`
	Partitions           []volume.TxnTopicPartitions `json:"partitions"`
	PartitionCount       int                         `json:"partitionCount"`
	Groups               []string                    `json:"groups"`
	OngoingSince         string                      `json:"ongoingSince"` // RFC 3339, "" when not ongoing
	OngoingSinceMs       int64                       `json:"ongoingSinceMs"`
	TransactionTimeoutMs int32                       `json:"transactionTimeoutMs"`
	// Deadline is ongoingSince + timeout; Overdue means an Ongoing
	// transaction past it (kaas's reaper aborts it within 10 s on a healthy
	// cluster, so an overdue entry on disk means the reaper is not running).
	Deadline    string `json:"deadline"`
	Overdue     bool   `json:"overdue"`
	OverdueByMs int64  `json:"overdueByMs"`
	// Age is how long an Ongoing transaction has been open, at Now.
	AgeMs       int64  `json:"ageMs"`
	Coordinator string `json:"coordinator"`
	Tier        string `json:"tier"`
	Slot        int    `json:"slot"`
	SlotFile    string `json:"slotFile"`
	// ExpectedSlotFile is where kaas looks for this id.
	ExpectedSlotFile string `json:"expectedSlotFile"`
	WrongSlot        bool   `json:"wrongSlot"`
	Undecodable      bool   `json:"undecodable"`
	// Reaped: kaas's timeout reaper aborted it (volume.TxnEntry.Reaped);
	// Finished: its end is on the log (its markers written), false for an
	// open transaction and for one reaped by a reaper that writes no
	// ABORT markers (Rust 0.2.18); Note says why it is not finished.
	Reaped   bool   `json:"reaped"`
	Finished bool   `json:"finished"`
	Note     string `json:"note,omitempty"`
	// Holds are the partitions of groups it holds back: each group's
	// committed offset sits on its first record there (the read model's
	// blockers; filled by txn list --hanging and txn describe).
	Holds []TxnHold `json:"holds,omitempty"`
	entry volume.TxnEntry
}

// MarkFinished sets Reaped, Finished and Note of every row from the fence
// logs and the volume's generation: a transaction the reaper aborted is
// not finished where the generation's reaper writes no ABORT markers.
func MarkFinished(rows []TxnRow, p *volume.Plumbing, gi volume.GenerationInfo) {
	fenced := volume.FencedEpochs(p)
	omit := gi.ReaperMayOmitMarkers()
	for i := range rows {
		r := &rows[i]
		r.Reaped = r.entry.Reaped(fenced)
		switch r.State {
		case volume.TxnEmpty, volume.TxnCompleteCommit, volume.TxnCompleteAbort:
			r.Finished = true
		}
		if r.Reaped && omit {
			r.Finished = false
			r.Note = "aborted by the timeout reaper, which writes no ABORT markers: read_committed consumers of its partitions stall at its first record (" + gi.Assumes() + ")"
		}
	}
}

// BuildTxnRows turns slot files into rows sorted by id (then slot file).
// now decides overdue; a nil assignment leaves coordinators empty.
func BuildTxnRows(slots []*volume.TxnSlotFile, a *volume.Assignment, now time.Time) []TxnRow {
	var rt *grouphash.Router
	if a != nil {
		rt = a.Router()
	}
	var rows []TxnRow
	for _, sf := range slots {
		for _, e := range sf.Entries {
			r := TxnRow{ID: e.ID, ProducerID: e.PID, Epoch: e.Epoch, State: e.State, Partitions: e.Partitions, Groups: e.Groups,
				OngoingSinceMs: e.OngoingSinceMs, TransactionTimeoutMs: e.TransactionTimeoutMs, Slot: sf.Slot, SlotFile: sf.Path,
				ExpectedSlotFile: grouphash.TxnSlotFile(e.ID), WrongSlot: e.WrongSlot, Undecodable: e.Undecodable, Tier: string(grouphash.TierNone), entry: e}
			for _, p := range e.Partitions {
				r.PartitionCount += len(p.Partitions)
			}
			if e.OngoingSinceMs > 0 {
				since := time.UnixMilli(e.OngoingSinceMs).UTC()
				r.OngoingSince = since.Format(time.RFC3339Nano)
				deadline := since.Add(time.Duration(e.TransactionTimeoutMs) * time.Millisecond)
				r.Deadline = deadline.Format(time.RFC3339Nano)
				if e.State == volume.TxnOngoing {
					r.AgeMs = now.Sub(since).Milliseconds()
					if now.After(deadline) {
						r.Overdue = true
						r.OverdueByMs = now.Sub(deadline).Milliseconds()
					}
				}
			}
			if rt != nil {
				res := rt.Txn(e.ID)
				r.Coordinator = res.Coordinator
				r.Tier = string(res.Tier)
			}
			rows = append(rows, r)
		}
	}
	slices.SortFunc(rows, func(a, b TxnRow) int {
		if c := strings.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return strings.Compare(a.SlotFile, b.SlotFile)
	})
	return rows
}

// TxnFilter selects txn rows.
type TxnFilter struct {
	States  []string // case-insensitive state names; Empty matches ""
	Overdue bool
	// Hanging: overdue, or aborted by a reaper that writes no markers.
	Hanging bool
	IDs     []string // exact ids (describe)
}

// Match reports whether r passes.
func (f TxnFilter) Match(r *TxnRow) bool {
	if len(f.States) > 0 && !slices.ContainsFunc(f.States, func(s string) bool { return strings.EqualFold(s, r.State) }) {
		return false
	}
	if f.Overdue && !r.Overdue {
		return false
	}
	if f.Hanging && !r.Hanging() {
		return false
	}
	if len(f.IDs) > 0 && !slices.Contains(f.IDs, r.ID) {
		return false
	}
	return true
}

// FilterTxns keeps matching rows.
func FilterTxns(rows []TxnRow, f TxnFilter) []TxnRow {
	out := rows[:0:0]
	for i := range rows {
		if f.Match(&rows[i]) {
			out = append(out, rows[i])
		}
	}
	return out
}

// NormalizeTxnState maps a user-typed state to kaas's spelling, or an error.
func NormalizeTxnState(s string) (string, error) {
	for _, k := range volume.TxnStates {
		if strings.EqualFold(k, s) {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown transaction state %q (known: %s)", s, strings.Join(volume.TxnStates, ", "))
}

// FormatDurationMs prints milliseconds the way an operator reads them.
func FormatDurationMs(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return d.String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < 72*time.Hour:
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// SlotBase is the slot file's base name, for tables.
func SlotBase(p string) string { return filepath.Base(p) }
