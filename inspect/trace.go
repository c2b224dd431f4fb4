package inspect

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/logparse"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// Evidence says what showed a coordinator move.
type Evidence string

const (
	EvidenceAssignment Evidence = "assignment" // recomputed from assignment snapshots
	EvidenceLog        Evidence = "log"        // only a broker's "group coordinator change" line
	EvidenceBoth       Evidence = "both"       // snapshots, confirmed by a log line
)

// TraceEvent is one coordinator move of one group.
type TraceEvent struct {
	Time              time.Time `json:"time"`
	TimeSource        string    `json:"timeSource"` // generatedAt, log, or "" when unknown
	Group             string    `json:"group"`
	From              string    `json:"from"`
	To                string    `json:"to"`
	AssignmentVersion int64     `json:"assignmentVersion"`
	ControllerEpoch   int64     `json:"controllerEpoch"`
	Cause             Cause     `json:"cause"`
	Evidence          Evidence  `json:"evidence"`
	Detail            string    `json:"detail"`
	FromTier          string    `json:"fromTier"`
	ToTier            string    `json:"toTier"`
	// Logs are the log lines ("file:line") that confirm this move or
	// explain its version (broker set changes, lease changes).
	Logs []string `json:"logs"`
}

// TraceVersion is one assignment version on the timeline.
type TraceVersion struct {
	ControllerEpoch   int64     `json:"controllerEpoch"`
	AssignmentVersion int64     `json:"assignmentVersion"`
	Time              time.Time `json:"time"`
	TimeSource        string    `json:"timeSource"`
	GeneratedAt       string    `json:"generatedAt"`
	Controller        string    `json:"controller"`
	Path              string    `json:"path"`   // snapshot file; "" for a version known only from logs
	Source            string    `json:"source"` // snapshot or log
	// First marks the first snapshot: its placements are Trace.Initial.
	First   bool     `json:"first"`
	Brokers []string `json:"brokers"`
	Joined  []string `json:"joined"`
	Left    []string `json:"left"`
	Entries int      `json:"entries"`
	Moves   int      `json:"moves"`
	// MissingBefore counts assignment versions between the previous
	// snapshot and this one that no snapshot covers (versions are
	// consecutive across controller epochs): moves across the gap are
	// reported at this version, and Gap names them ("v7 was never seen:
	// …"). On the first snapshot, Gap says which versions precede it
	// (not counted).
	MissingBefore int64  `json:"missingBefore"`
	Gap           string `json:"gap,omitempty"`
	// Notes are log lines attached to this version, in words.
	Notes []TraceNote `json:"notes"`
	// Placements are every followed group's coordinator at this version
	// (only with TraceInput.Placements; snapshot versions only).
	Placements []Placement `json:"placements,omitempty"`
}

// TraceNote is a log line attached to a version.
type TraceNote struct {
	Time   time.Time `json:"time"`
	Broker string    `json:"broker"`
	Text   string    `json:"text"`
	Ref    string    `json:"ref"` // file:line
}

// Placement is a group's coordinator at one version.
type Placement struct {
	Group       string `json:"group"`
	Coordinator string `json:"coordinator"`
	Tier        string `json:"tier"`
}

// TraceInput is everything a trace is built from.
type TraceInput struct {
	Snapshots []volume.Snapshot // ordered by (epoch, version), no duplicates
	Logs      []logparse.Event  // merged by time
	// Groups are extra known groups (offset files, --group names).
	Groups []string
	// Filter keeps only groups matching one of these patterns (exact names
	// or path.Match globs); empty keeps all.
	Filter []string
	// Since and Until bound event times (zero: unbounded). Events without a
	// time are dropped when a bound is set.
	Since, Until time.Time
	// Placements asks for every group's coordinator at every snapshot
	// version (large: groups × versions).
	Placements bool
}

