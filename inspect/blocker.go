package inspect

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// Why a lagging partition does not move: its blocker, a fact of the read
// model. observe gathers the evidence (the record at the committed offset
// read from the segments, the batch headers after it, the slot files, the
// marker queue, the last stable offset the leader serves, what a window
// of observations saw) and ClassifyBlocker names the blocker by the rules
// below, one function each, in order: the first that applies wins.

// Blocker kinds.
const (
	// BlockMarkersPending: the transaction at the committed offset ended,
	// but its markers wait in marker_queue/to-<broker>/ for that broker.
	BlockMarkersPending = "markersPending"
	// BlockReapedNoMarkers: kaas's reaper aborted the transaction on a
	// generation whose reaper writes no ABORT markers: it never ends on
	// the log.
	BlockReapedNoMarkers = "abortedWithoutMarkers"
	// BlockMarkerMissing: the slot file says the transaction ended, but
	// no marker follows its records on this partition.
	BlockMarkerMissing = "markerMissing"
	// BlockOverdueTxn: an Ongoing transaction past its timeout (the
	// reaper should have aborted it).
	BlockOverdueTxn = "overdueTransaction"
	// BlockOpenTxn: an Ongoing transaction within its timeout, or one the
	// log shows open with no slot entry for its producer.
	BlockOpenTxn = "openTransaction"
	// BlockStableBehind: the leader's last stable offset is below the
	// committed offset, and no transaction could be read where it is.
	BlockStableBehind = "lastStableBehind"
	// BlockCorruptBatch: the batch at the committed offset cannot be what
	// kaas stored (CRC, framing, codec): every fetch of it fails.
	BlockCorruptBatch = "corruptBatch"
	// BlockRecord: the group's consumer sat on this record for the whole
	// window while the group was alive: a record it cannot get past.
	BlockRecord = "record"
	// BlockNoConsumer: the group has no member (live): nothing consumes.
	BlockNoConsumer = "noConsumer"
	// BlockNone: no blocker found (Detail says what was seen).
	BlockNone = "none"
)

// BlockerKinds lists every kind, in the order the rules try them.
var BlockerKinds = []string{BlockMarkersPending, BlockReapedNoMarkers, BlockMarkerMissing, BlockOverdueTxn, BlockOpenTxn, BlockStableBehind, BlockCorruptBatch, BlockRecord, BlockNoConsumer, BlockNone}

// Blocking reports whether kind is a blocker (not BlockNone).
func Blocking(kind string) bool { return kind != "" && kind != BlockNone }

// Stuck is what a window of observations saw of one partition: its
// committed offset stayed at Offset from Since to Until (Moved: it did
// not), and whether the group was alive all along (Alive, AliveBy: the
// members the brokers reported at every observation, or offline the
// offset file rewritten by commits).
type Stuck struct {
	Offset  int64     `json:"offset"`
	Moved   bool      `json:"moved"`
	Since   time.Time `json:"since"`
	Until   time.Time `json:"until"`
	Alive   bool      `json:"alive"`
	AliveBy string    `json:"aliveBy"`
	// Samples is how many observations the window held.
	Samples int `json:"samples"`
	// Elsewhere: the offset sat, but the consumer's other partitions moved
	// meanwhile (it drains in turns), so the window restarted at Since.
	Elsewhere bool `json:"workedElsewhere,omitempty"`
}

// Window is Until − Since.
func (s *Stuck) Window() time.Duration { return s.Until.Sub(s.Since) }

// BlockingTxn is the transaction a partition waits behind.
type BlockingTxn struct {
	// TransactionalID is "" when no slot entry holds its producer id.
	TransactionalID string `json:"transactionalId"`
	ProducerID      int64  `json:"producerId"`
	// Epoch is the epoch its records carry; SlotEpoch the slot's now.
	Epoch     int16  `json:"epoch"`
	SlotEpoch int16  `json:"slotEpoch"`
	State     string `json:"state"`
	SlotFile  string `json:"slotFile,omitempty"`
	// FirstOffset and LastOffset bound its records on this partition as
	// far as the walk went; EndOffset is where its marker is (0: none).
	FirstOffset int64 `json:"firstOffset"`
	LastOffset  int64 `json:"lastOffset"`
	// OngoingSince, Deadline and OverdueBy from the slot (Ongoing only).
	OngoingSince string `json:"ongoingSince,omitempty"`
	Deadline     string `json:"deadline,omitempty"`
	OverdueByMs  int64  `json:"overdueByMs,omitempty"`
	Reaped       bool   `json:"reaped"`
	// Markers are the marker files waiting for it.
	Markers []PendingMarker `json:"markers,omitempty"`
	// Groups are the groups it blocks (every group observe described).
	Groups []string `json:"groups"`
}

