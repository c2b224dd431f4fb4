package inspect

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// groups prune's rules: what each selector takes from the read model's
// state of a group, and why, row by row. kaas never expires a group's
// offset file and keys offsets by topic name, so these are the only
// cleanup there is; every rule says what it assumed, and a row whose
// evidence cannot tell is refused, never pruned.

// Prune selectors, each its own flag.
const (
	PruneEmpty        = "emptyGroup"
	PruneDeleted      = "deletedTopic"
	PruneRecreated    = "recreatedTopic"
	PruneUnsubscribed = "unsubscribedTopic"
	PruneCanary       = "canary"
)

// Where the age of a group's last commit comes from (--age-from).
const (
	AgeJournal = "journal"
	AgeMtime   = "mtime"
	AgeBoth    = "both"
)

// Prune actions of a group.
const (
	PruneRemove  = "remove"  // the whole offset file is removed
	PruneRewrite = "rewrite" // the file is rewritten without the rows
	PruneNone    = "none"    // every selected row is refused
)

// PruneAsk is what the user selected.
type PruneAsk struct {
	Empty                                    bool
	MinAge                                   time.Duration
	AgeFrom                                  string
	Deleted, Recreated, Unsubscribed, Canary bool
	Now                                      time.Time
}

// Check holds the selectors together, journal saying whether an offsets
// journal is given: at least one selector; --age-from only with
// --empty-for, and one of its three sources (default both with a
// journal, else mtime); a journal only for the ages that read it.
func (a *PruneAsk) Check(journal bool) error {
	if !a.Empty && !a.Deleted && !a.Recreated && !a.Unsubscribed && !a.Canary {
		return fmt.Errorf("groups prune selects nothing without a selector: --empty-for AGE, --deleted-topics, --recreated-topics, --unsubscribed or --canaries (or --restore FILE)")
	}
	switch {
	case a.AgeFrom != "" && !a.Empty:
		return fmt.Errorf("--age-from goes with --empty-for")
	case a.AgeFrom == "" && journal:
		a.AgeFrom = AgeBoth
	case a.AgeFrom == "":
		a.AgeFrom = AgeMtime
	case a.AgeFrom != AgeJournal && a.AgeFrom != AgeMtime && a.AgeFrom != AgeBoth:
		return fmt.Errorf("--age-from %q: journal, mtime or both", a.AgeFrom)
	}
	if a.AgeFrom != AgeMtime && !journal {
		return fmt.Errorf("--age-from %s reads the offsets journal: give it with --journal DIR", a.AgeFrom)
	}
	if journal && !a.Empty && !a.Recreated {
		return fmt.Errorf("--journal gives commit times to --empty-for and --recreated-topics; neither is asked")
	}
	return nil
}

// Selectors names the selectors asked, in flag order.
func (a PruneAsk) Selectors() []string {
	out := []string{}
	for _, s := range []struct {
		on   bool
		name string
	}{{a.Empty, PruneEmpty}, {a.Deleted, PruneDeleted}, {a.Recreated, PruneRecreated}, {a.Unsubscribed, PruneUnsubscribed}, {a.Canary, PruneCanary}} {
		if s.on {
			out = append(out, s.name)
		}
	}
	return out
}

// TopicPresence is whether a topic exists on the volume and the brokers.
type TopicPresence struct {
	// VolumeRead: the data dir was read; OnVolume: it holds partition
	// dirs of the topic (Dir is the topic's dir).
	VolumeRead, OnVolume bool
	Dir                  string
	// Asked: the brokers were asked (Metadata); OnBrokers: they know the
	// topic; BrokerErr: the topic's error (UNKNOWN_TOPIC_OR_PARTITION
	// when they do not know it).
	Asked, OnBrokers bool
	BrokerErr        string
}

// UnknownTopic is Metadata's error for a topic the brokers do not have.
const UnknownTopic = "UNKNOWN_TOPIC_OR_PARTITION"

