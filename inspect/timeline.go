package inspect

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/watch"
)

// A group's story ('groups timeline'): one ordered list merged from every
// source kaasctl observes or records, each event with its source and the
// evidence it rests on. The sources are a table (timelineSources): a new
// source is one row and one field of TimelineInput. Every commit is
// attributed (AttributeCommit) from the facts the other sources give: the
// membership observed around it, the last generation change, the last
// coordinator move, kaasctl's own writes, and what the partitions held
// before. Where the record cannot tell (a gap in a journal, no membership
// observed, a broker that reports no member details) the story says so.

// Timeline sources.
const (
	TLCommits     = "commits"     // the offsets journal (watch --offsets / exporter --journal)
	TLMembers     = "members"     // the events journal's membership (generations, members joining and leaving)
	TLCoordinator = "coordinator" // assignment versions and broker logs (takeover trace)
	TLKaasctl     = "kaasctl"     // kaasctl's write log and its backups
	TLHealth      = "health"      // conditions entering and leaving (the events journal)
	TLObserver    = "observer"    // what the observers could not see: journal gaps, unobserved stretches
)

// Timeline event kinds.
const (
	TLState       = "state"       // the offsets as first recorded
	TLCommit      = "commit"      // a commit (the file moved forward or was written again)
	TLRewind      = "rewind"      // a commit that moved partitions back
	TLVanished    = "vanished"    // partitions gone from the file
	TLFileRemoved = "fileRemoved" // the offset file was removed
	TLUnreadable  = "unreadable"  // the file could not be read
	TLMembersSeen = "membersSeen" // the membership as first observed
	TLGeneration  = "generation"  // a generation change
	TLMove        = "coordinatorMove"
	TLWrite       = "write"
	TLCondition   = "condition"
	TLGap         = "gap"
	TLUnobserved  = "unobserved"
)

// TimelineEvent is one event of a group's story.
type TimelineEvent struct {
	Time   time.Time `json:"time"`
	Source string    `json:"source"`
	Kind   string    `json:"kind"`
	// Summary is the event in words; Evidence what it rests on (a journal
	// segment, an assignment version, a log line, a file).
	Summary  string `json:"summary"`
	Evidence string `json:"evidence"`
	// A commit: the partitions it changed (new offsets), removed and moved
	// back, who made it, and for a rewind how it pages.
	Changed     map[string]int64 `json:"changed,omitempty"`
	Removed     []string         `json:"removed,omitempty"`
	Rewound     []Rewound        `json:"rewound,omitempty"`
	Attribution *Attribution     `json:"attribution,omitempty"`
	Severity    string           `json:"severity,omitempty"`
	// A generation change, or the membership first seen.
	Change  *MembershipChange `json:"change,omitempty"`
	Members []MemberInfo      `json:"members,omitempty"`
	// A coordinator move.
	Move *CoordinatorMove `json:"move,omitempty"`
	// A condition entering (Entered) or leaving.
	Condition string `json:"condition,omitempty"`
	Entered   bool   `json:"entered,omitempty"`
	// kaasctl's write.
	Write *KaasctlWrite `json:"write,omitempty"`
	// Until ends a stretch (a gap, an unobserved time).
	Until *time.Time `json:"until,omitempty"`
}

// KaasctlWrite is one of kaasctl's writes of the group (repair's write
// log, or a backup kaasctl kept).
type KaasctlWrite struct {
	Time       time.Time `json:"time"`
	Command    string    `json:"command"`
	Method     string    `json:"method,omitempty"`
	By         string    `json:"by,omitempty"`
	File       string    `json:"file,omitempty"`
	Partitions []Rewound `json:"partitions"`
	// Backup: known only from a backup kaasctl kept (no write log record).
	Backup string `json:"backup,omitempty"`
}

// TimelineInput is what a group's story is built from; each source reads
// its own field (an empty one adds nothing and a note says so).
type TimelineInput struct {
	Group        string
	Since, Until time.Time
	// History is the group's offset history: the offsets journal's points
	// and kaasctl's backups (repair.LoadGroupHistory); Journal its dir.
	History []watch.HistoryPoint
	Journal string
	// Events are the events journal's records of the group and of no
	// group, in journal order; EventsDir its dir.
	Events    []watch.EventRecord
	EventsDir string
	// Moves are the group's coordinator moves (BuildTrace with the group
	// as filter); Versions how many assignment versions were read, and
	// LogEntries how many broker log entries.
	Moves      []TraceEvent
	Versions   int
	LogEntries int
	// Writes are kaasctl's writes of the group.
	Writes []KaasctlWrite
	// PageRecords is the rewind severity's threshold (0: the default);
	// OutOfOrder the generation's note on commits landing out of order.
	PageRecords int64
	OutOfOrder  string
}

