package observe

import (
	"os"
	"regexp"
	"slices"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/gctune"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// Selection names the groups a read is about: Names, or every group (All),
// or those matching Regex.
type Selection struct {
	Names []string
	All   bool
	Regex *regexp.Regexp
}

// Scope is the groups a read is about when they are named (nil for All and
// Regex, which need every group).
func (s Selection) Scope() []string {
	if s.All || s.Regex != nil || len(s.Names) == 0 {
		return nil
	}
	return s.Names
}

// Picks says which groups the selection takes.
func (s Selection) Picks() func(string) bool {
	want := map[string]bool{}
	for _, n := range s.Names {
		want[n] = true
	}
	return func(group string) bool { return want[group] || s.All || (s.Regex != nil && s.Regex.MatchString(group)) }
}

// SelectAll reports All or Regex: every group any source knows is a
// candidate.
func (s Selection) SelectAll() bool { return s.All || s.Regex != nil }

// VolumeRead is one read of the volume for a selection: the selected
// groups' offset files (in scan order), every group id the volume knows
// (offset files and explicit entries; only the named ones when groups are
// named), and the partitions' bounds.
type VolumeRead struct {
	Layout     volume.Layout
	Assignment *volume.Assignment
	Scan       volume.ScanResult
	Files      map[string][]inspect.GroupFileData
	Known      map[string]bool
	// Logs is nil without a data dir.
	Logs *Logs
}

// ReadVolume scans the offset files of sel on l (a its assignment, nil
// when unreadable), keeping the parsed files of the selected groups only.
func ReadVolume(l volume.Layout, a *volume.Assignment, sel Selection) (*VolumeRead, error) {
	v := &VolumeRead{Layout: l.WithGeneration(), Assignment: a, Files: map[string][]inspect.GroupFileData{}, Known: map[string]bool{}, Logs: NewLogs(l)}
	pick := sel.Picks()
	each := func(it *volume.OffsetScanItem) error {
		v.Known[it.Group] = true
		if pick(it.Group) {
			v.Files[it.Group] = append(v.Files[it.Group], inspect.GroupFileData{Path: it.Path, Layout: it.Layout, File: it.File, Err: it.Err, Findings: it.Findings, Denied: it.Denied, ModTime: it.ModTime})
		}
		return nil
	}
	var (
		ok  bool
		err error
	)
	if scope := sel.Scope(); scope != nil {
		v.Scan, ok, err = volume.ScanGroups(l, scope, volume.ScanOptions{}, each)
	}
	if !ok {
		v.Scan, err = volume.ScanOffsets(l, volume.ScanOptions{}, each)
	}
	if a != nil {
		for _, e := range a.ConsumerGroups {
			v.Known[e.GroupID] = true
		}
	}
	return v, err
}

// Gen is the generation the read assumes.
func (v *VolumeRead) Gen() volume.GenerationInfo {
	if v == nil {
		return volume.GenerationInfo{}
	}
	if v.Scan.Generation.Resolved() {
		return v.Scan.Generation
	}
	return v.Layout.Gen
}

// State is a group's offline state: its files and the segments.
func (v *VolumeRead) State(group string) *inspect.GroupState {
	gs := BuildState(GroupInput{Group: group, Volume: true, Files: v.Files[group], Gen: v.Gen(), Logs: v.Logs})
	return &gs
}

// LiveState is a group's state with the brokers' answer w (asked at at)
// and whether its coordinator holds it; v may be nil (no volume).
func (v *VolumeRead) LiveState(w *wire.GroupDescription, held inspect.Held, at time.Time) *inspect.GroupState {
	in := GroupInput{Group: w.Group, Live: w, AskedAt: at, Held: held}
	if v != nil {
		in.Volume, in.Files, in.Gen, in.Logs = true, v.Files[w.Group], v.Gen(), v.Logs
	}
	gs := BuildState(in)
	return &gs
}

// Prefetch reads the segments of every partition the groups' files name,
// so their bounds are as of before the brokers are asked (a leader serving
// less then serves a stale high watermark).
func (v *VolumeRead) Prefetch(groups []string) {
	if v == nil || v.Logs == nil {
		return
	}
	seen := map[volume.TopicPartition]bool{}
	var tps []volume.TopicPartition
	for _, g := range groups {
		f, _ := ShownFile(v.Files[g])
		if f == nil || f.File == nil {
			continue
		}
		for _, e := range f.File.Entries {
			tp := volume.TopicPartition{Topic: e.Topic, Partition: e.Partition}
			if !seen[tp] {
				seen[tp] = true
				tps = append(tps, tp)
			}
		}
	}
	v.Logs.Prefetch(tps)
}

// KnownNames are the groups the volume knows, sorted.
func (v *VolumeRead) KnownNames() []string {
	if v == nil {
		return nil
	}
	return slices.Sorted(func(yield func(string) bool) {
		for k := range v.Known {
			if !yield(k) {
				return
			}
		}
	})
}

// BrokerNamer names brokers as kaas does (kaas-1, not node 1) from the
// volume's assignment.json; nil without a readable one.
func BrokerNamer(l volume.Layout) *inspect.NodeNamer {
	a, _, err := volume.ReadAssignment(l.AssignmentPath())
	if err != nil {
		return nil
	}
	return inspect.NewNodeNamer(a)
}

// ReadAssignmentFor reads the volume's assignment.json keeping the
// explicit entries of groups only (all when nil) and the findings about
// those entries only, folded one line per kind; a whole file read is a
// large input to the garbage collector's tuning when it is one.
func ReadAssignmentFor(l volume.Layout, groups []string) (*volume.Assignment, []volume.Finding, error) {
	large := false
	if st, err := os.Stat(l.AssignmentPath()); err == nil && groups == nil {
		large = gctune.LargeInput(st.Size())
	}
	a, fs, err := volume.ReadAssignmentWith(l.AssignmentPath(), volume.AssignmentOptions{Groups: groups, Fold: true})
	if large {
		gctune.InputRead()
	}
	return a, fs, err
}
