package inspect

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/anomaly"
)

// refWindow is a group's window as plain samples, kept by the rules
// AddRef keeps its store by: the reference the compact store must decode
// to, sample for sample and bit for bit.
type refWindow struct {
	samples []HealthSample
	pairs   [][]OffsetAnomaly
}

func (r *refWindow) add(s HealthSample, window time.Duration, opt HealthOptions) {
	var prev *HealthSample
	if n := len(r.samples); n > 0 {
		prev = &r.samples[n-1]
		s.rewrite = rewriteKind(prev, &s)
	}
	out := sampleAnomalies(prev, s, opt)
	if prev != nil {
		prev.File = nil
	}
	r.samples = append(r.samples, s)
	r.pairs = append(r.pairs, out)
	for len(r.samples) > 2 && window > 0 && s.Time.Sub(r.samples[0].Time) > window {
		r.samples, r.pairs = r.samples[1:], r.pairs[1:]
		r.pairs[0] = sampleAnomalies(nil, r.samples[0], opt)
	}
}

// oddTimes are times a window must give back exactly as given: with a
// monotonic reading, in zones, the zero time in a zone (IsZero, not ==),
// the edges of UnixNano.
func oddTimes(base time.Time) []time.Time {
	zone := time.FixedZone("odd", 5*3600+45*60)
	return []time.Time{
		base, base.In(zone), base.In(time.Local), time.Now(), time.Time{}, time.Time{}.In(zone),
		time.Unix(0, math.MaxInt64), time.Unix(0, math.MinInt64), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, zone), base.Add(-time.Nanosecond),
	}
}

var oddValues = []int64{-1, 0, 1, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, -2, 1 << 62}

// randomSample is an observation at t with odd values, keys (some out of
// order, some twice), times and rare data mixed in.
func randomSample(r *rand.Rand, t time.Time, prev *HealthSample) HealthSample {
	s := HealthSample{Time: t, Partitions: []PartitionSample{}}
	if r.IntN(8) == 0 {
		s.Time = oddTimes(t)[r.IntN(4)]
	}
	nk := r.IntN(6)
	for k := range nk {
		key := "t" + strconv.Itoa(r.IntN(3)) + "/" + strconv.Itoa(k+r.IntN(2))
		p := PartitionSample{Key: key, Committed: int64(r.IntN(1000)), End: int64(1000 + r.IntN(1000)), Start: int64(r.IntN(3))}
		if prev != nil && r.IntN(2) == 0 {
			if q, ok := prev.Partition(key); ok {
				p = q // unchanged
				p.End += int64(r.IntN(2))
			}
		}
		if r.IntN(6) == 0 {
			p.Committed = oddValues[r.IntN(len(oddValues))]
		}
		if r.IntN(6) == 0 {
			p.End = oddValues[r.IntN(len(oddValues))]
		}
		if r.IntN(9) == 0 {
			p.Start = oddValues[r.IntN(len(oddValues))]
		}
		s.Partitions = append(s.Partitions, p)
	}
	if r.IntN(3) > 0 {
		slices.SortFunc(s.Partitions, func(a, b PartitionSample) int { return strings.Compare(a.Key, b.Key) }) // mostly sorted, as the exporter gives them
	}
	switch r.IntN(6) {
	case 0:
	case 1:
		if prev != nil {
			s.FileModTime = prev.FileModTime
		}
	case 2:
		s.FileModTime = oddTimes(t)[r.IntN(11)]
	default:
		s.FileModTime = time.Unix(0, t.UnixNano()-int64(r.IntN(1e10)))
	}
	if r.IntN(3) == 0 {
		s.File = randomReading(r, s.Partitions)
	}
	if r.IntN(10) == 0 {
		s.Err = "DescribeGroups: " + strconv.Itoa(r.IntN(5))
	}
	if r.IntN(4) == 0 {
		s.FileFollowed = true
		if r.IntN(2) == 0 {
			s.FileAnomalies = []OffsetAnomaly{{Kind: AnomalyRewind, Partition: "t0/0", Before: 9, After: 2, Time: t, Detail: "seen"}}
		}
	}
	if r.IntN(10) == 0 {
		s.Unobserved, s.UnobservedFirst = int32(1+r.IntN(3)), "t1/0"
	}
	if r.IntN(8) == 0 {
		s.Blockers = []SampleBlocker{{Key: "t0/0", Committed: 5, Kind: BlockReapedNoMarkers, Detail: "aborted", Since: t.Add(-time.Minute)}}
	}
	return s
}

