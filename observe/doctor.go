package observe

import (
	"context"
	"slices"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// LiveStates is the live state of every group of the volume that some
// broker coordinates, for doctor: the gathering's coordinators,
// descriptions and listings (which say who holds a group), one
// OffsetFetch and one ListOffsets round, the offset files and the
// partitions' bounds the volume check read from the segments before any
// broker was asked (bounds). A group whose coordinator seems to serve
// offsets its file lacks has its file read again (a commit may have
// reached the coordinator's memory before its file), and only what still
// lacks counts.
func LiveStates(ctx context.Context, cl *wire.Client, gg *wire.GatheredGroups, l volume.Layout, files []inspect.GroupFile, bounds []volume.LogBounds, now time.Time) ([]*inspect.GroupState, error) {
	var groups []string
	for _, f := range files {
		// The probe's canaries are left out, as from every surface.
		if f.Layout == volume.OffsetsCurrent && !inspect.IsCanary(f.Group) && gg.Coords()[f.Group].Found() {
			groups = append(groups, f.Group)
		}
	}
	groups = compactSorted(groups)
	if len(groups) == 0 {
		return nil, nil
	}
	vol, err := ReadVolume(l, nil, Selection{Names: groups})
	if err != nil {
		return nil, err
	}
	vol.Logs = boundsLogs(vol.Logs, bounds)
	described, err := cl.DescribeMany(ctx, groups, wire.DescribeOptions{Known: shownFilePartitions(vol.Files, groups), Gathered: gg})
	if described == nil && err != nil {
		return nil, err
	}
	held := wire.ListedHolds(holdWant(described), gg.Listings)
	out := make([]*inspect.GroupState, 0, len(described))
	var again []string
	for i := range described {
		gs := vol.LiveState(&described[i], HeldOf(held, described[i].Group), now)
		if hasIncident(gs, inspect.IncNotInFile) {
			again = append(again, gs.Group)
		}
		out = append(out, gs)
	}
	return rereadNotFiled(out, described, again, l, vol, held, now), nil
}

// rereadNotFiled rebuilds, from their files read again, the states of the
// groups whose file seemed to lack what their coordinator serves.
func rereadNotFiled(states []*inspect.GroupState, described []wire.GroupDescription, again []string, l volume.Layout, vol *VolumeRead, held map[string]bool, now time.Time) []*inspect.GroupState {
	if len(again) == 0 {
		return states
	}
	fresh, err := ReadVolume(l, nil, Selection{Names: again})
	if err != nil {
		return states
	}
	for i, gs := range states {
		if !slices.Contains(again, gs.Group) {
			continue
		}
		vol.Files[gs.Group] = fresh.Files[gs.Group]
		states[i] = vol.LiveState(&described[i], HeldOf(held, gs.Group), now)
	}
	return states
}

// holdWant is, per coordinator, the groups DescribeGroups showed without
// members (only the coordinator's listing tells whether it holds them).
func holdWant(described []wire.GroupDescription) map[int32][]string {
	want := map[int32][]string{}
	for _, d := range described {
		if d.Err == "" && d.Coordinator >= 0 && len(d.Members) == 0 {
			want[d.Coordinator] = append(want[d.Coordinator], d.Group)
		}
	}
	return want
}

// boundsLogs is a Logs answering first from the bounds already read.
func boundsLogs(lg *Logs, bounds []volume.LogBounds) *Logs {
	if lg == nil {
		return nil
	}
	for i := range bounds {
		b := &bounds[i]
		lg.r.Put(b)
		lg.seen[b] = true
	}
	return lg
}

func hasIncident(gs *inspect.GroupState, code string) bool {
	for i := range gs.Partitions {
		if gs.Partitions[i].Has(code) {
			return true
		}
	}
	return false
}

// ServedBehindAll asks the leaders for the log end of every partition
// whose segments were read (bounds, read before any broker was asked) and
// keeps the partitions served below them.
func ServedBehindAll(ctx context.Context, cl *wire.Client, bounds []volume.LogBounds, a *volume.Assignment) ([]inspect.ServedBehind, error) {
	if len(bounds) == 0 {
		return nil, nil
	}
	served, err := cl.ListLogOffsets(ctx, inspect.LogPartitions(bounds))
	if err != nil {
		return nil, err
	}
	return inspect.FindServedBehind(inspect.PairServedEnds(bounds, served), a), nil
}
