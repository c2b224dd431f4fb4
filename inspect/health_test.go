package inspect

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/anomaly"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// hs builds a sample at t0+sec: committed and end per "orders/N".
func hs(sec int, committed, end []int64) HealthSample {
	s := HealthSample{Time: t0.Add(time.Duration(sec) * time.Second), Partitions: []PartitionSample{}}
	for i := range committed {
		s.Partitions = append(s.Partitions, PartitionSample{Key: "orders/" + string(rune('0'+i)), Committed: committed[i], End: end[i]})
	}
	return s
}

// withFile adds the offset file observation (offsets = committed) and mtime.
func withFile(s HealthSample, mtimeSec int, offsets map[string]int64) HealthSample {
	r := anomaly.ReadingOf(OffsetObservation{Group: "g", File: "/cd/__consumer_offsets/g.json", Format: "envelope", Offsets: offsets})
	s.File = &r
	s.FileModTime = t0.Add(time.Duration(mtimeSec) * time.Second)
	return s
}

func TestEvaluateHealthStates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		samples []HealthSample
		opt     HealthOptions
		want    string
		part    string // evidence partition of the top state
	}{
		{"no samples", nil, HealthOptions{}, HealthErr, ""},
		{"one sample", []HealthSample{hs(0, []int64{5}, []int64{10})}, HealthOptions{}, HealthOK, ""},
		{"caught up", []HealthSample{hs(0, []int64{10}, []int64{10}), hs(5, []int64{10}, []int64{10}), hs(10, []int64{10}, []int64{10})}, HealthOptions{}, HealthOK, ""},
		{"progressing", []HealthSample{hs(0, []int64{5}, []int64{10}), hs(5, []int64{8}, []int64{12}), hs(10, []int64{12}, []int64{13})}, HealthOptions{}, HealthOK, ""},
		{"lag growing", []HealthSample{hs(0, []int64{5}, []int64{10}), hs(5, []int64{6}, []int64{20}), hs(10, []int64{7}, []int64{30})}, HealthOptions{}, HealthWarn, ""},
		{"stopped, no file", []HealthSample{hs(0, []int64{5}, []int64{10}), hs(5, []int64{5}, []int64{10}), hs(10, []int64{5}, []int64{11})}, HealthOptions{}, HealthStop, "orders/0"},
		{"stopped, file not rewritten", []HealthSample{
			withFile(hs(0, []int64{5}, []int64{10}), -100, map[string]int64{"orders/0": 5}),
			withFile(hs(5, []int64{5}, []int64{10}), -100, map[string]int64{"orders/0": 5}),
		}, HealthOptions{}, HealthStop, "orders/0"},
		{"stalled: file rewritten, offsets still", []HealthSample{
			withFile(hs(0, []int64{5}, []int64{10}), -100, map[string]int64{"orders/0": 5}),
			withFile(hs(5, []int64{5}, []int64{10}), 3, map[string]int64{"orders/0": 5}),
		}, HealthOptions{}, HealthStall, "orders/0"},
		{"stalled: one partition stuck for longer than a consumer's turn while the other advances", []HealthSample{
			hs(0, []int64{5, 1}, []int64{10, 50}), hs(75, []int64{5, 20}, []int64{10, 50}), hs(150, []int64{5, 40}, []int64{10, 50}),
		}, HealthOptions{}, HealthStall, "orders/0"},
		{"stalled: one partition stuck while the other keeps up and the group does not drain", []HealthSample{
			hs(0, []int64{5, 10}, []int64{10, 20}), hs(5, []int64{5, 20}, []int64{10, 30}), hs(10, []int64{5, 30}, []int64{10, 40}),
		}, HealthOptions{}, HealthStall, "orders/0"},
		{"served in turns: one partition still for 10 s while the group drains", []HealthSample{
			hs(0, []int64{5, 1}, []int64{10, 50}), hs(5, []int64{5, 20}, []int64{10, 50}), hs(10, []int64{5, 40}, []int64{10, 50}),
		}, HealthOptions{}, HealthOK, ""},
		{"rewind in the file", []HealthSample{
			withFile(hs(0, []int64{10}, []int64{10}), 0, map[string]int64{"orders/0": 10}),
			withFile(hs(5, []int64{0}, []int64{10}), 4, map[string]int64{"orders/0": 0}),
		}, HealthOptions{}, HealthRewind, "orders/0"},
		{"rewind on the coordinator (no volume)", []HealthSample{hs(0, []int64{10}, []int64{10}), hs(5, []int64{3}, []int64{10})}, HealthOptions{}, HealthRewind, "orders/0"},
		{"vanished partitions", []HealthSample{
			withFile(hs(0, []int64{10, 10}, []int64{10, 10}), 0, map[string]int64{"orders/0": 10, "orders/1": 10}),
			withFile(hs(5, []int64{10, 10}, []int64{10, 10}), 4, map[string]int64{"orders/0": 10}),
		}, HealthOptions{}, HealthVanished, "orders/1"},
		{"rewind outranks vanished", []HealthSample{
			withFile(hs(0, []int64{10, 10}, []int64{10, 10}), 0, map[string]int64{"orders/0": 10, "orders/1": 10}),
			withFile(hs(5, []int64{2, 10}, []int64{10, 10}), 4, map[string]int64{"orders/0": 2}),
		}, HealthOptions{}, HealthRewind, "orders/0"},
		{"observation failed", []HealthSample{hs(0, []int64{5}, []int64{10}), {Time: t0.Add(5 * time.Second), Err: "DescribeGroups: broker down"}}, HealthOptions{}, HealthErr, ""},
		{"file turned corrupt", []HealthSample{
			withFile(hs(0, []int64{10}, []int64{10}), 0, map[string]int64{"orders/0": 10}),
			func() HealthSample {
				s := withFile(hs(5, []int64{10}, []int64{10}), 4, map[string]int64{})
				s.File.Corrupt, s.File.Format, s.File.Problem = true, "", "unexpected end of JSON input"
				return s
			}(),
		}, HealthOptions{}, HealthErr, ""},
		{"plain map on 0.2.18", []HealthSample{
			withFile(hs(0, []int64{10}, []int64{10}), 0, map[string]int64{"orders/0": 10}),
			func() HealthSample {
				s := withFile(hs(5, []int64{10}, []int64{10}), 4, map[string]int64{"orders/0": 10})
				s.File.Format = "plainMap"
				return s
			}(),
		}, HealthOptions{PlainMapIsEmpty: true}, HealthErr, ""},
		{"plain map where it is read", []HealthSample{
			withFile(hs(0, []int64{10}, []int64{10}), 0, map[string]int64{"orders/0": 10}),
			func() HealthSample {
				s := withFile(hs(5, []int64{10}, []int64{10}), 4, map[string]int64{"orders/0": 10})
				s.File.Format = "plainMap"
				return s
			}(),
		}, HealthOptions{}, HealthOK, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := EvaluateHealth("g", c.samples, c.opt)
			if h.State != c.want {
				t.Fatalf("state %s, want %s; evidence %+v", h.State, c.want, h.Evidence)
			}
			if c.want == HealthOK {
				if len(h.Evidence) != 0 {
					t.Fatalf("OK with evidence %+v", h.Evidence)
				}
				return
			}
			if len(h.Evidence) == 0 || h.Evidence[0].State != c.want || h.Evidence[0].Detail == "" {
				t.Fatalf("evidence %+v does not lead with %s", h.Evidence, c.want)
			}
			if c.part != "" && h.Evidence[0].Partition != c.part {
				t.Fatalf("evidence partition %q, want %q", h.Evidence[0].Partition, c.part)
			}
		})
	}
}