// randomReading is an offset file reading of group gN (its name given in
// the test) or another, with offsets on the sample's partitions and on
// others, in every shape a refresh gives: missing, corrupt, a plain map,
// no offsets, a path kaas would not write.
func randomReading(r *rand.Rand, parts []PartitionSample) *OffsetReading {
	rd := &OffsetReading{Group: "g" + strconv.Itoa(r.IntN(7)), File: "/cd/__consumer_offsets/", Format: "envelope"}
	rd.File += rd.Group + ".json"
	switch r.IntN(9) {
	case 0:
		rd.Missing, rd.File, rd.Format = true, "", ""
	case 1:
		rd.Corrupt, rd.Problem, rd.Format = true, "unexpected end of JSON input", ""
		return rd
	case 2:
		rd.Format = "plainMap"
	case 3:
		rd.Format = "v9"
	case 4:
		rd.File = "odd.json"
	case 5:
		rd.File = "/data/__consumer_offsets/team/x.json"
	case 6:
		rd.Offsets = []anomaly.Offset{}
		return rd
	}
	for _, p := range parts {
		if r.IntN(3) > 0 {
			rd.Offsets = append(rd.Offsets, anomaly.Offset{Key: p.Key, Offset: p.Committed})
		}
	}
	if r.IntN(4) == 0 {
		rd.Offsets = append(rd.Offsets, anomaly.Offset{Key: "gone/" + strconv.Itoa(r.IntN(3)), Offset: oddValues[r.IntN(len(oddValues))]})
	}
	return rd
}

// TestSampleStoreDecodesWhatWasAdded adds thousands of random observations
// to windows of several sizes (none, a few samples, many) and checks after
// every one that the store decodes exactly the reference window: values,
// times (monotonic reading and zone included), rare data, the file kept
// for the last sample only, the anomalies between samples; and that the
// window's clock forgets the times no sample holds.
func TestSampleStoreDecodesWhatWasAdded(t *testing.T) {
	t.Parallel()
	for _, window := range []time.Duration{0, 25 * time.Second, 3 * time.Minute} {
		r := rand.New(rand.NewPCG(uint64(window), 7))
		w := HealthWindow{Window: window}
		refs := map[string]*refWindow{}
		base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		for step := range 400 {
			at := base.Add(time.Duration(step) * 10 * time.Second)
			for gi := range 6 {
				name := "g" + strconv.Itoa(gi)
				if (step+gi)%37 == 36 {
					continue // not observed: swept below
				}
				ref := refs[name]
				if ref == nil {
					ref = &refWindow{}
					refs[name] = ref
				}
				var prev *HealthSample
				if n := len(ref.samples); n > 0 {
					prev = &ref.samples[n-1]
				}
				s := randomSample(r, at, prev)
				ref.add(s, window, w.Opt)
				_, out := w.AddRef(name, s)
				if want := ref.pairs[len(ref.pairs)-1]; !reflect.DeepEqual(out, want) && len(ref.samples) > 1 {
					t.Fatalf("window %s step %d %s: AddRef found %v, want %v", window, step, name, out, want)
				}
				checkStore(t, &w, name, ref, window, step)
			}
			w.Sweep()
			for name := range refs {
				if w.groups[name] == nil {
					delete(refs, name)
				}
			}
		}
		held := 0
		for _, g := range w.groups {
			held += int(g.store.n)
		}
		uses := 0
		for _, n := range w.clock.refs {
			uses += int(n)
		}
		if uses != held {
			t.Errorf("window %s: the clock counts %d uses for %d samples held", window, uses, held)
		}
	}
}

func checkStore(t *testing.T, w *HealthWindow, name string, ref *refWindow, window time.Duration, step int) {
	t.Helper()
	var v windowView
	st := &w.groups[name].store
	st.decode(&v, name, &w.clock)
	got := v.samples[:st.n]
	if len(got) != len(ref.samples) {
		t.Fatalf("window %s step %d %s: %d samples, want %d", window, step, name, len(got), len(ref.samples))
	}
	for i := range got {
		g, want := got[i], ref.samples[i]
		if len(g.Partitions) == 0 && len(want.Partitions) == 0 {
			g.Partitions, want.Partitions = nil, nil
		}
		if len(g.FileAnomalies) == 0 && len(want.FileAnomalies) == 0 {
			g.FileAnomalies, want.FileAnomalies = nil, nil
		}
		if i < len(got)-1 {
			// Only the newest sample's blockers are kept (the health
			// rules read no other).
			if g.Blockers != nil {
				t.Fatalf("window %s step %d %s: sample %d of %d kept its blockers %v", window, step, name, i, len(got), g.Blockers)
			}
			want.Blockers = nil
		}
		if !reflect.DeepEqual(g, want) {
			t.Fatalf("window %s step %d %s sample %d of %d:\n got %#v\nwant %#v", window, step, name, i, len(got), g, want)
		}
		gp, wp := v.pairs[i], ref.pairs[i]
		if len(gp) != 0 || len(wp) != 0 {
			if !reflect.DeepEqual(gp, wp) {
				t.Fatalf("window %s step %d %s: anomalies before sample %d: %v, want %v", window, step, name, i, gp, wp)
			}
		}
	}
}