// PendingMarker is one marker file in marker_queue/to-<broker>/.
type PendingMarker struct {
	Path   string `json:"path"`
	Target string `json:"target"`
	Commit bool   `json:"commit"`
	Epoch  int16  `json:"epoch"`
	AgeMs  int64  `json:"ageMs"`
}

// PartitionBlocker is the blocker of one lagging partition of a group.
type PartitionBlocker struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Committed is the offset the consumer resumes from (Resume), LogEnd
	// and Lag what the read model gave.
	Committed int64 `json:"committed"`
	LogEnd    int64 `json:"logEnd"`
	Lag       int64 `json:"lag"`
	// StableEnd is the last stable offset (nil: unknown), StableSource
	// where it came from ("wire": ListOffsets read_committed; "segments":
	// the walk of the batch headers), StableNote why it is unknown;
	// StableLag is StableEnd − Committed.
	StableEnd    *int64 `json:"lastStableOffset"`
	StableSource string `json:"lastStableSource,omitempty"`
	StableNote   string `json:"lastStableNote,omitempty"`
	StableLag    *int64 `json:"lagToLastStable"`
	Kind         string `json:"kind"`
	Detail       string `json:"detail"`
	// Record is what the segments hold at Committed (nil: not read).
	Record *volume.RecordRead `json:"record,omitempty"`
	// Scan is the walk of the batch headers after it.
	Scan  *volume.TxnScan `json:"scan,omitempty"`
	Txn   *BlockingTxn    `json:"transaction,omitempty"`
	Stuck *Stuck          `json:"stuck,omitempty"`
	// Fix is what to do, with a command that runs as printed (FixCommand).
	Fix        string `json:"fix"`
	FixCommand string `json:"fixCommand,omitempty"`
	// Assumes names the kaas generation the rules assumed.
	Assumes string `json:"assumes"`
}

// BlockerFacts are the evidence ClassifyBlocker reads for one partition.
type BlockerFacts struct {
	Group string
	Part  *PartitionState
	// Record and Scan are the segments' answer at Part.Resume (nil: not
	// read: no data dir, or no segments).
	Record *volume.RecordRead
	Scan   *volume.TxnScan
	// Txns are the slot files' rows (MarkFinished applied), Markers the
	// marker queue.
	Txns    []TxnRow
	Markers []*volume.Marker
	Gen     volume.GenerationInfo
	// Live: the brokers were asked; Members how many the group has then.
	Live    bool
	Members int
	// Stable is the last stable offset the leader served (nil: not asked);
	// StableRecord and StableScan the segments' answer there, read when it
	// is below the committed offset (a transaction earlier in the log
	// holds read_committed consumers back).
	Stable       *int64
	StableRecord *volume.RecordRead
	StableScan   *volume.TxnScan
	Stuck        *Stuck
	Now          time.Time
	// Flags are the volume and connection flags to repeat in a fix.
	Flags string
}

// blockerRules are tried in order; each returns false when it does not
// apply.
var blockerRules = []func(*BlockerFacts, *PartitionBlocker) bool{
	txnBlocker, corruptBlocker, recordBlocker, noConsumerBlocker,
}

// ClassifyBlocker names the blocker of one lagging partition.
func ClassifyBlocker(f *BlockerFacts) PartitionBlocker {
	p := f.Part
	b := PartitionBlocker{Group: f.Group, Topic: p.Topic, Partition: p.Partition, Committed: p.Resume.Value, LogEnd: p.LogEnd.Value, Lag: p.Lag,
		Record: f.Record, Scan: f.Scan, Stuck: f.Stuck, Assumes: f.Gen.Assumes(), Kind: BlockNone}
	stableEnd(f, &b)
	for _, rule := range blockerRules {
		if rule(f, &b) {
			return b
		}
	}
	b.Detail = noBlockerDetail(f)
	return b
}

