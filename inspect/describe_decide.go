package inspect

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// The decisions of 'groups describe', offline and live: which selected
// groups are described, not found or failed, which partitions are asked
// for explicitly, which groups need the OffsetFetch-all fallback or a
// ListGroups answer, and the per-group notes and stderr warnings. Data in,
// data out: the wire rounds are internal/wire's, the printing is commands'.

// OfflineDescribeInput is what an offline describe read from the volume.
type OfflineDescribeInput struct {
	// Selected are the groups asked about, in output order.
	Selected []string
	// Known is every group the volume knows (an offset file or an
	// explicit entry).
	Known map[string]bool
	// Files are the parsed offset files of the selected groups.
	Files      map[string][]GroupFileData
	Assignment *volume.Assignment
	// State is a selected group's state in the read model (observe).
	State  func(group string) *GroupState
	Filter DescribeFilter
	Lag    *LagFilter
}

// DescribeResult is the outcome of a describe: the groups kept, those not
// found, those that could not be described, and how many --topic /
// --lagging-only left out.
type DescribeResult[D any] struct {
	Groups   []D
	NotFound []string
	Failed   []string
	LeftOut  int
}

// DescribeOffline describes each selected group the volume knows; a
// selected group it does not know is not found. --topic/--lagging-only
// narrow each description (a group left with no partition is left out and
// counted) before --lag compares the total.
func DescribeOffline(in OfflineDescribeInput) DescribeResult[GroupDescription] {
	var r DescribeResult[GroupDescription]
	for _, name := range in.Selected {
		if !in.Known[name] {
			r.NotFound = append(r.NotFound, name)
			continue
		}
		d := DescribeGroup(name, in.Assignment, in.Files[name], in.State(name))
		if !in.Filter.Offline(&d) {
			r.LeftOut++
			continue
		}
		if !in.Lag.Match(&d) {
			continue
		}
		r.Groups = append(r.Groups, d)
	}
	return r
}

// OfflineNotFoundError is the error of an offline describe that did not
// find every named group: it names files of theirs that exist but were not
// read (a FIFO, device or link as <group>.json), so "no offset file" does
// not hide them.
func OfflineNotFoundError(notFound []string, scanFindings []volume.Finding) error {
	if len(notFound) == 0 {
		return nil
	}
	var b strings.Builder
	for _, f := range scanFindings {
		if f.Code != volume.CodeNotRegular && f.Code != volume.CodeSymlink {
			continue
		}
		for _, n := range notFound {
			if strings.HasSuffix(f.Path, string(filepath.Separator)+n+".json") {
				fmt.Fprintf(&b, "; %s: %s (%s)", f.Path, f.Message, f.Fix)
				break
			}
		}
	}
	if b.Len() > 0 {
		return fmt.Errorf("no readable offset file and no explicit entry for %s on this volume%s", QuoteList(notFound), b.String())
	}
	return fmt.Errorf("no offset file and no explicit entry for %s on this volume", QuoteList(notFound))
}

// UnlistedWarnings is a warning for each broker whose ListGroups failed:
// a group only it holds is not described by --all/--regex.
func UnlistedWarnings(listings []wire.BrokerGroups) []string {
	var out []string
	for _, b := range listings {
		if b.Err != "" {
			out = append(out, b.Err+": groups only it holds are not described")
		}
	}
	return out
}

// DescribeKnown is the offline description of each selected group the
// volume knows, by group: what a live describe joins with the wire's answer
// (and whose partitions it asks for explicitly).
func DescribeKnown(selected []string, known map[string]bool, files map[string][]GroupFileData, a *volume.Assignment, state func(string) *GroupState) map[string]*GroupDescription {
	out := make(map[string]*GroupDescription, len(selected))
	for _, name := range selected {
		if !known[name] {
			continue
		}
		d := DescribeGroup(name, a, files[name], state(name))
		out[name] = &d
	}
	return out
}

// KnownPartitions is the partitions each offline description names (its
// offset file's): kaas answers nothing to OffsetFetch-all, so a live
// describe asks for these explicitly. Groups without any are left out.
func KnownPartitions(files map[string]*GroupDescription) map[string]wire.TopicPartitions {
	out := make(map[string]wire.TopicPartitions, len(files))
	for name, d := range files {
		if len(d.Partitions) == 0 {
			continue
		}
		tp := wire.TopicPartitions{}
		for _, p := range d.Partitions {
			tp.Add(p.Topic, p.Partition)
		}
		out[name] = tp
	}
	return out
}