// PruneInput is what the sources say of one group for groups prune.
type PruneInput struct {
	State *GroupState
	// File is the group's offset file that the brokers load (nil: none),
	// at Path, last written at ModTime.
	File    *volume.OffsetFile
	Path    string
	ModTime time.Time
	// Live: the brokers were asked; Desc their description (nil offline),
	// Held whether its coordinator lists it, CoordName the coordinator.
	Live      bool
	Desc      *wire.GroupDescription
	Held      Held
	CoordName string
	Topics    map[string]TopicPresence
	// Journal is the offsets journal's commit times (nil: none given).
	Journal *watch.CommitTimes
	// FirstBatch gives a partition's first record batch (the recreated
	// rule).
	FirstBatch func(topic string, p int32) (*volume.BatchHead, error)
	// CanaryInUse maps the canaries the probe uses now to their broker;
	// AssignmentRead says assignment.json was read for it.
	CanaryInUse    map[string]string
	AssignmentRead bool
	// Intern, when set, returns one copy of each topic name for the rows
	// (a plan of 100,000 groups on a few topics keeps a few strings).
	Intern func(string) string
}

// PruneRow is one partition a prune selected, and why. A row that goes
// with its group (the group's reason says why) has no notes until it is
// written: a plan of 100,000 groups keeps 64 bytes a partition.
type PruneRow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Offset is the committed offset the file holds.
	Offset   int64  `json:"offset"`
	Selector string `json:"selector"`
	*PruneRowNotes
}

