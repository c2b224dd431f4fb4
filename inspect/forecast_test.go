package inspect

import (
	"math"
	"testing"
	"time"
)

// A group holding several conditions lists each; the worst is its state.
func TestHealthConditionsAtOnce(t *testing.T) {
	t.Parallel()
	files := []map[string]int64{{"orders/0": 10, "orders/1": 4}, {"orders/0": 2}, {"orders/0": 2}}
	var ss []HealthSample
	for i, f := range files {
		// The coordinator answers 2 throughout; the file shows the rewind.
		s := withFile(hs(i*5, []int64{2}, []int64{20}), 0, f)
		ss = append(ss, s)
	}
	h := EvaluateHealth("g", ss, HealthOptions{})
	want := []string{HealthRewind, HealthVanished, HealthStop}
	if len(h.Conditions) != len(want) || h.State != HealthRewind {
		t.Fatalf("conditions %v state %s, want %v", h.Conditions, h.State, want)
	}
	for i, c := range want {
		if h.Conditions[i] != c {
			t.Fatalf("conditions %v, want %v", h.Conditions, want)
		}
	}
}

// While a group cannot be observed, its last known conditions stay (carried)
// beside ERR; the first good observation drops what no longer holds.
func TestHealthWindowCarriesThroughOutage(t *testing.T) {
	t.Parallel()
	w := HealthWindow{Window: time.Minute}
	w.Add("g", hs(0, []int64{5}, []int64{10}))
	w.Add("g", hs(5, []int64{5}, []int64{10}))
	if h := w.Evaluate("g"); h.State != HealthStop {
		t.Fatalf("before the outage: %v", h.Conditions)
	}
	for i := 2; i < 5; i++ {
		w.Add("g", HealthSample{Time: t0.Add(time.Duration(i*5) * time.Second), Err: "brokers: connection refused", Partitions: []PartitionSample{}})
		h := w.Evaluate("g")
		if !h.Has(HealthErr) || !h.Has(HealthStop) || !h.UnknownSince.Equal(t0.Add(10*time.Second)) {
			t.Fatalf("outage observation %d: conditions %v unknown since %v", i, h.Conditions, h.UnknownSince)
		}
		carried := false
		for _, e := range h.Evidence {
			carried = carried || e.State == HealthStop && e.Carried
		}
		if !carried {
			t.Fatalf("STOP evidence not marked carried: %+v", h.Evidence)
		}
	}
	// Back, and committing again: STOP is gone, and so is ERR.
	w.Add("g", hs(25, []int64{9}, []int64{10}))
	w.Add("g", hs(30, []int64{10}, []int64{10}))
	if h := w.Evaluate("g"); h.State != HealthOK || !h.UnknownSince.IsZero() {
		t.Fatalf("after the outage: %v %v", h.Conditions, h.Evidence)
	}
}

// lagSamples: a partition produced at produce/s and consumed at consume/s
// from lag0, observed every 5 s.
func lagSamples(n int, lag0, produce, consume float64) []HealthSample {
	var ss []HealthSample
	for i := range n {
		sec := float64(i * 5)
		end := 1000 + produce*sec
		committed := 1000 - lag0 + consume*sec
		ss = append(ss, hs(i*5, []int64{int64(committed)}, []int64{int64(end)}))
	}
	return ss
}

func TestEstimateDrain(t *testing.T) {
	t.Parallel()
	// Too few observations: nothing.
	if d := EstimateDrain(lagSamples(2, 500, 10, 30)); d.Known || d.Text() != "-" {
		t.Fatalf("2 samples: %+v", d)
	}
	// 20/s net, lag 500-2*5*20=300 at the last → 15 s.
	d := EstimateDrain(lagSamples(3, 500, 10, 30))
	if !d.Known || d.NotDraining || math.Abs(d.Seconds-15) > 0.5 || d.Samples != 3 || d.WindowSeconds != 10 {
		t.Fatalf("draining: %+v", d)
	}
	if math.Abs(d.ConsumeRate-30) > 0.5 || math.Abs(d.ProduceRate-10) > 0.5 {
		t.Fatalf("rates %+v", d)
	}
	// Growing lag: not draining, never a number.
	d = EstimateDrain(lagSamples(4, 100, 30, 10))
	if !d.Known || !d.NotDraining || d.Seconds != 0 || d.Text() != "not draining" {
		t.Fatalf("growing: %+v", d)
	}
	// Caught up.
	d = EstimateDrain(lagSamples(3, 0, 10, 10))
	if !d.Known || d.NotDraining || d.Text() != "caught up" {
		t.Fatalf("caught up: %+v", d)
	}
}

func TestForecastRetention(t *testing.T) {
	t.Parallel()
	var ss []HealthSample
	for i := range 4 {
		s := hs(i*10, []int64{50}, []int64{100})
		s.Partitions[0].Start = int64(i * 10) // 1 message/s
		ss = append(ss, s)
	}
	f := ForecastRetention(ss)
	if !f.Known || f.Breached || math.Abs(f.Seconds-20) > 0.5 || f.Partition != "orders/0" {
		t.Fatalf("forecast %+v", f)
	}
	if ForecastRetention(ss[:2]).Known {
		t.Fatal("2 samples gave a forecast")
	}
	// Passed: breached.
	ss[3].Partitions[0].Start = 60
	if f := ForecastRetention(ss); !f.Breached || f.Seconds != 0 {
		t.Fatalf("breached %+v", f)
	}
	// A log start that does not move: no forecast.
	for i := range ss {
		ss[i].Partitions[0].Start = 3
	}
	if f := ForecastRetention(ss); f.Known {
		t.Fatalf("still log start: %+v", f)
	}
}

