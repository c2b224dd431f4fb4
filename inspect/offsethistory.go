package inspect

import (
	"slices"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/render"
)

// OffsetHistoryInput is one group's timeline as read from the offsets
// journal and kaasctl's backups (repair.LoadGroupHistory).
type OffsetHistoryInput struct {
	Group    string
	Journal  string
	Backups  []string
	Warnings []string
	Points   []watch.HistoryPoint
	// Since and Until are the range asked (zero: open).
	Since, Until time.Time
}

// OffsetHistoryView is the machine document of 'offsets history'.
type OffsetHistoryView struct {
	Group   string     `json:"group"`
	Journal string     `json:"journal"`
	Backups []string   `json:"backups"`
	Since   *time.Time `json:"since,omitempty"`
	Until   *time.Time `json:"until,omitempty"`
	// First and Last are the times of the first and last point.
	First      *time.Time         `json:"first,omitempty"`
	Last       *time.Time         `json:"last,omitempty"`
	Partitions []HistoryPartition `json:"partitions"`
	Points     []HistoryPoint     `json:"points"`
	Anomalies  []HistoryAnomaly   `json:"anomalies"`
	// Gaps are where the journal lost or cannot read records: the state
	// from Time until the next full snapshot (Until; null: none yet) is
	// not known, and restores to a moment in it are refused.
	Gaps     []HistoryGap `json:"gaps"`
	Warnings []string     `json:"warnings"`
	// Rows are one partition at one point each (-o csv, -o jsonl).
	Rows []HistoryRow `json:"-"`
}

// HistoryGap is a stretch of the journal whose offsets are not known.
type HistoryGap struct {
	Time    time.Time  `json:"time"`
	Until   *time.Time `json:"until"`
	Problem string     `json:"problem"`
}

// HistoryPartition sums up one partition's timeline.
type HistoryPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// First and Last are the first and last committed offsets seen (null
	// when the partition is not in the file then).
	First     *int64 `json:"first"`
	Last      *int64 `json:"last"`
	Min       int64  `json:"min"`
	Max       int64  `json:"max"`
	Changes   int    `json:"changes"`
	Anomalies int    `json:"anomalies"`
	// Spark is the progress sparkline over the view's span (terminal only).
	Spark string `json:"-"`
}

// HistoryPoint is one recorded point, restricted to the partitions kept.
type HistoryPoint struct {
	Time      time.Time        `json:"time"`
	Source    string           `json:"source"` // journal | backup | file
	Kind      string           `json:"kind"`   // snapshot | change | corrupt | missing | before-rewrite | gap
	File      string           `json:"file"`
	Format    string           `json:"format"`
	Changed   map[string]int64 `json:"changed"`
	Removed   []string         `json:"removed"`
	Problem   string           `json:"problem,omitempty"`
	Anomalies []string         `json:"anomalies"` // kinds, as flagged at this point
	// Offsets is the group's full committed set after this point.
	Offsets map[string]int64 `json:"offsets"`
	// Unsound: rebuilt across a gap in the journal (see gaps).
	Unsound bool `json:"unsound,omitempty"`
}

// HistoryAnomaly is an anomaly flagged at a point.
type HistoryAnomaly struct {
	Time      time.Time `json:"time"`
	Kind      string    `json:"kind"`
	Partition string    `json:"partition,omitempty"`
	Before    int64     `json:"before"`
	After     int64     `json:"after"`
	Detail    string    `json:"detail"`
}

// HistoryRow is one partition at one point (-o csv, -o jsonl).
type HistoryRow struct {
	Time      time.Time `json:"time"`
	Group     string    `json:"group"`
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	Offset    *int64    `json:"offset"`   // null: removed
	Previous  *int64    `json:"previous"` // null: not in the file before
	Source    string    `json:"source"`
	Kind      string    `json:"kind"`
	Anomaly   string    `json:"anomaly"`
	Detail    string    `json:"detail"`
}