// FetchAllCandidates is the groups whose partitions nothing named — no
// error, a coordinator, no members, nothing known from the volume and no
// committed offset answered — with their coordinators: the ones the
// OffsetFetch-all fallback asks (Kafka answers it, kaas answers nothing).
func FetchAllCandidates(described []wire.GroupDescription, known map[string]wire.TopicPartitions) ([]string, map[string]wire.Coordinator) {
	var groups []string
	coords := map[string]wire.Coordinator{}
	for _, w := range described {
		if w.Err != "" || w.Coordinator < 0 || len(w.Members) > 0 || known[w.Group] != nil || len(w.Committed.Offsets) > 0 {
			continue
		}
		coords[w.Group] = wire.Coordinator{Key: w.Group, NodeID: w.Coordinator}
		groups = append(groups, w.Group)
	}
	return groups, coords
}

// MergeFetchAll puts the fallback's answers into described: a group it
// found committed offsets for takes them, with its lag against the log
// offsets the fallback asked. It returns the asked groups it found no
// partition for, in the order asked.
func MergeFetchAll(described []wire.GroupDescription, asked []string, ans wire.FetchAllAnswers) (empty []string) {
	idx := make(map[string]int, len(asked))
	for i, w := range described {
		idx[w.Group] = i
	}
	for _, grp := range asked {
		fo := ans.Committed[grp]
		n := 0
		for _, ps := range fo.Offsets {
			n += len(ps)
		}
		if n == 0 {
			empty = append(empty, grp)
		}
		i, ok := idx[grp]
		if !ok || len(fo.Offsets) == 0 {
			continue
		}
		w := &described[i]
		w.Committed = fo
		gl := map[string]map[int32]wire.LogOffsets{}
		for t := range fo.Offsets {
			gl[t] = ans.Logs[t]
		}
		w.Lag = wire.ComputeLag(fo.Offsets, gl, nil)
	}
	return empty
}

// NoPartitionsWarning is the warning for groups the fallback found nothing
// for ("" when none): with a volume they have no offset file either.
func NoPartitionsWarning(empty []string, hasVolume bool) string {
	if len(empty) == 0 {
		return ""
	}
	hint := "pass --data-dir to read their offset files"
	if hasVolume {
		hint = "and no offset file on the volume"
	}
	return fmt.Sprintf("no partitions known for %s (no members, and kaas answers nothing to OffsetFetch-all): %s", QuoteList(empty), hint)
}

// HoldCandidates is, per coordinator, the groups with an offset file on
// the volume that DescribeGroups shows without members: kaas answers
// DescribeGroups with Empty for any group id it owns, so only its
// ListGroups tells a group it holds from one only on the volume (fileOnly,
// as groups list shows it). nil when there are none.
func HoldCandidates(described []wire.GroupDescription, files map[string]*GroupDescription) map[int32][]string {
	var want map[int32][]string
	for _, w := range described {
		if files[w.Group] != nil && w.Err == "" && w.Coordinator >= 0 && len(w.Members) == 0 {
			if want == nil {
				want = map[int32][]string{}
			}
			want[w.Coordinator] = append(want[w.Coordinator], w.Group)
		}
	}
	return want
}

// LiveDescribeInput is what a live describe gathered: the wire's answers
// per group, the offline descriptions (with a volume), and whether each
// member-less group's coordinator lists it.
type LiveDescribeInput struct {
	Described []wire.GroupDescription
	// Files are the offline descriptions by group (nil without a volume).
	Files map[string]*GroupDescription
	// Held says whether a group's coordinator lists it; a group missing
	// is unknown (not asked, or its coordinator's listing failed).
	Held map[string]bool
	// State is a described group's live state in the read model
	// (observe.BuildState with the wire's answers and Held).
	State  func(group string) *GroupState
	Names  *NodeNamer
	Filter DescribeFilter
	Lag    *LagFilter
}

