package observe

import (
	"context"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// LiveGroupWithMembers is the group as its coordinator describes it
// (plan assignment's live members), nil without brokers, when it cannot
// be described or has no members.
func LiveGroupWithMembers(ctx context.Context, cl *wire.Client, group string, g render.Notes) *wire.DescribedGroup {
	if cl == nil {
		return nil
	}
	cctx, cancel := cl.WithTimeout(ctx)
	defer cancel()
	coords, ds, err := cl.DescribeOnCoordinators(cctx, []string{group})
	switch {
	case err != nil:
		return nil
	case coords[group].Err != "":
		g.Warnf("group %s: FindCoordinator: %s", group, coords[group].Err)
		return nil
	case len(ds) == 1 && ds[0].Err == "" && len(ds[0].Members) > 0:
		return &ds[0]
	}
	return nil
}

// PartitionCounts is each topic's partition count and where it came
// from: the brokers' metadata, else assignment.json, else nothing known.
func PartitionCounts(ctx context.Context, cl *wire.Client, a *volume.Assignment, topics []string) (map[string]int32, string, error) {
	switch {
	case cl != nil:
		cctx, cancel := cl.WithTimeout(ctx)
		md, err := cl.Metadata(cctx, topics)
		cancel()
		if err != nil {
			return nil, "", err
		}
		return inspect.PartitionCountsFromMetadata(md, topics), "live: the brokers' metadata", nil
	case a != nil:
		return inspect.PartitionCountsFromAssignment(a, topics), "assignment.json partitions[]", nil
	}
	return nil, "", nil
}
