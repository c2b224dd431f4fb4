// Package anomaly compares two readings of one group's offset file: the
// observation type and what can go wrong between two of them. It is a leaf
// (standard library only) so the file followers in internal/watch, the
// analysis in inspect and the exporter share it without importing upwards.
package anomaly

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Observation is one reading of one group's offset file: what kaasctl
// saw at a moment. It is the shared input of the anomaly detection used by
// `watch --offsets`, `offsets history`, `groups health` and the exporter.
type Observation struct {
	Time time.Time `json:"time"`
	// Group is the consumer group the file belongs to.
	Group string `json:"group"`
	// File is the path of the offset file that was read.
	File string `json:"file"`
	// Format is the file's format (volume.FormatEnvelope or FormatPlainMap),
	// empty when the file could not be parsed or is missing.
	Format string `json:"format"`
	// Offsets maps "topic/partition" to the committed offset.
	Offsets map[string]int64 `json:"offsets"`
	// Missing: the file did not exist. Corrupt: it existed but could not be
	// parsed (Problem says why).
	Missing bool   `json:"missing,omitempty"`
	Corrupt bool   `json:"corrupt,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// Offset anomaly kinds. Their names are the health states they feed.
const (
	Rewind   = "REWIND"    // a committed offset moved backwards
	Vanished = "VANISHED"  // partitions disappeared from the file (a partial rewrite)
	PlainMap = "PLAIN_MAP" // the file turned into a plain map where brokers read that as empty
	Corrupt  = "CORRUPT"   // the file became unparseable (kaas ignores it silently)
	Emptied  = "EMPTIED"   // the file now holds no offsets although it held some
)

// Anomaly is one thing that went wrong between two observations of the
// same group's file, with its evidence.
type Anomaly struct {
	Kind  string    `json:"kind"`
	Group string    `json:"group"`
	File  string    `json:"file"`
	Time  time.Time `json:"time"`
	// Partition is "topic/partition" for REWIND and VANISHED, empty otherwise.
	Partition string `json:"partition,omitempty"`
	// Before and After are the offsets around a REWIND; for VANISHED, Before
	// is the last offset seen and After is -1.
	Before int64 `json:"before"`
	After  int64 `json:"after"`
	// Since is the time of the earlier observation.
	Since  time.Time `json:"since"`
	Detail string    `json:"detail"`
}

// Offset is one partition's committed offset in a file: Key is
// "topic/partition".
type Offset struct {
	Key    string
	Offset int64
}

// Sorted returns m's offsets sorted by key.
func Sorted(m map[string]int64) []Offset {
	out := make([]Offset, 0, len(m))
	for k, v := range m {
		out = append(out, Offset{k, v})
	}
	slices.SortFunc(out, func(a, b Offset) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Reading is an Observation as a long-lived holder keeps it (the
// exporter's health window, one per group and observation): its offsets a
// slice sorted by key, whose keys the holder can share between groups,
// instead of a map per reading. Time is the holder's.
type Reading struct {
	Group, File, Format string
	// Offsets are sorted by Key.
	Offsets          []Offset
	Missing, Corrupt bool
	Problem          string
}

// ReadingOf is o as a Reading.
func ReadingOf(o Observation) Reading {
	return Reading{Group: o.Group, File: o.File, Format: o.Format, Offsets: Sorted(o.Offsets), Missing: o.Missing, Corrupt: o.Corrupt, Problem: o.Problem}
}

// Compare returns the anomalies between an earlier and a
// later observation of one group's file, sorted by kind then partition.
// plainMapIsEmpty says whether the volume's generation reads a plain map as
// empty (volume.Generation.PlainMapIsOffsets() == false on a known 0.2.18
// volume); pass false when the generation is not known, so nothing is
// claimed that the generation does not do.
func Compare(prev, cur Observation, plainMapIsEmpty bool) []Anomaly {
	return CompareReadings(ReadingOf(prev), ReadingOf(cur), prev.Time, cur.Time, plainMapIsEmpty)
}

// CompareReadings is Compare over two readings taken at since and at.
func CompareReadings(prev, cur Reading, since, at time.Time, plainMapIsEmpty bool) []Anomaly {
	var out []Anomaly
	add := func(kind, part string, before, after int64, detail string) {
		out = append(out, Anomaly{Kind: kind, Group: cur.Group, File: cur.File, Time: at,
			Partition: part, Before: before, After: after, Since: since, Detail: detail})
	}
	if cur.Corrupt && !prev.Corrupt {
		add(Corrupt, "", -1, -1, "the file can no longer be parsed ("+cur.Problem+"); kaas ignores it and the next commit rewrites it with only the committed partitions")
		return out
	}
	if cur.Corrupt || prev.Corrupt || prev.Missing {
		return out
	}
	if plainMapIsEmpty && cur.Format == "plainMap" && prev.Format != "plainMap" {
		add(PlainMap, "", -1, -1, "the file was rewritten as a plain map, which this kaas generation reads as empty")
	}
	if len(prev.Offsets) > 0 && len(cur.Offsets) == 0 && !cur.Missing {
		add(Emptied, "", -1, -1, "the file now holds no offsets")
	}
	j := 0
	for _, b := range prev.Offsets {
		for j < len(cur.Offsets) && cur.Offsets[j].Key < b.Key {
			j++
		}
		k, before := b.Key, b.Offset
		switch {
		case j == len(cur.Offsets) || cur.Offsets[j].Key != k:
			add(Vanished, k, before, -1, "partition "+k+" is no longer in the file (last committed "+strconv.FormatInt(before, 10)+")")
		case cur.Offsets[j].Offset < before:
			after := cur.Offsets[j].Offset
			add(Rewind, k, before, after, "committed offset of "+k+" moved back from "+strconv.FormatInt(before, 10)+" to "+strconv.FormatInt(after, 10))
		}
	}
	slices.SortStableFunc(out, func(a, b Anomaly) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Partition, b.Partition)
	})
	return out
}
