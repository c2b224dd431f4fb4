package inspect

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/anomaly"
	"github.com/kaasctl/kaasctl/internal/parallel"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// Group health, Burrow-style, over a sliding window of observations of one
// group. kaas never fences OffsetCommit (no generation or member check), so
// a stale consumer or an admin commit can move a group backwards, and a
// commit to an unloaded group rewrites its file with only the submitted
// partitions: health reports those as REWIND and VANISHED, besides the
// usual lag states. The same evaluation serves 'groups health' and the
// exporter.

// Health conditions, in the order they are reported (worst first). A group
// can hold several at once (a rewound group can also have lost partitions
// and stopped committing): GroupHealth.Conditions lists every active one,
// GroupHealth.State the worst. OK is the absence of every other.
const (
	HealthRewind   = "REWIND"   // a committed offset moved backwards (a reset, or an unfenced stale commit)
	HealthVanished = "VANISHED" // partitions disappeared from the offset file (a partial rewrite)
	HealthErr      = "ERR"      // the group could not be observed, or its file turned corrupt / unreadable to brokers
	HealthBlocked  = "BLOCKED"  // a lagging partition waits behind a blocker the read model names (a record, a transaction)
	HealthStop     = "STOP"     // no commits over the window while lag > 0
	HealthStall    = "STALL"    // commits arrive but do not advance while lag > 0
	HealthWarn     = "WARN"     // lag grew at every observation while commits advanced
	HealthChurn    = "CHURN"    // more generation changes in the window than the threshold (membership.go)
	HealthOK       = "OK"
)

// HealthStates lists every condition, worst first.
var HealthStates = []string{HealthRewind, HealthVanished, HealthErr, HealthBlocked, HealthStop, HealthStall, HealthChurn, HealthWarn, HealthOK}

// HealthRank orders states (0 = worst); unknown states rank last.
func HealthRank(state string) int {
	if i := slices.Index(HealthStates, state); i >= 0 {
		return i
	}
	return len(HealthStates)
}

// PartitionSample is one partition of a group at one observation.
type PartitionSample struct {
	// Key is "topic/partition".
	Key string `json:"partition"`
	// Committed is the committed offset (-1: none).
	Committed int64 `json:"committed"`
	// End is the log end offset (-1: unknown).
	End int64 `json:"end"`
	// Start is the log start offset (-1: unknown; kaas advances it only on
	// DeleteRecords).
	Start int64 `json:"logStart"`
}

// Lag is End - Committed (never negative); ok is false when either side is
// unknown.
func (p PartitionSample) Lag() (int64, bool) {
	if p.Committed < 0 || p.End < 0 {
		return 0, false
	}
	return max(0, p.End-p.Committed), true
}

// HealthSample is one observation of one group.
type HealthSample struct {
	Time time.Time `json:"time"`
	// Partitions are the committed offsets and log ends, sorted by Key (a
	// slice, not a map: a window holds one per group and observation).
	Partitions []PartitionSample `json:"partitions"`
	// File is the group's offset file as read (nil without a volume); its
	// reading's time is Time. A group without a file on a volume has
	// File.Missing set.
	File *OffsetReading `json:"file,omitempty"`
	// FileModTime is the offset file's modification time: kaas rewrites the
	// whole file on every commit, so a change means a commit arrived.
	FileModTime time.Time `json:"fileModTime"`
	// Err says why the group could not be observed (empty when it was).
	Err string `json:"error,omitempty"`
	// FileFollowed: a follower of the offsets dir (the exporter's) saw every
	// change of this group's file up to this observation, and
	// FileAnomalies are what it found since the previous one. Between two
	// followed observations those anomalies replace the comparison of the
	// two files read at the observations, which misses a change made and
	// overwritten in between and would count the ones it sees twice.
	FileFollowed  bool            `json:"fileFollowed,omitempty"`
	FileAnomalies []OffsetAnomaly `json:"fileAnomalies,omitempty"`
	// Unobserved counts the partitions with a committed offset whose lag
	// could not be observed although a source of log ends was asked
	// (inspect.PartitionState.LagUnobservable), UnobservedFirst the first:
	// ERR. A partition with nothing to observe on this volume (no dir: a
	// deleted topic, another pool dir) is not counted.
	Unobserved      int32  `json:"unobserved,omitempty"`
	UnobservedFirst string `json:"unobservedFirst,omitempty"`
	// Blockers are the read model's blockers of the group's lagging
	// partitions at this observation (observe's refresh): BLOCKED.
	Blockers []SampleBlocker `json:"blockers,omitempty"`
	// rewrite is what the change of the offset file since the previous
	// observation was, as HealthWindow.Add found it while it held both
	// readings (rewriteKind).
	rewrite int8
}