// A window of 20 observations of four partitions committing at a steady
// rate (the exporter's defaults at 100,000 groups) costs a few hundred
// bytes of stream a group, not the 9 KB of HealthSample values.
func TestSampleStoreIsCompact(t *testing.T) {
	t.Parallel()
	w := HealthWindow{Window: 5 * time.Minute}
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.Local)
	keys := []string{"events/0", "orders/0", "orders/1", "orders/2"}
	for step := range 40 {
		at := base.Add(time.Duration(step)*15*time.Second + time.Duration(step*7919)%time.Second)
		for g := range 100 {
			s := HealthSample{Time: at, FileModTime: time.Unix(0, at.UnixNano()-int64(g)*1e7)}
			for k, key := range keys {
				c := int64(1e6 + step*(200+g) + k)
				s.Partitions = append(s.Partitions, PartitionSample{Key: key, Committed: c, End: c + int64(g%50), Start: 0})
			}
			w.Add("group-"+strconv.Itoa(g), s)
			idle := HealthSample{Time: at, FileModTime: base.Add(-time.Hour), Partitions: slices.Clone(s.Partitions)}
			for k := range idle.Partitions {
				idle.Partitions[k].Committed, idle.Partitions[k].End = 5000, 5000+int64(g)
			}
			w.Add("idle-"+strconv.Itoa(g), idle)
		}
		w.Sweep()
	}
	idle := 0
	for name, g := range w.groups {
		if strings.HasPrefix(name, "idle-") {
			idle += cap(g.store.enc)
			delete(w.groups, name)
		}
	}
	if per := idle / 100; per > 120 {
		t.Errorf("%d bytes a group that does not move, want at most 120", per)
	}
	total, used := 0, 0
	for _, g := range w.groups {
		total += cap(g.store.enc)
		used += len(g.store.enc)
	}
	per := total / len(w.groups)
	t.Logf("%d bytes of stream a group (%d used) for %d samples", per, used/len(w.groups), w.groups["group-7"].store.n)
	if n := len(w.clock.times); n > 22 {
		t.Errorf("the clock holds %d times for windows of 21 observations", n)
	}
	if per > 700 {
		t.Errorf("%d bytes a group for 21 observations of 4 partitions, want at most 700", per)
	}
}

// A group stuck for the whole window has a blocker in every observation;
// the window keeps the newest one's alone (the rules read no other), in
// one rare record, and BLOCKED still names it with the time it began.
func TestStuckWindowKeepsOneBlocker(t *testing.T) {
	t.Parallel()
	w := HealthWindow{Window: 5 * time.Minute}
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	since := base.Add(-time.Hour)
	for step := range 30 {
		at := base.Add(time.Duration(step) * 15 * time.Second)
		s := HealthSample{Time: at, FileModTime: since, Partitions: []PartitionSample{{Key: "orders/0", Committed: 5, End: 9 + int64(step)}}}
		s.Blockers = []SampleBlocker{{Key: "orders/0", Committed: 5, Kind: BlockReapedNoMarkers, Detail: "lag " + strconv.Itoa(step), Since: since}}
		w.Add("stuck", s)
	}
	st := &w.groups["stuck"].store
	if st.n < 20 {
		t.Fatalf("%d samples kept, want the window's 21", st.n)
	}
	if len(st.rare) != 1 || len(st.rare[0].blockers) != 1 || st.rare[0].blockers[0].Detail != "lag 29" {
		t.Fatalf("rare records %+v, want one: the newest sample's blocker", st.rare)
	}
	h := w.Evaluate("stuck")
	found := false
	for _, e := range h.Evidence {
		if e.State == HealthBlocked && e.Partition == "orders/0" && e.Since.Equal(since) && strings.Contains(e.Detail, "lag 29") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no BLOCKED evidence naming the newest blocker since %s: %+v", since, h.Evidence)
	}
}