// DescribeLive joins each group's wire answer with its offline description.
// A group the coordinator does not list is marked not loaded (fileOnly).
// A group neither the brokers nor the volume know is not found: kaas
// answers Empty (Kafka: Dead) with no members for any group id it owns, so
// that answer with no offset file and no committed offset means no group.
// A group whose DescribeGroups failed is failed (and still shown).
func DescribeLive(in LiveDescribeInput) DescribeResult[LiveDescription] {
	r := DescribeResult[LiveDescription]{Groups: make([]LiveDescription, 0, len(in.Described)), NotFound: []string{}}
	for _, w := range in.Described {
		file := in.Files[w.Group]
		var gs *GroupState
		if in.State != nil {
			gs = in.State(w.Group)
		}
		ld := BuildLiveDescription(w, file, gs, in.Names)
		ld.addSkew(w.DescribedGroup, gs)
		if held, known := in.Held[w.Group]; known && !held {
			ld.MarkNotLoaded()
		}
		deadOnWire := w.Err == "" && (w.State == "Dead" || w.State == "Empty" || w.State == "") && len(w.Members) == 0
		if deadOnWire && file == nil && !hasCommitted(&ld) {
			r.NotFound = append(r.NotFound, w.Group)
			continue
		}
		if w.Err != "" {
			r.Failed = append(r.Failed, w.Group)
		}
		if !in.Filter.Live(&ld) {
			r.LeftOut++
			continue
		}
		if !in.Lag.MatchTotal(ld.LagKnown, ld.TotalLag) {
			continue
		}
		r.Groups = append(r.Groups, ld)
	}
	return r
}

// LiveDescribeError is the error of a live describe: groups not found
// first, then groups that could not be described (nil when neither).
func LiveDescribeError(r DescribeResult[LiveDescription]) error {
	if len(r.NotFound) > 0 {
		return fmt.Errorf("no such group on the brokers or the volume: %s", QuoteList(r.NotFound))
	}
	if len(r.Failed) > 0 {
		return fmt.Errorf("%s could not be described: %s", render.Plural(len(r.Failed), "group", "groups"), QuoteList(r.Failed))
	}
	return nil
}

func hasCommitted(d *LiveDescription) bool {
	for _, p := range d.Partitions {
		if p.Committed >= 0 {
			return true
		}
	}
	return false
}

// AnnotateLive adds each group's state line (the Kafka tools' words) to its
// notes, and returns the stderr warnings about the groups: one line per
// kind of problem — the group's own line when only one group has it, else
// the count, the first and where the rest are shown — and last the
// partitions served behind their log (ServedBehindWarning, which names gi,
// the generation assumed).
func AnnotateLive(groups []LiveDescription, gi volume.GenerationInfo) []string {
	var disagree, coordDisagree, errored []string
	for i := range groups {
		d := &groups[i]
		if m := StateMessage(d.Group, d.State); m != "" {
			d.Notes = append(d.Notes, m)
		}
		if d.OffsetsDisagree > 0 {
			disagree = append(disagree, fmt.Sprintf("group %s: the offset file and the coordinator disagree on %s",
				volume.DisplayName(d.Group), render.Plural(d.OffsetsDisagree, "partition", "partitions")))
		}
		if d.CoordinatorAgrees != nil && !*d.CoordinatorAgrees {
			coordDisagree = append(coordDisagree, fmt.Sprintf("group %s: FindCoordinator says %s, the volume's assignment says %s",
				volume.DisplayName(d.Group), d.WireCoordinator, noneIfEmpty(d.Coordinator.Coordinator)))
		}
		for _, e := range d.Errors {
			errored = append(errored, "group "+volume.DisplayName(d.Group)+": "+e)
		}
	}
	var out []string
	out = appendKind(out, disagree, "groups whose offset file and coordinator disagree (see their \"disagreement\" lines, offsetsDisagree in json)")
	out = appendKind(out, coordDisagree, "groups whose FindCoordinator answer differs from the volume's assignment (see their coordinator lines, coordinatorAgrees in json)")
	out = appendKind(out, errored, "errors describing groups (see each group's errors)")
	if w := ServedBehindWarning(groups, gi); w != "" {
		out = append(out, w)
	}
	return out
}

// appendKind adds the warning for one kind of per-group problem.
func appendKind(out, lines []string, what string) []string {
	switch len(lines) {
	case 0:
		return out
	case 1:
		return append(out, lines[0])
	}
	return append(out, fmt.Sprintf("%d %s; the first: %s", len(lines), what, lines[0]))
}

// LagQualifier says what a live partition's lag is counted from when it is
// not the coordinator's committed offset: "file" (the coordinator has none
// loaded), "from start" (nothing committed), else "".
func (p LivePartition) LagQualifier() string {
	switch p.LagFrom {
	case "file":
		return "file"
	case "logStart":
		return "from start"
	}
	return ""
}

// AssignedHost is the host of the member a partition is assigned to ("":
// unassigned).
func (p LivePartition) AssignedHost() string {
	if p.Member == "" {
		return ""
	}
	return p.Host
}

// QuoteList is ids quoted and comma-separated, as errors name groups.
func QuoteList(ids []string) string {
	q := make([]string, len(ids))
	for i, s := range ids {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