func TestEvaluateHealthRewindEvidence(t *testing.T) {
	t.Parallel()
	h := EvaluateHealth("g", []HealthSample{
		withFile(hs(0, []int64{10}, []int64{10}), 0, map[string]int64{"orders/0": 10}),
		withFile(hs(5, []int64{0}, []int64{10}), 4, map[string]int64{"orders/0": 0}),
	}, HealthOptions{})
	e := h.Evidence[0]
	if e.Before != 10 || e.After != 0 || e.File != "/cd/__consumer_offsets/g.json" || !e.Since.Equal(t0) || !e.Time.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("evidence %+v", e)
	}
	if !strings.Contains(e.Detail, "from 10 to 0") {
		t.Fatalf("detail %q", e.Detail)
	}
}

func TestHealthWindowSlidesAndCounts(t *testing.T) {
	t.Parallel()
	w := HealthWindow{Window: 10 * time.Second}
	file := func(sec int, off int64, parts ...string) HealthSample {
		m := map[string]int64{}
		for _, p := range parts {
			m[p] = off
		}
		return withFile(hs(sec, []int64{off}, []int64{10}), sec, m)
	}
	w.Add("g", file(0, 10, "orders/0", "orders/1"))
	if a := w.Add("g", file(5, 2, "orders/0")); len(a) != 2 {
		t.Fatalf("anomalies %+v, want a rewind and a vanished partition", a)
	}
	if got := w.Evaluate("g").State; got != HealthRewind {
		t.Fatalf("state %s", got)
	}
	// The rewind leaves the window after 10 s of steady observations.
	w.Add("g", file(10, 10, "orders/0"))
	w.Add("g", file(20, 10, "orders/0"))
	w.Add("g", file(30, 10, "orders/0"))
	if got := w.Evaluate("g").State; got != HealthOK {
		t.Fatalf("state %s after the window slid, evidence %+v", got, w.Evaluate("g").Evidence)
	}
	if c := w.Counts("g"); c.Rewinds != 1 || c.Vanished != 1 {
		t.Fatalf("counts %+v", c)
	}
	w.Sweep()
	w.Sweep() // no observation since the last sweep: forgotten
	if len(w.Groups()) != 0 {
		t.Fatalf("groups %v after sweeps", w.Groups())
	}
}