// What a rewrite of an offset file between two observations was. kaas
// rewrites the whole file on every commit, so a rewrite is a commit when a
// committed offset moved forward, a partition was added, or the same
// offsets were committed again (a consumer committing its position); one
// that only removed partitions or moved offsets back (an offsets delete, a
// reset, kaasctl's own writes) is not: no consumer committed.
const (
	rewriteUnknown  int8 = iota // not told (no readings of both files)
	rewriteCommit               // a commit arrived
	rewriteNoCommit             // partitions removed or rewound only
)

// rewriteKind is what the file's change from p to c was: from the two
// readings when both are held, else what Add recorded in c.
func rewriteKind(p, c *HealthSample) int8 {
	if p.File != nil && c.File != nil {
		if k := readingRewrite(p.File, c.File); k != rewriteUnknown {
			return k
		}
	}
	return c.rewrite
}

// readingRewrite compares two parsed readings of one offset file (both
// sorted by key).
func readingRewrite(a, b *OffsetReading) int8 {
	if a.Missing || b.Missing || a.Corrupt || b.Corrupt {
		return rewriteUnknown
	}
	same := len(a.Offsets) == len(b.Offsets)
	i := 0
	for _, o := range b.Offsets {
		for i < len(a.Offsets) && a.Offsets[i].Key < o.Key {
			i++
		}
		if i == len(a.Offsets) || a.Offsets[i].Key != o.Key || o.Offset > a.Offsets[i].Offset {
			return rewriteCommit // a partition added, or an offset moved forward
		}
		same = same && o.Offset == a.Offsets[i].Offset
	}
	if same {
		return rewriteCommit // the same offsets committed again
	}
	return rewriteNoCommit
}

// Partition is the partition with key k ("topic/partition").
// partitionAt is Partition with a hint: a group's samples mostly list the
// same partitions in the same order, so index i is tried before a search.
func (s *HealthSample) partitionAt(k string, i int) (PartitionSample, bool) {
	if i >= 0 && i < len(s.Partitions) && s.Partitions[i].Key == k {
		return s.Partitions[i], true
	}
	return s.Partition(k)
}

func (s *HealthSample) Partition(k string) (PartitionSample, bool) {
	i, ok := slices.BinarySearchFunc(s.Partitions, k, func(p PartitionSample, k string) int { return strings.Compare(p.Key, k) })
	if !ok {
		return PartitionSample{}, false
	}
	return s.Partitions[i], true
}

// SortPartitions sorts ps by Key (what HealthSample.Partitions must be).
func SortPartitions(ps []PartitionSample) {
	slices.SortFunc(ps, func(a, b PartitionSample) int { return strings.Compare(a.Key, b.Key) })
}

// TotalLag sums the known partition lags; known is false when none is.
func (s HealthSample) TotalLag() (total int64, known bool) {
	for _, p := range s.Partitions {
		if l, ok := p.Lag(); ok {
			total += l
			known = true
		}
	}
	return total, known
}

// HealthEvidence is one fact behind a health state.
type HealthEvidence struct {
	State string `json:"state"`
	// Partition is "topic/partition" when the fact is about one.
	Partition string `json:"partition,omitempty"`
	// Before and After are offsets (committed, or lag for WARN); -1 when
	// not applicable.
	Before int64 `json:"before"`
	After  int64 `json:"after"`
	// Since and Time bound the observations the fact spans.
	Since time.Time `json:"since"`
	Time  time.Time `json:"time"`
	// File is the offset file whose change is the evidence, when one is.
	File   string `json:"file,omitempty"`
	Detail string `json:"detail"`
	// Carried: the group cannot be observed now (ERR); this is what was
	// last known before, kept until it can be observed again.
	Carried bool `json:"carried,omitempty"`
}

// GroupHealth is the health of one group over a window.
type GroupHealth struct {
	Group string `json:"group"`
	// State is the worst of Conditions.
	State string `json:"state"`
	// Conditions are every active condition, worst first (["OK"] when
	// none is).
	Conditions []string `json:"conditions"`
	// UnknownSince is set while the group cannot be observed (ERR because
	// the brokers or its coordinator did not answer): since when. The
	// conditions last known before stay in Conditions (their evidence is
	// Carried), so an outage neither clears nor invents an incident.
	UnknownSince time.Time `json:"unknownSince,omitzero"`
	// Lag is the total lag at the last observation, over the partitions
	// whose lag is known; LagUnknown counts the others (no committed offset
	// a consumer would get, or no log end), which Lag leaves out.
	Lag        int64 `json:"lag"`
	LagKnown   bool  `json:"lagKnown"`
	LagUnknown int   `json:"lagUnknown"`
	// Samples is the number of observations in the window; From and To
	// its first and last.
	Samples  int              `json:"samples"`
	From     time.Time        `json:"from"`
	To       time.Time        `json:"to"`
	Evidence []HealthEvidence `json:"evidence"`
	// Drain is the time to drain and Retention the retention breach
	// forecast over the same observations.
	Drain     *DrainEstimate     `json:"drain,omitempty"`
	Retention *RetentionForecast `json:"retention,omitempty"`
	// LastCommit is when the group last committed, as far as the window
	// tells: the offset file's modification time (kaas rewrites it on every
	// commit), else the last observation at which a committed offset moved;
	// zero when neither tells.
	LastCommit time.Time `json:"lastCommit,omitzero"`
	// Churn is the group's membership over the window and Rewinds who its
	// rewinds there were by (MemberWindow.Apply; nil without membership
	// observations).
	Churn   *ChurnStats         `json:"churn,omitempty"`
	Rewinds []RewindAttribution `json:"rewindAuthors,omitempty"`
}

