package watch

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kaasctl/kaasctl/internal/anomaly"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// The offsets journal: what `kaasctl watch --offsets --journal DIR` records
// in DIR/offsets/ and `kaasctl offsets history` reads.
//
// It is a directory of append-only JSON-lines segments named
// offsets-<UTC time of the first record>.jsonl, so the names sort by time
// and a reader seeks by name. Every segment starts with a "segment" header
// and a "snapshot" of every known group, so it can be read alone; after
// that each record is one observed change of one group's file: the time,
// the group, and only the partitions that changed (per-partition deltas,
// not copies of the file). Records of one batch are written with one
// write and one fsync; a crash can only tear the last line, which readers
// skip with a warning. Rotation by size and age; retention by total size
// and age (the active segment is never removed).

// OffsetJournalSubdir is the sub-directory of a --journal DIR that holds the
// offsets journal (beside the assignment versions, which `takeover trace
// --journal DIR` reads).
const OffsetJournalSubdir = "offsets"

// JournalFormatVersion is written in every segment header.
const JournalFormatVersion = 1

// Record kinds.
const (
	RecSegment  = "segment"  // first line of a segment: Dir, Generation, Version
	RecSnapshot = "snapshot" // a group's full offsets (segment start, or first sight)
	RecChange   = "change"   // a group's file changed: Changed, Removed
	RecCorrupt  = "corrupt"  // the file could not be read or parsed: Problem (offsets unchanged)
	RecMissing  = "missing"  // the file was removed: Removed lists what it held
	// RecGap says changes are missing from the journal: written by the
	// writer once it can write again after a failed write (Since: the
	// first change not recorded; Problem: why), followed by a snapshot of
	// every group; and made up by the reader for a line it cannot read
	// (Time: the last record read before it). Records are deltas, so no
	// state is known between a gap and the group's next snapshot.
	RecGap = "gap"
)

// JournalRecord is one line of a segment. Field names are the on-disk
// contract (documented in `kaasctl help formats`).
type JournalRecord struct {
	// Kind is left out of "change" records, the common case.
	Kind  string    `json:"kind,omitempty"`
	Time  time.Time `json:"time"`
	Group string    `json:"group,omitempty"`
	// File is only written when it is not <dir>/<group>.json.
	File      string           `json:"file,omitempty"`
	Format    string           `json:"format,omitempty"`
	Offsets   map[string]int64 `json:"offsets,omitempty"`
	Changed   map[string]int64 `json:"changed,omitempty"`
	Removed   []string         `json:"removed,omitempty"`
	Problem   string           `json:"problem,omitempty"`
	Anomalies []JournalAnomaly `json:"anomalies,omitempty"`
	// Since is a gap's start (the first change that was not recorded).
	Since *time.Time `json:"since,omitempty"`
	// Header fields. Seq is the segment's place in the journal (1, 2, ...,
	// one more than the highest before it): the journal's own order, which
	// a clock that steps back cannot change; segment names and record
	// times are wall-clock labels. Segments written before it was recorded
	// have none (see listSegments for their order).
	Dir        string `json:"dir,omitempty"`
	Generation string `json:"generation,omitempty"`
	Version    int    `json:"version,omitempty"`
	Seq        int64  `json:"seq,omitempty"`
}

// JournalAnomaly is an anomaly as recorded (the group, file and time are
// the record's).
type JournalAnomaly struct {
	Kind      string `json:"kind"`
	Partition string `json:"partition,omitempty"`
	Before    int64  `json:"before"`
	After     int64  `json:"after"`
	Detail    string `json:"detail"`
}

