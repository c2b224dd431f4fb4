package volume

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/internal/grouphash"
)

// Transaction states as kaas writes them; "" (or a missing key) is Empty.
const (
	TxnEmpty          = "Empty"
	TxnOngoing        = "Ongoing"
	TxnPrepareCommit  = "PrepareCommit"
	TxnPrepareAbort   = "PrepareAbort"
	TxnCompleteCommit = "CompleteCommit"
	TxnCompleteAbort  = "CompleteAbort"
)

// TxnStates are the states kaas's closed enum accepts (plus Empty as "").
var TxnStates = []string{TxnEmpty, TxnOngoing, TxnPrepareCommit, TxnPrepareAbort, TxnCompleteCommit, TxnCompleteAbort}

// TxnTopicPartitions is one partitions[] item of a transaction.
type TxnTopicPartitions struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// TxnEntry is one transactional id in a slot file.
type TxnEntry struct {
	ID                   string               `json:"id"`
	PID                  int64                `json:"pid"`
	Epoch                int16                `json:"epoch"`
	Partitions           []TxnTopicPartitions `json:"partitions"`
	OngoingSinceMs       int64                `json:"ongoingSinceMs"`
	TransactionTimeoutMs int32                `json:"transactionTimeoutMs"`
	// State is kaas's state name; Empty when the file says "" or nothing.
	State  string   `json:"state"`
	Groups []string `json:"groups"`
	// Slot is the slot file the entry was found in; WrongSlot says kaas
	// looks for this id in another slot file and never finds it here.
	Slot      int  `json:"slot"`
	WrongSlot bool `json:"wrongSlot"`
	// Undecodable is true when kaas cannot decode the entry's slot file, so
	// every transactional id in it fails.
	Undecodable bool `json:"undecodable"`
}

// TxnSlotFile is one parsed txn_state/slot-<n>.json.
type TxnSlotFile struct {
	Path    string     `json:"path"`
	Slot    int        `json:"slot"` // -1 when the name is not slot-<0..49>.json
	Entries []TxnEntry `json:"entries"`
}

// Finding codes for transaction files.
const (
	CodeTxnUnknownState = "txn.unknownState"
	CodeTxnWrongSlot    = "txn.wrongSlot"
	CodeTxnBadEntry     = "txn.badEntry"
	CodeTxnBadSlotName  = "txn.badSlotFileName"
	CodeTxnEmptyFile    = "txn.emptyFile"
	CodeTxnCorrupt      = "txn.corruptSlot"
)

const fixTxnCorrupt = "every transactional id in this slot fails (InitProducerId, EndTxn) until the file decodes: stop producers using these ids, move the file aside and let kaas start the slot empty; their producers re-initialise"