// HealthOptions tune EvaluateHealth.
type HealthOptions struct {
	// PlainMapIsEmpty: the volume's generation reads a plain-map offset
	// file as empty (only a known 0.2.18 volume); passed on to
	// CompareOffsetObservations.
	PlainMapIsEmpty bool
	// MinSpan is how long the observations must span before STOP, STALL or
	// WARN is claimed ("no commit for a while"); 0: any two observations.
	MinSpan time.Duration
}

// minTrendSamples is how many observations WARN needs (lag must grow at
// every step, so two points are not a trend).
const minTrendSamples = 3

// EvaluateHealth returns a group's health from its observations in the
// window, oldest first. The rules, in precedence order:
//
//   - REWIND: between two observations of the offset file (or, without a
//     volume, of the coordinator's committed offsets) a committed offset
//     moved backwards.
//   - VANISHED: partitions disappeared from the offset file.
//   - ERR: the file turned corrupt or into a plain map the generation reads
//     as empty, or the last observation failed.
//   - STOP: lag > 0 on some partition and no commit arrived in the window
//     (no committed offset moved and the offset file was not rewritten).
//   - STALL: lag > 0 on a partition whose committed offset did not move
//     although commits arrived (the file was rewritten, or other partitions
//     advanced).
//   - WARN: the total lag grew at every observation (at least three).
//   - OK otherwise. One observation can only say OK or ERR, and STOP,
//     STALL and WARN need observations spanning opt.MinSpan.
func EvaluateHealth(group string, samples []HealthSample, opt HealthOptions) GroupHealth {
	var h GroupHealth
	evaluateHealth(&h, group, samples, func(i int) []OffsetAnomaly {
		var prev *HealthSample
		if i > 0 {
			prev = &samples[i-1]
		}
		return sampleAnomalies(prev, samples[i], opt)
	}, opt)
	return h
}

// evaluateHealth is EvaluateHealth with the anomalies between samples[i-1]
// and samples[i] (for i == 0, what a follower saw up to the first) given by pair (HealthWindow keeps them from Add instead of
// comparing every pair of files again at every evaluation), into h (an
// element of EvaluateAll's out, filled where it lies).
func evaluateHealth(h *GroupHealth, group string, samples []HealthSample, pair func(i int) []OffsetAnomaly, opt HealthOptions) {
	*h = GroupHealth{Group: group, State: HealthOK, Evidence: []HealthEvidence{}, Samples: len(samples)}
	if len(samples) == 0 {
		h.Evidence = append(h.Evidence, HealthEvidence{State: HealthErr, Before: -1, After: -1, Detail: "no observation of the group in the window"})
		h.finish()
		return
	}
	first, last := samples[0], samples[len(samples)-1]
	h.From, h.To = first.Time, last.Time
	h.Lag, h.LagKnown = last.TotalLag()
	add := func(e HealthEvidence) { h.Evidence = append(h.Evidence, e) }

	// Offset anomalies between consecutive observations (and, from a
	// follower, those it saw up to the first one).
	for i := range samples {
		for _, a := range pair(i) {
			e := HealthEvidence{Partition: a.Partition, Before: a.Before, After: a.After, Since: a.Since, Time: a.Time, File: a.File, Detail: a.Detail}
			switch a.Kind {
			case AnomalyRewind:
				e.State = HealthRewind
			case AnomalyVanished:
				e.State = HealthVanished
			case AnomalyCorrupt, AnomalyPlainMap:
				e.State = HealthErr
			default:
				continue // EMPTIED: every partition is reported VANISHED
			}
			add(e)
		}
	}
	if last.Err != "" {
		add(HealthEvidence{State: HealthErr, Before: -1, After: -1, Since: last.Time, Time: last.Time, Detail: last.Err})
	} else if n := int(last.Unobserved); n > 0 {
		add(HealthEvidence{State: HealthErr, Partition: last.UnobservedFirst, Before: -1, After: -1, Since: last.Time, Time: last.Time,
			Detail: fmt.Sprintf("the lag of %s with a committed offset cannot be known: no log end (the leader did not answer for it, or its segments could not be read); the total leaves it out", healthPlural(n, "partition", "partitions"))})
	}

	h.Drain, h.Retention, h.LastCommit = estimateDrain(samples), forecastRetention(samples), lastCommit(samples)
	if len(samples) >= 2 {
		d := h.Drain
		draining := d.Known && d.Lag > 0 && !d.NotDraining && d.ConsumeRate > d.ProduceRate
		lagEvidence(samples, opt.MinSpan, draining, add)
	}
	blockedEvidence(last, add)
	h.finish()
}

