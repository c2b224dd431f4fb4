package inspect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
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