// PruneRowNotes are a row's reason, refusal and result.
type PruneRowNotes struct {
	// Reason is why the row was selected (a whole group's rows: the
	// group's reason).
	Reason string `json:"reason,omitempty"`
	// Refused says why this row is kept although selected.
	Refused string `json:"refused,omitempty"`
	// Result and Detail, after --execute (repair's row results).
	Result string `json:"result,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Notes are the row's notes (empty when it has none).
func (r *PruneRow) Notes() PruneRowNotes {
	if r.PruneRowNotes == nil {
		return PruneRowNotes{}
	}
	return *r.PruneRowNotes
}

// SetResult records the row's result after --execute.
func (r *PruneRow) SetResult(result, detail string) {
	if r.PruneRowNotes == nil {
		r.PruneRowNotes = &PruneRowNotes{}
	}
	r.Result, r.Detail = result, detail
}

// IsRefused reports whether the row is kept although selected.
func (r *PruneRow) IsRefused() bool { return r.PruneRowNotes != nil && r.Refused != "" }

// PruneGroup is one group a prune selected.
type PruneGroup struct {
	Group  string `json:"group"`
	Path   string `json:"path"`
	Action string `json:"action"`
	// Selector and Reason: why the whole group goes (emptyGroup, canary,
	// or every partition selected); "" when only rows go.
	Selector string     `json:"selector,omitempty"`
	Reason   string     `json:"reason,omitempty"`
	Rows     []PruneRow `json:"rows"`
	// Kept counts the file's partitions that stay.
	Kept int `json:"kept"`
	// LastCommit and AgeSource: the last commit the age was taken from
	// (emptyGroup) and where it came from (journal, mtime, both).
	LastCommit time.Time `json:"lastCommit,omitzero"`
	AgeSource  string    `json:"ageSource,omitempty"`
	// State, Members and Coordinator: as the brokers described the group
	// (state "unknown" offline).
	State       string `json:"state"`
	Members     int    `json:"members"`
	Coordinator string `json:"coordinator,omitempty"`
	// Refused: why nothing of the group is written.
	Refused string `json:"refused,omitempty"`
	// Outcome is planned or refused in a dry run; after --execute what the
	// write path did (written, refused, error, interrupted). Backup is the
	// old file's backup; Warnings what the write found (a broker still
	// serving the offsets from memory).
	Outcome  string   `json:"outcome"`
	Backup   string   `json:"backup,omitempty"`
	Warnings []string `json:"warnings"`
}

// Writes reports whether the prune writes the group.
func (pg *PruneGroup) Writes() bool { return pg.Refused == "" && pg.Action != PruneNone }

// PrunedRows counts the rows that go (not refused).
func (pg *PruneGroup) PrunedRows() int {
	n := 0
	for i := range pg.Rows {
		if !pg.Rows[i].IsRefused() {
			n++
		}
	}
	return n
}

// Pruned are the rows that go (not refused).
func (pg *PruneGroup) Pruned() []PruneRow {
	var out []PruneRow
	for _, r := range pg.Rows {
		if !r.IsRefused() {
			out = append(out, r)
		}
	}
	return out
}

// Refusals counts the group's refused rows (the whole group counting
// for all of them).
func (pg *PruneGroup) Refusals() int {
	if pg.Refused != "" {
		return max(1, len(pg.Rows))
	}
	n := 0
	for i := range pg.Rows {
		if pg.Rows[i].IsRefused() {
			n++
		}
	}
	return n
}

// PlanPrune applies the selectors of ask to one group; nil when none
// selects anything. Only a file the brokers read as offsets is pruned
// (a corrupt, plain-map-read-as-empty or legacy file is volume repair's).
func PlanPrune(in *PruneInput, ask PruneAsk) *PruneGroup {
	gs := in.State
	if in.File == nil || gs == nil || gs.Facts.File != FileOffsets {
		return nil
	}
	pg := &PruneGroup{Group: gs.Group, Path: in.Path, Rows: []PruneRow{}, State: "unknown", Warnings: []string{}}
	describeLive(pg, in)
	switch {
	case IsCanary(gs.Group):
		if !ask.Canary || !pruneCanary(pg, in) {
			return nil
		}
	case ask.Empty && pruneEmpty(pg, in, ask):
	default:
		pruneRows(pg, in, ask)
	}
	if len(pg.Rows) == 0 && pg.Selector == "" {
		return nil
	}
	settleAction(pg, len(in.File.Entries))
	if pg.Action != PruneNone && pg.Refused == "" {
		pg.Refused = LiveRefusal(in)
	}
	pg.Outcome = "planned"
	if !pg.Writes() {
		pg.Outcome = "refused"
	}
	return pg
}

// describeLive copies the brokers' description of the group.
func describeLive(pg *PruneGroup, in *PruneInput) {
	pg.Coordinator = in.CoordName
	if d := in.Desc; d != nil && d.Err == "" {
		pg.State, pg.Members = d.State, len(d.Members)
	}
}

// settleAction decides what is written: the whole file goes when it is
// selected whole or when every one of its partitions is; the rows that
// go otherwise; nothing when every row is refused.
func settleAction(pg *PruneGroup, entries int) {
	pruned := pg.PrunedRows()
	pg.Kept = entries - pruned
	switch {
	case pg.Selector != "":
		pg.Action, pg.Kept = PruneRemove, 0
	case pruned == 0:
		pg.Action = PruneNone
	case pg.Kept == 0:
		pg.Action = PruneRemove
		pg.Reason = "every partition of the file is pruned: the file is removed"
	default:
		pg.Action = PruneRewrite
	}
}

// wholeRows lists every entry of the file as going with the group (the
// group's Reason says why).
func wholeRows(pg *PruneGroup, in *PruneInput) {
	pg.Rows = make([]PruneRow, 0, len(in.File.Entries))
	for _, e := range in.File.Entries {
		pg.Rows = append(pg.Rows, PruneRow{Topic: in.intern(e.Topic), Partition: e.Partition, Offset: e.Offset, Selector: pg.Selector})
	}
}

func (in *PruneInput) intern(s string) string {
	if in.Intern == nil {
		return s
	}
	return in.Intern(s)
}

// LiveRefusal is why a group may not be pruned now ("" when it may): it
// has members, or its coordinator holds it in memory (kaas keeps an Empty
// group loaded until the broker restarts, serves its offsets from memory
// and writes them back on its next commit), or the brokers could not
// tell. Offline (every broker down) nothing holds it.
func LiveRefusal(in *PruneInput) string {
	if !in.Live {
		return ""
	}
	d, who := in.Desc, in.CoordName
	if who == "" {
		who = "its coordinator"
	}
	switch {
	case d == nil:
		return "cannot tell whether the group is live: the brokers did not describe it"
	case d.Err != "":
		return "cannot tell whether the group is live: " + d.Err
	case len(d.Members) > 0:
		return fmt.Sprintf("the group is live: %s (state %s); kaasctl never writes a live group's file: its coordinator serves the offsets from memory and writes them back on the next commit. Stop its consumers; once %s no longer holds it (restart that broker), rerun", render.Plural(len(d.Members), "member", "members"), d.State, who)
	case in.Held == HeldYes:
		return fmt.Sprintf("the group is loaded by %s, which lists it (kaas keeps an Empty group in memory until the broker restarts): a consumer that joins resumes from that memory and the group's next commit writes the offsets back into the file. Restart %s (or let the group move to another coordinator), then rerun", who, who)
	case in.Held == HeldUnknown:
		return fmt.Sprintf("cannot tell whether %s holds the group in memory (its ListGroups did not answer)", who)
	}
	return ""
}

// pruneEmpty selects the whole group when it has no member and no commit
// for ask.MinAge, and says where the age came from.
func pruneEmpty(pg *PruneGroup, in *PruneInput, ask PruneAsk) bool {
	if d := in.Desc; d != nil && d.Err == "" && len(d.Members) > 0 {
		return false
	}
	last, src, how, ok := LastCommit(in, ask.AgeFrom)
	if !ok || ask.Now.Sub(last) < ask.MinAge {
		return false
	}
	pg.Selector, pg.AgeSource = PruneEmpty, src
	pg.LastCommit = last
	members := "no member"
	if !in.Live {
		members = "no member known (every broker is down)"
	}
	pg.Reason = fmt.Sprintf("%s and no commit for %s, at least %s (age from %s: %s)", members, ageText(ask.Now.Sub(last)), ageText(ask.MinAge), src, how)
	wholeRows(pg, in)
	return true
}

// LastCommit is the latest time the group may have committed, from the
// journal, the file's modification time or both (the later of the two),
// with where it came from and how it is known; false when the asked
// source does not know (the journal never saw the group, no journal).
func LastCommit(in *PruneInput, from string) (time.Time, string, string, bool) {
	mt, mhow := in.ModTime, "the offset file was last written at "+render.Timestamp(in.ModTime)
	var jt time.Time
	var jhow string
	jok := false
	if in.Journal != nil {
		jt, jhow, jok = in.Journal.LastCommit(in.State.Group)
		jhow = "journal " + in.Journal.Dir + ": " + jhow
	}
	switch from {
	case AgeMtime:
		return mt, AgeMtime, mhow, !mt.IsZero()
	case AgeJournal:
		return jt, AgeJournal, jhow, jok
	}
	if !jok || mt.IsZero() {
		return time.Time{}, AgeBoth, "", false
	}
	if jt.After(mt) {
		return jt, AgeBoth, jhow + " (later than the file's " + render.Timestamp(mt) + ")", true
	}
	return mt, AgeBoth, mhow + " (" + jhow + ")", true
}

// pruneRows applies the partition selectors to every entry of the file.
func pruneRows(pg *PruneGroup, in *PruneInput, ask PruneAsk) {
	for i := range in.State.Partitions {
		p := &in.State.Partitions[i]
		if !has(p.File) {
			continue
		}
		row := PruneRow{Topic: in.intern(p.Topic), Partition: p.Partition, Offset: p.File.Value}
		for _, rule := range pruneRules {
			if !rule.asked(ask) {
				continue
			}
			if ok, refused, why := rule.verdict(in, p); ok || refused != "" {
				row.Selector, row.PruneRowNotes = rule.selector, &PruneRowNotes{Reason: why, Refused: refused}
				break
			}
		}
		if row.Selector != "" {
			pg.Rows = append(pg.Rows, row)
		}
	}
}

// pruneRules are the partition selectors in the order they are tried:
// the first that selects a row (or refuses it) explains it.
var pruneRules = []struct {
	selector string
	asked    func(PruneAsk) bool
	verdict  func(*PruneInput, *PartitionState) (bool, string, string)
}{
	{PruneDeleted, func(a PruneAsk) bool { return a.Deleted }, deletedVerdict},
	{PruneRecreated, func(a PruneAsk) bool { return a.Recreated }, RecreatedVerdict},
	{PruneUnsubscribed, func(a PruneAsk) bool { return a.Unsubscribed }, unsubscribedVerdict},
}

// deletedVerdict: the topic exists neither on the volume nor on the
// brokers.
func deletedVerdict(in *PruneInput, p *PartitionState) (bool, string, string) {
	tp, ok := in.Topics[p.Topic]
	if !ok || tp.OnBrokers || (!tp.Asked && tp.OnVolume) {
		return false, "", ""
	}
	why := fmt.Sprintf("topic %s does not exist", p.Topic)
	switch {
	case tp.Asked && !strings.HasPrefix(tp.BrokerErr, UnknownTopic):
		return false, fmt.Sprintf("the brokers' metadata for topic %s failed (%s): cannot tell whether it exists", p.Topic, tp.BrokerErr), why
	case tp.OnVolume:
		return false, fmt.Sprintf("the brokers do not know topic %s, but %s holds its partition dirs: a topic being deleted or created right now; left alone", p.Topic, tp.Dir), why
	case tp.Asked && tp.VolumeRead:
		why += ": the brokers do not know it (Metadata: " + UnknownTopic + ") and the data dir holds no partition dir of it"
	case tp.Asked:
		why += ": the brokers do not know it (Metadata: " + UnknownTopic + "); the data dir was not given, so its partition dirs were not looked for"
	default:
		why += ": the data dir holds no partition dir of it; the brokers were not asked (offline: every broker is down), and a topic kept in another data dir would look the same"
	}
	return true, "", why + " (kaas keys offsets by topic name: a topic created under this name later would inherit them)"
}

// RecreatedVerdict tells a topic deleted and recreated under the same name
// (the committed offset is past the new log, committed before the log's
// first record was written) from the stale-high-watermark incidents after
// a takeover, which look the same from the offsets alone: the segments
// show those (an end served below them, an offset range written twice),
// and such a row is refused, as is one whose evidence cannot tell.
func RecreatedVerdict(in *PruneInput, p *PartitionState) (bool, string, string) {
	cause := PastEndCause(p)
	if cause == "" {
		return false, "", ""
	}
	why := fmt.Sprintf("committed %d is beyond the log end %d", p.Resume.Value, p.LogEnd.Value)
	if cause != PastEndUnexplained {
		return false, "a stale takeover, not a recreated topic: " + pastEndIncident(p) + "; the records are there and the offset is the group's real position: never pruned", why
	}
	seg := p.segments
	switch {
	case p.LogEnd.Source == volume.SourceManifest:
		return false, "the log end is manifest.json's (the segments could not be read): cannot tell a recreated topic from a stale takeover", why
	case seg == nil || seg.Log == nil:
		return false, "the partition's segments are not readable on this volume: a stale takeover would show there, so a recreated topic cannot be told from one", why
	}
	first, err := in.FirstBatch(p.Topic, p.Partition)
	if err != nil {
		return false, "the log's first batch cannot be read (" + err.Error() + "): cannot tell when the log began", why
	}
	if first.FirstTime.IsZero() {
		return false, "the log's first batch has no timestamp: cannot tell when the log began", why
	}
	at, how := commitBound(in, p)
	log := fmt.Sprintf("the log's first record (offset %d, segment epoch %d) was written at %s", first.BaseOffset, first.Epoch, render.Timestamp(first.FirstTime))
	if at.IsZero() || !at.Before(first.FirstTime) {
		return false, fmt.Sprintf("%s, not after the commit (%s): the log may be the one the group committed on (truncated, or taken over at a stale end without a trace); pass --journal for the partition's own commit time", log, how), why
	}
	return true, "", fmt.Sprintf("%s; %s, after the commit (%s), and no stale takeover shows in the segments: the topic was deleted and recreated (kaas keys offsets by topic name; record times are the producers' clocks)", why, log, how)
}

// pastEndIncident is the partition's past-end incident detail.
func pastEndIncident(p *PartitionState) string {
	for _, in := range p.Incidents {
		if in.Code == IncPastLogEnd || in.Code == IncPastServedEnd {
			return in.Detail
		}
	}
	return ""
}

// commitBound is the latest the partition's offset can have been
// committed: the journal's change of it, else the file's last write.
func commitBound(in *PruneInput, p *PartitionState) (time.Time, string) {
	mt := in.ModTime
	how := "the offset file was last written at " + render.Timestamp(mt)
	if in.Journal != nil {
		key := p.Topic + "/" + strconv.Itoa(int(p.Partition))
		if jt, jhow, ok := in.Journal.PartitionCommit(in.State.Group, key); ok && (mt.IsZero() || jt.Before(mt)) {
			return jt, "journal: " + jhow
		}
	}
	return mt, how
}

// unsubscribedVerdict: the group's live members neither subscribe to
// the topic nor are assigned it. Such a group is live, so the row is
// shown with the command to run once the group is inactive.
func unsubscribedVerdict(in *PruneInput, p *PartitionState) (bool, string, string) {
	d := in.Desc
	if d == nil || d.Err != "" || len(d.Members) == 0 {
		return false, "", ""
	}
	topics, reported := MemberTopics(d.Members)
	if !reported || slices.Contains(topics, p.Topic) {
		return false, "", ""
	}
	return true, "", fmt.Sprintf("no live member subscribes to or is assigned topic %s (the %s consume %s); once the group is inactive: kaasctl offsets delete --group %s --topic %s --execute",
		p.Topic, render.Plural(len(d.Members), "member", "members"), strings.Join(topics, ", "), shellQuote(in.State.Group), shellQuote(p.Topic))
}

// MemberTopics are the topics the members subscribe to or are assigned
// (sorted), and whether any member reported either (kaas may leave both
// empty: then nothing can be judged unsubscribed).
func MemberTopics(ms []wire.Member) ([]string, bool) {
	var out []string
	reported := false
	for _, m := range ms {
		if m.MetadataReported && len(m.Subscription) > 0 {
			reported = true
			out = append(out, m.Subscription...)
		}
		if m.AssignmentReported && len(m.Assignment) > 0 {
			reported = true
			for _, a := range m.Assignment {
				out = append(out, a.Topic)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), reported
}

// pruneCanary selects a probe canary that no broker's probe uses now and
// whose offsets are all the probe's own.
func pruneCanary(pg *PruneGroup, in *PruneInput) bool {
	g := in.State.Group
	if _, used := in.CanaryInUse[g]; used {
		return false
	}
	broker := canaryBroker(g)
	pg.Selector = PruneCanary
	switch owned, why := CanaryFileOwned(in.File); {
	case !owned:
		pg.Reason, pg.Refused = "a group with a probe canary's name", why
	case !in.AssignmentRead:
		pg.Reason, pg.Refused = "a probe canary", "assignment.json could not be read, so which canaries the probe uses now is unknown; left alone"
	case in.CanaryInBroker(broker):
		pg.Reason = fmt.Sprintf("a probe canary of broker %s, whose probe now uses another id (routing changed): left behind", broker)
	default:
		pg.Reason = fmt.Sprintf("a probe canary of broker %s, which is not in assignment.json any more: left behind", broker)
	}
	wholeRows(pg, in)
	return true
}

// CanaryInBroker reports whether some canary in use is broker's.
func (in *PruneInput) CanaryInBroker(broker string) bool {
	for _, b := range in.CanaryInUse {
		if b == broker {
			return true
		}
	}
	return false
}

// canaryBroker is the broker a canary id names ("__kaasctl-canary-<broker>-<n>").
func canaryBroker(group string) string {
	rest := strings.TrimPrefix(group, CanaryPrefix)
	if i := strings.LastIndexByte(rest, '-'); i > 0 {
		return rest[:i]
	}
	return rest
}

// ageText is a duration for people: 45s, 12m, 5h30m, 12d.
func ageText(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