// stableEnd sets the last stable offset: the leader's when it was asked
// and the generation's brokers answer it, else the walk's.
func stableEnd(f *BlockerFacts, b *PartitionBlocker) {
	if f.Stable != nil && !f.Gen.ListsStableOffset() {
		f.Stable = nil // the answer is not the last stable offset (its high watermark)
	}
	if !f.Gen.HoldsReadCommitted() {
		v := b.LogEnd
		b.StableEnd, b.StableSource = &v, "generation"
		b.StableNote = f.Gen.BrokerFact(func(x volume.BrokerFacts) string { return x.StableOffsetNote }) + " (" + f.Gen.Assumes() + ")"
		l := max(0, v-b.Committed)
		b.StableLag = &l
		return
	}
	switch {
	case f.Stable != nil:
		v := *f.Stable
		b.StableEnd, b.StableSource = &v, volume.SourceWire
	case f.Scan != nil:
		if v, ok := f.Scan.StableEnd(); ok {
			b.StableEnd, b.StableSource = &v, "segments"
		} else {
			b.StableNote = fmt.Sprintf("undetermined: the walk of the batch headers stopped at offset %d, its read bound, before the log end", f.Scan.To)
		}
	case f.Record != nil && f.Record.Problem != "":
		b.StableNote = "undetermined: " + f.Record.Problem
	default:
		b.StableNote = "undetermined: the segments were not read"
	}
	if b.StableEnd != nil {
		l := max(0, *b.StableEnd-b.Committed)
		b.StableLag = &l
	}
}

// openTxnAt is the open transaction a read_committed consumer at r's
// offset stops at: the walk's first, with only markers and aborted
// records before it (nil: none).
func openTxnAt(r *volume.RecordRead, sc *volume.TxnScan) *volume.LogTxn {
	if r == nil || r.Batch == nil || sc == nil {
		return nil
	}
	return sc.Blocking()
}

// heldTxn is the transaction the partition waits behind: the one a
// consumer at the committed offset stops at, else the one at the
// leader's last stable offset below it; at says where it starts and scan
// is its walk.
func heldTxn(f *BlockerFacts) (lt *volume.LogTxn, at string, scan *volume.TxnScan) {
	c := f.Part.Resume.Value
	if t := openTxnAt(f.Record, f.Scan); t != nil {
		if t.FirstOffset <= c {
			return t, fmt.Sprintf("the committed offset %d is", c), f.Scan
		}
		return t, fmt.Sprintf("the committed offset %d is followed only by transaction markers and aborted records up to offset %d,", c, t.FirstOffset), f.Scan
	}
	if f.Stable != nil {
		if t := openTxnAt(f.StableRecord, f.StableScan); t != nil {
			return t, fmt.Sprintf("the leader's last stable offset %d, below the committed offset %d (read_committed consumers read nothing past it), is", *f.Stable, c), f.StableScan
		}
	}
	return nil, "", nil
}