// finish sets State and Conditions from the evidence, sorted worst first.
func (h *GroupHealth) finish() {
	slices.SortStableFunc(h.Evidence, func(a, b HealthEvidence) int { return HealthRank(a.State) - HealthRank(b.State) })
	h.Conditions = h.Conditions[:0]
	for _, e := range h.Evidence {
		if n := len(h.Conditions); n == 0 || h.Conditions[n-1] != e.State {
			h.Conditions = append(h.Conditions, e.State)
		}
	}
	if len(h.Conditions) == 0 {
		h.Conditions = append(h.Conditions, HealthOK)
	}
	h.State = h.Conditions[0]
}

// Has reports whether condition c is active.
func (h GroupHealth) Has(c string) bool { return slices.Contains(h.Conditions, c) }

// lastCommit is the offset file's modification time at the last
// observation that has one, else the last observation at which a committed
// offset moved. A modification time ahead of the observation by more than
// volume.FutureSlack (a skewed NFS server, a copied or planted file) tells
// nothing about when the group committed: it would read as "just now" for
// ever and hide a stopped group, so it is passed over.
func lastCommit(samples []HealthSample) time.Time {
	for i := len(samples) - 1; i >= 0; i-- {
		if t := samples[i].FileModTime; !t.IsZero() && !t.After(samples[i].Time.Add(volume.FutureSlack)) {
			return t
		}
	}
	for i := len(samples) - 1; i > 0; i-- {
		for j, c := range samples[i].Partitions {
			if p, ok := samples[i-1].partitionAt(c.Key, j); ok && p.Committed != c.Committed && c.Committed >= 0 && p.Committed >= 0 {
				return samples[i].Time
			}
		}
	}
	return time.Time{}
}

// sampleAnomalies is what happened between two observations (prev is nil
// for a group's first): what a follower saw when it followed the file
// through both, else the comparison of the offset files when both have
// one, else of the committed offsets the coordinator answered (rewinds
// only: OffsetFetch asks for explicit partitions, so a partition missing
// from its answer proves nothing).
func sampleAnomalies(prev *HealthSample, cur HealthSample, opt HealthOptions) []OffsetAnomaly {
	if cur.FileFollowed && (prev == nil || prev.FileFollowed) {
		return cur.FileAnomalies
	}
	if prev == nil {
		return nil
	}
	if prev.File != nil && cur.File != nil {
		// The follower's findings, if it started following between the two,
		// are about changes after it started: both are kept.
		return append(anomaly.CompareReadings(*prev.File, *cur.File, prev.Time, cur.Time, opt.PlainMapIsEmpty), cur.FileAnomalies...)
	}
	if prev.Err != "" || cur.Err != "" {
		return nil
	}
	var out []OffsetAnomaly
	for j, b := range prev.Partitions {
		k := b.Key
		a, ok := cur.partitionAt(k, j)
		if !ok || b.Committed < 0 || a.Committed < 0 || a.Committed >= b.Committed {
			continue
		}
		out = append(out, OffsetAnomaly{Kind: AnomalyRewind, Partition: k, Before: b.Committed, After: a.Committed, Since: prev.Time, Time: cur.Time,
			File:   "coordinator (OffsetFetch)",
			Detail: "committed offset of " + k + " moved back from " + strconv.FormatInt(b.Committed, 10) + " to " + strconv.FormatInt(a.Committed, 10) + " on the coordinator"})
	}
	return out
}

// TurnTolerance is how long one partition may stand still while the
// group drains before it is STALL: a throttled consumer (franz-go's
// fetch in turns) serves its partitions in turns, leaving single
// partitions still for 30-60 s while the group's lag falls.
const TurnTolerance = 2 * time.Minute