// ParseSlotName returns n for "slot-<n>.json" with n in 0..49 written without
// padding (kaas's own name); -1 otherwise.
func ParseSlotName(name string) int {
	s, ok := strings.CutPrefix(name, "slot-")
	if !ok {
		return -1
	}
	s, ok = strings.CutSuffix(s, ".json")
	if !ok || s == "" || (len(s) > 1 && s[0] == '0') {
		return -1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n >= grouphash.TxnSlots {
		return -1
	}
	return n
}

type rawTxnEntry struct {
	PID                  *int64               `json:"pid"`
	Epoch                *int64               `json:"epoch"`
	Partitions           []TxnTopicPartitions `json:"partitions"`
	OngoingSinceMs       int64                `json:"ongoingSinceMs"`
	TransactionTimeoutMs int64                `json:"transactionTimeoutMs"`
	State                *string              `json:"state"`
	Groups               []string             `json:"groups"`
}

// ParseTxnSlot parses slot-file bytes. slot is the file's slot number (-1
// when unknown; no wrong-slot check then). Undecodable JSON is a *FileError;
// entries kaas would reject are still returned, marked, with findings.
func ParseTxnSlot(path string, slot int, data []byte) (*TxnSlotFile, []Finding, error) {
	sf := &TxnSlotFile{Path: path, Slot: slot}
	var fs []Finding
	add := func(sev Severity, code, msg, fix string) {
		fs = append(fs, Finding{Severity: sev, Code: code, Path: path, Message: msg, Fix: fix})
	}
	if len(bytes.TrimSpace(data)) == 0 {
		add(SevInfo, CodeTxnEmptyFile, "empty slot file: kaas reads it as a slot with no transactions", "")
		return sf, fs, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, nil, &FileError{Path: path, Problem: describeJSONError(data, err) + "; every transactional id in this slot fails in kaas"}
	}
	if top == nil {
		return nil, nil, &FileError{Path: path, Problem: "the file holds JSON null, not a slot object; every transactional id in this slot fails in kaas"}
	}
	undecodable := false
	for _, id := range sortedKeys(top) {
		var r rawTxnEntry
		if err := json.Unmarshal(top[id], &r); err != nil {
			add(SevError, CodeTxnBadEntry, fmt.Sprintf("transactional id %q: %s: kaas cannot decode this slot file", DisplayName(id), describeJSONError(top[id], err)), fixTxnCorrupt)
			undecodable = true
			continue
		}
		e, ok := txnEntry(id, &r, slot, add)
		undecodable = undecodable || !ok
		sf.Entries = append(sf.Entries, e)
	}
	if undecodable {
		for i := range sf.Entries {
			sf.Entries[i].Undecodable = true
		}
	}
	return sf, fs, nil
}

// txnEntry makes the entry of transactional id from its decoded JSON,
// adding a finding for each thing kaas would reject (ok is false then:
// kaas cannot decode the slot file) and for an id stored in another slot
// than the one it hashes to.
func txnEntry(id string, r *rawTxnEntry, slot int, add addFinding) (e TxnEntry, ok bool) {
	e = TxnEntry{ID: id, Partitions: r.Partitions, OngoingSinceMs: r.OngoingSinceMs, Groups: r.Groups, Slot: slot, State: TxnEmpty}
	ok = true
	probs := txnNumbers(&e, r)
	if r.State != nil && *r.State != "" {
		if !slices.Contains(TxnStates[1:], *r.State) {
			add(SevError, CodeTxnUnknownState,
				fmt.Sprintf("transactional id %q has state %q, which kaas does not know (Empty is written as \"\"; known: %s): kaas cannot decode this slot file", DisplayName(id), *r.State, strings.Join(TxnStates[1:], ", ")),
				fixTxnCorrupt)
			ok = false
		}
		e.State = *r.State
	}
	if len(probs) > 0 {
		add(SevError, CodeTxnBadEntry, fmt.Sprintf("transactional id %q: %s: kaas cannot decode this slot file", DisplayName(id), strings.Join(probs, "; ")), fixTxnCorrupt)
		ok = false
	}
	if slot >= 0 {
		if want := grouphash.TxnSlot(grouphash.FNV1a32(id)); want != slot {
			e.WrongSlot = true
			add(SevWarning, CodeTxnWrongSlot,
				fmt.Sprintf("transactional id %q is stored in slot-%d.json but hashes to slot-%d.json: kaas never finds it here (its producer starts over, and this entry is never reaped)", DisplayName(id), slot, want),
				fmt.Sprintf("if the producer still needs this state, move the entry into slot-%d.json while its coordinator is down; otherwise it is inert", want))
		}
	}
	return e, ok
}

// txnNumbers sets the entry's producer id, epoch and timeout from r, and
// says what is wrong with them for kaas: a missing pid or epoch, an epoch
// beyond 16 bits, a timeout beyond 32.
func txnNumbers(e *TxnEntry, r *rawTxnEntry) []string {
	var probs []string
	if r.PID == nil {
		probs = append(probs, `"pid" is missing`)
	} else {
		e.PID = *r.PID
	}
	if r.Epoch == nil {
		probs = append(probs, `"epoch" is missing`)
	} else if *r.Epoch < math.MinInt16 || *r.Epoch > math.MaxInt16 {
		probs = append(probs, fmt.Sprintf(`"epoch" %d does not fit a 16-bit integer`, *r.Epoch))
	} else {
		e.Epoch = int16(*r.Epoch)
	}
	if r.TransactionTimeoutMs < math.MinInt32 || r.TransactionTimeoutMs > math.MaxInt32 {
		probs = append(probs, fmt.Sprintf(`"transactionTimeoutMs" %d does not fit a 32-bit integer`, r.TransactionTimeoutMs))
	} else {
		e.TransactionTimeoutMs = int32(r.TransactionTimeoutMs)
	}
	return probs
}

// ReadTxnState reads every slot file in CD/txn_state. Files kaasctl cannot
// decode come back as FileErrors; the rest of the slots are still returned.
func ReadTxnState(l Layout) ([]*TxnSlotFile, []Finding, []*FileError) {
	dir := l.TxnStatePath()
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil, nil
		}
		return nil, nil, []*FileError{{Path: dir, Problem: "cannot list: " + err.Error()}}
	}
	var out []*TxnSlotFile
	var fs []Finding
	var errs []*FileError
	for _, e := range ents {
		name := e.Name()
		p := filepath.Join(dir, name)
		if e.IsDir() || strings.HasSuffix(name, ".tmp") {
			continue // tmp files are reported by the volume-wide check
		}
		slot := ParseSlotName(name)
		if slot < 0 {
			fs = append(fs, Finding{Severity: SevWarning, Code: CodeTxnBadSlotName, Path: p,
				Message: "not a slot file kaas reads (kaas names them slot-0.json … slot-49.json, no zero padding); its transactions are invisible to kaas",
				Fix:     "if it holds live state, merge its entries into the slot file each id hashes to ('kaasctl whois-coordinator --txn ID' names it)"})
			if !strings.HasPrefix(name, "slot-") || !strings.HasSuffix(name, ".json") {
				continue
			}
		}
		data, err := readFileLimited(p)
		if err != nil {
			errs = append(errs, &FileError{Path: p, Problem: readProblem(err)})
			continue
		}
		sf, ffs, perr := ParseTxnSlot(p, slot, data)
		fs = append(fs, ffs...)
		if perr != nil {
			errs = append(errs, asFileError(p, perr))
			continue
		}
		out = append(out, sf)
	}
	slices.SortFunc(out, func(a, b *TxnSlotFile) int {
		if a.Slot != b.Slot {
			return a.Slot - b.Slot
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out, fs, errs
}

func asFileError(path string, err error) *FileError {
	if fe, ok := err.(*FileError); ok {
		return fe
	}
	return &FileError{Path: path, Problem: err.Error()}
}

// CodeTxnReapedNoMarkers: a transaction the reaper aborted on a
// generation whose reaper writes no ABORT markers.
const CodeTxnReapedNoMarkers = "txn.reapedWithoutMarkers"

// FencedEpochs is the highest epoch the fence logs hold per producer id
// (every broker writes one on a transactional InitProducerId above epoch 0).
func FencedEpochs(p *Plumbing) map[int64]int16 {
	out := map[int64]int16{}
	if p == nil {
		return out
	}
	for _, f := range p.Fences {
		for _, e := range f.Entries {
			if e.Epoch > out[e.PID] {
				out[e.PID] = e.Epoch
			}
		}
	}
	return out
}

// Reaped reports whether kaas's transaction reaper aborted the entry: a
// CompleteAbort whose epoch is above every epoch the fence logs hold for
// its producer id. The reaper bumps the epoch without a fence entry; an
// InitProducerId bump writes one and EndTxn keeps the epoch. A producer that
// initialises again after the reap writes a fence at the new epoch and the
// evidence is gone.
func (e TxnEntry) Reaped(fenced map[int64]int16) bool {
	return e.State == TxnCompleteAbort && e.Epoch > fenced[e.PID]
}

// ReapedFinding is the finding for an entry the reaper aborted on a
// generation whose reaper writes no ABORT markers ("" code when there is
// nothing to say).
func ReapedFinding(path string, e TxnEntry, gi GenerationInfo) Finding {
	return Finding{Severity: SevWarning, Code: CodeTxnReapedNoMarkers, Path: path,
		Message: fmt.Sprintf("transaction %q (producer %d) was aborted by kaas's timeout reaper (CompleteAbort at epoch %d, above every fence-log epoch of its producer): not finished on the log: %s (%s)",
			e.ID, e.PID, e.Epoch, gi.BrokerFact(func(b BrokerFacts) string { return b.ReaperNote }), gi.Assumes()),
		Fix: "its partitions are no longer in the slot (the reaper clears them): find those whose last stable offset stays below the log end (ListOffsets read_committed against read_uncommitted); " +
			"no kaas API writes the missing marker; on Rust 0.2.18 a restart of every broker ends the stall, and read_committed consumers then read its records as if committed: reset their offsets past the transaction first if they must not (kaasctl offsets reset)"}
}

// HoldsReadCommitted reports whether the volume's generation's brokers
// (any candidate's, when undetermined) hold read_committed consumers at
// the last stable offset: only then can a transaction block a group.
func (gi GenerationInfo) HoldsReadCommitted() bool {
	return gi.anyBroker(func(b BrokerFacts) bool { return b.HoldsReadCommitted })
}

// ListsStableOffset reports whether every candidate generation's brokers
// answer ListOffsets read_committed with the last stable offset.
func (gi GenerationInfo) ListsStableOffset() bool {
	return !gi.anyBroker(func(b BrokerFacts) bool { return !b.ListsStableOffset })
}

func (gi GenerationInfo) anyBroker(f func(BrokerFacts) bool) bool {
	gens := gi.cands
	if gi.Gen != GenUnknown {
		gens = []Generation{gi.Gen}
	}
	if len(gens) == 0 {
		gens = AllGenerations
	}
	for _, g := range gens { // not specsOf: a blocker asks this per partition
		if s, ok := g.Spec(); ok && f(s.Broker) {
			return true
		}
	}
	return false
}

// ReaperMayOmitMarkers reports whether the volume's generation (any
// candidate, when undetermined) has a reaper that writes no ABORT markers
// where its brokers hold read_committed consumers behind transactions
// (on a generation that does not, a missing marker stalls nothing).
func (gi GenerationInfo) ReaperMayOmitMarkers() bool {
	return gi.anyBroker(func(b BrokerFacts) bool { return !b.ReaperWritesMarkers && b.HoldsReadCommitted })
}
