package commands

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

func init() {
	register(Descriptor{
		Path:  "plan assignment",
		Usage: "the partitions each member of a group owns now and after members join or leave, and which move",
		Docs: []FormatDoc{
			{Title: "plan assignment", Doc: views.PlanAssignmentView{}, JSONL: "each member (members[])", Rank: 160},
		},
		Tool: &MCPTool{Name: "plan_assignment", Title: "Plan a group's assignment", Input: mcpserver.PlanAssignmentInput{},
			Description: "Which member would own which partition with the group's assignor, for the live members or hypothetical ones."},
		Args:  "GROUP",
		Build: leaf(planAssignmentFlags, checkPlanAssignment, runPlanAssignment),
	})
}

// planAssignmentFlags are plan assignment's flags, bound to o.
func planAssignmentFlags(o *planAssignmentOptions) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "members", Usage: "alone: the live group scaled to `N` members (who joins or leaves is planned); with --add/--remove/--new-member: a hypothetical group of N members (member-1..member-N) instead of the live one", Destination: &o.Members},
		&cli.IntFlag{Name: "add", Usage: "members that join", Destination: &o.Add},
		&cli.StringSliceFlag{Name: "new-member", Usage: "name of a member that joins (repeatable; a static member's group.instance.id); implies --add"},
		&cli.StringSliceFlag{Name: "remove", Usage: "a member that leaves: its member id, group.instance.id, client id or (hypothetical) member-N (repeatable)"},
		&cli.StringFlag{Name: "assignor", Usage: "range, roundrobin, sticky, cooperative-sticky or minikafka (default: the live group's protocol, else cooperative-sticky, franz-go's default)", Destination: &o.Assignor},
		&cli.StringSliceFlag{Name: "topic", Usage: "subscription topics of hypothetical members (default: the topics the group committed on the volume)"},
	}
}

// planAssignmentOptions is 'plan assignment' after flag parsing.
type planAssignmentOptions struct {
	Group      string
	Members    int      // --members: N hypothetical members
	Add        int      // --add
	NewMembers []string // --new-member
	Remove     []string // --remove
	Assignor   string   // --assignor, lower case and one of inspect.Assignors; "" for the default
	Topics     []string // --topic
}

// checkPlanAssignment reads the GROUP argument and the member lists and
// checks the counts and the assignor.
func checkPlanAssignment(c *cli.Context, _ *Globals, o *planAssignmentOptions) error {
	if c.Args().Len() != 1 {
		return exit.UsageErrorf("plan assignment takes one GROUP (got %d arguments)", c.Args().Len())
	}
	o.Group, o.Assignor = c.Args().First(), strings.ToLower(o.Assignor)
	o.NewMembers, o.Remove, o.Topics = splitList(c.StringSlice("new-member")), splitList(c.StringSlice("remove")), splitList(c.StringSlice("topic"))
	if o.Members < 0 || o.Add < 0 {
		return exit.UsageErrorf("--members and --add take a count ≥ 0")
	}
	if err := inspect.CheckMemberCounts(inspect.AssignPlanInput{Members: o.Members, Add: o.Add, NewMembers: o.NewMembers}, 0); err != nil {
		return assignInputError(err)
	}
	if o.Assignor != "" && !slices.Contains(inspect.Assignors, o.Assignor) {
		return exit.UsageErrorf("--assignor %q: choose %s", c.String("assignor"), strings.Join(inspect.Assignors, ", "))
	}
	return nil
}

// runPlanAssignment reads the group (the volume, the live group), plans
// with inspect and prints the plan.
func runPlanAssignment(ctx context.Context, g *Globals, o planAssignmentOptions) error {
	committed, a, err := readAssignVolume(g, o.Group)
	if err != nil {
		return err
	}
	var cl *wire.Client
	if g.HasBrokers() {
		if cl, err = g.Client(ctx); err != nil {
			return err
		}
		defer cl.Close()
	}
	live := observe.LiveGroupWithMembers(ctx, cl, o.Group, g)
	planner, err := inspect.StartAssignPlan(inspect.AssignPlanInput{Group: o.Group, Assignor: o.Assignor, Members: o.Members, Add: o.Add,
		NewMembers: o.NewMembers, Remove: o.Remove, Topics: o.Topics, Committed: committed, Live: live, Brokers: g.HasBrokers()})
	if err != nil {
		return assignInputError(err)
	}
	counts, source, err := observe.PartitionCounts(ctx, cl, a, planner.Subscribed())
	if err != nil {
		return err
	}
	v, err := planner.Plan(counts, source)
	if err != nil {
		return assignInputError(err)
	}
	return g.Printer.Print(views.PlanAssignmentOutput(v))
}

// assignInputError makes a plan that cannot be made from what was given a
// usage error.
func assignInputError(err error) error {
	var ie *inspect.AssignInputError
	if errors.As(err, &ie) {
		return exit.UsageErrorf("%s", ie.Msg)
	}
	return err
}

// readAssignVolume reads the topics the group committed offsets for and
// assignment.json, when a volume is given (unreadable files are left out:
// the plan says where its inputs came from); an unresolvable volume is an
// error.
func readAssignVolume(g *Globals, group string) (committed []string, a *volume.Assignment, err error) {
	if !g.HasVolume() {
		return nil, nil, nil
	}
	l, err := g.Layout()
	if err != nil {
		return nil, nil, err
	}
	gf, err := repair.ReadGroupFile(l, group)
	switch {
	case err != nil:
		g.Warnf("the topics the group committed on the volume are unknown: %v", err)
	case gf.File != nil:
		g.WarnFindings(gf.Findings)
		for _, e := range gf.File.Entries {
			if !slices.Contains(committed, e.Topic) {
				committed = append(committed, e.Topic)
			}
		}
	}
	if as, fs, err := volume.ReadAssignment(l.AssignmentPath()); err == nil {
		g.WarnFindings(fs)
		a = as
	}
	return committed, a, nil
}