// Trace is the reconstructed coordinator timeline.
type Trace struct {
	Versions []TraceVersion `json:"versions"`
	Events   []TraceEvent   `json:"events"`
	// Initial and Final are each group's coordinator at the first and the
	// last snapshot (after filters on groups).
	Initial []Placement `json:"initial"`
	Final   []Placement `json:"final"`
	// Groups is how many groups were followed.
	Groups int `json:"groups"`
	// MissedVersions counts the versions never seen between snapshots.
	MissedVersions int64        `json:"missedVersions"`
	EventsBy       []CauseCount `json:"eventsByCause"`
	LogOnlyMoves   int          `json:"logOnlyMoves"`
	Confirmed      int          `json:"confirmedByLogs"`
}

type versionKey struct{ e, v int64 }

// BuildTrace reconstructs every group's coordinator timeline.
func BuildTrace(in TraceInput) *Trace {
	tb := &traceBuild{in: in, tr: &Trace{}, match: groupMatcher(in.Filter), byKey: map[versionKey]int{}}
	tr := tb.tr
	tb.groups = traceGroups(in, tb.match)
	tr.Groups = len(tb.groups)
	tb.versions()
	// Log lines that date versions: published / recompute with a version.
	attachLogs(tr, in.Logs, tb.byKey)
	tb.moves()
	// Coordinator-change lines: confirm or add.
	mergeCoordinatorLogs(tr, in.Logs, tb.byKey, tb.match)
	if in.Placements {
		for i, s := range in.Snapshots {
			tr.Versions[tb.versionOf(s.Assignment)].Placements = placementsAt(tb.states[i], tb.groups)
		}
	}
	// Initial and final placements.
	if n := len(in.Snapshots); n > 0 {
		tr.Initial = placementsAt(tb.states[0], tb.groups)
		tr.Final = placementsAt(tb.states[n-1], tb.groups)
	}
	if !in.Since.IsZero() || !in.Until.IsZero() {
		tr.keepBetween(in.Since, in.Until)
	}
	tr.sortEvents()
	tr.countEvents()
	return tr
}

// traceBuild is BuildTrace's work: the trace so far, the groups followed,
// each snapshot's prepared routing, and where each snapshot's version is
// in the trace's versions.
type traceBuild struct {
	in     TraceInput
	tr     *Trace
	match  func(string) bool
	groups []string
	states []*RoutingState
	byKey  map[versionKey]int
}

// versionOf is the index of snapshot assignment a's version.
func (tb *traceBuild) versionOf(a *volume.Assignment) int {
	return tb.byKey[versionKey{a.ControllerEpoch, a.AssignmentVersion}]
}