// txnBlocker: the committed offset (or the last stable offset below it)
// sits on the first record of a transaction with no marker after it.
func txnBlocker(f *BlockerFacts, b *PartitionBlocker) bool {
	if !f.Gen.HoldsReadCommitted() {
		return false // no transaction holds a consumer back on this generation
	}
	lt, at, scan := heldTxn(f)
	if lt == nil {
		return stableBehind(f, b)
	}
	t := &BlockingTxn{ProducerID: lt.ProducerID, Epoch: lt.ProducerEpoch, FirstOffset: lt.FirstOffset, LastOffset: lt.LastOffset, Groups: []string{}}
	row := txnRowOf(f.Txns, lt.ProducerID)
	if row != nil {
		t.TransactionalID, t.SlotEpoch, t.State, t.SlotFile, t.Reaped = row.ID, row.Epoch, row.State, row.SlotFile, row.Reaped
		if row.State == volume.TxnOngoing {
			t.OngoingSince, t.Deadline, t.OverdueByMs = row.OngoingSince, row.Deadline, row.OverdueByMs
		}
	}
	t.Markers = pendingMarkers(f.Markers, lt.ProducerID, b.Topic, b.Partition, f.Now)
	b.Txn = t
	who := txnName(t)
	first := fmt.Sprintf("%s the first record of %s, and no COMMIT or ABORT marker follows it on %s/%d", at, who, b.Topic, b.Partition)
	if scan != nil && !scan.Complete {
		first += fmt.Sprintf(" up to offset %d (the walk's read bound)", scan.To)
	}
	readers := ": read_committed consumers stop here, read_uncommitted ones read on"
	switch {
	case len(t.Markers) > 0:
		m := t.Markers[0]
		b.Kind = BlockMarkersPending
		b.Detail = fmt.Sprintf("%s; its %s marker waits in %s for %s for %s%s", first, commitWord(m.Commit), m.Path, m.Target, FormatDurationMs(m.AgeMs), readers)
		b.Fix = fmt.Sprintf("the target broker %s applies its inbox every 2 s while it leads the partition: if %s is down, start it; if it no longer leads %s/%d, kaas drops the marker (a WARN in its log), and the partition stays blocked until the brokers restart", m.Target, m.Target, b.Topic, b.Partition)
	case row != nil && row.Reaped && !row.Finished:
		b.Kind = BlockReapedNoMarkers
		b.Detail = fmt.Sprintf("%s; kaas's timeout reaper aborted it (slot %s: CompleteAbort at epoch %d) and wrote no ABORT marker%s", first, SlotBase(row.SlotFile), row.Epoch, readers)
		hangingFix(f, b, lt)
	case row != nil && row.State != volume.TxnOngoing && row.State != volume.TxnEmpty:
		b.Kind = BlockMarkerMissing
		b.Detail = fmt.Sprintf("%s; its slot says %s (epoch %d), so its coordinator ended it but the marker never reached this partition%s", first, row.State, row.Epoch, readers)
		hangingFix(f, b, lt)
	case row != nil && row.Overdue:
		b.Kind = BlockOverdueTxn
		b.Detail = fmt.Sprintf("%s; it is Ongoing since %s, OVERDUE by %s (timeout %s)%s", first, row.OngoingSince, FormatDurationMs(row.OverdueByMs), FormatDurationMs(int64(row.TransactionTimeoutMs)), readers)
		b.Fix = fmt.Sprintf("kaas's reaper (every 10 s, on every broker) should have aborted it: check that the brokers run; %s", reaperNote(f.Gen))
	default:
		b.Kind = BlockOpenTxn
		b.Detail = first + readers
		if row != nil && row.Deadline != "" {
			b.Detail += fmt.Sprintf("; Ongoing since %s, its timeout ends at %s", row.OngoingSince, row.Deadline)
		} else if row == nil {
			b.Detail += fmt.Sprintf("; no slot file holds producer id %d (its transactional id is unknown: a slot kaasctl could not read, or a producer of another cluster)", lt.ProducerID)
		}
		b.Fix = fmt.Sprintf("if the producer of %s is alive, it is mid-transaction: let it commit or abort; if it is gone, kaas's reaper aborts it when its timeout ends: %s", who, reaperNote(f.Gen))
	}
	return true
}

// stableBehind: the leader's last stable offset is below the committed
// offset and no transaction could be read there.
func stableBehind(f *BlockerFacts, b *PartitionBlocker) bool {
	if f.Stable == nil || *f.Stable >= b.Committed || b.LogEnd <= b.Committed {
		return false
	}
	b.Kind = BlockStableBehind
	b.Detail = fmt.Sprintf("the leader's last stable offset %d is below the committed offset %d: read_committed consumers read nothing until the transaction open at %d ends (its batch could not be read there: %s)",
		*f.Stable, b.Committed, *f.Stable, recordProblem(f.StableRecord))
	b.Fix = fmt.Sprintf("find the producer of the transaction open at offset %d ('kaasctl txn list --hanging'); %s", *f.Stable, reaperNote(f.Gen))
	return true
}

func recordProblem(r *volume.RecordRead) string {
	switch {
	case r == nil:
		return "the segments were not read"
	case r.Problem != "":
		return r.Problem
	case r.Batch != nil && !r.Batch.Transactional:
		return fmt.Sprintf("the batch there, %d–%d, is not transactional", r.Batch.BaseOffset, r.Batch.LastOffset)
	}
	return "no open transaction starts there within the walk"
}

