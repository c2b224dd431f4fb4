package observe

import (
	"context"
	"slices"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// MembersRound is one observation of the membership of groups: the
// groups the caller knows (its offset files) and those any broker lists,
// each described on its coordinator (DescribeGroups only: no offsets, no
// log ends). What 'watch --offsets' observes between file changes.
type MembersRound struct {
	Time time.Time
	// Samples by group; a group whose coordinator did not answer has a
	// sample with Err.
	Samples map[string]inspect.MemberSample
	// Err is set when the brokers could not be asked at all.
	Err string
}

// ObserveMembers describes the groups known (and, with listed, every
// group a broker lists) that match keep (nil: all) at now. names names
// the coordinators (nil: by node id).
func ObserveMembers(ctx context.Context, cl *wire.Client, a *volume.Assignment, known []string, listed bool, keep func(string) bool, now time.Time) MembersRound {
	r := MembersRound{Time: now, Samples: map[string]inspect.MemberSample{}}
	groups := slices.Clone(known)
	if listed {
		ls, err := cl.ListGroupsEveryBroker(ctx)
		if err != nil {
			r.Err = err.Error()
			return r
		}
		for _, b := range ls {
			for _, g := range b.Groups {
				groups = append(groups, g.Group)
			}
		}
	}
	groups = slices.DeleteFunc(groups, func(g string) bool { return keep != nil && !keep(g) || inspect.IsCanary(g) })
	slices.Sort(groups)
	groups = slices.Compact(groups)
	if len(groups) == 0 {
		return r
	}
	ds, err := cl.DescribeMany(ctx, groups, wire.DescribeOptions{NoOffsets: true})
	if err != nil && ds == nil {
		r.Err = err.Error()
		return r
	}
	names := inspect.NewNodeNamer(a)
	for _, d := range ds {
		r.Samples[d.Group] = inspect.MemberSampleOf(d.DescribedGroup, names.Name(d.Coordinator), now)
	}
	return r
}