// ParseJournalRecord decodes and checks one line.
func ParseJournalRecord(line []byte) (JournalRecord, error) {
	var r JournalRecord
	if err := decodeLine(line, &r); err != nil {
		return JournalRecord{}, err
	}
	if r.Time.IsZero() {
		return JournalRecord{}, errors.New(`no "time"`)
	}
	if r.Kind == "" {
		r.Kind = RecChange
	}
	switch r.Kind {
	case RecSegment:
		if err := checkVersion(r.Version, JournalFormatVersion); err != nil {
			return JournalRecord{}, err
		}
		if r.Seq < 0 {
			return JournalRecord{}, fmt.Errorf("segment header with a negative seq %d", r.Seq)
		}
		return r, nil
	case RecGap:
		if r.Since == nil || r.Since.After(r.Time) {
			return JournalRecord{}, errors.New(`a gap needs a "since" no later than its "time"`)
		}
		return r, nil
	case RecSnapshot, RecChange, RecCorrupt, RecMissing:
	default:
		return JournalRecord{}, fmt.Errorf("unknown record kind %q", r.Kind)
	}
	if r.Group == "" {
		return JournalRecord{}, errors.New(`no "group"`)
	}
	for _, m := range []map[string]int64{r.Offsets, r.Changed} {
		for k := range m {
			if _, _, err := volume.SplitOffsetKey(k); err != nil {
				return JournalRecord{}, fmt.Errorf("partition key %q: %v", k, err)
			}
		}
	}
	for _, k := range r.Removed {
		if _, _, err := volume.SplitOffsetKey(k); err != nil {
			return JournalRecord{}, fmt.Errorf("partition key %q: %v", k, err)
		}
	}
	return r, nil
}

// OffsetJournal appends offset events to a journal directory.
type OffsetJournal struct {
	Dir string
	// OffsetsDir is the followed directory (written in segment headers).
	OffsetsDir string
	Generation volume.Generation
	// MaxBytes and MaxAge bound what is kept (0: unbounded). Segments are
	// removed whole, oldest first; the active one never.
	MaxBytes int64
	MaxAge   time.Duration
	// SegmentBytes and SegmentAge rotate the active segment (defaults: 64
	// MiB or an eighth of MaxBytes, whichever is smaller; 1h). A rotated
	// segment is compressed (offsets-….jsonl.gz).
	SegmentBytes int64
	SegmentAge   time.Duration

	// segmentLog holds the active segment (bound to Dir, MaxBytes and
	// MaxAge before each use).
	segmentLog
	// last is the latest record time written: a batch before it means the
	// clock stepped back, and starts a new segment, so that no segment's
	// records go back in time (readers then seek by time only while the
	// segments' names never go back either).
	last     time.Time
	state    map[string]*journalGroup
	Warnings []string
	// gapSince is set after a failed write: the first change not
	// recorded; gapLost counts them and gapWhy says why. The next write
	// that succeeds records the gap and a snapshot of every group.
	gapSince time.Time
	gapLost  int
	gapWhy   string
}

// bind points the segment log at the journal's fields.
func (j *OffsetJournal) bind() {
	s := &j.segmentLog
	s.dir, s.prefix, s.what, s.maxBytes, s.maxAge = j.Dir, "offsets-", "journal", j.MaxBytes, j.MaxAge
	s.list, s.warnings = listSegments, &j.Warnings
}

type journalGroup struct {
	format  string
	file    string
	offsets map[string]int64
}

// Resume carries an earlier run's state into this writer, so its first
// segment starts with a snapshot of every group (also those that do not
// change) and changes since are written as changes.
func (j *OffsetJournal) Resume(state []anomaly.Observation) {
	j.defaults()
	for _, o := range state {
		if o.Missing {
			continue
		}
		g := &journalGroup{format: o.Format, offsets: o.Offsets}
		if o.File != filepath.Join(j.OffsetsDir, o.Group+".json") {
			g.file = o.File
		}
		j.state[o.Group] = g
	}
}

// LastJournalState is every group's state at the end of the journal in dir
// (read from the last segment alone: it starts with a snapshot of every
// group), and the time of its last record. Groups whose file was removed
// are left out.
func LastJournalState(dir string) ([]anomaly.Observation, time.Time, error) {
	segs, err := listSegments(dir)
	if err != nil || len(segs) == 0 {
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return nil, time.Time{}, err
	}
	jr, err := ReadOffsetJournal(dir, JournalReadOptions{Since: segs[len(segs)-1].start})
	if err != nil {
		return nil, time.Time{}, err
	}
	var groups []string
	var last time.Time
	seen := map[string]bool{}
	for _, r := range jr.Records {
		if r.Time.After(last) {
			last = r.Time
		}
		if r.Kind != RecSegment && !seen[r.Group] {
			seen[r.Group] = true
			groups = append(groups, r.Group)
		}
	}
	var out []anomaly.Observation
	for _, g := range groups {
		pts := ReplayGroup(jr.Records, g)
		if len(pts) == 0 {
			continue
		}
		p := pts[len(pts)-1]
		if p.Kind == RecMissing {
			continue
		}
		out = append(out, anomaly.Observation{Time: p.Time, Group: g, File: p.File, Format: p.Format, Offsets: p.Offsets})
	}
	return out, last, nil
}

