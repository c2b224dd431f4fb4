package repair

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// groups prune on the one write path: each group a prune selected is a
// GroupPlan of offsets delete rows, or, when the whole file goes, a plan
// that removes the file (Remove). ApplyOffsets (Command "prune") applies
// them like any delete: refused groups skipped, the state and the
// coordinator's hold re-checked right before each write, the file backed
// up and rewritten or removed atomically, verified in the file and over
// the wire (a partition the coordinator still serves from its cache is
// CACHED, the broker named).

// PruneItem is one group of a prune plan as the read model saw it.
type PruneItem struct {
	Group string
	// Remove: the whole file goes; else only Drop.
	Remove bool
	// Drop are the partitions that go, with the offsets the plan saw: a
	// file that holds other offsets for them now is not written.
	Drop []volume.OffsetEntry
	// Entries is how many partitions the file held when planned.
	Entries int
	// State, StateSource and Coordinator as the brokers described the
	// group; Refused why it may not be written.
	State, StateSource string
	Coordinator        int32
	Refused            string
}

// PlanPrune reads each item's offset file again through the write path's
// reader (the live offsets dir of the volume's generation, no link
// followed unless the policy says so) and makes its plan. A file that
// changed since the read model read it (other offsets for a dropped
// partition, other partitions for a removed file, the file gone) is an
// Error: nothing is written for that group.
func PlanPrune(in Inputs, items []PruneItem) []*GroupPlan {
	plans := make([]*GroupPlan, 0, len(items))
	for _, it := range items {
		gp := &GroupPlan{Group: it.Group, State: it.State, StateSource: it.StateSource, Coordinator: it.Coordinator, Refused: it.Refused,
			Remove: it.Remove, Rows: []ResetRow{}, Warnings: []string{}}
		plans = append(plans, gp)
		p, err := GroupFilePath(in.Layout, it.Group)
		if err != nil {
			gp.Error = err.Error()
			continue
		}
		gp.Path, gp.pol, gp.root = p, in.Policy, VolumeRoot(in.Layout, p)
		gf, err := readGroupFile(in.Layout, it.Group, in.Policy)
		if err != nil {
			gp.Error = err.Error()
			continue
		}
		gp.file, gp.FilePartitions = gf, len(gf.Entries())
		if why := pruneChanged(gf, it); why != "" {
			gp.Error = why + "; nothing is written for this group: rerun the prune to plan it again"
			continue
		}
		for _, e := range it.Drop {
			off := e.Offset
			gp.Rows = append(gp.Rows, ResetRow{PlanRow: PlanRow{Group: it.Group, Topic: e.Topic, Partition: e.Partition, Current: &off, Changed: true, Warnings: []string{}}, Delete: true})
		}
		gp.Kept = gp.FilePartitions - len(it.Drop)
	}
	return plans
}

// pruneChanged says how the file differs from what the prune was planned
// on ("" when it does not).
func pruneChanged(gf *GroupFile, it PruneItem) string {
	if !gf.State.Exists {
		return fmt.Sprintf("%s: the file is gone since it was read", gf.Path)
	}
	for _, e := range it.Drop {
		if off, ok := gf.Committed(e.Topic, e.Partition); !ok || off != e.Offset {
			return fmt.Sprintf("%s: %s/%d changed since it was read (a commit since?)", gf.Path, e.Topic, e.Partition)
		}
	}
	if it.Remove && len(gf.Entries()) != it.Entries {
		return fmt.Sprintf("%s: the file holds %d partitions, %d when it was read (a commit since?)", gf.Path, len(gf.Entries()), it.Entries)
	}
	return ""
}

// removeFile removes a plan's whole file (backup beside it, aborted if it
// changed since it was read), then checks that it is gone.
func removeFile(gp *GroupPlan, now func() time.Time) {
	gp.Executed, gp.Method = true, "remove"
	st := gp.file.State
	res, err := RemoveFileAtomic(gp.Path, WriteOptions{Expect: &st, Backup: true, Now: now, Root: gp.root, Policy: gp.pol, afterStep: writeFileHook})
	gp.Backup = res.Backup
	if err != nil {
		gp.failAll(err.Error())
		return
	}
	after, err := readState(gp.Path, gp.pol.FollowSymlinks)
	for i := range gp.Rows {
		r := &gp.Rows[i]
		switch {
		case err != nil:
			r.Result, r.Detail = ResultMismatch, "re-reading after the removal: "+err.Error()
		case after.Exists:
			r.Result, r.Detail = ResultMismatch, "the file is there again (a broker wrote it since: a commit to the group?)"
		default:
			r.Result, r.Detail = ResultOK, "the file is removed"
		}
		if r.Result != ResultOK {
			gp.Failed++
		}
	}
	if len(gp.Rows) == 0 && (err != nil || after.Exists) {
		gp.Failed++
		gp.Warnings = append(gp.Warnings, "the file is there again after the removal")
	}
}

// pruneRecheck is why a prune must not write gp now ("" when it may):
// right before the write, the group's state (Empty or Dead only) and
// whether its coordinator lists it (a loaded group's memory outlives its
// file and comes back with its next commit).
func pruneRecheck(ctx context.Context, cl *wire.Client, gp *GroupPlan) string {
	coords, err := cl.FindCoordinators(ctx, []string{gp.Group}, false)
	if err != nil {
		return "cannot tell whether the group is live (finding its coordinator: " + err.Error() + ")"
	}
	ds := cl.DescribeGroups(ctx, []string{gp.Group}, coords)
	switch {
	case len(ds) != 1 || ds[0].Err != "":
		return "cannot tell whether the group is live: the brokers did not describe it"
	case len(ds[0].Members) > 0 || (ds[0].State != StateEmpty && ds[0].State != StateDead):
		return InactiveRefusal(gp.Group, ds[0].State)
	}
	co := coords[gp.Group]
	held := cl.GroupsHeld(ctx, map[int32][]string{co.NodeID: {gp.Group}})[co.NodeID]
	switch h, ok := held.Held[gp.Group]; {
	case held.Err != "" || !ok:
		return fmt.Sprintf("cannot tell whether its coordinator (node %d) holds the group in memory: its ListGroups did not answer", co.NodeID)
	case h:
		return fmt.Sprintf("the group was loaded by its coordinator (node %d) since the plan was made: its memory would write the offsets back", co.NodeID)
	}
	return ""
}

// StillListed names, for each pruned group some broker still lists (holds
// in memory), the brokers that do: after a prune, what a restart clears.
func StillListed(listings []wire.BrokerGroups, groups []string, name func(int32) string) map[string][]string {
	out := map[string][]string{}
	for _, l := range listings {
		if l.Err != "" {
			continue
		}
		for _, g := range groups {
			if _, ok := slices.BinarySearchFunc(l.Groups, g, func(lg wire.ListedGroup, g string) int { return strings.Compare(lg.Group, g) }); ok {
				out[g] = append(out[g], name(l.Broker.NodeID))
			}
		}
	}
	return out
}
