package inspect

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// How a group's lag spreads over its partitions, and which partitions are
// produced to hottest: kafkatop's PAR (peak over average) and coefficient
// of variation, klag's hot partitions. A group whose total lag looks fine
// can have it all on one partition (its consumer stuck there, or a hot
// key): the spread says so in one number per group, without a series per
// partition.

// LagSpread is the spread of a group's lag over its partitions.
type LagSpread struct {
	// Partitions counts those with a known lag (the others are left out).
	Partitions int   `json:"partitions"`
	Total      int64 `json:"total"`
	Max        int64 `json:"max"`
	// MaxPartition is the partition with the most lag (the first by key
	// of those tied).
	MaxPartition string  `json:"maxPartition,omitempty"`
	Mean         float64 `json:"mean"`
	// MaxOverMean is the largest lag over the mean (1: even; the
	// partition count: all of it on one partition); 0 without lag.
	MaxOverMean float64 `json:"maxOverMean"`
	// CV is the coefficient of variation: the standard deviation of the
	// partitions' lags over their mean (0: even); 0 without lag.
	CV float64 `json:"cv"`
	// Hot are the partitions produced to at least HotShare times the mean
	// rate, hottest first (at most MaxHot); ProduceMaxOverMean is the
	// hottest rate over the mean. Both need produce rates (a window of
	// observations); RatesKnown says whether there were any.
	Hot                []HotPartition `json:"hot"`
	ProduceMaxOverMean float64        `json:"produceMaxOverMean"`
	RatesKnown         bool           `json:"ratesKnown"`
}

// HotPartition is a partition produced to well above its group's mean.
type HotPartition struct {
	Partition string `json:"partition"`
	// ProduceRate is records per second; Share of the group's production.
	ProduceRate float64 `json:"produceRate"`
	Share       float64 `json:"share"`
	Lag         int64   `json:"lag"`
}

// HotShare is how many times the mean produce rate makes a partition hot;
// MaxHot bounds the list.
const (
	HotShare = 2.0
	MaxHot   = 5
)

// PartitionLoad is one partition's lag and produce rate as LagSkew reads
// them.
type PartitionLoad struct {
	Partition string
	Lag       int64
	LagKnown  bool
	// ProduceRate is records per second (RateKnown: fitted over a window).
	ProduceRate float64
	RateKnown   bool
}

// LagSkew is the spread of the lag over parts and its hot partitions.
func LagSkew(parts []PartitionLoad) LagSpread {
	s := LagSpread{Hot: []HotPartition{}}
	var sumSq float64
	for _, p := range parts {
		if !p.LagKnown {
			continue
		}
		s.Partitions++
		s.Total += p.Lag
		sumSq += float64(p.Lag) * float64(p.Lag)
		if p.Lag > s.Max || s.MaxPartition == "" {
			s.Max, s.MaxPartition = p.Lag, p.Partition
		}
	}
	s.finish(sumSq)
	hotPartitions(&s, parts)
	return s
}

// hotPartitions fills the produce-rate part of s.
func hotPartitions(s *LagSpread, parts []PartitionLoad) {
	var sum, top float64
	n := 0
	for _, p := range parts {
		if p.RateKnown && p.ProduceRate >= 0 {
			sum += p.ProduceRate
			top = max(top, p.ProduceRate)
			n++
		}
	}
	s.RatesKnown = n > 0
	if n < 2 || sum <= 0 {
		return
	}
	mean := sum / float64(n)
	s.ProduceMaxOverMean = top / mean
	for _, p := range parts {
		if p.RateKnown && p.ProduceRate >= HotShare*mean {
			s.Hot = append(s.Hot, HotPartition{Partition: p.Partition, ProduceRate: p.ProduceRate, Share: p.ProduceRate / sum, Lag: p.Lag})
		}
	}
	slices.SortFunc(s.Hot, func(a, b HotPartition) int {
		if a.ProduceRate != b.ProduceRate {
			if a.ProduceRate > b.ProduceRate {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Partition, b.Partition)
	})
	if len(s.Hot) > MaxHot {
		s.Hot = s.Hot[:MaxHot]
	}
}

// Skewed reports whether the spread is worth saying: lag on at least two
// partitions' worth of them and most of it on one (PAR at least 2).
func (s LagSpread) Skewed() bool { return s.Partitions >= 2 && s.Total > 0 && s.MaxOverMean >= 2 }

// LagSpreadOf is the spread of the lag over a group's partition states
// (no produce rates: AddRates adds them from a window's forecast).
func LagSpreadOf(states []PartitionState) LagSpread {
	s := LagSpread{Hot: []HotPartition{}}
	var sumSq float64
	for i := range states {
		p := &states[i]
		if !p.LagKnown {
			continue
		}
		s.Partitions++
		s.Total += p.Lag
		sumSq += float64(p.Lag) * float64(p.Lag)
		if p.Lag > s.Max || s.MaxPartition == "" {
			s.Max, s.MaxPartition = p.Lag, p.Topic+"/"+strconv.Itoa(int(p.Partition))
		}
	}
	s.finish(sumSq)
	return s
}

// finish derives the mean, PAR and CV from the sums.
func (s *LagSpread) finish(sumSq float64) {
	if s.Partitions > 0 && s.Total > 0 {
		n := float64(s.Partitions)
		s.Mean = float64(s.Total) / n
		s.MaxOverMean = float64(s.Max) / s.Mean
		s.CV = math.Sqrt(max(0, sumSq/n-s.Mean*s.Mean)) / s.Mean
	}
	if s.Total == 0 {
		s.MaxPartition = ""
	}
}

// AddRates adds the hot partitions from the produce rates a window's
// drain estimate fitted (nothing when it has none).
func (s *LagSpread) AddRates(d *DrainEstimate) {
	if d == nil || !d.Known {
		return
	}
	loads := make([]PartitionLoad, 0, len(d.Partitions))
	for _, p := range d.Partitions {
		loads = append(loads, PartitionLoad{Partition: p.Partition, Lag: p.Lag, LagKnown: p.Known, ProduceRate: p.ProduceRate, RateKnown: p.Known})
	}
	s.Hot = s.Hot[:0]
	hotPartitions(s, loads)
}