func TestEvaluateHealthMinSpan(t *testing.T) {
	t.Parallel()
	stopped := []HealthSample{hs(0, []int64{5}, []int64{10}), hs(30, []int64{5}, []int64{10})}
	if got := EvaluateHealth("g", stopped, HealthOptions{MinSpan: time.Minute}).State; got != HealthOK {
		t.Fatalf("30 s without a commit, MinSpan 1m: %s, want OK (not yet a while)", got)
	}
	stopped = append(stopped, hs(60, []int64{5}, []int64{10}))
	if got := EvaluateHealth("g", stopped, HealthOptions{MinSpan: time.Minute}).State; got != HealthStop {
		t.Fatalf("60 s without a commit, MinSpan 1m: %s, want STOP", got)
	}
}

// Followed observations take the follower's anomalies instead of comparing
// their files: a rewind the follower saw and that was undone before the
// next observation counts once, and a difference between the files the
// follower reported nothing about is not claimed again.
func TestHealthWindowFollowedSamples(t *testing.T) {
	t.Parallel()
	w := HealthWindow{Window: time.Hour}
	follow := func(s HealthSample, as ...OffsetAnomaly) HealthSample {
		s.FileFollowed, s.FileAnomalies = true, as
		return s
	}
	rewind := OffsetAnomaly{Kind: AnomalyRewind, Group: "g", File: "/d/g.json", Partition: "orders/0", Before: 20, After: 3, Since: t0.Add(5 * time.Second), Time: t0.Add(6 * time.Second)}
	w.Add("g", follow(withFile(hs(0, []int64{20}, []int64{30}), 0, map[string]int64{"orders/0": 20})))
	// The files read at the two observations are equal: only the follower knows.
	if got := w.Add("g", follow(withFile(hs(10, []int64{20}, []int64{30}), 8, map[string]int64{"orders/0": 20}), rewind)); len(got) != 1 {
		t.Fatalf("anomalies %+v", got)
	}
	// The files differ (20 → 5) but the follower reported nothing: no second count.
	if got := w.Add("g", follow(withFile(hs(20, []int64{5}, []int64{30}), 15, map[string]int64{"orders/0": 5}))); len(got) != 0 {
		t.Fatalf("a followed pair was compared: %+v", got)
	}
	if c := w.Counts("g"); c.Rewinds != 1 {
		t.Fatalf("counts %+v", c)
	}
	h := w.Evaluate("g")
	if h.State != HealthRewind || len(h.Evidence) != 1 || h.Evidence[0].After != 3 || h.Evidence[0].File != "/d/g.json" {
		t.Fatalf("health %+v", h)
	}
	// Unfollowed observations are compared as before.
	if got := w.Add("g", withFile(hs(30, []int64{2}, []int64{30}), 25, map[string]int64{"orders/0": 2})); len(got) != 1 || got[0].Before != 5 {
		t.Fatalf("unfollowed: %+v", got)
	}
}

