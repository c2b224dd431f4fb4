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

// Compare returns the anomalies between an earlier and a
// later observation of one group's file, sorted by kind then partition.
// plainMapIsEmpty says whether the volume's generation reads a plain map as
// empty (volume.Generation.PlainMapIsOffsets() == false on a known 0.2.18
// volume); pass false when the generation is not known, so nothing is
// claimed that the generation does not do.
func Compare(prev, cur Observation, plainMapIsEmpty bool) []Anomaly {
	var out []Anomaly
	add := func(kind, part string, before, after int64, detail string) {
		out = append(out, Anomaly{Kind: kind, Group: cur.Group, File: cur.File, Time: cur.Time,
			Partition: part, Before: before, After: after, Since: prev.Time, Detail: detail})
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
	for _, k := range sortedOffsetKeys(prev.Offsets) {
		before := prev.Offsets[k]
		after, ok := cur.Offsets[k]
		switch {
		case !ok:
			add(Vanished, k, before, -1, "partition "+k+" is no longer in the file (last committed "+strconv.FormatInt(before, 10)+")")
		case after < before:
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

func sortedOffsetKeys(m map[string]int64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
