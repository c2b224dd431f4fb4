package watch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"
)

// The group events journal: what the exporter and 'watch --offsets'
// record in DIR/events/ besides the offsets journal, for 'groups
// timeline': every group's membership as DescribeGroups showed it (a
// record at each change, and a snapshot of every group at the start of
// each segment), the health conditions entering and leaving, and when the
// observer could not observe. Membership is recorded only when it
// changes, so the journal also says that the observer was running: an
// "alive" record at least every AliveEvery, and an "unobserved" record
// when the brokers did not answer. A stretch with neither is a stretch
// nobody observed.
//
// Segments are JSON lines, events-<UTC time of the first record>.jsonl,
// each starting with a "segment" header; a closed segment is gzipped.
// Each batch is one write and one fsync; a crash can only tear the last
// line, which readers skip with a warning.

// EventJournalSubdir is the sub-directory of a --journal DIR that holds
// the group events journal.
const EventJournalSubdir = "events"

// EventJournalVersion is written in every segment header.
const EventJournalVersion = 1

// AliveEvery is how often an observer that saw nothing change says it was
// running.
const AliveEvery = time.Minute

// Event record kinds.
const (
	EvSegment    = "segment"    // first line of a segment: Version, Seq, Observer, Interval
	EvMembers    = "members"    // a group's membership (Change set when it changed; else a segment snapshot)
	EvAlive      = "alive"      // the observer ran and observed up to Time
	EvUnobserved = "unobserved" // the membership could not be observed from Since to Time (Group "": no group): Problem
	EvCondition  = "condition"  // a health condition of Group entered or left: Condition, Entered, Detail
	EvGap        = "gap"        // made up by the reader: a line it cannot read (Time: the last record before it)
)

// EventMember is one member as recorded.
type EventMember struct {
	ID                 string   `json:"id"`
	ClientID           string   `json:"clientId,omitempty"`
	InstanceID         string   `json:"instanceId,omitempty"`
	Host               string   `json:"host,omitempty"`
	Assigned           []string `json:"assigned,omitempty"`
	AssignmentReported bool     `json:"assignmentReported,omitempty"`
}

// EventChange is what a membership record's change was.
type EventChange struct {
	Since              time.Time `json:"since"`
	ObservedGeneration int64     `json:"observedGeneration"`
	Causes             []string  `json:"causes"`
	Joined             []string  `json:"joined,omitempty"`
	Left               []string  `json:"left,omitempty"`
	From               string    `json:"from,omitempty"`
	To                 string    `json:"to,omitempty"`
}

// EventRecord is one line of the events journal. Field names are the
// on-disk contract (documented in docs/group-timeline.md).
type EventRecord struct {
	Kind  string    `json:"kind"`
	Time  time.Time `json:"time"`
	Group string    `json:"group,omitempty"`
	// Membership (EvMembers).
	State               string        `json:"state,omitempty"`
	Coordinator         string        `json:"coordinator,omitempty"`
	Protocol            string        `json:"protocol,omitempty"`
	Members             []EventMember `json:"members,omitempty"`
	HostsReported       bool          `json:"hostsReported,omitempty"`
	AssignmentsReported bool          `json:"assignmentsReported,omitempty"`
	Change              *EventChange  `json:"change,omitempty"`
	// A condition (EvCondition).
	Condition string `json:"condition,omitempty"`
	Entered   bool   `json:"entered,omitempty"`
	Detail    string `json:"detail,omitempty"`
	// EvUnobserved and EvGap: since when, and why.
	Since   *time.Time `json:"since,omitempty"`
	Problem string     `json:"problem,omitempty"`
	// The segment header: the format version, the segment's place in the
	// journal, who observes (exporter, watch) and how often.
	Version  int    `json:"version,omitempty"`
	Seq      int64  `json:"seq,omitempty"`
	Observer string `json:"observer,omitempty"`
	Interval string `json:"interval,omitempty"`
}

// ParseEventRecord decodes and checks one line.
func ParseEventRecord(line []byte) (EventRecord, error) {
	var r EventRecord
	if err := decodeLine(line, &r); err != nil {
		return EventRecord{}, err
	}
	if r.Time.IsZero() {
		return EventRecord{}, errors.New(`no "time"`)
	}
	switch r.Kind {
	case EvSegment:
		if err := checkVersion(r.Version, EventJournalVersion); err != nil {
			return EventRecord{}, err
		}
		if r.Interval != "" {
			if _, err := time.ParseDuration(r.Interval); err != nil {
				return EventRecord{}, fmt.Errorf("interval %q: %v", r.Interval, err)
			}
		}
	case EvMembers, EvCondition:
		if r.Group == "" {
			return EventRecord{}, errors.New(`no "group"`)
		}
		if r.Kind == EvCondition && r.Condition == "" {
			return EventRecord{}, errors.New(`a condition record without "condition"`)
		}
	case EvUnobserved, EvGap:
		if r.Since == nil || r.Since.After(r.Time) {
			return EventRecord{}, fmt.Errorf(`a record of kind %s needs a "since" no later than its "time"`, r.Kind)
		}
	case EvAlive:
	default:
		return EventRecord{}, fmt.Errorf("unknown record kind %q", r.Kind)
	}
	return r, nil
}

