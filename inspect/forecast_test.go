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