func TestFormatSeconds(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]string{0: "0s", 59.4: "59s", 750: "12m30s", 11100: "3h05m", 187200: "2d04h"} {
		if got := FormatSeconds(in); got != want {
			t.Errorf("FormatSeconds(%v) = %q, want %q", in, got, want)
		}
	}
}

// turnsSamples simulates a throttled consumer that serves 6 partitions in
// turns (two at a time, each pair for 40 s) at 58 records/s while 20/s are
// produced, from a lag of about 6,000 (the real-kaas run: 5,977 drained in
// 163 s), observed every every seconds from second from to to.
func turnsSamples(from, to, every int) []HealthSample {
	const parts = 6
	committed, end := make([]float64, parts), make([]float64, parts)
	for p := range parts {
		end[p] = 2000
		committed[p] = 1000
	}
	var out []HealthSample
	for sec := 0; sec <= to; sec++ {
		if sec >= from && (sec-from)%every == 0 {
			c, e := make([]int64, parts), make([]int64, parts)
			for p := range parts {
				c[p], e[p] = int64(committed[p]), int64(end[p])
			}
			out = append(out, hs(sec, c, e))
		}
		pair := (sec / 40) % 3
		for p := range parts {
			end[p] += 20.0 / parts
			if p/2 == pair {
				committed[p] = min(end[p], committed[p]+29)
			}
		}
	}
	return out
}

// A throttled consumer serving its partitions in turns drains at group
// level: the estimate is the group's lag over its net rate, never "not
// draining" while it consumes faster than it is produced to, and the
// partitions standing still meanwhile are no STALL.
func TestDrainServedInTurns(t *testing.T) {
	t.Parallel()
	// groups describe --drain-window 30s: 4 observations 10 s apart.
	for _, from := range []int{0, 20, 45, 70, 100} {
		ss := turnsSamples(from, from+30, 10)
		d := EstimateDrain(ss)
		lag, _ := ss[len(ss)-1].TotalLag()
		if lag == 0 {
			continue
		}
		if !d.Known || d.NotDraining || d.ConsumeRate <= d.ProduceRate {
			t.Fatalf("from %ds: %s (consumed %.1f/s, produced %.1f/s)", from, d.Text(), d.ConsumeRate, d.ProduceRate)
		}
		if h := EvaluateHealth("g", ss, HealthOptions{}); h.Has(HealthStall) || h.Has(HealthStop) {
			t.Errorf("from %ds: %v %+v", from, h.Conditions, h.Evidence)
		}
	}
	// The exporter: a 5-minute window observed every 15 s, from the start.
	w := HealthWindow{Window: 5 * time.Minute, Opt: HealthOptions{MinSpan: time.Minute}}
	for _, s := range turnsSamples(0, 150, 15) {
		w.Add("g", s)
		h := w.Evaluate("g")
		if h.Has(HealthStall) || h.Has(HealthStop) {
			t.Fatalf("t=%s: %v %+v", s.Time.Sub(t0), h.Conditions, h.Evidence)
		}
		d := h.Drain
		if !d.Known || d.Lag == 0 {
			continue
		}
		if d.NotDraining {
			t.Fatalf("t=%s: not draining (consumed %.1f/s, produced %.1f/s)", s.Time.Sub(t0), d.ConsumeRate, d.ProduceRate)
		}
		// The group drains at about 38/s: the estimate is within a factor
		// of 1.5 of the lag over that rate.
		if want := float64(d.Lag) / 38; d.Seconds > 1.5*want+15 || d.Seconds < want/1.5-15 {
			t.Errorf("t=%s: drain %.0fs for lag %d, want about %.0fs", s.Time.Sub(t0), d.Seconds, d.Lag, want)
		}
	}
}

// A consumer that keeps up (committing every 5 s what was produced since,
// consume rate = produce rate) is keeping up, not "not draining", and is
// neither STOP nor STALL.
func TestDrainKeepingUp(t *testing.T) {
	t.Parallel()
	var ss []HealthSample
	for i := range 20 {
		sec := i * 15
		end := int64(100000 + 40*sec)
		committed := end - int64(40*((sec+3)%5)) // committed up to 4 s behind
		ss = append(ss, hs(sec, []int64{committed, committed}, []int64{end, end}))
	}
	d := EstimateDrain(ss)
	if !d.Known || d.NotDraining || !d.KeepingUp || d.Text() != "keeping up" {
		t.Fatalf("%+v", d)
	}
	if h := EvaluateHealth("g", ss, HealthOptions{MinSpan: time.Minute}); h.State != HealthOK {
		t.Fatalf("%v %+v", h.Conditions, h.Evidence)
	}
	// A consumer as fast as its producer with a large lag does not drain.
	if d := EstimateDrain(lagSamples(6, 500, 10, 10)); !d.NotDraining || d.KeepingUp {
		t.Fatalf("lag 500 at 10/s in and out: %+v", d)
	}
}

// EstimateDrain is estimateDrain, also for no observations.
func EstimateDrain(samples []HealthSample) *DrainEstimate {
	if len(samples) == 0 {
		return &DrainEstimate{Partitions: []PartitionDrain{}}
	}
	return estimateDrain(samples)
}

// ForecastRetention is forecastRetention, also for no observations.
func ForecastRetention(samples []HealthSample) *RetentionForecast {
	if len(samples) == 0 {
		return &RetentionForecast{Partitions: []PartitionRetention{}}
	}
	return forecastRetention(samples)
}