// EventJournal appends group events to a journal directory.
type EventJournal struct {
	Dir string
	// Observer and Interval are written in each segment header: who
	// observes ("exporter", "watch") and how often it asks.
	Observer string
	Interval time.Duration
	// MaxBytes and MaxAge bound what is kept (0: unbounded): whole
	// segments, oldest first; the active one never.
	MaxBytes int64
	MaxAge   time.Duration
	// SegmentAge rotates the active segment (default 1h); a segment also
	// rotates past 64 MiB.
	SegmentAge time.Duration
	// Snapshot gives the membership of every group, written at the start
	// of each segment so that it reads alone (nil: none).
	Snapshot func(at time.Time) []EventRecord
	Warnings []string

	// segmentLog holds the active segment (bound to Dir, MaxBytes and
	// MaxAge before each use).
	segmentLog
	lastWrite time.Time
	// lostSince is set after a failed write: the first record not written.
	lostSince time.Time
	lostWhy   string
}

const eventSegmentBytes = 64 << 20

// bind points the segment log at the journal's fields.
func (j *EventJournal) bind() {
	s := &j.segmentLog
	s.dir, s.prefix, s.what, s.maxBytes, s.maxAge = j.Dir, "events-", "events journal", j.MaxBytes, j.MaxAge
	s.list, s.warnings = listEventSegments, &j.Warnings
}

// Append writes recs (and an alive record when AliveEvery passed since
// the last write) at now: one write, one fsync. A failed write is
// recorded at the next one that succeeds as an unobserved stretch.
func (j *EventJournal) Append(now time.Time, recs []EventRecord) error {
	if len(recs) == 0 && now.Sub(j.lastWrite) < AliveEvery {
		return nil
	}
	if j.SegmentAge <= 0 {
		j.SegmentAge = time.Hour
	}
	j.bind()
	if j.due(now, eventSegmentBytes, j.SegmentAge, now.Before(j.start)) {
		j.rotate()
	}
	var buf bytes.Buffer
	if j.f == nil {
		if err := j.open(now, &buf); err != nil {
			j.lost(now, err)
			return err
		}
	}
	if !j.lostSince.IsZero() {
		since := j.lostSince
		writeEvent(&buf, EventRecord{Kind: EvUnobserved, Time: now, Since: &since, Problem: "the events journal could not be written: " + j.lostWhy})
	}
	for _, r := range recs {
		writeEvent(&buf, r)
	}
	if len(recs) == 0 {
		writeEvent(&buf, EventRecord{Kind: EvAlive, Time: now})
	}
	n, err := j.f.Write(buf.Bytes())
	if err == nil {
		err = j.f.Sync()
	}
	if err != nil {
		path := filepath.Join(j.Dir, j.name)
		if terr := j.f.Truncate(j.size); terr != nil {
			j.Close()
		}
		j.lost(now, err)
		return fmt.Errorf("events journal %s: %w", path, err)
	}
	j.size += int64(n)
	j.lastWrite, j.lostSince, j.lostWhy = now, time.Time{}, ""
	return nil
}

func (j *EventJournal) lost(at time.Time, err error) {
	if j.lostSince.IsZero() {
		j.lostSince = at
	}
	j.lostWhy = err.Error()
}

func writeEvent(buf *bytes.Buffer, r EventRecord) {
	r.Time = r.Time.UTC().Truncate(time.Millisecond)
	if r.Since != nil {
		// To the millisecond too, so that it stays no later than Time.
		since := r.Since.UTC().Truncate(time.Millisecond)
		r.Since = &since
	}
	b, _ := json.Marshal(r)
	buf.Write(b)
	buf.WriteByte('\n')
}

// open starts a segment at t: its header, then the snapshot.
func (j *EventJournal) open(t time.Time, buf *bytes.Buffer) error {
	if err := j.mkdir(); err != nil {
		return err
	}
	t = t.UTC().Truncate(time.Millisecond)
	j.loadSeq()
	if err := j.create(t); err != nil {
		return err
	}
	j.seq++
	hdr := EventRecord{Kind: EvSegment, Time: t, Version: EventJournalVersion, Seq: j.seq, Observer: j.Observer}
	if j.Interval > 0 {
		hdr.Interval = j.Interval.String()
	}
	writeEvent(buf, hdr)
	if j.Snapshot != nil {
		for _, r := range j.Snapshot(t) {
			writeEvent(buf, r)
		}
	}
	return nil
}

