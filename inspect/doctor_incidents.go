package inspect

import (
	"fmt"
	"strconv"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// Doctor findings from the read model's incidents of the groups' live
// states: one finding per kind, naming the partitions and groups. The
// incidents the volume check reports itself (past the segments' log end,
// a log written twice, a plain map read as empty) and the served-behind
// check of every partition (AddServedBehindLog) are not repeated here.
const (
	DocPastServedEnd  = "live.committedPastServedEnd"
	DocDisagree       = "live.fileCoordinatorDisagree"
	DocUncommitted    = "live.uncommittedPartitions"
	DocBelowLogStart  = "live.committedBelowLogStart"
	docMaxIncidentNam = 5
)

// incidentFinding is how one incident kind becomes a doctor finding.
type incidentFinding struct {
	code string
	sev  volume.Severity
	// what says what the partitions have, fix what to do.
	what func(n int, first PartitionIncidents) string
	fix  func(first PartitionIncidents, gi volume.GenerationInfo) string
}

var incidentFindings = map[string]incidentFinding{
	IncPastServedEnd: {DocPastServedEnd, volume.SevError,
		func(n int, f PartitionIncidents) string {
			return fmt.Sprintf("%s %s groups committed past the log end its leader serves (first: %s, groups %s): %s",
				partitionsText(n), pluralWord(n, "has", "have"), partName(f), joinMax(f.Groups, docMaxIncidentNam), f.First.Detail)
		},
		func(f PartitionIncidents, gi volume.GenerationInfo) string {
			if f.State != nil && (f.State.Has(IncServedBehind) || f.State.Has(IncWrittenTwice)) {
				return "the partition's leader serves a stale end (see the servedBehindLog or segment.writtenTwice findings for its fix); do not reset these groups until it serves the segments' end again (kaasctl refuses to): then check what each consumer read, since records past the stale end were written again"
			}
			return "if the topic was deleted and recreated (kaas keys offsets by topic name), stop the groups and reset their offsets on it (kaasctl offsets reset -g GROUP --topic TOPIC --to-earliest --execute); if it was truncated, reset to the log start likewise"
		}},
	IncDisagree: {DocDisagree, volume.SevWarning,
		func(n int, f PartitionIncidents) string {
			return fmt.Sprintf("on %s the offset file and the coordinator's memory disagree (first: %s, groups %s: %s): a consumer resumes from the coordinator's memory while it holds the group, and from the file when a JoinGroup loads it",
				partitionsText(n), partName(f), joinMax(f.Groups, docMaxIncidentNam), f.First.Detail)
		},
		func(f PartitionIncidents, gi volume.GenerationInfo) string {
			return "nothing to repair while the group runs (its next commit rewrites the file from memory); for a group without members, 'kaasctl groups describe' shows which value a consumer gets (resumeRule); a coordinator that holds an old cache gives it until the group is loaded again"
		}},
	IncBelowLogStart: {DocBelowLogStart, volume.SevWarning,
		func(n int, f PartitionIncidents) string {
			return fmt.Sprintf("%s %s groups committed below the log start (first: %s, groups %s): the records were deleted and their consumers reset per auto.offset.reset", partitionsText(n), pluralWord(n, "has", "have"), partName(f), joinMax(f.Groups, docMaxIncidentNam))
		},
		func(f PartitionIncidents, gi volume.GenerationInfo) string {
			return "decide where the groups should resume and reset them explicitly (kaasctl offsets reset --to-earliest) rather than leave it to auto.offset.reset"
		}},
	IncUncommittedPartitions: {DocUncommitted, volume.SevInfo,
		func(n int, f PartitionIncidents) string {
			return fmt.Sprintf("%d %s partitions of a topic they commit on without an offset a consumer would get (first: %s: %s)",
				len(f.Groups), pluralWord(len(f.Groups), "group has", "groups have"), f.Groups[0], f.First.Detail)
		},
		func(f PartitionIncidents, gi volume.GenerationInfo) string {
			return "if those partitions should have offsets (the group consumed them), set them deliberately with the group stopped (kaasctl offsets reset --topic TOPIC:P --to-offset N); otherwise their consumers start them per auto.offset.reset"
		}},
}

// AddIncidents reports the incidents of the groups' live states, one
// finding per kind.
func (r *DoctorReport) AddIncidents(incs []PartitionIncidents, gi volume.GenerationInfo, volumeFlags, brokerFlags string) {
	for i := 0; i < len(incs); {
		j := i
		for j < len(incs) && incs[j].Code == incs[i].Code {
			j++
		}
		if f, ok := incidentFindings[incs[i].Code]; ok {
			r.addIncidentKind(f, incs[i:j], gi, volumeFlags, brokerFlags)
		}
		i = j
	}
}

func (r *DoctorReport) addIncidentKind(f incidentFinding, incs []PartitionIncidents, gi volume.GenerationInfo, volumeFlags, brokerFlags string) {
	var subjects []string
	groups := map[string]bool{}
	for _, in := range incs {
		if in.Partition >= 0 {
			subjects = append(subjects, partName(in))
		}
		for _, g := range in.Groups {
			groups[g] = true
		}
	}
	if len(subjects) == 0 {
		subjects = incs[0].Groups
	}
	first := incs[0]
	r.Add(DoctorFinding{Severity: f.sev, Check: CheckLive, Code: f.code, Subjects: subjects, BlastRadius: len(groups),
		Message:  f.what(len(incs), first) + " (" + gi.Assumes() + ")",
		Fix:      f.fix(first, gi),
		Commands: []string{"kaasctl groups describe" + volumeFlags + brokerFlags + " " + shellQuote(first.Groups[0])}})
}

func partName(in PartitionIncidents) string {
	return in.Topic + "/" + strconv.Itoa(int(in.Partition))
}

// NotFiledOf are the groups whose file lacks partitions their coordinator
// serves, from the incidents (for AddServedNotFiled).
func NotFiledOf(states []*GroupState, paths map[string]string) []ServedNotFiled {
	var out []ServedNotFiled
	for _, gs := range states {
		var missing []string
		for i := range gs.Partitions {
			if p := &gs.Partitions[i]; p.Has(IncNotInFile) {
				missing = append(missing, p.Topic+"/"+strconv.Itoa(int(p.Partition)))
			}
		}
		if len(missing) > 0 {
			out = append(out, ServedNotFiled{Group: gs.Group, Path: paths[gs.Group], Missing: missing})
		}
	}
	return out
}