// traceGroups is the groups a trace follows, sorted: the entries of every
// snapshot, the extra known groups and the groups in coordinator-change
// lines, those the filter keeps.
func traceGroups(in TraceInput, match func(string) bool) []string {
	var names []string
	for _, s := range in.Snapshots {
		for _, e := range s.Assignment.ConsumerGroups {
			names = append(names, e.GroupID)
		}
	}
	names = append(names, in.Groups...)
	for _, e := range in.Logs {
		if e.Kind == logparse.CoordinatorChange && e.Group != "" {
			names = append(names, e.Group)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	groups := names[:0:0]
	for _, g := range names {
		if match(g) {
			groups = append(groups, g)
		}
	}
	return groups
}

// snapshotVersion is the trace version of assignment a as read: its epoch
// and version, controller, entries, alive brokers, and its time when it
// carries generatedAt.
func snapshotVersion(a *volume.Assignment) TraceVersion {
	v := TraceVersion{ControllerEpoch: a.ControllerEpoch, AssignmentVersion: a.AssignmentVersion,
		GeneratedAt: a.GeneratedAt, Controller: a.Controller, Source: "snapshot", Entries: len(a.ConsumerGroups)}
	if t := a.GeneratedTime(); !t.IsZero() {
		v.Time, v.TimeSource = t, "generatedAt"
	}
	for _, b := range a.Brokers {
		if b.Health == grouphash.HealthAlive {
			v.Brokers = append(v.Brokers, b.ID)
		}
	}
	slices.Sort(v.Brokers)
	return v
}

// versions adds a version per snapshot, with the versions missed since
// the previous one, and prepares each snapshot's routing.
func (tb *traceBuild) versions() {
	snaps := tb.in.Snapshots
	tb.states = make([]*RoutingState, len(snaps))
	for i, s := range snaps {
		a := s.Assignment
		v := snapshotVersion(a)
		v.Path = s.Path
		tb.states[i] = NewRoutingState(a)
		if i > 0 {
			gap := FindVersionGap(snaps[i-1].Assignment, a)
			v.MissingBefore, v.Gap = gap.Count, gap.Message()
			tb.tr.MissedVersions += gap.Count
		} else {
			v.Gap = firstVersionNote(a)
		}
		tb.byKey[versionKey{a.ControllerEpoch, a.AssignmentVersion}] = i
		v.First = i == 0
		tb.tr.Versions = append(tb.tr.Versions, v)
	}
}

// moves adds the moves between consecutive snapshots as events of the
// later version, each carrying that version's log lines.
func (tb *traceBuild) moves() {
	snaps, tr := tb.in.Snapshots, tb.tr
	results := make([]MovesResult, len(snaps))
	total := 0
	for i := 1; i < len(snaps); i++ {
		results[i] = ComputeMovesPrepared(tb.states[i-1], tb.states[i], snaps[i-1].Assignment, snaps[i].Assignment, tb.groups, nil)
		total += len(results[i].Moves)
	}
	tr.Events = make([]TraceEvent, 0, total)
	for i := 1; i < len(snaps); i++ {
		r := results[i]
		results[i] = MovesResult{}
		t := r.Transition
		v := &tr.Versions[tb.versionOf(snaps[i].Assignment)]
		v.Joined, v.Left = t.Joined, t.Left
		// One read-only slice of log refs per version, shared by its events
		// (clipped: appending to it copies).
		var refs []string
		for _, n := range v.Notes {
			refs = append(refs, n.Ref)
		}
		refs = slices.Clip(refs)
		gap := ""
		if v.MissingBefore > 0 {
			gap = " (" + v.Gap + ")"
		}
		for _, m := range r.Moves {
			if !tb.match(m.Key) {
				continue
			}
			tr.Events = append(tr.Events, TraceEvent{Time: v.Time, TimeSource: v.TimeSource, Group: m.Key, From: m.From, To: m.To,
				AssignmentVersion: v.AssignmentVersion, ControllerEpoch: v.ControllerEpoch,
				Cause: m.Cause, Evidence: EvidenceAssignment, Detail: m.Detail + gap,
				FromTier: string(m.FromTier), ToTier: string(m.ToTier), Logs: refs})
			v.Moves++
		}
	}
}

// keepBetween keeps the events and versions dated within [since, until]
// (a zero bound is open); undated ones are dropped.
func (tr *Trace) keepBetween(since, until time.Time) {
	out := func(t time.Time) bool {
		return t.IsZero() || (!since.IsZero() && t.Before(since)) || (!until.IsZero() && t.After(until))
	}
	kept := tr.Events[:0]
	for _, e := range tr.Events {
		if !out(e.Time) {
			kept = append(kept, e)
		}
	}
	tr.Events = kept
	keptV := tr.Versions[:0]
	for _, v := range tr.Versions {
		if !out(v.Time) {
			keptV = append(keptV, v)
		}
	}
	tr.Versions = keptV
}

// sortEvents orders the events by version, time and group. Recomputed
// events are already in order; only log-only ones are not, so the events
// are checked first, and indexes sorted rather than the (large) events.
func (tr *Trace) sortEvents() {
	byOrder := func(a, b *TraceEvent) int {
		if c := cmpVersionPart(a.ControllerEpoch, b.ControllerEpoch); c != 0 {
			return c
		}
		if c := cmpVersionPart(a.AssignmentVersion, b.AssignmentVersion); c != 0 {
			return c
		}
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Group, b.Group)
	}
	sorted := true
	for i := 1; i < len(tr.Events); i++ {
		if byOrder(&tr.Events[i-1], &tr.Events[i]) > 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	idx := make([]int, len(tr.Events))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return byOrder(&tr.Events[a], &tr.Events[b]) })
	out := make([]TraceEvent, len(tr.Events))
	for i, j := range idx {
		out[i] = tr.Events[j]
	}
	tr.Events = out
}