// HistorySparkWidth is the width of a partition's sparkline.
const HistorySparkWidth = 24

// historySeries is one partition's values over the timeline.
type historySeries struct {
	hp     *HistoryPartition
	times  []time.Time
	vals   []*int64
	marked []bool
}

// timeOrNil is t, or nil when zero.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// BuildOffsetHistory is the view of a group's timeline for the partitions
// keep accepts: every point, a row per partition whose offset changed,
// appeared, vanished or was flagged at a point (a backup's full copy shows
// as changes against the state before it), the anomalies, the gaps, and
// per partition its first, last, min and max offsets and a sparkline.
func BuildOffsetHistory(h OffsetHistoryInput, keep func(string) bool) *OffsetHistoryView {
	v := &OffsetHistoryView{Group: h.Group, Journal: h.Journal, Backups: h.Backups, Warnings: h.Warnings,
		Partitions: []HistoryPartition{}, Points: []HistoryPoint{}, Anomalies: []HistoryAnomaly{}, Gaps: []HistoryGap{}, Rows: []HistoryRow{}}
	if len(h.Points) > 0 {
		f, l := h.Points[0].Time, h.Points[len(h.Points)-1].Time
		v.First, v.Last = &f, &l
	}
	v.Since, v.Until = timeOrNil(h.Since), timeOrNil(h.Until)
	parts := map[string]*historySeries{}
	var prev map[string]int64
	for i, pt := range h.Points {
		hp := historyPointView(pt, keep)
		if pt.Kind == watch.RecGap {
			v.Gaps = append(v.Gaps, historyGap(pt, h.Points[i+1:]))
			v.Points = append(v.Points, hp)
			continue // the offsets did not move: the state is not known
		}
		anom := v.addAnomalies(&hp, pt, keep)
		v.Points = append(v.Points, hp)
		for _, k := range changedKeys(prev, pt.Offsets, anom, keep) {
			v.addRow(seriesOf(parts, k), pt, prev, anom, k)
		}
		prev = pt.Offsets
	}
	v.summarize(parts)
	return v
}

func historyPointView(pt watch.HistoryPoint, keep func(string) bool) HistoryPoint {
	hp := HistoryPoint{Time: pt.Time, Source: pt.Source, Kind: pt.Kind, File: pt.File, Format: pt.Format,
		Changed: filterOffsets(pt.Changed, keep), Removed: []string{}, Problem: pt.Problem, Anomalies: []string{},
		Offsets: filterOffsets(pt.Offsets, keep), Unsound: pt.Unsound}
	if pt.Kind == watch.RecGap {
		return hp
	}
	for _, k := range pt.Removed {
		if keep(k) {
			hp.Removed = append(hp.Removed, k)
		}
	}
	return hp
}

// historyGap is the gap starting at pt; it lasts until the first sound
// point after it.
func historyGap(pt watch.HistoryPoint, later []watch.HistoryPoint) HistoryGap {
	gp := HistoryGap{Time: pt.Time, Problem: pt.Problem}
	for _, l := range later {
		if !l.Unsound {
			t := l.Time
			gp.Until = &t
			break
		}
	}
	return gp
}

// addAnomalies records the point's anomalies of kept partitions and
// returns them by partition.
func (v *OffsetHistoryView) addAnomalies(hp *HistoryPoint, pt watch.HistoryPoint, keep func(string) bool) map[string]watch.JournalAnomaly {
	anom := map[string]watch.JournalAnomaly{}
	for _, a := range pt.Anomalies {
		if a.Partition != "" && !keep(a.Partition) {
			continue
		}
		hp.Anomalies = append(hp.Anomalies, a.Kind)
		v.Anomalies = append(v.Anomalies, HistoryAnomaly{Time: pt.Time, Kind: a.Kind, Partition: a.Partition, Before: a.Before, After: a.After, Detail: a.Detail})
		if a.Partition != "" {
			anom[a.Partition] = a
		}
	}
	return anom
}