// The window keeps each pair's anomalies from Add; its evaluation must be
// exactly EvaluateHealth over the observations it kept, at every step of a
// sliding window with rewinds, vanished partitions, corruption and plain
// maps going in and out of it.
func TestHealthWindowMatchesEvaluateHealth(t *testing.T) {
	t.Parallel()
	opt := HealthOptions{PlainMapIsEmpty: true}
	w := HealthWindow{Window: 12 * time.Second, Opt: opt}
	var kept []HealthSample
	for i := range 40 {
		off := int64(10 + i)
		parts := map[string]int64{"orders/0": off, "orders/1": off}
		switch i % 7 {
		case 2:
			parts["orders/0"] = 1 // rewind
		case 4:
			delete(parts, "orders/1") // vanished
		}
		s := withFile(hs(i*3, []int64{off, off}, []int64{60, 60}), i*3-i%2, parts)
		switch i % 11 {
		case 5:
			s.File.Corrupt, s.File.Format = true, ""
		case 8:
			s.File.Format = "plainMap"
		}
		w.Add("g", s)
		kept = append(kept, s)
		for len(kept) > 2 && s.Time.Sub(kept[0].Time) > w.Window {
			kept = kept[1:]
		}
		got, want := w.Evaluate("g"), EvaluateHealth("g", kept, opt)
		if got.State != want.State || got.Samples != want.Samples || len(got.Evidence) != len(want.Evidence) {
			t.Fatalf("step %d: window %s (%d samples, %d evidence), EvaluateHealth %s (%d, %d)", i, got.State, got.Samples, len(got.Evidence), want.State, want.Samples, len(want.Evidence))
		}
		for j := range got.Evidence {
			if got.Evidence[j] != want.Evidence[j] {
				t.Fatalf("step %d evidence %d: %+v vs %+v", i, j, got.Evidence[j], want.Evidence[j])
			}
		}
	}
}