// countEvents counts the events by cause (in the causes' order) and by
// evidence.
func (tr *Trace) countEvents() {
	counts := map[Cause]int{}
	for i := range tr.Events {
		e := &tr.Events[i]
		counts[e.Cause]++
		switch e.Evidence {
		case EvidenceLog:
			tr.LogOnlyMoves++
		case EvidenceBoth:
			tr.Confirmed++
		}
	}
	for _, c := range append(slices.Clone(Causes), CauseUnknown) {
		if counts[c] > 0 {
			tr.EventsBy = append(tr.EventsBy, CauseCount{Cause: c, Count: counts[c]})
		}
	}
}

func cmpVersionPart(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func placementsAt(rs *RoutingState, groups []string) []Placement {
	out := make([]Placement, len(groups))
	for i, g := range groups {
		r := rs.Router.Group(g)
		out[i] = Placement{Group: g, Coordinator: r.Coordinator, Tier: string(r.Tier)}
	}
	return out
}

func groupMatcher(patterns []string) func(string) bool {
	if len(patterns) == 0 {
		return func(g string) bool { return !IsCanary(g) }
	}
	exact := map[string]bool{}
	var globs []string
	for _, p := range patterns {
		if strings.ContainsAny(p, "*?[") {
			if _, err := path.Match(p, ""); err == nil {
				globs = append(globs, p)
				continue
			}
		}
		exact[p] = true
	}
	return func(g string) bool {
		if exact[g] {
			return true
		}
		if IsCanary(g) {
			return false // the probe's, unless named
		}
		for _, p := range globs {
			if ok, _ := path.Match(p, g); ok {
				return true
			}
		}
		return false
	}
}

func logLineRef(e logparse.Event) string {
	src := e.Source
	if i := strings.LastIndexAny(src, "/\\"); i >= 0 {
		src = src[i+1:]
	}
	return fmt.Sprintf("%s:%d", src, e.Line)
}

// attachLogs gives times to versions from the lines that name them, and
// attaches controller lines (lease, broker set, recompute) to the version
// they led to.
func attachLogs(tr *Trace, logs []logparse.Event, byKey map[versionKey]int) {
	attachVersionLines(tr, logs, byKey)
	attachControllerLines(tr, logs)
	// A log-only version's controller, when its line named none: the
	// holder of that epoch's lease.
	for i := range tr.Versions {
		v := &tr.Versions[i]
		if v.Source != "log" || v.Controller != "" {
			continue
		}
		for _, e := range logs {
			if e.Kind == logparse.LeaseAcquired && e.HasEpoch && e.Epoch == v.ControllerEpoch {
				if v.Controller = e.Identity; v.Controller == "" {
					v.Controller = e.Broker
				}
				break
			}
		}
	}
	// Log-only versions sort into the timeline.
	slices.SortStableFunc(tr.Versions, func(a, b TraceVersion) int {
		if c := cmpVersionPart(a.ControllerEpoch, b.ControllerEpoch); c != 0 {
			return c
		}
		return cmpVersionPart(a.AssignmentVersion, b.AssignmentVersion)
	})
	for i, v := range tr.Versions {
		if v.Source == "snapshot" {
			byKey[versionKey{v.ControllerEpoch, v.AssignmentVersion}] = i
		}
		slices.SortStableFunc(tr.Versions[i].Notes, func(a, b TraceNote) int { return a.Time.Compare(b.Time) })
	}
}

// attachVersionLines attaches the published and recompute lines that
// name a version to it, dating a snapshot version without generatedAt; a
// published version no snapshot shows is added, known from the log only.
func attachVersionLines(tr *Trace, logs []logparse.Event, byKey map[versionKey]int) {
	logOnly := map[versionKey]int{}
	for _, e := range logs {
		if e.Kind != logparse.AssignmentPublished && e.Kind != logparse.Recompute {
			continue
		}
		if !e.HasVersion {
			continue
		}
		epoch := e.Epoch
		if !e.HasEpoch {
			// Recompute lines carry no epoch: the snapshot with this version
			// in the latest epoch whose lease started before the line.
			epoch = epochAt(tr, e)
		}
		k := versionKey{epoch, e.Version}
		i, ok := byKey[k]
		if !ok {
			if _, seen := logOnly[k]; !seen && e.Kind == logparse.AssignmentPublished {
				logOnly[k] = len(tr.Versions)
				tr.Versions = append(tr.Versions, TraceVersion{ControllerEpoch: k.e, AssignmentVersion: k.v,
					Time: e.Time, TimeSource: "log", Controller: e.Broker, Source: "log"})
			}
			if j, seen := logOnly[k]; seen {
				tr.Versions[j].Notes = append(tr.Versions[j].Notes, noteOf(e))
			}
			continue
		}
		v := &tr.Versions[i]
		if v.Time.IsZero() && !e.Time.IsZero() {
			v.Time, v.TimeSource = e.Time, "log"
		}
		v.Notes = append(v.Notes, noteOf(e))
	}
}

// attachControllerLines attaches lease and broker-set lines to the
// version they led to: a lease to its epoch's first snapshot version,
// else (and every other line) the version dated nearest at or after the
// line, within two minutes.
func attachControllerLines(tr *Trace, logs []logparse.Event) {
	for _, e := range logs {
		switch e.Kind {
		case logparse.LeaseAcquired, logparse.LeaseLost, logparse.BrokerSetChanged, logparse.StaleAssignment:
		default:
			continue
		}
		idx := -1
		if e.Kind == logparse.LeaseAcquired && e.HasEpoch {
			for i, v := range tr.Versions {
				if v.Source == "snapshot" && v.ControllerEpoch == e.Epoch {
					idx = i
					break
				}
			}
		}
		if idx < 0 && !e.Time.IsZero() {
			best := time.Duration(-1)
			for i, v := range tr.Versions {
				if v.Time.IsZero() {
					continue
				}
				d := v.Time.Sub(e.Time)
				if d < -time.Second || d > 2*time.Minute {
					continue
				}
				if best < 0 || d < best {
					best, idx = d, i
				}
			}
		}
		if idx >= 0 {
			tr.Versions[idx].Notes = append(tr.Versions[idx].Notes, noteOf(e))
		}
	}
}

// epochAt guesses the controller epoch of a line without one: the highest
// epoch of any version (snapshot or log) dated at or before the line, else
// the first snapshot's.
func epochAt(tr *Trace, e logparse.Event) int64 {
	var ep int64
	found := false
	for _, v := range tr.Versions {
		if v.Time.IsZero() || e.Time.IsZero() || v.Time.After(e.Time.Add(time.Second)) {
			continue
		}
		if !found || v.ControllerEpoch > ep {
			ep, found = v.ControllerEpoch, true
		}
	}
	if !found {
		for _, v := range tr.Versions {
			if v.Source == "snapshot" {
				return v.ControllerEpoch
			}
		}
	}
	return ep
}

func noteOf(e logparse.Event) TraceNote {
	n := TraceNote{Time: e.Time, Broker: e.Broker, Ref: logLineRef(e)}
	switch e.Kind {
	case logparse.AssignmentPublished:
		if e.Broker == "" {
			n.Text = fmt.Sprintf("controller published epoch %d v%d", e.Epoch, e.Version)
		} else {
			n.Text = fmt.Sprintf("controller %s published epoch %d v%d", e.Broker, e.Epoch, e.Version)
		}
	case logparse.Recompute:
		n.Text = fmt.Sprintf("controller recompute v%d (reason %s)", e.Version, mvNone(e.Reason))
	case logparse.LeaseAcquired:
		who := e.Identity
		if who == "" {
			who = e.Broker
		}
		n.Text = fmt.Sprintf("controller lease acquired by %s (epoch %d)", mvNone(who), e.Epoch)
	case logparse.LeaseLost:
		n.Text = fmt.Sprintf("%s: %s", mvNone(e.Broker), e.Message)
	case logparse.BrokerSetChanged:
		var parts []string
		if len(e.Added) > 0 {
			parts = append(parts, "joined "+strings.Join(e.Added, ", "))
		}
		if len(e.Removed) > 0 {
			parts = append(parts, "left "+strings.Join(e.Removed, ", "))
		}
		if len(parts) == 0 {
			parts = append(parts, "no difference named")
		}
		n.Text = "broker set changed: " + strings.Join(parts, "; ")
	case logparse.StaleAssignment:
		n.Text = fmt.Sprintf("%s rejected assignment.json with stale epoch %d", mvNone(e.Broker), e.Epoch)
	default:
		n.Text = e.Message
	}
	return n
}

// moveKey is a coordinator move as a log line names it.
type moveKey struct {
	group    string
	from, to string
	version  int64
}

// mergeCoordinatorLogs matches "group coordinator change" lines to the
// recomputed moves (evidence both), or adds the moves no snapshot shows.
func mergeCoordinatorLogs(tr *Trace, logs []logparse.Event, byKey map[versionKey]int, match func(string) bool) {
	logged := map[string]bool{}
	for _, e := range logs {
		if e.Kind == logparse.CoordinatorChange && e.Group != "" {
			logged[e.Group] = true
		}
	}
	if len(logged) == 0 {
		return
	}
	idx := map[moveKey]int{}
	for i, e := range tr.Events {
		if logged[e.Group] {
			idx[moveKey{e.Group, e.From, e.To, e.AssignmentVersion}] = i
		}
	}
	added := map[moveKey]int{}
	for _, e := range logs {
		if e.Kind != logparse.CoordinatorChange || e.Group == "" || !match(e.Group) {
			continue
		}
		from, to := e.From, e.To
		// A "gained" line is written by the new coordinator, "lost" by the old.
		if to == "" && e.Side == "gained" {
			to = e.Broker
		}
		if from == "" && e.Side == "lost" {
			from = e.Broker
		}
		ref := logLineRef(e)
		i, ok := idx[moveKey{e.Group, from, to, e.Version}]
		if !e.HasVersion {
			i = nearestMove(tr, e, from, to)
			ok = i >= 0
		}
		if ok {
			confirmEvent(&tr.Events[i], ref)
			continue
		}
		k := moveKey{e.Group, from, to, e.Version}
		if i, ok := added[k]; ok {
			tr.Events[i].Logs = append(tr.Events[i].Logs, ref)
			continue
		}
		added[k] = len(tr.Events)
		tr.Events = append(tr.Events, logOnlyEvent(tr, e, from, to, ref, byKey))
	}
}

// nearestMove is the recomputed move of e's group with the same endpoints
// nearest in time to e, within two minutes (for a line without a
// version); -1 when there is none.
func nearestMove(tr *Trace, e logparse.Event, from, to string) int {
	best, bi := time.Duration(-1), -1
	for i, ev := range tr.Events {
		if ev.Group != e.Group || ev.From != from || ev.To != to || ev.Time.IsZero() || e.Time.IsZero() {
			continue
		}
		d := e.Time.Sub(ev.Time)
		if d < 0 {
			d = -d
		}
		if d <= 2*time.Minute && (best < 0 || d < best) {
			best, bi = d, i
		}
	}
	return bi
}

// logOnlyEvent is the move a coordinator-change line shows and no
// recomputed move does: one the snapshot of its version does not show, or
// one of a version without a snapshot (its cause read from that version's
// controller lines).
func logOnlyEvent(tr *Trace, e logparse.Event, from, to, ref string, byKey map[versionKey]int) TraceEvent {
	ev := TraceEvent{Time: e.Time, TimeSource: "log", Group: e.Group, From: from, To: to,
		AssignmentVersion: e.Version, ControllerEpoch: e.Epoch, Cause: CauseUnknown, Evidence: EvidenceLog,
		Logs: []string{ref}}
	if !e.HasEpoch {
		ev.ControllerEpoch = epochAt(tr, e)
	}
	if i, ok := byKey[versionKey{ev.ControllerEpoch, e.Version}]; ok && e.HasVersion {
		ev.Detail = "a broker logged this move, but the snapshot of this version does not show it"
		if ev.Time.IsZero() {
			ev.Time = tr.Versions[i].Time
		}
		return ev
	}
	if e.Broker != "" {
		ev.Detail = "no snapshot of this version; seen only in " + e.Broker + "'s log"
	} else {
		ev.Detail = "no snapshot of this version; seen only in a broker log"
	}
	ev.Cause, ev.Detail = causeFromNotes(tr, ev, ev.Detail)
	return ev
}

func confirmEvent(ev *TraceEvent, ref string) {
	ev.Evidence = EvidenceBoth
	if !slices.Contains(ev.Logs, ref) {
		ev.Logs = append(ev.Logs, ref)
	}
}

// causeFromNotes infers a log-only move's cause from the controller lines
// of its version, when that version is known from logs.
func causeFromNotes(tr *Trace, ev TraceEvent, detail string) (Cause, string) {
	for _, v := range tr.Versions {
		if v.ControllerEpoch != ev.ControllerEpoch || v.AssignmentVersion != ev.AssignmentVersion {
			continue
		}
		for _, n := range v.Notes {
			switch {
			case strings.Contains(n.Text, "left ") && strings.Contains(n.Text, ev.From):
				return CauseBrokerLeft, detail + "; " + n.Text
			case strings.Contains(n.Text, "joined ") && strings.Contains(n.Text, ev.To):
				return CauseBrokerJoined, detail + "; " + n.Text
			case strings.HasPrefix(n.Text, "controller lease acquired"):
				return CauseControllerFailover, detail + "; " + n.Text
			}
		}
	}
	return CauseUnknown, detail
}

// Step is one new version compared with the previous one, as `watch`
// reports it: the version and its moves in the trace's event shape.
type Step struct {
	Version TraceVersion
	Events  []TraceEvent
	// State is the prepared new version, to pass as prev next time.
	State *RoutingState
}

// NextStep compares a new version with the previous one (prev nil: the
// first version, no events). observed is when the version was seen; it
// dates events when generatedAt is missing. filter limits the groups
// reported (names or globs; empty keeps all).
func NextStep(prev *RoutingState, prevA, cur *volume.Assignment, groups, filter []string, observed time.Time) Step {
	match := groupMatcher(filter)
	st := NewRoutingState(cur)
	v := snapshotVersion(cur)
	if v.Time.IsZero() && !observed.IsZero() {
		v.Time, v.TimeSource = observed, "observed"
	}
	step := Step{State: st}
	if prev == nil {
		step.Version = v
		return step
	}
	gap := FindVersionGap(prevA, cur)
	v.MissingBefore, v.Gap = gap.Count, gap.Message()
	r := ComputeMovesPrepared(prev, st, prevA, cur, groups, nil)
	v.Joined, v.Left = r.Transition.Joined, r.Transition.Left
	for _, m := range r.Moves {
		if !match(m.Key) {
			continue
		}
		ev := TraceEvent{Time: v.Time, TimeSource: v.TimeSource, Group: m.Key, From: m.From, To: m.To,
			AssignmentVersion: v.AssignmentVersion, ControllerEpoch: v.ControllerEpoch, Cause: m.Cause,
			Evidence: EvidenceAssignment, Detail: m.Detail, FromTier: string(m.FromTier), ToTier: string(m.ToTier)}
		if v.MissingBefore > 0 {
			ev.Detail += " (" + v.Gap + ")"
		}
		step.Events = append(step.Events, ev)
	}
	v.Moves = len(step.Events)
	step.Version = v
	return step
}

// Placements resolves groups at one prepared version.
func PlacementsAt(rs *RoutingState, groups []string) []Placement { return placementsAt(rs, groups) }

// GroupMatcher matches group names against names and path.Match globs;
// no patterns match everything.
func GroupMatcher(patterns []string) func(string) bool { return groupMatcher(patterns) }
