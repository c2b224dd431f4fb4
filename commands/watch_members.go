package commands

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe/watchrun"
)

// watch --offsets with brokers also observes every group's membership
// (DescribeGroups on each coordinator, every --members-interval, in order
// with the file changes): it prints each generation change with its
// causes, CHURN entering and leaving, and who a rewind was likely by; with
// --journal it records them in DIR/events for 'groups timeline'.

const watchMembersCat = "Membership (--offsets with brokers)"

// watchMembersSpec is the membership flags.
type watchMembersSpec struct {
	interval, window time.Duration
	churn            churnSpec
}

// watchMembersFlags are the membership flags of watch --offsets, bound
// to s.
func watchMembersFlags(s *watchMembersSpec) []cli.Flag {
	return append([]cli.Flag{
		completion.DurationFlag(&s.interval, "members-interval", 5*time.Second, "with brokers, describe every group every `D` (members, coordinator, state) and print each generation change; 0: off", watchMembersCat),
		completion.DurationFlag(&s.window, "churn-window", 5*time.Minute, "count a group's generation changes over the last `D` for CHURN", watchMembersCat),
	}, churnFlags(&s.churn, watchMembersCat)...)
}

// check refuses a negative interval and a window that is not positive.
func (s watchMembersSpec) check() error {
	if s.interval < 0 || s.window <= 0 {
		return exit.UsageErrorf("--members-interval must not be negative and --churn-window must be positive")
	}
	return s.churn.check()
}

// watchMembers starts observing the membership when brokers are given
// (nil when not, or with --members-interval 0).
func watchMembers(ctx context.Context, g *Globals, w *watchrun.OffsetsWatch, l volume.Layout, o watchOptions) (*watchrun.MembersWatch, error) {
	cl, err := g.LiveClient(ctx)
	if err != nil || cl == nil {
		return nil, err
	}
	if o.members.interval == 0 {
		cl.Close()
		return nil, nil
	}
	win := o.members.churn.window(o.members.window, l.WithGeneration().Gen)
	m := watchrun.NewMembersWatch(ctx, w, cl, l, win, o.offsetJournal.EventJournal("watch", o.members.interval))
	g.Notef("membership: describing every group every %s (CHURN over %d generation changes in %s)", o.members.interval, o.members.churn.rebalances, o.members.window)
	return m, nil
}