// EvaluateAll over many groups, on every core, gives what Evaluate gives
// one group at a time (and a name given twice is evaluated twice).
func TestHealthWindowEvaluateAll(t *testing.T) {
	t.Parallel()
	build := func() (*HealthWindow, []string) {
		w := &HealthWindow{Window: time.Minute}
		var names []string
		for i := range 3000 {
			g := fmt.Sprintf("g-%04d", i)
			names = append(names, g)
			for sec := 0; sec <= 40; sec += 10 {
				off := int64(5)
				if i%3 == 0 {
					off = int64(sec) // commits: OK
				}
				if i%7 == 0 && sec == 30 {
					off = 1 // a rewind
				}
				w.Add(g, hs(sec, []int64{off}, []int64{50}))
			}
		}
		return w, names
	}
	w1, names := build()
	want := make([]GroupHealth, len(names))
	for i, g := range names {
		want[i] = w1.Evaluate(g)
	}
	w2, _ := build()
	got := make([]GroupHealth, len(names))
	w2.EvaluateAll(names, got, 4)
	states := map[string]int{}
	for i := range names {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("%s: EvaluateAll %+v, Evaluate %+v", names[i], got[i], want[i])
		}
		states[got[i].State]++
	}
	if states[HealthOK] == 0 || states[HealthRewind] == 0 || states[HealthStop] == 0 {
		t.Fatalf("the fixture should hold OK, REWIND and STOP groups: %v", states)
	}
	dup := []string{"g-0001", "g-0001"}
	out := make([]GroupHealth, 2)
	w2.EvaluateAll(dup, out, 4)
	if out[0].State != out[1].State || out[0].State != want[1].State {
		t.Fatalf("a name given twice: %s, %s, want %s", out[0].State, out[1].State, want[1].State)
	}

	// By refs (the exporter's refresh): the same evaluations, and the
	// same counts as by name.
	w3 := &HealthWindow{Window: time.Minute}
	refs := make([]GroupRef, len(names))
	for i, g := range names {
		for sec := 0; sec <= 40; sec += 10 {
			off := int64(5)
			if i%3 == 0 {
				off = int64(sec)
			}
			if i%7 == 0 && sec == 30 {
				off = 1
			}
			refs[i], _ = w3.AddRef(g, hs(sec, []int64{off}, []int64{50}))
		}
	}
	byRef := make([]GroupHealth, len(names))
	w3.EvaluateRefs(refs, byRef, 4)
	for i := range names {
		if !reflect.DeepEqual(byRef[i], want[i]) {
			t.Fatalf("%s: EvaluateRefs %+v, Evaluate %+v", names[i], byRef[i], want[i])
		}
		if refs[i].Counts() != w1.Counts(names[i]) {
			t.Fatalf("%s: counts by ref %+v, by name %+v", names[i], refs[i].Counts(), w1.Counts(names[i]))
		}
	}
}

// A log end that becomes unknown (its leader stopped, as while brokers go
// down one by one) does not end STOP: it only grows, so with the committed
// offset unmoved the lag is at least the last one known. A commit still
// ends it.
func TestEvaluateHealthStopThroughUnknownLogEnd(t *testing.T) {
	t.Parallel()
	stuck := []HealthSample{hs(0, []int64{5, 5}, []int64{10, 10}), hs(10, []int64{5, 5}, []int64{10, 10}), hs(20, []int64{5, 5}, []int64{-1, 10}), hs(30, []int64{5, 5}, []int64{-1, -1})}
	// The observer asked and got no log end (its leader did not answer).
	stuck[2].Unobserved, stuck[2].UnobservedFirst = 1, "orders/0"
	stuck[3].Unobserved, stuck[3].UnobservedFirst = 2, "orders/0"
	h := EvaluateHealth("g", stuck, HealthOptions{})
	// The lag cannot be known at the last observation: ERR says so, and
	// the STOP seen while it was known stays.
	if h.State != HealthErr || !h.Has(HealthStop) || len(h.Evidence) != 3 || !strings.Contains(h.Evidence[0].Detail, "2 partitions") {
		t.Fatalf("log ends unknown at the last observations: %s %+v, want ERR (lag unknown) and STOP on both partitions", h.State, h.Evidence)
	}
	for _, e := range h.Evidence[1:] {
		if !e.Since.Equal(t0) || !strings.Contains(e.Detail, "lag 5") {
			t.Errorf("evidence %+v: want since the first observation, lag 5 (the last known)", e)
		}
	}
	moved := append(append([]HealthSample{}, stuck[:3]...), hs(30, []int64{6, 5}, []int64{-1, -1}))
	h = EvaluateHealth("g", moved, HealthOptions{})
	if h.Has(HealthStop) {
		t.Errorf("a commit arrived (orders/0 5 -> 6): %s %+v", h.State, h.Evidence)
	}
	// A lag that cannot be known is not OK.
	never := []HealthSample{hs(0, []int64{5}, []int64{-1}), hs(30, []int64{5}, []int64{-1})}
	never[1].Unobserved, never[1].UnobservedFirst = 1, "orders/0"
	if h := EvaluateHealth("g", never, HealthOptions{}); h.State != HealthErr || h.Evidence[0].Partition != "orders/0" {
		t.Errorf("no log end ever known: %s %+v, want ERR naming the partition", h.State, h.Evidence)
	}
}