// lagEvidence adds STOP, STALL and WARN evidence. draining: the group is
// consumed faster than it is produced to (its fitted rates): a partition
// still for less than TurnTolerance is then no STALL.
func lagEvidence(samples []HealthSample, minSpan time.Duration, draining bool, add func(HealthEvidence)) {
	first, last := samples[0], samples[len(samples)-1]
	// Did any commit arrive in the window?
	rewrites := commitRewrites(samples)
	// moved: the partition's committed offset changed (it is not stuck);
	// forward: some committed offset moved forward (a commit: a rewind is
	// REWIND's, not a consumer's progress).
	moved := make([]bool, len(last.Partitions)) // by index in last.Partitions
	forward := false
	for j, lp := range last.Partitions {
		k := lp.Key
		p, okp := samples[0].partitionAt(k, j)
		for i := 1; i < len(samples); i++ {
			c, okc := samples[i].partitionAt(k, j)
			if okp && okc && p.Committed != c.Committed {
				moved[j] = true
				forward = forward || c.Committed > p.Committed
			}
			p, okp = c, okc
		}
	}
	commits := forward || len(rewrites) > 0
	file := ""
	if last.File != nil {
		file = last.File.File
	}
	span := roundSpan(last.Time.Sub(first.Time))
	for j, cur := range last.Partitions {
		k := cur.Key
		lag, ok := cur.Lag()
		if !ok && !moved[j] {
			// The log end is unknown now (its leader did not answer, as
			// while brokers stop one by one). A log end only grows, so
			// with the committed offset unmoved the lag is at least the
			// last one known: the condition does not lapse for that.
			lag, ok = lastKnownLag(samples, k, j)
		}
		if !ok || lag == 0 || moved[j] {
			continue
		}
		// Stuck with lag > 0 over every observation that knows it.
		since := last.Time
		stuck := true
		for _, s := range samples {
			p, okp := s.partitionAt(k, j)
			if !okp {
				continue
			}
			l, ok := p.Lag()
			if !ok {
				continue
			}
			if l == 0 {
				stuck = false
				break
			}
			if s.Time.Before(since) {
				since = s.Time
			}
		}
		if !stuck || !since.Before(last.Time) || last.Time.Sub(since) < minSpan {
			continue
		}
		if commits && draining && last.Time.Sub(since) < TurnTolerance {
			continue // served in turns: the group drains
		}
		e := HealthEvidence{Partition: k, Before: cur.Committed, After: cur.Committed, Since: since, Time: last.Time, File: file}
		if commits {
			e.State = HealthStall
			why := "other partitions advanced"
			if len(rewrites) > 0 {
				why = fmt.Sprintf("the offset file was rewritten %s", healthPlural(len(rewrites), "time", "times"))
			}
			e.Detail = fmt.Sprintf("committed offset of %s stayed at %d for %s while commits arrived (%s); lag %d", k, cur.Committed, span, why, lag)
		} else {
			e.State = HealthStop
			e.Detail = fmt.Sprintf("no commit for %s: committed offset of %s stayed at %d with lag %d", span, k, cur.Committed, lag)
			if file != "" {
				e.Detail += " and the offset file was not rewritten"
			}
		}
		add(e)
	}
	// WARN: total lag grew at every step while commits advanced.
	if len(samples) < minTrendSamples || !forward || last.Time.Sub(first.Time) < minSpan {
		return
	}
	prevLag, ok := first.TotalLag()
	if !ok {
		return
	}
	for _, s := range samples[1:] {
		l, ok := s.TotalLag()
		if !ok || l <= prevLag {
			return
		}
		prevLag = l
	}
	before, _ := first.TotalLag()
	after, _ := last.TotalLag()
	add(HealthEvidence{State: HealthWarn, Before: before, After: after, Since: first.Time, Time: last.Time, File: file,
		Detail: fmt.Sprintf("total lag grew at each of %d observations over %s, from %d to %d, while commits advanced", len(samples), span, before, after)})
}

// commitRewrites are the times of the offset file's rewrites in the window
// that were commits (rewriteKind): an offsets delete or a reset between
// two observations is not one.
func commitRewrites(samples []HealthSample) []time.Time {
	var out []time.Time
	for i := 1; i < len(samples); i++ {
		p, c := &samples[i-1], &samples[i]
		if p.FileModTime.IsZero() || c.FileModTime.IsZero() || c.FileModTime.Equal(p.FileModTime) {
			continue
		}
		if rewriteKind(p, c) != rewriteNoCommit {
			out = append(out, c.FileModTime)
		}
	}
	return out
}

// lastKnownLag is partition k's lag at the last observation that knows it.
func lastKnownLag(samples []HealthSample, k string, j int) (int64, bool) {
	for i := len(samples) - 1; i >= 0; i-- {
		if p, ok := samples[i].partitionAt(k, j); ok {
			if l, ok := p.Lag(); ok {
				return l, true
			}
		}
	}
	return 0, false
}

