package inspect

import (
	"math"
	"strconv"
	"time"
)

// Forecasts from a group's observations in the health window: when its lag
// will be gone (time to drain) and when records it has not read yet will be
// deleted (retention breach). Both are fitted by least squares over every
// observation that has the numbers, say which window and how many samples
// they used, and give nothing until MinForecastSamples observations have
// them: two points are a guess, not a rate.

// GroupForecast is what a window of observations says about a group's
// future: its time to drain, when unread records are deleted, and when it
// last committed.
type GroupForecast struct {
	Drain      *DrainEstimate     `json:"drain"`
	Retention  *RetentionForecast `json:"retention"`
	LastCommit time.Time          `json:"lastCommit,omitzero"`
}

// Forecast is h's forecast (nil when h has none).
func (h GroupHealth) Forecast() *GroupForecast {
	if h.Drain == nil && h.Retention == nil {
		return nil
	}
	return &GroupForecast{Drain: h.Drain, Retention: h.Retention, LastCommit: h.LastCommit}
}

// MinForecastSamples is how many observations a rate needs.
const MinForecastSamples = 3

// DrainEstimate is a group's time to drain.
type DrainEstimate struct {
	// Known: enough observations had the group's lag (Samples >=
	// MinForecastSamples); nothing else is meaningful without it.
	Known bool `json:"known"`
	// Samples and WindowSeconds: the observations the rates were fitted
	// over and the time they span.
	Samples       int     `json:"samples"`
	WindowSeconds float64 `json:"windowSeconds"`
	// Lag is the group's lag at the last observation.
	Lag int64 `json:"lag"`
	// Seconds is the estimated time until the group's lag is zero, fitted
	// at group level: its lag over the consume rate's excess over the
	// produce rate (0: caught up or keeping up); valid when Known and not
	// NotDraining.
	Seconds float64 `json:"seconds"`
	// NotDraining: the group has lag and is not consumed faster than it is
	// produced to (its lag stays or grows). A group that consumes faster
	// than it is produced to drains, even while single partitions stand
	// still (a throttled consumer serves its partitions in turns).
	NotDraining bool `json:"notDraining"`
	// KeepingUp: a small steady lag (at most KeepUpSeconds of production,
	// consumed about as fast as produced: the records in flight between a
	// producer and a consumer that keeps up) counts as caught up.
	KeepingUp bool `json:"keepingUp"`
	// ConsumeRate and ProduceRate are messages per second summed over the
	// partitions (committed offset and log end advance, each fitted over
	// the whole window).
	ConsumeRate float64          `json:"consumeRate"`
	ProduceRate float64          `json:"produceRate"`
	Partitions  []PartitionDrain `json:"partitions"`
}

// PartitionDrain is one partition's time to drain.
type PartitionDrain struct {
	Partition   string  `json:"partition"`
	Known       bool    `json:"known"`
	Samples     int     `json:"samples"`
	Lag         int64   `json:"lag"`
	Seconds     float64 `json:"seconds"`
	NotDraining bool    `json:"notDraining"`
	KeepingUp   bool    `json:"keepingUp"`
	ConsumeRate float64 `json:"consumeRate"`
	ProduceRate float64 `json:"produceRate"`
}

// KeepUpSeconds bounds a lag that counts as keeping up: records produced
// in this long (a consumer committing every few seconds lags by what was
// produced since its last commit).
const KeepUpSeconds = 30

// keepUpShare is how much of the produce rate a consumer keeping up must
// consume (the fitted rates of a steady pair differ by noise).
const keepUpShare = 0.8

// Text is the estimate for humans: "42s", "not draining", "caught up",
// "keeping up", or "-" (not enough observations).
func (d *DrainEstimate) Text() string {
	if d == nil || !d.Known {
		return "-"
	}
	return drainText(d.Lag, d.Seconds, d.NotDraining, d.KeepingUp)
}

func drainText(lag int64, secs float64, notDraining, keepingUp bool) string {
	switch {
	case notDraining:
		return "not draining"
	case lag == 0:
		return "caught up"
	case keepingUp:
		return "keeping up"
	}
	return FormatSeconds(secs)
}

// Text is the partition's estimate for humans (see DrainEstimate.Text).
func (p PartitionDrain) Text() string {
	if !p.Known {
		return "-"
	}
	return drainText(p.Lag, p.Seconds, p.NotDraining, p.KeepingUp)
}