// A window keeps the offset file as read for its last observation only
// (each reading is compared with the next as it arrives), still finds a
// rewind between two files, names the last file in its evidence, and
// keeps its samples in a stream without spare room beyond a bound: 100,000
// groups' windows are most of a long-running exporter's memory.
func TestHealthWindowKeepsOnlyTheLastReading(t *testing.T) {
	t.Parallel()
	w := HealthWindow{Window: time.Minute}
	for i := range 200 {
		off := int64(100 + i)
		if i == 150 {
			off = 3 // a rewind in the file
		}
		w.Add("g", withFile(hs(5*i, []int64{off}, []int64{1000}), 5*i, map[string]int64{"orders/0": off}))
		if i == 150 {
			h := w.Evaluate("g")
			if h.State != HealthRewind || len(h.Evidence) == 0 || h.Evidence[0].File != "/cd/__consumer_offsets/g.json" {
				t.Fatalf("after a rewound file: %s %+v, want REWIND with the file named", h.State, h.Evidence)
			}
		}
	}
	g := w.groups["g"]
	var v windowView
	g.store.decode(&v, "g", &w.clock)
	samples := v.samples[:g.store.n]
	if len(samples) != 13 {
		t.Errorf("%d samples kept in a minute of observations every 5 s, want 13", len(samples))
	}
	for i, s := range samples[:len(samples)-1] {
		if s.File != nil {
			t.Errorf("sample %d of %d still holds its file reading", i, len(samples))
		}
	}
	if samples[len(samples)-1].File == nil {
		t.Error("the last sample lost its file reading (the next one is compared with it)")
	}
	if n := len(g.store.enc); cap(g.store.enc) > 2*n+64 {
		t.Errorf("%d bytes of samples in a stream of %d", n, cap(g.store.enc))
	}
	if n := len(w.clock.times); n > len(samples)+4 {
		t.Errorf("the clock holds %d times for %d samples", n, len(samples))
	}
}