// roundSpan rounds a window's span for messages: to 100 ms below 10 s,
// else to the second.
func roundSpan(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

func healthPlural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// HealthWindow keeps each group's observations for a window and evaluates
// them: the state the exporter and 'groups health' share. It also counts
// rewound and vanished partitions as they are first seen (the exporter's
// counters). It is not safe for concurrent use.
type HealthWindow struct {
	Window time.Duration
	Opt    HealthOptions
	groups map[string]*groupWindow
	// clock interns the observations' times; view is Add's scratch.
	clock windowShared
	view  windowView
}

type groupWindow struct {
	// store holds the observations in the window and, for each, the
	// anomalies Add found between it and the one before (for the first
	// kept, what a follower saw up to it): healthstore.go.
	store    sampleStore
	rewinds  int64
	vanished int64
	seen     bool
	// carry is what the group carries through an outage and after it (nil
	// while there is nothing: most groups of a window of 100,000).
	carry *groupCarry
}

// groupCarry is a group's state around outages. errSince is when the
// current run of failed observations began (zero while the group is
// observed); known the evidence of the last evaluation of an observed
// group (what an outage carries); after, set after an outage, what it
// carries still.
type groupCarry struct {
	errSince time.Time
	known    []HealthEvidence
	after    *outageCarry
}

// errSince is when the group's current run of failed observations began
// (zero while it is observed).
func (g *groupWindow) errSince() time.Time {
	if g.carry == nil {
		return time.Time{}
	}
	return g.carry.errSince
}

// carried returns the group's carry, made when it has none.
func (g *groupWindow) carrying() *groupCarry {
	if g.carry == nil {
		g.carry = &groupCarry{}
	}
	return g.carry
}

// tidy drops the carry once it holds nothing.
func (g *groupWindow) tidy() {
	if c := g.carry; c != nil && c.errSince.IsZero() && len(c.known) == 0 && c.after == nil {
		g.carry = nil
	}
}

// outageCarry is what a group carries after an outage: the first
// observation after a run of failed ones was at resumed, the run began at
// from, and evidence are the conditions last known before it, kept until
// the observations since can judge them or contradict them
// (carryAfterOutage): a STOP carried through ERR comes back as it was, not
// after --stop-after again.
type outageCarry struct {
	from, resumed time.Time
	evidence      []HealthEvidence
}

// HealthCounts are a group's cumulative anomaly counts.
type HealthCounts struct {
	Rewinds  int64 `json:"rewinds"`
	Vanished int64 `json:"vanished"`
}

// Add records one observation of group and returns the anomalies it
// revealed against the previous one.
func (w *HealthWindow) Add(group string, s HealthSample) []OffsetAnomaly {
	_, out := w.AddRef(group, s)
	return out
}

// GroupRef is a group's place in the window, from AddRef: evaluating and
// counting it by its ref need no lookup by name (a 100,000-group refresh
// saves 200,000). Valid until Sweep forgets the group.
type GroupRef struct {
	name string
	g    *groupWindow
}

// Counts returns the group's cumulative anomaly counts.
func (r GroupRef) Counts() HealthCounts { return r.g.counts() }

// AddRef is Add that also returns the group's ref.
func (w *HealthWindow) AddRef(group string, s HealthSample) (GroupRef, []OffsetAnomaly) {
	if w.groups == nil {
		w.groups = map[string]*groupWindow{}
	}
	g := w.groups[group]
	if g == nil {
		g = &groupWindow{}
		w.groups[group] = g
	}
	g.seen = true
	switch since := g.errSince(); {
	case s.Err == "" && !since.IsZero():
		if len(g.carry.known) > 0 {
			g.carry.after = &outageCarry{from: since, resumed: s.Time, evidence: slices.Clone(g.carry.known)}
		}
		g.carry.errSince = time.Time{}
		g.tidy()
	case s.Err != "" && since.IsZero():
		g.carrying().errSince = s.Time
	}
	var prev *HealthSample
	if g.store.n > 0 {
		prev = g.store.last(&w.view, group, &w.clock)
		s.rewrite = rewriteKind(prev, &s)
	}
	out := sampleAnomalies(prev, s, w.Opt)
	for _, a := range out {
		switch a.Kind {
		case AnomalyRewind:
			g.rewinds++
		case AnomalyVanished:
			g.vanished++
		}
	}
	// The file as read is compared only with the next reading, which has
	// just been done (out): the store keeps the last one's alone.
	g.store.push(s, group, prev, out, &w.clock, &w.view)
	// Keep the window, and always the latest two observations.
	cut := false
	for g.store.n > 2 && w.Window > 0 && s.Time.Sub(g.store.firstTime(&w.clock)) > w.Window {
		g.store.dropFirst(&w.clock)
		cut = true
	}
	if cut {
		g.store.trim(group, &w.clock, &w.view)
	}
	return GroupRef{name: group, g: g}, out
}

// Sweep forgets groups that received no observation since the last Sweep
// (they left the selection, or were deleted).
func (w *HealthWindow) Sweep() {
	for k, g := range w.groups {
		if !g.seen {
			g.store.release(&w.clock)
			delete(w.groups, k)
			continue
		}
		g.seen = false
	}
}

// Evaluate returns the health of group over its window. While the group
// cannot be observed (its last observation failed), the conditions of its
// last evaluation while observed are carried with their evidence (marked
// Carried) besides ERR, and UnknownSince says since when: a pending STOP
// alert does not reset because the brokers went down, and a REWIND seen
// just before is not cleared by the outage.
func (w *HealthWindow) Evaluate(group string) GroupHealth {
	var h GroupHealth
	w.evaluateInto(&h, group)
	return h
}

// evaluateInto is Evaluate into h.
func (w *HealthWindow) evaluateInto(h *GroupHealth, group string) {
	w.evaluateWindow(h, group, w.groups[group])
}

// evaluateWindow is Evaluate of group, whose window is g (nil: none),
// decoded in a scratch view of its own (evaluations run on every core).
func (w *HealthWindow) evaluateWindow(h *GroupHealth, group string, g *groupWindow) {
	if g == nil {
		*h = EvaluateHealth(group, nil, w.Opt)
		return
	}
	v := viewPool.Get().(*windowView)
	defer viewPool.Put(v)
	g.store.decode(v, group, &w.clock)
	samples := v.samples[:g.store.n]
	evaluateHealth(h, group, samples, func(i int) []OffsetAnomaly { return v.pairs[i] }, w.Opt)
	if g.errSince().IsZero() {
		if g.carry != nil && g.carry.after != nil && len(g.carry.after.evidence) > 0 {
			w.carryAfterOutage(h, g, samples)
		}
		var known []HealthEvidence
		if g.carry != nil {
			known = g.carry.known[:0]
		}
		for _, e := range h.Evidence {
			if e.State != HealthErr {
				known = append(known, e)
			}
		}
		if len(known) > 0 {
			g.carrying().known = known
		} else if g.carry != nil {
			g.carry.known = nil
			g.tidy()
		}
		return
	}
	h.UnknownSince = g.carry.errSince
	for _, e := range g.carry.known {
		if h.Has(e.State) {
			continue // seen again (a file anomaly observed during the outage)
		}
		h.Evidence = append(h.Evidence, carried(e, g.carry.errSince))
	}
	h.finish()
}

// carried is e kept from before an outage that began at since.
func carried(e HealthEvidence, since time.Time) HealthEvidence {
	e.Carried = true
	if !strings.HasPrefix(e.Detail, "last known") {
		e.Detail = "last known before " + since.UTC().Format(time.RFC3339) + ": " + e.Detail
	}
	return e
}

// carryAfterOutage keeps, in h (a fresh evaluation after an outage), each
// condition last known before it that the observations since the outage
// can neither judge yet nor contradict: STOP, STALL and WARN until those
// observations span MinSpan (then the fresh evaluation says) or a commit
// or a caught-up partition ends them; REWIND and VANISHED until their
// evidence leaves the window, as it would have without the outage. A
// fresh STOP of a partition still at the committed offset it was stopped
// at keeps the earlier since.
func (w *HealthWindow) carryAfterOutage(h *GroupHealth, g *groupWindow, samples []HealthSample) {
	fresh := samples
	after := g.carry.after
	for len(fresh) > 0 && fresh[0].Time.Before(after.resumed) {
		fresh = fresh[1:]
	}
	keep := after.evidence[:0]
	for _, e := range after.evidence {
		if i := slices.IndexFunc(h.Evidence, func(x HealthEvidence) bool {
			return x.State == e.State && x.Partition == e.Partition
		}); i >= 0 {
			// The fresh evaluation has it again; while the partition stays
			// at the same offset, its since is the one before the outage.
			if extendSince(&h.Evidence[i], e, after.from) {
				keep = append(keep, e)
			}
			continue
		}
		if h.Has(e.State) || !w.stillCarried(e, fresh) {
			continue
		}
		keep = append(keep, e)
		h.Evidence = append(h.Evidence, carried(e, after.from))
	}
	after.evidence = keep
	if len(keep) == 0 {
		g.carry.after = nil
	}
	h.finish()
}

// extendSince gives a fresh STOP or STALL the since of the same condition
// before an outage when the partition is still at the offset it was then.
// It reports whether it did.
func extendSince(fresh *HealthEvidence, before HealthEvidence, outage time.Time) bool {
	if (fresh.State != HealthStop && fresh.State != HealthStall) || fresh.After != before.After || !before.Since.Before(fresh.Since) {
		return false
	}
	fresh.Since = before.Since
	fresh.Detail += fmt.Sprintf("; stuck at %d since %s, through the outage from %s", before.After,
		before.Since.UTC().Format(time.RFC3339), outage.UTC().Format(time.RFC3339))
	return true
}

// stillCarried reports whether condition e, known before an outage, is
// kept after it given the observations since (fresh, oldest first).
func (w *HealthWindow) stillCarried(e HealthEvidence, fresh []HealthSample) bool {
	if len(fresh) == 0 {
		return true
	}
	last := fresh[len(fresh)-1]
	switch e.State {
	case HealthRewind, HealthVanished:
		return w.Window <= 0 || last.Time.Sub(e.Time) <= w.Window
	case HealthStop, HealthStall, HealthWarn:
	default:
		return false
	}
	need := 2
	if e.State == HealthWarn {
		need = minTrendSamples
	}
	if len(fresh) >= need && last.Time.Sub(fresh[0].Time) >= w.Opt.MinSpan {
		return false // the observations since can judge it: their evaluation says
	}
	if len(commitRewrites(fresh)) > 0 {
		return false
	}
	for i, s := range fresh {
		for j, p := range s.Partitions {
			if i > 0 {
				if q, ok := fresh[i-1].partitionAt(p.Key, j); ok && q.Committed >= 0 && p.Committed > q.Committed {
					return false // a commit arrived since the outage
				}
			}
			if p.Key != e.Partition || e.State == HealthWarn {
				continue
			}
			if l, ok := p.Lag(); ok && l == 0 || p.Committed >= 0 && p.Committed != e.After {
				return false // caught up, or committed during the outage
			}
		}
	}
	return true
}

// EvaluateAll evaluates every group of names into out (len(out) ==
// len(names)), workers goroutines at a time over contiguous slices: each
// group's evaluation reads and updates only its own window, so distinct
// names evaluate independently. A name given twice is evaluated once per
// occurrence, in order, by the same worker. Nothing may Add meanwhile.
func (w *HealthWindow) EvaluateAll(names []string, out []GroupHealth, workers int) {
	if len(out) != len(names) {
		panic("inspect: EvaluateAll: out and names differ in length")
	}
	w.evaluateEach(len(names), func(i int) string { return names[i] }, out, workers, func(h *GroupHealth, i int) {
		w.evaluateInto(h, names[i])
	})
}

// EvaluateRefs is EvaluateAll of the groups refs name, by their refs.
func (w *HealthWindow) EvaluateRefs(refs []GroupRef, out []GroupHealth, workers int) {
	if len(out) != len(refs) {
		panic("inspect: EvaluateRefs: out and refs differ in length")
	}
	w.evaluateEach(len(refs), func(i int) string { return refs[i].name }, out, workers, func(h *GroupHealth, i int) {
		w.evaluateWindow(h, refs[i].name, refs[i].g)
	})
}

// evaluateEach runs eval for each of n groups into out, workers at a time
// over contiguous slices (one, in order, when a name occurs twice).
func (w *HealthWindow) evaluateEach(n int, name func(int) string, out []GroupHealth, workers int, eval func(*GroupHealth, int)) {
	workers = min(workers, n/512)
	if workers > 1 && hasAdjacentOrRepeated(n, name) {
		workers = 1 // a name given twice is evaluated in order, on one goroutine
	}
	parallel.ForRanges(n, workers, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			eval(&out[i], i)
		}
	})
}

// hasAdjacentOrRepeated reports whether one of n names occurs twice
// (names are usually sorted, so a sorted list is checked without a set).
func hasAdjacentOrRepeated(n int, name func(int) string) bool {
	sorted := true
	for i := 1; i < n && sorted; i++ {
		sorted = name(i-1) <= name(i)
	}
	if sorted {
		for i := 1; i < n; i++ {
			if name(i) == name(i-1) {
				return true
			}
		}
		return false
	}
	seen := make(map[string]struct{}, n)
	for i := range n {
		if _, dup := seen[name(i)]; dup {
			return true
		}
		seen[name(i)] = struct{}{}
	}
	return false
}

// Counts returns the group's cumulative anomaly counts.
func (w *HealthWindow) Counts(group string) HealthCounts { return w.groups[group].counts() }

func (g *groupWindow) counts() HealthCounts {
	if g == nil {
		return HealthCounts{}
	}
	return HealthCounts{Rewinds: g.rewinds, Vanished: g.vanished}
}

// Groups lists the groups in the window, sorted.
func (w *HealthWindow) Groups() []string {
	out := make([]string, 0, len(w.groups))
	for k := range w.groups {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