// hangingFix is the fix for a transaction that will never end on the log.
func hangingFix(f *BlockerFacts, b *PartitionBlocker, lt *volume.LogTxn) {
	skip := resetCommand(f, b, lt.LastOffset+1)
	b.Fix = fmt.Sprintf("no kaas API writes the missing marker: %s; to skip the transaction's records instead of reading them as committed, stop the group's consumers and move it past them before that restart", hangingNote(f.Gen))
	b.FixCommand = skip
}

func reaperNote(gi volume.GenerationInfo) string {
	return gi.BrokerFact(func(b volume.BrokerFacts) string { return b.ReaperNote }) + " (" + gi.Assumes() + ")"
}

func hangingNote(gi volume.GenerationInfo) string {
	return gi.BrokerFact(func(b volume.BrokerFacts) string { return b.HangingTxnFix }) + " (" + gi.Assumes() + ")"
}

func commitWord(commit bool) string {
	if commit {
		return "COMMIT"
	}
	return "ABORT"
}

// txnName names a transaction for people.
func txnName(t *BlockingTxn) string {
	if t.TransactionalID != "" {
		return fmt.Sprintf("transaction %q (producer id %d, epoch %d)", volume.DisplayName(t.TransactionalID), t.ProducerID, t.Epoch)
	}
	return fmt.Sprintf("a transaction of producer id %d (epoch %d)", t.ProducerID, t.Epoch)
}

// txnRowOf is the slot row of producer pid (nil: none).
func txnRowOf(rows []TxnRow, pid int64) *TxnRow {
	for i := range rows {
		if rows[i].ProducerID == pid {
			return &rows[i]
		}
	}
	return nil
}

// pendingMarkers are the queued marker files of pid that name the
// partition (or name no partition).
func pendingMarkers(ms []*volume.Marker, pid int64, topic string, part int32, now time.Time) []PendingMarker {
	var out []PendingMarker
	for _, m := range ms {
		if m == nil || m.ProducerID != pid || !markerNames(m, topic, part) {
			continue
		}
		age := int64(0)
		if !m.ModTime.IsZero() {
			age = max(0, now.Sub(m.ModTime).Milliseconds())
		}
		out = append(out, PendingMarker{Path: m.Path, Target: m.Target, Commit: m.Commit, Epoch: m.ProducerEpoch, AgeMs: age})
	}
	return out
}

func markerNames(m *volume.Marker, topic string, part int32) bool {
	if len(m.Partitions) == 0 {
		return true
	}
	for _, tp := range m.Partitions {
		if tp.Topic == topic && slices.Contains(tp.Partitions, part) {
			return true
		}
	}
	return false
}

// corruptBlocker: the batch at the committed offset fails every fetch.
func corruptBlocker(f *BlockerFacts, b *PartitionBlocker) bool {
	r := f.Record
	if r == nil || !r.Corrupt || r.Batch == nil {
		return false
	}
	b.Kind = BlockCorruptBatch
	b.Detail = fmt.Sprintf("the batch holding offset %d (offsets %d–%d, byte %d of %s) is corrupt: %s", b.Committed, r.Batch.BaseOffset, r.Batch.LastOffset, r.Batch.Position, r.Batch.Segment, r.Problem)
	b.Fix = "the consumer cannot fetch past this batch: stop the group's consumers and move the group past it (its records are lost to this group)"
	b.FixCommand = resetCommand(f, b, r.Batch.LastOffset+1)
	return true
}

// recordBlocker: the consumer sat on the record at its committed offset
// for the whole window while its group was alive.
func recordBlocker(f *BlockerFacts, b *PartitionBlocker) bool {
	s := f.Stuck
	if s == nil || !s.Alive || s.Moved || s.Offset != b.Committed || s.Window() <= 0 || f.Record == nil || f.Record.Batch == nil || len(f.Record.Records) == 0 {
		return false
	}
	r := f.Record.Records[0]
	if r.Offset != b.Committed {
		return false
	}
	b.Kind = BlockRecord
	b.Detail = fmt.Sprintf("the group's consumer sat on offset %d for %s (%d observations; alive: %s) while the log end was %d: it cannot get past the record there (%s)",
		b.Committed, roundSpan(s.Window()), s.Samples, s.AliveBy, b.LogEnd, RecordSummary(r))
	b.Fix = "find why the consumer refuses this record (its logs, a deserializer or handler error); to skip exactly this one record, stop the group's consumers, then"
	b.FixCommand = resetCommand(f, b, b.Committed+1)
	return true
}