// A group stopped before an outage longer than the window (its
// coordinator frozen: every observation fails) is STOP again at the first
// observation after it, not once --stop-after has passed again; a
// removal of one of its partitions from the file (an offsets delete) is
// no commit, so STOP stays STOP; a commit after the outage ends it.
func TestHealthWindowStopComesBackAfterAnOutage(t *testing.T) {
	t.Parallel()
	w := HealthWindow{Window: 5 * time.Minute, Opt: HealthOptions{MinSpan: time.Minute}}
	both := map[string]int64{"orders/0": 5, "orders/1": 7}
	stuck := func(sec, mtime int, file map[string]int64) HealthSample {
		return withFile(hs(sec, []int64{5, 7}, []int64{50, 60}), mtime, file)
	}
	for sec := 0; sec <= 120; sec += 15 {
		w.Add("g", stuck(sec, -100, both))
	}
	if h := w.Evaluate("g"); !h.Has(HealthStop) {
		t.Fatalf("before the outage: %v %+v", h.Conditions, h.Evidence)
	}
	for sec := 135; sec <= 600; sec += 15 { // 8 minutes of failed observations
		s := stuck(sec, -100, both)
		s.Partitions, s.Err = []PartitionSample{}, "DescribeGroups: request timed out"
		w.Add("g", s)
		if h := w.Evaluate("g"); !h.Has(HealthStop) || !h.Has(HealthErr) {
			t.Fatalf("t=%ds, during the outage: %v", sec, h.Conditions)
		}
	}
	for sec := 615; sec <= 780; sec += 15 {
		file, mtime := both, -100
		if sec >= 700 {
			file, mtime = map[string]int64{"orders/0": 5}, 700 // offsets delete of orders/1
		}
		w.Add("g", stuck(sec, mtime, file))
		h := w.Evaluate("g")
		if !h.Has(HealthStop) || h.Has(HealthStall) || h.Has(HealthErr) {
			t.Fatalf("t=%ds, after the outage: %v %+v", sec, h.Conditions, h.Evidence)
		}
		if sec >= 700 && !h.Has(HealthVanished) {
			t.Fatalf("t=%ds: the delete is not VANISHED: %v", sec, h.Conditions)
		}
	}
	h := w.Evaluate("g")
	var stop HealthEvidence
	for _, e := range h.Evidence {
		if e.State == HealthStop && e.Partition == "orders/0" {
			stop = e
		}
	}
	if stop.Carried || !stop.Since.Equal(t0) {
		t.Errorf("the STOP observed again keeps its since from before the outage: %+v", stop)
	}
	// A commit: STOP ends at once.
	w.Add("g", withFile(hs(795, []int64{9, 7}, []int64{50, 60}), 795, map[string]int64{"orders/0": 9}))
	if h := w.Evaluate("g"); h.Has(HealthStop) && slices.ContainsFunc(h.Evidence, func(e HealthEvidence) bool { return e.State == HealthStop && e.Partition == "orders/0" }) {
		t.Errorf("orders/0 committed 5 -> 9 and is still STOP: %+v", h.Evidence)
	}
}

// A commit during a short outage ends the carried STOP when the group is
// observed again.
func TestHealthWindowCommitDuringOutageEndsStop(t *testing.T) {
	t.Parallel()
	w := HealthWindow{Window: time.Minute, Opt: HealthOptions{MinSpan: 30 * time.Second}}
	for sec := 0; sec <= 60; sec += 10 {
		w.Add("g", hs(sec, []int64{5}, []int64{50}))
	}
	for sec := 70; sec <= 200; sec += 10 {
		w.Add("g", HealthSample{Time: t0.Add(time.Duration(sec) * time.Second), Partitions: []PartitionSample{}, Err: "brokers: down"})
		w.Evaluate("g")
	}
	w.Add("g", hs(210, []int64{20}, []int64{50}))
	if h := w.Evaluate("g"); h.Has(HealthStop) {
		t.Errorf("committed 5 -> 20 during the outage: %v %+v", h.Conditions, h.Evidence)
	}
}

// An offsets delete or a reset between two observations is no commit: a
// stopped group stays STOP (not STALL); the same offsets committed again
// is one (STALL).
func TestEvaluateHealthRewriteWithoutCommit(t *testing.T) {
	t.Parallel()
	two := map[string]int64{"orders/0": 5, "orders/1": 5}
	base := withFile(hs(0, []int64{5, 5}, []int64{10, 10}), -100, two)
	cases := []struct {
		name string
		file map[string]int64
		want string
	}{
		{"a partition deleted", map[string]int64{"orders/0": 5}, HealthStop},
		{"a partition rewound", map[string]int64{"orders/0": 5, "orders/1": 2}, HealthStop},
		{"the same offsets again", two, HealthStall},
	}
	for _, c := range cases {
		h := EvaluateHealth("g", []HealthSample{base, withFile(hs(5, []int64{5, 5}, []int64{10, 10}), 3, c.file)}, HealthOptions{})
		if !h.Has(c.want) || c.want == HealthStop && h.Has(HealthStall) {
			t.Errorf("%s: %v %+v, want %s", c.name, h.Conditions, h.Evidence, c.want)
		}
	}
}