// drainOf is the time to drain of a lag consumed and produced at the
// given rates (per second): caught up at no lag, keeping up at a small
// steady one, not draining when the lag is not consumed faster than it
// grows (or would take over a year).
//
// Keeping up: the lag is at most KeepUpSeconds of production and consumed
// at least keepUpShare as fast as produced, and no faster drain is in
// sight (a lag that drains within KeepUpSeconds says so instead).
func drainOf(lag int64, consume, produce float64) (secs float64, notDraining, keepingUp bool) {
	if lag <= 0 {
		return 0, false, false
	}
	net := consume - produce
	draining := net > 0 && float64(lag)/net <= maxDrainSeconds
	if draining && float64(lag)/net <= KeepUpSeconds {
		return float64(lag) / net, false, false
	}
	if consume > 0 && consume >= keepUpShare*produce && float64(lag) <= produce*KeepUpSeconds {
		return 0, false, true
	}
	if !draining {
		return 0, true, false
	}
	return float64(lag) / net, false, false
}

// FormatSeconds renders a duration in seconds the way an operator reads it:
// "45s", "12m30s", "3h05m", "2d04h".
func FormatSeconds(secs float64) string {
	if math.IsNaN(secs) || secs < 0 {
		return "-"
	}
	s := int64(math.Round(secs))
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		return strconv.FormatInt(s/60, 10) + "m" + pad2(s%60) + "s"
	case s < 86400:
		return strconv.FormatInt(s/3600, 10) + "h" + pad2(s%3600/60) + "m"
	}
	return strconv.FormatInt(s/86400, 10) + "d" + pad2(s%86400/3600) + "h"
}