// noConsumerBlocker: the brokers say the group has no member.
func noConsumerBlocker(f *BlockerFacts, b *PartitionBlocker) bool {
	if !f.Live || f.Members > 0 {
		return false
	}
	b.Kind = BlockNoConsumer
	b.Detail = fmt.Sprintf("the group has no member: nothing consumes %s/%d (lag %d)", b.Topic, b.Partition, b.Lag)
	if r := f.Record; r != nil && len(r.Records) > 0 {
		b.Detail += "; next record: " + RecordSummary(r.Records[0])
	}
	b.Fix = "start the group's consumers (they resume from the committed offset)"
	return true
}

// noBlockerDetail says what was seen when no rule applied.
func noBlockerDetail(f *BlockerFacts) string {
	if r := f.Record; r != nil && r.Batch != nil && r.Batch.Transactional && !f.Gen.HoldsReadCommitted() {
		return "no blocker: the committed offset is in a transaction, and on this generation " +
			f.Gen.BrokerFact(func(b volume.BrokerFacts) string { return b.ReadCommittedNote }) + " (" + f.Gen.Assumes() + ")"
	}
	switch {
	case f.Record == nil:
		return "no blocker found: the segments were not read (no data dir)"
	case f.Record.Batch == nil:
		return "no blocker found: " + f.Record.Problem
	case f.Stuck == nil:
		return "no blocker found at the committed offset (" + recordOrBatch(f.Record) + "); not watched over a window: pass --window to see whether the consumer sits on it"
	case f.Stuck.Moved || f.Stuck.Offset != f.Part.Resume.Value:
		return "no blocker: the committed offset moved in the window"
	case f.Stuck.Elsewhere && f.Stuck.Samples < 2:
		return "no blocker: the committed offset stayed while the group's consumer moved its other partitions (it drains in turns; a consumer that cannot get past a record stops everywhere it consumes)"
	case !f.Stuck.Alive:
		return "no blocker found: the committed offset stayed, but nothing showed the group alive (" + f.Stuck.AliveBy + ")"
	}
	return "no blocker found at the committed offset (" + recordOrBatch(f.Record) + ")"
}

func recordOrBatch(r *volume.RecordRead) string {
	if len(r.Records) > 0 {
		return RecordSummary(r.Records[0])
	}
	return fmt.Sprintf("batch %d–%d", r.Batch.BaseOffset, r.Batch.LastOffset)
}

// RecordSummary is one record in a line: offset, time, sizes, headers and
// a printable preview.
func RecordSummary(r volume.Record) string {
	s := fmt.Sprintf("offset %d at %s, key %s, value %s, %s", r.Offset, time.UnixMilli(r.TimestampMs).UTC().Format(time.RFC3339Nano),
		sizeWord(r.KeyBytes), sizeWord(r.ValueBytes), healthPlural(r.Headers, "header", "headers"))
	if r.Control != "" {
		return s + ", a " + r.Control + " marker"
	}
	if r.ValueBytes > 0 {
		s += ": " + Preview(r.Value, r.ValueBytes)
	}
	return s
}

func sizeWord(n int) string {
	if n < 0 {
		return "null"
	}
	return strconv.Itoa(n) + " B"
}

// Preview shows bytes safely: valid UTF-8 quoted with every
// non-printable, control or bidi character escaped, else hex; "…" when
// cut (total is the full size).
func Preview(b []byte, total int) string {
	var s string
	if isText(b) {
		s = strconv.QuoteToGraphic(string(b))
	} else {
		s = fmt.Sprintf("0x%x", b)
	}
	if total > len(b) {
		s += "…"
	}
	return s
}

func isText(b []byte) bool {
	q := strconv.Quote(string(b))
	return !strings.Contains(q, `\x`) && !strings.Contains(q, `\u00`)
}

