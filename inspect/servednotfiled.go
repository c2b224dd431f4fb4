package inspect

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// A partition whose committed offset the coordinator serves (from its
// memory) but the group's offset file lacks is lost when the coordinator
// restarts or the group moves: the next coordinator loads the file. kaas's
// Go coordinator merges a commit into its cache under a lock, then writes
// the merged snapshot through one fixed <group>.tmp outside it, so two
// commits of one group at once can land the older snapshot last; kaas's
// Rust generations swallow a failed write of the file (the client still
// sees success).

// DocServedNotFiled is the doctor finding for such groups.
const DocServedNotFiled = "live.servedNotFiled"

// ServedNotFiled is one group whose offset file lacks partitions its
// coordinator serves.
type ServedNotFiled struct {
	Group string
	Path  string
	// Missing are the partitions ("topic/partition"), sorted by topic then
	// partition, the coordinator answers with a committed offset that the
	// file does not hold.
	Missing []string
}

// ServedTopics is, per group with a file, the topics to ask its
// coordinator about: those in the file and those its members subscribe
// to (a topic whose first commit was lost is in no file).
func ServedTopics(files map[string]*volume.OffsetFile, described map[string]wire.DescribedGroup) map[string][]string {
	out := make(map[string][]string, len(files))
	for g, f := range files {
		var ts []string
		for _, e := range f.Entries {
			ts = append(ts, e.Topic)
		}
		for _, m := range described[g].Members {
			ts = append(ts, m.Subscription...)
		}
		slices.Sort(ts)
		out[g] = slices.Compact(ts)
	}
	return out
}

// ServedWant is every partition (per the topics' metadata) of each group's
// topics: what to ask the coordinators (wire.FetchCommitted).
func ServedWant(topics map[string][]string, meta map[string]*wire.TopicMeta) map[string]wire.TopicPartitions {
	out := make(map[string]wire.TopicPartitions, len(topics))
	for g, ts := range topics {
		tp := wire.TopicPartitions{}
		for _, t := range ts {
			m := meta[t]
			if m == nil || m.Err != "" {
				continue
			}
			for p := range m.Partitions {
				tp.Add(t, p)
			}
		}
		if len(tp) > 0 {
			out[g] = tp
		}
	}
	return out
}

// FindServedNotFiled compares what the coordinators answered (live) with
// the offset files read after the answers, and returns the groups whose
// file lacks a partition the coordinator serves, sorted by group. A group
// whose answer failed, or that has no file here, says nothing.
func FindServedNotFiled(live map[string]wire.GroupOffsets, files map[string]*volume.OffsetFile) []ServedNotFiled {
	var out []ServedNotFiled
	for _, g := range sortedMapKeys(live) {
		ans, f := live[g], files[g]
		if ans.Err != "" || ans.NotFound || f == nil {
			continue
		}
		filed := make(map[string]bool, len(f.Entries))
		for _, e := range f.Entries {
			filed[e.Topic+"/"+strconv.Itoa(int(e.Partition))] = true
		}
		var missing []string
		for _, t := range sortedMapKeys(ans.Offsets) {
			parts := ans.Offsets[t]
			ps := make([]int32, 0, len(parts))
			for p, c := range parts {
				if c.Offset >= 0 && c.Err == "" && !filed[t+"/"+strconv.Itoa(int(p))] {
					ps = append(ps, p)
				}
			}
			slices.Sort(ps)
			for _, p := range ps {
				missing = append(missing, t+"/"+strconv.Itoa(int(p)))
			}
		}
		if len(missing) > 0 {
			out = append(out, ServedNotFiled{Group: g, Path: f.Path, Missing: missing})
		}
	}
	return out
}

// AddServedNotFiled reports the groups whose offset file lacks partitions
// their coordinator serves, with the cause the generation gen has.
func (r *DoctorReport) AddServedNotFiled(lost []ServedNotFiled, gen volume.Generation, volumeFlags, brokerFlags string) {
	if len(lost) == 0 {
		return
	}
	groups := make([]string, len(lost))
	parts := 0
	for i, l := range lost {
		groups[i] = l.Group
		parts += len(l.Missing)
	}
	first := lost[0]
	cause := "a write of the file that failed or was overtaken (cause not established for this generation)"
	if s, ok := gen.Spec(); ok && s.Broker.ServedNotFiled != "" {
		cause = s.Broker.ServedNotFiled
	}
	r.Add(DoctorFinding{Severity: volume.SevError, Check: CheckLive, Code: DocServedNotFiled, Subjects: groups, BlastRadius: len(lost),
		Message: fmt.Sprintf("%d %s committed offsets the coordinator serves from memory but the offset file lacks (%s, first: %s lacks %s; assuming kaas generation %s): %s",
			len(lost), pluralWord(len(lost), "group has", "groups have"), partitionsText(parts), first.Group, joinMax(first.Missing, 5), gen.Label(), cause),
		Fix:      "have the group commit again before its coordinator restarts or the group moves (the next coordinator loads the file, and these partitions lose their committed offsets): any commit of the group rewrites the whole file from the coordinator's memory, as a running consumer does at its next commit; until then do not restart that broker",
		Commands: []string{"kaasctl groups describe" + volumeFlags + brokerFlags + " " + shellQuote(first.Group)}})
}

func partitionsText(parts int) string {
	return strconv.Itoa(parts) + " " + pluralWord(parts, "partition", "partitions")
}

// joinMax lists up to n items, then how many more.
func joinMax(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