// Timeline is a group's story.
type Timeline struct {
	Group  string          `json:"group"`
	Since  *time.Time      `json:"since,omitempty"`
	Until  *time.Time      `json:"until,omitempty"`
	Events []TimelineEvent `json:"events"`
	// Sources says what each source gave.
	Sources []TimelineSource `json:"sources"`
	// Commits counts the commits in range, ByAuthor by author; Rewinds
	// those that moved partitions back.
	Commits  int              `json:"commits"`
	Rewinds  int              `json:"rewinds"`
	ByAuthor []TimelineAuthor `json:"byAuthor"`
	// Notes say plainly what the evidence cannot tell.
	Notes []string `json:"notes"`
}

// TimelineSource is one source's part of the story.
type TimelineSource struct {
	Name   string `json:"name"`
	Read   string `json:"read"`
	Events int    `json:"events"`
}

// TimelineAuthor counts commits by author.
type TimelineAuthor struct {
	Author  string `json:"author"`
	Commits int    `json:"commits"`
	Records int64  `json:"recordsBack"`
}

// timelineSource is one row of the source table: its name, what it read
// (for the story's sources), and its events given the shared facts.
type timelineSource struct {
	name   string
	read   func(in *TimelineInput) string
	events func(in *TimelineInput, f *timelineFacts) []TimelineEvent
}

// timelineSources are the sources of a group's story. Commits come last:
// their attribution reads what the others established (timelineFacts is
// built before any of them).
var timelineSources = []timelineSource{
	{TLMembers, readEventsDir, membershipEvents},
	{TLCoordinator, readMoves, moveEvents},
	{TLKaasctl, readWrites, writeEvents},
	{TLHealth, readEventsDir, conditionEvents},
	{TLObserver, readObservers, observerEvents},
	{TLCommits, readJournal, commitEvents},
}

// BuildTimeline merges every source into the group's story, ordered by
// time (events at the same time in the order of the source table), then
// keeps the events in [Since, Until].
func BuildTimeline(in TimelineInput) *Timeline {
	tl := &Timeline{Group: in.Group, Events: []TimelineEvent{}, Sources: []TimelineSource{}, ByAuthor: []TimelineAuthor{}, Notes: []string{}}
	if !in.Since.IsZero() {
		tl.Since = &in.Since
	}
	if !in.Until.IsZero() {
		tl.Until = &in.Until
	}
	f := newTimelineFacts(&in)
	for _, src := range timelineSources {
		evs := inRange(src.events(&in, f), in.Since, in.Until)
		tl.Sources = append(tl.Sources, TimelineSource{Name: src.name, Read: src.read(&in), Events: len(evs)})
		tl.Events = append(tl.Events, evs...)
	}
	rank := func(s string) int {
		return slices.IndexFunc(timelineSources, func(r timelineSource) bool { return r.name == s })
	}
	sort.SliceStable(tl.Events, func(i, j int) bool {
		a, b := tl.Events[i], tl.Events[j]
		if !a.Time.Equal(b.Time) {
			return a.Time.Before(b.Time)
		}
		return rank(a.Source) < rank(b.Source)
	})
	tl.count()
	tl.Notes = append(tl.Notes, f.notes(&in)...)
	return tl
}