// rotate closes and compresses the active segment and applies retention.
func (j *EventJournal) rotate() {
	closed := j.path()
	j.Close()
	j.compress(closed)
	j.retain(time.Now(), "", nextStart)
}

// nextStart is when segs[i] ended: when the next one started.
func nextStart(segs []segmentInfo, i int) time.Time { return segs[i+1].start }

// Close closes the active segment (the next Append starts another).
func (j *EventJournal) Close() error {
	return j.closeSegment()
}

// listEventSegments lists the segments: by their headers' Seq when every
// header has one, else by the times in their names.
func listEventSegments(dir string) ([]segmentInfo, error) {
	out, err := readSegmentDir(dir, "events-")
	if err != nil {
		return nil, err
	}
	all := true
	for i := range out {
		hdr, ok := eventHeader(filepath.Join(dir, out[i].name))
		out[i].seq = hdr.Seq
		all = all && ok && hdr.Seq > 0
	}
	if all {
		slices.SortStableFunc(out, func(a, b segmentInfo) int { return int(a.seq - b.seq) })
	}
	return out, nil
}

// eventHeader reads a segment's header (its first line).
func eventHeader(path string) (EventRecord, bool) {
	line, ok := segmentHeader(path)
	if !ok {
		return EventRecord{}, false
	}
	rec, err := ParseEventRecord(line)
	return rec, err == nil && rec.Kind == EvSegment
}

// EventReadOptions narrow a read of the events journal.
type EventReadOptions struct {
	// Group keeps this group's records and those of no group (headers,
	// alive, unobserved, gaps); "" keeps all.
	Group string
	// Since skips segments that a later one starting at or before it
	// makes unneeded (that one's snapshot gives the state at Since);
	// Until stops after the segments starting after it. Zero: unbounded.
	Since, Until time.Time
}

// EventRead is what ReadEventJournal found.
type EventRead struct {
	Dir      string        `json:"dir"`
	Records  []EventRecord `json:"records"`
	Segments []string      `json:"segments"`
	Warnings []string      `json:"warnings"`
}

// ResolveEventJournal finds the events journal of a --journal DIR: DIR
// itself when it holds events segments, else DIR/events ("" when
// neither does).
func ResolveEventJournal(dir string) string {
	for _, d := range []string{dir, filepath.Join(dir, EventJournalSubdir)} {
		if segs, err := listEventSegments(d); err == nil && len(segs) > 0 {
			return d
		}
	}
	return ""
}

// ReadEventJournal reads the events journal in dir (as
// ResolveEventJournal names it).
func ReadEventJournal(dir string, opt EventReadOptions) (EventRead, error) {
	res := EventRead{Dir: dir, Records: []EventRecord{}, Segments: []string{}, Warnings: []string{}}
	segs, err := listEventSegments(dir)
	if err != nil {
		return res, fmt.Errorf("events journal %s: %w", dir, err)
	}
	first := 0
	for i, s := range segs {
		if !opt.Since.IsZero() && !s.start.After(opt.Since) {
			first = i
		}
	}
	for _, s := range segs[first:] {
		if !opt.Until.IsZero() && s.start.After(opt.Until) {
			break
		}
		p := filepath.Join(dir, s.name)
		if err := readEventSegment(p, s.start, opt, &res); err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %v (rest of the segment skipped)", p, err))
			t := s.start
			res.Records = append(res.Records, EventRecord{Kind: EvGap, Time: t, Since: &t, Problem: fmt.Sprintf("%s: %v", p, err)})
		}
	}
	return res, nil
}

// readEventSegment appends one segment's records; a line it cannot read
// becomes a gap at the last record before it.
func readEventSegment(path string, start time.Time, opt EventReadOptions, res *EventRead) error {
	f, r, err := openSegment(path)
	if f != nil {
		defer f.Close()
		res.Segments = append(res.Segments, path)
	}
	if err != nil {
		return err
	}
	last := start
	return eachLine(r, func(line []byte, n int, torn bool) {
		if len(bytes.TrimSpace(line)) == 0 {
			return
		}
		rec, perr := ParseEventRecord(line)
		if perr != nil {
			what := "unreadable record skipped"
			if torn {
				what = "torn last line ignored (a write cut short by a crash)"
			}
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s:%d: %s: %v", path, n, what, perr))
			t := last
			res.Records = append(res.Records, EventRecord{Kind: EvGap, Time: t, Since: &t, Problem: fmt.Sprintf("%s:%d: %v", path, n, perr)})
			return
		}
		if rec.Time.After(last) {
			last = rec.Time
		}
		if opt.Group == "" || rec.Group == "" || rec.Group == opt.Group {
			res.Records = append(res.Records, rec)
		}
	})
}