func pad2(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// series is a least-squares fit of two values of one partition against
// time, accumulated without allocating (the exporter fits every partition
// of every group at every refresh). Times are seconds since the first
// observation and values relative to their first, so the sums stay small.
type series struct {
	n                    int
	t0                   time.Time
	a0, b0               float64
	st, stt, sa, sta, sb float64
	stb                  float64
	lastA, lastB, lastT  float64
	haveFirst            bool
}

func (f *series) add(t time.Time, a, b float64) {
	if !f.haveFirst {
		f.t0, f.a0, f.b0, f.haveFirst = t, a, b, true
	}
	x, ya, yb := t.Sub(f.t0).Seconds(), a-f.a0, b-f.b0
	f.n++
	f.st += x
	f.stt += x * x
	f.sa += ya
	f.sta += x * ya
	f.sb += yb
	f.stb += x * yb
	f.lastA, f.lastB, f.lastT = a, b, x
}

// slopes are the fitted rates of the two values (per second).
func (f *series) slopes() (float64, float64) {
	n := float64(f.n)
	den := n*f.stt - f.st*f.st
	if f.n < 2 || den == 0 {
		return 0, 0
	}
	return (n*f.sta - f.st*f.sa) / den, (n*f.stb - f.st*f.sb) / den
}

// partitionSeries fits, for one partition, the observations where pick
// gives both values.
func partitionSeries(samples []HealthSample, key string, hint int, pick func(PartitionSample) (float64, float64, bool)) series {
	var f series
	for i := range samples {
		s := &samples[i]
		if s.Err != "" {
			continue
		}
		p, ok := s.partitionAt(key, hint)
		if !ok {
			continue
		}
		a, b, ok := pick(p)
		if !ok {
			continue
		}
		f.add(s.Time, a, b)
	}
	return f
}

func drainPick(p PartitionSample) (float64, float64, bool) {
	return float64(p.Committed), float64(p.End), p.Committed >= 0 && p.End >= 0
}

func retentionPick(p PartitionSample) (float64, float64, bool) {
	return float64(p.Committed), float64(p.Start), p.Committed >= 0 && p.Start >= 0
}

// estimateDrain estimates a group's time to drain from its observations,
// oldest first (at least one): per partition of the last observation (in
// its order, by key), the consume rate (committed offset) and produce rate
// (log end) fitted over every observation of the window that has both; the
// group's rates are their sums, and its time to drain is its lag over
// their difference (group level: a throttled consumer serves its
// partitions in turns, so one partition can stand still for a minute while
// the group drains); not draining when the group is not consumed faster
// than produced, keeping up when its lag is small and steady.
func estimateDrain(samples []HealthSample) *DrainEstimate {
	last := samples[len(samples)-1]
	d := &DrainEstimate{Partitions: make([]PartitionDrain, 0, len(last.Partitions))}
	first := time.Time{}
	for j, lp := range last.Partitions {
		k := lp.Key
		f := partitionSeries(samples, k, j, drainPick)
		pd := PartitionDrain{Partition: k, Samples: f.n}
		if f.n > 0 {
			pd.Lag = max(0, int64(f.lastB-f.lastA))
		}
		if f.n < MinForecastSamples {
			d.Partitions = append(d.Partitions, pd)
			continue
		}
		pd.Known = true
		cr, pr := f.slopes()
		pd.ConsumeRate, pd.ProduceRate = max(0, cr), max(0, pr)
		pd.Seconds, pd.NotDraining, pd.KeepingUp = drainOf(pd.Lag, pd.ConsumeRate, pd.ProduceRate)
		d.Partitions = append(d.Partitions, pd)
		d.Known = true
		d.Lag += pd.Lag
		d.ConsumeRate += pd.ConsumeRate
		d.ProduceRate += pd.ProduceRate
		d.Samples = max(d.Samples, pd.Samples)
	}
	d.Seconds, d.NotDraining, d.KeepingUp = drainOf(d.Lag, d.ConsumeRate, d.ProduceRate)
	if d.Known {
		for _, s := range samples {
			if s.Err == "" {
				first = s.Time
				break
			}
		}
		d.WindowSeconds = last.Time.Sub(first).Seconds()
	}
	return d
}

// maxDrainSeconds: a drain slower than a year is not draining (a
// consumer a hair faster than its producer, or rounding).
const maxDrainSeconds = 365 * 24 * 3600

// RetentionForecast is when records a group has not read yet will be
// deleted: its committed offset falling below the log start. kaas moves the
// log start only on DeleteRecords (and topic deletion): it does not enforce
// retention.ms or retention.bytes (kaas gh #158), so the forecast is the log
// start's own advance over the window, not the topic's retention setting.
type RetentionForecast struct {
	// Known: some lagging partition's log start was observed often enough
	// (MinForecastSamples) to fit its advance, or is already past the
	// committed offset.
	Known         bool    `json:"known"`
	Samples       int     `json:"samples"`
	WindowSeconds float64 `json:"windowSeconds"`
	// Seconds until the first unread record of the group is deleted (the
	// soonest partition); 0 when it already happened (Breached).
	Seconds float64 `json:"seconds"`
	// Partition is the soonest partition; Breached: its committed offset is
	// already below its log start (records were deleted unread).
	Partition  string               `json:"partition,omitempty"`
	Breached   bool                 `json:"breached"`
	Partitions []PartitionRetention `json:"partitions"`
}

// PartitionRetention is one partition's retention forecast.
type PartitionRetention struct {
	Partition string `json:"partition"`
	Committed int64  `json:"committed"`
	Start     int64  `json:"logStart"`
	// StartRate is the log start's advance in messages per second.
	StartRate float64 `json:"logStartRate"`
	// Seconds until the log start passes the committed offset; Known is
	// false when the log start does not advance (nothing will be deleted).
	Seconds  float64 `json:"seconds"`
	Known    bool    `json:"known"`
	Breached bool    `json:"breached"`
}

// forecastRetention forecasts, per partition with a committed offset and a
// known log start, when the log start passes the committed offset, from the
// log start's advance fitted over the observations (at least one).
func forecastRetention(samples []HealthSample) *RetentionForecast {
	f := &RetentionForecast{Partitions: []PartitionRetention{}}
	last := samples[len(samples)-1]
	for j, lp := range last.Partitions {
		k := lp.Key
		if l, ok := lp.Lag(); !ok || l == 0 {
			continue // nothing unread to lose
		}
		sr := partitionSeries(samples, k, j, retentionPick)
		if sr.n == 0 {
			continue
		}
		pr := PartitionRetention{Partition: k, Committed: int64(sr.lastA), Start: int64(sr.lastB)}
		switch {
		case pr.Committed < pr.Start:
			pr.Known, pr.Breached = true, true
		case sr.n >= MinForecastSamples:
			_, pr.StartRate = sr.slopes()
			if pr.StartRate > 0 {
				pr.Known = true
				pr.Seconds = float64(pr.Committed-pr.Start) / pr.StartRate
			}
		}
		f.Samples = max(f.Samples, sr.n)
		f.Partitions = append(f.Partitions, pr)
		if !pr.Known {
			continue
		}
		if !f.Known || pr.Seconds < f.Seconds {
			f.Known, f.Seconds, f.Partition, f.Breached = true, pr.Seconds, k, pr.Breached
		}
	}
	for _, s := range samples {
		if s.Err == "" {
			f.WindowSeconds = last.Time.Sub(s.Time).Seconds()
			break
		}
	}
	return f
}

// Text is the forecast for humans.
func (f *RetentionForecast) Text() string {
	switch {
	case f == nil || !f.Known:
		return "-"
	case f.Breached:
		return "breached on " + f.Partition
	}
	return FormatSeconds(f.Seconds) + " (" + f.Partition + ")"
}