// inRange keeps the events in [since, until] (zero bounds are open); a
// stretch counts when it overlaps.
func inRange(evs []TimelineEvent, since, until time.Time) []TimelineEvent {
	out := evs[:0]
	for _, e := range evs {
		end := e.Time
		if e.Until != nil {
			end = *e.Until
		}
		if (!since.IsZero() && end.Before(since)) || (!until.IsZero() && e.Time.After(until)) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// count fills the commit counts by author.
func (tl *Timeline) count() {
	by := map[string]*TimelineAuthor{}
	for _, e := range tl.Events {
		if e.Attribution == nil {
			continue
		}
		tl.Commits++
		if e.Kind == TLRewind {
			tl.Rewinds++
		}
		a := by[e.Attribution.Author]
		if a == nil {
			a = &TimelineAuthor{Author: e.Attribution.Author}
			by[a.Author] = a
		}
		a.Commits++
		a.Records += e.Attribution.Records
	}
	for _, name := range Authors {
		if a := by[name]; a != nil {
			tl.ByAuthor = append(tl.ByAuthor, *a)
		}
	}
}

func readJournal(in *TimelineInput) string {
	if in.Journal == "" {
		return "no offsets journal"
	}
	return "offsets journal " + in.Journal
}

func readEventsDir(in *TimelineInput) string {
	if in.EventsDir == "" {
		return "no events journal"
	}
	return "events journal " + in.EventsDir
}

func readMoves(in *TimelineInput) string {
	out := "no assignment version"
	if in.Versions > 0 {
		out = healthPlural(in.Versions, "assignment version", "assignment versions")
	}
	if in.LogEntries > 0 {
		out += " and " + healthPlural(in.LogEntries, "broker log entry", "broker log entries")
	}
	return out
}

func readWrites(in *TimelineInput) string {
	return fmt.Sprintf("kaasctl's write log and backups: %d writes of the group", len(in.Writes))
}

func readObservers(in *TimelineInput) string {
	return "the journals' gaps and the observers' unobserved stretches"
}

// moveEvents are the group's coordinator moves.
func moveEvents(in *TimelineInput, _ *timelineFacts) []TimelineEvent {
	var out []TimelineEvent
	for _, m := range in.Moves {
		ev := TimelineEvent{Time: m.Time, Source: TLCoordinator, Kind: TLMove,
			Summary:  fmt.Sprintf("coordinator %s → %s (%s, assignment epoch %d v%d)", orNone(m.From), orNone(m.To), m.Cause, m.ControllerEpoch, m.AssignmentVersion),
			Evidence: string(m.Evidence), Move: &CoordinatorMove{Time: m.Time, From: m.From, To: m.To, Cause: string(m.Cause)}}
		if m.Detail != "" {
			ev.Summary += ": " + m.Detail
		}
		if len(m.Logs) > 0 {
			ev.Evidence += " (" + strings.Join(m.Logs, ", ") + ")"
		}
		out = append(out, ev)
	}
	return out
}

// writeEvents are kaasctl's own writes.
func writeEvents(in *TimelineInput, _ *timelineFacts) []TimelineEvent {
	var out []TimelineEvent
	for i := range in.Writes {
		w := &in.Writes[i]
		parts := make([]string, 0, len(w.Partitions))
		for _, p := range w.Partitions {
			parts = append(parts, fmt.Sprintf("%s %s→%s", p.Partition, offText(p.Before), offText(p.After)))
		}
		ev := TimelineEvent{Time: w.Time, Source: TLKaasctl, Kind: TLWrite, Write: w, Evidence: "kaasctl's write log"}
		ev.Summary = "kaasctl " + w.Command
		if w.By != "" {
			ev.Summary += " by " + w.By
		}
		if w.Method != "" {
			ev.Summary += " (" + w.Method + ")"
		}
		if len(parts) > 0 {
			ev.Summary += ": " + strings.Join(parts, ", ")
		}
		if w.Backup != "" {
			ev.Evidence = "kaasctl's backup " + w.Backup + " (no write log record: the command is unknown)"
		}
		out = append(out, ev)
	}
	return out
}

// conditionEvents are the health conditions entering and leaving.
func conditionEvents(in *TimelineInput, _ *timelineFacts) []TimelineEvent {
	var out []TimelineEvent
	for _, r := range in.Events {
		if r.Kind != watch.EvCondition || r.Group != in.Group {
			continue
		}
		ev := TimelineEvent{Time: r.Time, Source: TLHealth, Kind: TLCondition, Condition: r.Condition, Entered: r.Entered, Evidence: "events journal"}
		if r.Entered {
			ev.Summary = r.Condition + " entered"
			if r.Detail != "" {
				ev.Summary += ": " + r.Detail
			}
		} else {
			ev.Summary = r.Condition + " cleared"
		}
		out = append(out, ev)
	}
	return out
}

// observerEvents are the stretches nobody observed: the events journal's
// unobserved records and gaps, and the offsets journal's gaps.
func observerEvents(in *TimelineInput, f *timelineFacts) []TimelineEvent {
	var out []TimelineEvent
	for _, s := range f.unobserved {
		until := s.until
		out = append(out, TimelineEvent{Time: s.since, Until: &until, Source: TLObserver, Kind: TLUnobserved, Evidence: "events journal",
			Summary: fmt.Sprintf("membership not observed for %s (%s): commits in it cannot be attributed", roundSpan(s.until.Sub(s.since)), s.why)})
	}
	for _, p := range in.History {
		if p.Kind == watch.RecGap {
			out = append(out, TimelineEvent{Time: p.Time, Source: TLObserver, Kind: TLGap, Evidence: "offsets journal",
				Summary: "the offsets journal has a gap here (" + p.Problem + "): changes in it are unknown, and the offsets are unsound until the group's next snapshot"})
		}
	}
	return out
}

func offText(v int64) string {
	if v < 0 {
		return "none"
	}
	return fmt.Sprint(v)
}

// sortedKeys are a map's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	return slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Compare(a, b) })
}