// JournalSegmentName is the segment file name for a first record at t.
func JournalSegmentName(t time.Time) string {
	return segmentName("offsets-", t)
}

func (j *OffsetJournal) defaults() {
	if j.SegmentAge <= 0 {
		j.SegmentAge = time.Hour
	}
	if j.SegmentBytes <= 0 {
		j.SegmentBytes = 64 << 20
		if j.MaxBytes > 0 && j.MaxBytes/8 < j.SegmentBytes {
			j.SegmentBytes = max(j.MaxBytes/8, 4<<10)
		}
	}
	if j.state == nil {
		j.state = map[string]*journalGroup{}
	}
}

// Append records one batch: one write and one fsync. It rotates and
// applies the retention first when due. When the write or the fsync fails
// (a full disk), the segment is truncated back to its last complete record
// (or, when that fails, left and the next write starts a new segment), and
// the next write that succeeds starts with a "gap" record naming the first
// change lost and a snapshot of every group, so the history is sound again
// from there.
func (j *OffsetJournal) Append(evs []OffsetEvent) error {
	if len(evs) == 0 {
		return nil
	}
	j.defaults()
	j.bind()
	now := evs[0].Cur.Time
	stepped := now.UTC().Truncate(time.Millisecond).Before(j.last)
	if j.due(now, j.SegmentBytes, j.SegmentAge, stepped) {
		if err := j.rotate(); err != nil {
			j.lost(now, len(evs), err)
			return err
		}
	}
	var buf bytes.Buffer
	opened := false
	if j.f == nil {
		if err := j.open(now, &buf); err != nil {
			j.lost(now, len(evs), err)
			return err
		}
		opened = true
	}
	if !j.gapSince.IsZero() {
		j.writeGap(&buf, now)
	}
	for _, ev := range evs {
		j.encodeEvent(&buf, ev)
	}
	path := filepath.Join(j.Dir, j.name)
	n, err := j.f.Write(buf.Bytes())
	if err == nil && n < buf.Len() {
		err = io.ErrShortWrite
	}
	if err == nil {
		if serr := j.f.Sync(); serr != nil {
			err = fmt.Errorf("fsync: %w", serr)
		}
	}
	if err != nil {
		j.takeBack(path)
		j.lost(now, len(evs), err)
		return fmt.Errorf("journal %s: %w", path, err)
	}
	j.size += int64(n)
	j.gapSince, j.gapLost, j.gapWhy = time.Time{}, 0, ""
	if stepped {
		j.last = time.Time{}
	}
	for _, ev := range evs {
		j.last = maxTime(j.last, ev.Cur.Time.UTC().Truncate(time.Millisecond))
	}
	if opened {
		j.Retain(now)
	}
	return nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// takeBack removes what a failed write left at the end of the active
// segment: truncated back to its last complete record; a segment that
// held nothing yet is removed; when the truncation fails the segment is
// closed as it is (its torn last line is what readers skip) and the next
// write starts a new one.
func (j *OffsetJournal) takeBack(path string) {
	if j.size == 0 {
		j.f.Close()
		j.f = nil
		os.Remove(path)
		return
	}
	if err := j.f.Truncate(j.size); err != nil {
		j.Warnings = append(j.Warnings, fmt.Sprintf("journal %s: cannot truncate it back to its last complete record (%v): it is closed, and the next write starts a new segment", path, err))
		j.f.Close()
		j.f = nil
	}
}

// lost notes changes that could not be written.
func (j *OffsetJournal) lost(at time.Time, n int, err error) {
	if j.gapSince.IsZero() || at.Before(j.gapSince) {
		j.gapSince = at
	}
	j.gapLost += n
	j.gapWhy = err.Error()
}

// writeGap records the changes lost since gapSince, then a snapshot of
// every group as the writer knows it now (the lost changes included: they
// were observed), which closes the gap. In a new segment it comes right
// after the header (open leaves the snapshots to it).
func (j *OffsetJournal) writeGap(buf *bytes.Buffer, now time.Time) {
	since := j.gapSince.UTC().Truncate(time.Millisecond)
	now = now.UTC().Truncate(time.Millisecond)
	if since.After(now) {
		since = now
	}
	writeRecord(buf, JournalRecord{Kind: RecGap, Time: now, Since: &since,
		Problem: fmt.Sprintf("%d changes observed since %s were not recorded: %s", j.gapLost, since.Format(time.RFC3339Nano), j.gapWhy)})
	j.snapshotAll(buf, now)
}

// snapshotAll writes a snapshot of every group the writer knows.
func (j *OffsetJournal) snapshotAll(buf *bytes.Buffer, t time.Time) {
	groups := make([]string, 0, len(j.state))
	for g := range j.state {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	for _, g := range groups {
		st := j.state[g]
		writeRecord(buf, JournalRecord{Kind: RecSnapshot, Time: t, Group: g, File: st.file, Format: st.format, Offsets: st.offsets})
	}
}

func (j *OffsetJournal) encodeEvent(buf *bytes.Buffer, ev OffsetEvent) {
	c := ev.Cur
	r := JournalRecord{Time: c.Time, Group: c.Group, Format: c.Format}
	if c.File != filepath.Join(j.OffsetsDir, c.Group+".json") {
		r.File = c.File
	}
	g := j.state[c.Group]
	if g == nil {
		g = &journalGroup{offsets: map[string]int64{}}
		j.state[c.Group] = g
	}
	g.file = r.File
	switch {
	case c.Missing:
		r.Kind, r.Removed = RecMissing, ev.Removed
		g.offsets, g.format = map[string]int64{}, ""
	case c.Corrupt:
		r.Kind, r.Problem = RecCorrupt, c.Problem
	case ev.Prev == nil:
		r.Kind, r.Offsets = RecSnapshot, c.Offsets
		g.offsets, g.format = c.Offsets, c.Format
	default:
		r.Kind, r.Changed, r.Removed = RecChange, ev.Changed, ev.Removed
		if r.Format == g.format {
			r.Format = "" // unchanged: not repeated
		}
		g.offsets, g.format = c.Offsets, c.Format
	}
	for _, a := range ev.Anomalies {
		r.Anomalies = append(r.Anomalies, JournalAnomaly{Kind: a.Kind, Partition: a.Partition, Before: a.Before, After: a.After, Detail: a.Detail})
	}
	writeRecord(buf, r)
}

func writeRecord(buf *bytes.Buffer, r JournalRecord) {
	r.Time = r.Time.UTC().Truncate(time.Millisecond)
	kind := r.Kind
	if kind == RecChange {
		r.Kind = ""
	}
	b, _ := json.Marshal(r)
	if kind == RecSnapshot && len(r.Offsets) == 0 {
		// omitempty would drop an empty snapshot's offsets: keep them explicit.
		b = append(b[:len(b)-1], []byte(`,"offsets":{}}`)...)
	}
	buf.Write(b)
	buf.WriteByte('\n')
}

// open starts a new segment at t: header, then a snapshot of every group.
func (j *OffsetJournal) open(t time.Time, buf *bytes.Buffer) error {
	if err := j.mkdir(); err != nil {
		return err
	}
	// Records carry millisecond times: the name (what readers seek by) is
	// the header's time, never later than the first record.
	t = t.UTC().Truncate(time.Millisecond)
	if err := j.create(t); err != nil {
		return err
	}
	j.loadSeq()
	j.seq++
	writeRecord(buf, JournalRecord{Kind: RecSegment, Time: t, Dir: j.OffsetsDir, Generation: string(j.Generation), Version: JournalFormatVersion, Seq: j.seq})
	if j.gapSince.IsZero() {
		// With a gap to record, writeGap writes the snapshots after it.
		j.snapshotAll(buf, t)
	}
	return nil
}

// rotate closes and compresses the active segment; the next write starts
// a new one (header, snapshots, the batch: one write).
func (j *OffsetJournal) rotate() error {
	closed := j.Segment()
	if err := j.Close(); err != nil {
		return err
	}
	j.compress(closed)
	return nil
}

// Retain removes whole segments, oldest first, while the journal is over
// MaxBytes or a segment's last record (the next segment's start) is older
// than MaxAge. The active segment is kept. Failures become Warnings.
func (j *OffsetJournal) Retain(now time.Time) {
	j.bind()
	j.retain(now, j.name, latestLaterStart)
}

// latestLaterStart is when segs[i] ended: when a later one started, the
// latest of their starts, should the clock have stepped back between them.
func latestLaterStart(segs []segmentInfo, i int) time.Time {
	end := segs[i+1].start
	for _, later := range segs[i+1:] {
		end = maxTime(end, later.start)
	}
	return end
}

// Close closes the active segment (a later Append starts a new one).
func (j *OffsetJournal) Close() error {
	return j.closeSegment()
}

// Segment is the active segment's path ("" before the first Append).
func (j *OffsetJournal) Segment() string {
	j.bind()
	return j.path()
}

// listSegments lists a journal's segments in the journal's own order: by
// the Seq their headers carry. Segments without one were written by a
// kaasctl that did not record it, before any that do: they come first, in
// the order of the times in their names (their writers' order, as long as
// the clock did not step back). A segment whose header cannot be read is
// placed by its name's time among the others (its reading reports the
// damage).
func listSegments(dir string) ([]segmentInfo, error) {
	out, err := readSegmentDir(dir, "offsets-")
	if err != nil {
		return nil, err
	}
	headers, unread := 0, 0
	for i := range out {
		switch seq, ok := segmentSeq(filepath.Join(dir, out[i].name)); {
		case !ok:
			unread++
		case seq > 0:
			out[i].seq = seq
			headers++
		}
	}
	if headers == 0 {
		return out, nil
	}
	return orderBySeq(out, unread > 0), nil
}

// orderBySeq puts segments without a Seq first (in name order) and the
// others by Seq; with damaged headers (damaged), a segment whose Seq is
// unknown is merged in by its name's time instead.
func orderBySeq(segs []segmentInfo, damaged bool) []segmentInfo {
	var old, seqd []segmentInfo
	for _, s := range segs {
		if s.seq > 0 {
			seqd = append(seqd, s)
		} else {
			old = append(old, s)
		}
	}
	slices.SortStableFunc(seqd, func(a, b segmentInfo) int { return cmp.Compare(a.seq, b.seq) })
	if !damaged {
		return append(old, seqd...)
	}
	out := make([]segmentInfo, 0, len(segs))
	for len(old) > 0 && len(seqd) > 0 {
		if old[0].start.Before(seqd[0].start) {
			out, old = append(out, old[0]), old[1:]
		} else {
			out, seqd = append(out, seqd[0]), seqd[1:]
		}
	}
	return append(append(out, old...), seqd...)
}

// segmentSeq reads the Seq of a segment's header (its first line): 0 when
// it records none; false when the header cannot be read.
func segmentSeq(path string) (int64, bool) {
	line, ok := segmentHeader(path)
	if !ok {
		return 0, false
	}
	rec, err := ParseJournalRecord(line)
	if err != nil || rec.Kind != RecSegment {
		return 0, false
	}
	return rec.Seq, true
}

// monotonic reports whether the segments' names' times never go back in
// journal order (then a time bounds which segments a read needs).
func monotonic(segs []segmentInfo) bool {
	for i := 1; i < len(segs); i++ {
		if segs[i].start.Before(segs[i-1].start) {
			return false
		}
	}
	return true
}

// ResolveOffsetJournal finds the offsets journal for a --journal DIR: DIR
// itself when it holds segments, else DIR/offsets.
func ResolveOffsetJournal(dir string) (string, error) {
	if segs, err := listSegments(dir); err == nil && len(segs) > 0 {
		return dir, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	sub := filepath.Join(dir, OffsetJournalSubdir)
	segs, err := listSegments(sub)
	if err == nil && len(segs) > 0 {
		return sub, nil
	}
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("journal %s: %w", dir, err)
	}
	return "", fmt.Errorf("journal %s: no offsets journal segments (offsets-*.jsonl) in it or in %s; record one with 'kaasctl watch --offsets --journal %s'", dir, sub, dir)
}

// JournalReadOptions narrow a read.
type JournalReadOptions struct {
	// Group keeps only this group's records ("" keeps all).
	Group string
	// Since skips segments that end before it (the segment holding Since is
	// read whole, so its snapshot gives the state at Since). Until ends the
	// records at the last one at or before it: in the journal's order, so
	// after a clock that stepped back, at the latest pass of that time.
	// Zero means unbounded. Times only narrow which segments are read
	// while they never go back.
	Since, Until time.Time
	// Each, when set, is handed every record in journal order instead of
	// keeping them in Records (a read in bounded memory); Until is then
	// not applied.
	Each func(JournalRecord)
}

// JournalRead is what ReadOffsetJournal found.
type JournalRead struct {
	// Records in journal order (segment headers included).
	Records []JournalRecord
	// Segments read, and Warnings (torn or corrupt lines, unreadable
	// segments), each naming the file and line.
	Segments []string
	Warnings []string
}

// add keeps a record read (or hands it to opt.Each).
func (res *JournalRead) add(opt JournalReadOptions, rec JournalRecord) {
	if opt.Each != nil {
		opt.Each(rec)
		return
	}
	res.Records = append(res.Records, rec)
}

// ReadOffsetJournal reads a journal directory (as ResolveOffsetJournal
// names it).
func ReadOffsetJournal(dir string, opt JournalReadOptions) (JournalRead, error) {
	var res JournalRead
	segs, err := listSegments(dir)
	if err != nil {
		return res, fmt.Errorf("journal %s: %w", dir, err)
	}
	// Segments are in the journal's order; their times bound what a read
	// needs only while they never go back (a clock that stepped back makes
	// a time name several places: then everything is read).
	seek := monotonic(segs)
	first := 0
	if !opt.Since.IsZero() && seek {
		for i, s := range segs {
			if !s.start.After(opt.Since) {
				first = i
			}
		}
	}
	for _, s := range segs[first:] {
		if !opt.Until.IsZero() && seek && s.start.Truncate(time.Millisecond).After(opt.Until) {
			break
		}
		readSegmentFile(filepath.Join(dir, s.name), s.start, opt, &res)
	}
	if !opt.Until.IsZero() && opt.Each == nil {
		res.Records = res.Records[:lastAtOrBefore(res.Records, opt.Until)+1]
	}
	if w := clockStepWarning(res.Records); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	return res, nil
}

// readSegmentFile appends the records of the segment file p (gzipped when
// its name ends in .gz). A segment that cannot be opened is a warning and
// a gap from its start until the next one's snapshot; one that breaks off
// keeps what was read before the break.
func readSegmentFile(p string, start time.Time, opt JournalReadOptions, res *JournalRead) {
	lost := func(err error) {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %v (skipped)", p, err))
		t := start
		res.add(opt, JournalRecord{Kind: RecGap, Time: t, Since: &t, Problem: fmt.Sprintf("%s: %v (segment skipped)", p, err)})
	}
	f, r, err := openSegment(p)
	if f != nil {
		defer f.Close()
		res.Segments = append(res.Segments, p)
	}
	if err != nil {
		lost(err)
		return
	}
	if err := readSegment(r, p, start, opt, res); err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %v (rest of the segment skipped)", p, err))
	}
}

// lastAtOrBefore is the index of the last record at or before t (a gap
// counts from its start; a segment header is a record like the others),
// -1 when none.
func lastAtOrBefore(recs []JournalRecord, t time.Time) int {
	last := -1
	for i, r := range recs {
		if !r.Time.After(t) || (r.Kind == RecGap && r.Since != nil && !r.Since.After(t)) {
			last = i
		}
	}
	return last
}

// clockStepWarning says where the journal's times go back (the writer's
// clock stepped back: NTP, a resumed VM), or "".
func clockStepWarning(recs []JournalRecord) string {
	n := 0
	var at, from time.Time
	for i := 1; i < len(recs); i++ {
		if recs[i].Time.Before(recs[i-1].Time) {
			if n == 0 {
				at, from = recs[i].Time, recs[i-1].Time
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("the journal's clock stepped back %s (a record at %s follows one at %s): records are read in the journal's own order and their times are labels; a moment the clock passed more than once is taken at its latest pass", render1(n), at.UTC().Format(time.RFC3339Nano), from.UTC().Format(time.RFC3339Nano))
}

func render1(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// readSegment appends the records of one segment. A line that cannot be
// read becomes a gap record (at the time of the last record read before
// it), whoever's record it was: the damage may have hit the group name.
func readSegment(r io.Reader, path string, start time.Time, opt JournalReadOptions, res *JournalRead) (err error) {
	sr := newSegmentReader(path, start, opt, res)
	defer func() {
		if err != nil {
			sr.gap(fmt.Sprintf("%s: %v (rest of the segment skipped)", path, err))
		}
	}()
	return eachLine(r, func(line []byte, n int, torn bool) {
		if !sr.otherGroups(line, torn) && len(bytes.TrimSpace(line)) > 0 {
			sr.add(line, n, torn)
		}
	})
}

// segmentReader is readSegment's state: the time of the last record read
// (where a gap after it starts) and, when reading one group, the bytes
// its records hold.
type segmentReader struct {
	path     string
	opt      JournalReadOptions
	res      *JournalRead
	last     time.Time
	groupKey []byte
}

// What segment headers and gaps hold: a read of one group keeps them.
const (
	segmentKey = `"kind":"segment"`
	gapKey     = `"kind":"gap"`
)

// newSegmentReader reads the segment at path, which starts at start, into
// res. Reading one group, lines that cannot be its records (nor headers)
// are skipped before decoding; the writer encodes names with
// encoding/json, as this does.
func newSegmentReader(path string, start time.Time, opt JournalReadOptions, res *JournalRead) segmentReader {
	sr := segmentReader{path: path, opt: opt, res: res, last: start}
	if opt.Group != "" {
		enc, _ := json.Marshal(opt.Group)
		sr.groupKey = append([]byte(`"group":`), enc...)
	}
	return sr
}

// gap appends a gap record from the last record read.
func (sr *segmentReader) gap(why string) {
	t := sr.last
	sr.res.add(sr.opt, JournalRecord{Kind: RecGap, Time: t, Since: &t, Problem: why})
}

// otherGroups reports whether a whole line is another group's record,
// skipped undecoded; it is only checked to be whole JSON (a damaged one
// may have been this group's).
func (sr *segmentReader) otherGroups(line []byte, torn bool) bool {
	if sr.groupKey == nil || torn || bytes.Contains(line, sr.groupKey) || bytes.Contains(line, []byte(segmentKey)) || bytes.Contains(line, []byte(gapKey)) {
		return false
	}
	return json.Valid(line) || len(bytes.TrimSpace(line)) == 0
}

// add decodes line n and appends its record when the read keeps it; a
// line that does not decode is a warning and a gap (a torn last line is
// named as a write cut short).
func (sr *segmentReader) add(line []byte, n int, torn bool) {
	rec, perr := ParseJournalRecord(line)
	switch {
	case perr != nil && torn:
		sr.res.Warnings = append(sr.res.Warnings, fmt.Sprintf("%s:%d: torn last line ignored (a write cut short by a crash): %v", sr.path, n, perr))
		sr.gap(fmt.Sprintf("%s:%d: torn last line (a write cut short by a crash): %v", sr.path, n, perr))
	case perr != nil:
		sr.res.Warnings = append(sr.res.Warnings, fmt.Sprintf("%s:%d: unreadable record skipped: %v", sr.path, n, perr))
		sr.gap(fmt.Sprintf("%s:%d: unreadable record: %v", sr.path, n, perr))
	default:
		if rec.Time.After(sr.last) {
			sr.last = rec.Time
		}
		if rec.Kind == RecSegment || rec.Kind == RecGap || sr.opt.Group == "" || rec.Group == sr.opt.Group {
			sr.res.add(sr.opt, rec)
		}
	}
}