// resetCommand is the offsets reset that moves exactly one partition of
// the group to offset to, runnable as printed.
func resetCommand(f *BlockerFacts, b *PartitionBlocker, to int64) string {
	cmd := fmt.Sprintf("kaasctl offsets reset%s --group %s --topic %s:%d --to-offset %d --execute", f.Flags, ShellWord(f.Group), ShellWord(b.Topic), b.Partition, to)
	if !f.Live {
		cmd += " --offline" // no broker was given: the reset writes the offset file
	}
	return cmd
}

// ShellWord quotes s for a POSIX shell when it needs it.
func ShellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:=,@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// LinkTxnGroups fills every blocker's transaction with the groups the
// same producer's transaction blocks across bs.
func LinkTxnGroups(bs []PartitionBlocker) {
	groups := map[int64][]string{}
	for _, b := range bs {
		if b.Txn != nil && !slices.Contains(groups[b.Txn.ProducerID], b.Group) {
			groups[b.Txn.ProducerID] = append(groups[b.Txn.ProducerID], b.Group)
		}
	}
	for i := range bs {
		if t := bs[i].Txn; t != nil {
			t.Groups = slices.Sorted(slices.Values(groups[t.ProducerID]))
		}
	}
}

// TxnHold is one partition of one group a transaction holds back.
type TxnHold struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Committed is where the group sits (the transaction's first record
	// there), Kind the blocker kind.
	Committed int64  `json:"committed"`
	Kind      string `json:"kind"`
}

// HoldsByProducer groups the transaction blockers of bs by producer id.
func HoldsByProducer(bs []PartitionBlocker) map[int64][]TxnHold {
	out := map[int64][]TxnHold{}
	for _, b := range bs {
		if b.Txn == nil {
			continue
		}
		out[b.Txn.ProducerID] = append(out[b.Txn.ProducerID], TxnHold{Group: b.Group, Topic: b.Topic, Partition: b.Partition, Committed: b.Committed, Kind: b.Kind})
	}
	return out
}

// Hanging reports whether a transaction will not end by itself on the
// log: Ongoing past its timeout, or aborted by a reaper that writes no
// markers.
func (r *TxnRow) Hanging() bool { return r.Overdue || (r.Reaped && !r.Finished) }

// PendingTxnOffset is a transaction that will commit offsets for a group
// when it ends: staged by TxnOffsetCommit in the memory of the group's
// coordinator, invisible to OffsetFetch and lost if that broker restarts.
type PendingTxnOffset struct {
	TransactionalID  string `json:"transactionalId"`
	ProducerID       int64  `json:"producerId"`
	Epoch            int16  `json:"epoch"`
	State            string `json:"state"`
	TxnCoordinator   string `json:"transactionCoordinator"`
	GroupCoordinator string `json:"groupCoordinator"`
	Detail           string `json:"detail"`
}

// PendingTxnOffsets are the Ongoing transactions whose slot entry names
// group (AddOffsetsToTxn), with what becomes of their staged offsets.
func PendingTxnOffsets(group, groupCoordinator string, rows []TxnRow) []PendingTxnOffset {
	out := []PendingTxnOffset{}
	for _, r := range rows {
		if r.State != volume.TxnOngoing || !slices.Contains(r.Groups, group) {
			continue
		}
		p := PendingTxnOffset{TransactionalID: r.ID, ProducerID: r.ProducerID, Epoch: r.Epoch, State: r.State, TxnCoordinator: r.Coordinator, GroupCoordinator: groupCoordinator}
		p.Detail = fmt.Sprintf("transaction %q (open since %s) staged offsets for the group: they become visible only when it commits, and only in the memory of the group's coordinator until then (a restart of %s loses them)",
			volume.DisplayName(r.ID), r.OngoingSince, orUnknown(groupCoordinator))
		if r.Coordinator != "" && groupCoordinator != "" && r.Coordinator != groupCoordinator {
			p.Detail += fmt.Sprintf("; its coordinator %s is not the group's %s, so kaas never writes them to the offset file (the commit hook is local): the group re-reads what the transaction consumed", r.Coordinator, groupCoordinator)
		}
		if r.Overdue {
			p.Detail += "; it is OVERDUE: when the reaper aborts it the staged offsets are discarded"
		}
		out = append(out, p)
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "its coordinator"
	}
	return s
}