// changedKeys is the kept partitions whose offset changed, appeared or
// vanished between prev and cur, or that are flagged, in partition order.
func changedKeys(prev, cur map[string]int64, anom map[string]watch.JournalAnomaly, keep func(string) bool) []string {
	keys := map[string]bool{}
	for k, o := range cur {
		if p, ok := prev[k]; !ok || p != o {
			keys[k] = true
		}
	}
	for k := range prev {
		if _, ok := cur[k]; !ok {
			keys[k] = true
		}
	}
	for k := range anom {
		keys[k] = true
	}
	ks := make([]string, 0, len(keys))
	for k := range keys {
		if keep(k) {
			ks = append(ks, k)
		}
	}
	slices.SortFunc(ks, CompareOffsetKeys)
	return ks
}

func seriesOf(parts map[string]*historySeries, k string) *historySeries {
	s := parts[k]
	if s == nil {
		t, p, _ := volume.SplitOffsetKey(k)
		s = &historySeries{hp: &HistoryPartition{Topic: t, Partition: p}}
		parts[k] = s
	}
	return s
}

func (v *OffsetHistoryView) addRow(s *historySeries, pt watch.HistoryPoint, prev map[string]int64, anom map[string]watch.JournalAnomaly, k string) {
	row := HistoryRow{Time: pt.Time, Group: v.Group, Topic: s.hp.Topic, Partition: s.hp.Partition, Source: pt.Source, Kind: pt.Kind}
	if o, ok := pt.Offsets[k]; ok {
		row.Offset = &o
	}
	if o, ok := prev[k]; ok {
		row.Previous = &o
	}
	if a, ok := anom[k]; ok {
		row.Anomaly, row.Detail = a.Kind, a.Detail
		s.hp.Anomalies++
	}
	v.Rows = append(v.Rows, row)
	s.hp.Changes++
	s.times = append(s.times, pt.Time)
	s.vals = append(s.vals, row.Offset)
	s.marked = append(s.marked, row.Anomaly != "")
}

// summarize fills each partition's first, last, min, max and sparkline,
// in partition order.
func (v *OffsetHistoryView) summarize(parts map[string]*historySeries) {
	ks := SortedOffsetKeys(parts)
	var t0, t1 time.Time
	if v.First != nil {
		t0, t1 = *v.First, *v.Last
	}
	for _, k := range ks {
		s := parts[k]
		first := true
		for _, o := range s.vals {
			if o == nil {
				continue
			}
			if s.hp.First == nil {
				x := *o
				s.hp.First = &x
			}
			if first || *o < s.hp.Min {
				s.hp.Min = *o
			}
			if first || *o > s.hp.Max {
				s.hp.Max = *o
			}
			first = false
		}
		if n := len(s.vals); n > 0 && s.vals[n-1] != nil {
			x := *s.vals[n-1]
			s.hp.Last = &x
		}
		s.hp.Spark = render.Sparkline(s.times, s.vals, s.marked, t0, t1, HistorySparkWidth)
		v.Partitions = append(v.Partitions, *s.hp)
	}
}

func filterOffsets(m map[string]int64, keep func(string) bool) map[string]int64 {
	out := map[string]int64{}
	for k, o := range m {
		if keep(k) {
			out[k] = o
		}
	}
	return out
}

// SortedOffsetKeys is m's "topic/partition" keys in CompareOffsetKeys order.
func SortedOffsetKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, CompareOffsetKeys)
	return ks
}

// CompareOffsetKeys orders "topic/partition" keys by topic, then partition
// number (keys that do not parse, as strings).
func CompareOffsetKeys(a, b string) int {
	ta, pa, ea := volume.SplitOffsetKey(a)
	tb, pb, eb := volume.SplitOffsetKey(b)
	if ea != nil || eb != nil {
		return strings.Compare(a, b)
	}
	if c := strings.Compare(ta, tb); c != 0 {
		return c
	}
	return int(pa) - int(pb)
}
