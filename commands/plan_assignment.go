package commands

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

func init() {
	registerSub("plan", planUsage, func() *cli.Command {
		return &cli.Command{
			Name:      "assignment",
			Usage:     "the partitions each member of a group owns now and after members join or leave, and which move",
			ArgsUsage: "GROUP",
			UsageText: "kaasctl plan assignment GROUP [-b BROKERS] [--add N] [--remove MEMBER]... [--assignor NAME] [-o json]\n" +
				"kaasctl plan assignment GROUP --members N [--add N] [--data-dir DIR]     (a hypothetical group of N members)",
			Description: "The members, their subscriptions and what they own now come from the live group when there is\n" +
				"one (-b: DescribeGroups on its coordinator; kaas leaves member metadata empty, and then the\n" +
				"subscriptions come from the volume); else from --members N hypothetical members subscribed to\n" +
				"the topics the group has committed offsets for on the volume. Partition counts come from the\n" +
				"brokers' metadata (-b) or assignment.json. The output says which source each came from.\n\n" +
				"The range, roundrobin, sticky and cooperative-sticky answers are computed by franz-go's own\n" +
				"group balancers (the code a franz-go group leader runs), fed the join metadata each member\n" +
				"sends (its subscription and the partitions it owns). cooperative-sticky takes two rebalances:\n" +
				"the partitions that change owner are revoked first (listed) and assigned in the second.\n" +
				"minikafka is the textbook round-robin (members, topics and partitions sorted; one cursor shared\n" +
				"across topics, advancing over the members subscribed to each topic). Where a Java client's\n" +
				"assignor differs, the output says so.\n\n" +
				"Members are balanced in the order the leader sorts them: group.instance.id first, then member id.\n" +
				"A new member's id is chosen by the broker when it joins, so where it sorts is not known in\n" +
				"advance: --new-member NAME names the added members (a static member's group.instance.id)\n" +
				"instead of new-1, new-2, ...\n\n" +
				"Examples:\n" +
				"  kaasctl plan assignment orders-app -b kaas-0:9092 --add 1            one more consumer\n" +
				"  kaasctl plan assignment orders-app -b kaas-0:9092 --remove consumer-3 --assignor range\n" +
				"  kaasctl plan assignment orders-app --data-dir /data --members 4 --add 2 --assignor minikafka",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "members", Usage: "the group as N hypothetical members (member-1..member-N) instead of the live members"},
				&cli.IntFlag{Name: "add", Usage: "members that join"},
				&cli.StringSliceFlag{Name: "new-member", Usage: "name of a member that joins (repeatable; a static member's group.instance.id); implies --add"},
				&cli.StringSliceFlag{Name: "remove", Usage: "a member that leaves: its member id, group.instance.id, client id or (hypothetical) member-N (repeatable)"},
				&cli.StringFlag{Name: "assignor", Usage: "range, roundrobin, sticky, cooperative-sticky or minikafka (default: the live group's protocol, else cooperative-sticky, franz-go's default)"},
				&cli.StringSliceFlag{Name: "topic", Usage: "subscription topics of hypothetical members (default: the topics the group committed on the volume)"},
			},
			Action: planAssignment,
		}
	})
}

// PlanAssignmentView is plan assignment's -o json document.
type PlanAssignmentView struct {
	Group        string                  `json:"group"`
	Assignor     string                  `json:"assignor"`
	AssignorNote string                  `json:"assignorNote"`
	Sources      planAssignSources       `json:"sources"`
	Partitions   map[string]int32        `json:"partitions"`
	Members      []PlanAssignMember      `json:"members"`
	Moves        []inspect.PartitionMove `json:"moves"`
	Revoked      []inspect.PartitionMove `json:"revokedFirst"`
	Rebalances   int                     `json:"rebalances"`
	// Alternatives: every answer franz-go's sticky engine gave over
	// repeated runs when its ties fall by Go map order (the leader's
	// real answer is one of them); empty when the answer is unique.
	Alternatives []inspect.AlternativeAssignment `json:"alternatives"`
	Notes        []string                        `json:"notes"`
}

type planAssignSources struct {
	Members       string `json:"members"`
	Subscriptions string `json:"subscriptions"`
	Partitions    string `json:"partitions"`
	Now           string `json:"now"`
}

// PlanAssignMember is one member now and after.
type PlanAssignMember struct {
	MemberID     string             `json:"memberId"`
	InstanceID   string             `json:"instanceId,omitempty"`
	ClientID     string             `json:"clientId,omitempty"`
	Status       string             `json:"status"` // stays, joins, leaves
	Subscription []string           `json:"subscription"`
	Now          map[string][]int32 `json:"now"`
	After        map[string][]int32 `json:"after"`
	Gained       int                `json:"gained"`
	Lost         int                `json:"lost"`
}

func planAssignment(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.Args().Len() != 1 {
		return exit.UsageErrorf("plan assignment takes one GROUP (got %d arguments)", c.Args().Len())
	}
	group := c.Args().First()
	if c.Int("members") < 0 || c.Int("add") < 0 {
		return exit.UsageErrorf("--members and --add take a count ≥ 0")
	}
	ctx := c.Context
	v := &PlanAssignmentView{Group: group, Partitions: map[string]int32{}, Notes: []string{}, Members: []PlanAssignMember{},
		Moves: []inspect.PartitionMove{}, Revoked: []inspect.PartitionMove{}}

	// The volume: committed topics and partition counts.
	var committed []string
	var a *volume.Assignment
	if g.HasVolume() {
		l, err := g.Layout()
		if err != nil {
			return err
		}
		if p, err := repair.GroupFilePath(l.WithGeneration(), group); err == nil {
			if of, fs, err := volume.ReadOffsetFile(p); err == nil {
				g.WarnFindings(fs)
				for _, e := range of.Entries {
					if !slices.Contains(committed, e.Topic) {
						committed = append(committed, e.Topic)
					}
				}
			}
		}
		if as, fs, err := volume.ReadAssignment(l.AssignmentPath()); err == nil {
			g.WarnFindings(fs)
			a = as
		}
	}
	var live *wire.DescribedGroup
	var cl *wire.Client
	if g.HasBrokers() {
		if cl, err = g.Client(ctx); err != nil {
			return err
		}
		defer cl.Close()
		cctx, cancel := cl.WithTimeout(ctx)
		coords, err := cl.FindCoordinators(cctx, []string{group}, false)
		if err == nil && coords[group].Err == "" {
			ds := cl.DescribeGroups(cctx, []string{group}, coords)
			if len(ds) == 1 && ds[0].Err == "" && len(ds[0].Members) > 0 {
				live = &ds[0]
			}
		} else if err == nil {
			g.Warnf("group %s: FindCoordinator: %s", group, coords[group].Err)
		}
		cancel()
	}

	assignor := strings.ToLower(c.String("assignor"))
	if assignor == "" {
		assignor = "cooperative-sticky"
		if live != nil && slices.Contains(inspect.Assignors, live.Protocol) {
			assignor = live.Protocol
			v.Notes = append(v.Notes, "assignor "+assignor+": the live group's protocol")
		} else {
			v.Notes = append(v.Notes, "assignor cooperative-sticky: franz-go's default (give --assignor)")
		}
	} else if !slices.Contains(inspect.Assignors, assignor) {
		return exit.UsageErrorf("--assignor %q: choose %s", c.String("assignor"), strings.Join(inspect.Assignors, ", "))
	} else if live != nil && live.Protocol != "" && live.Protocol != assignor {
		v.Notes = append(v.Notes, fmt.Sprintf("the live group uses %s; computed with --assignor %s", live.Protocol, assignor))
	}
	v.Assignor, v.AssignorNote = assignor, inspect.AssignorNotes[assignor]

	// Members now.
	topicsFlag := splitList(c.StringSlice("topic"))
	defaultTopics := committed
	subSource := "the topics the group committed offsets for on the volume"
	if len(topicsFlag) > 0 {
		defaultTopics, subSource = topicsFlag, "--topic"
	}
	var members []inspect.AssignMember
	clientIDs := map[string]string{}
	nowKnown := false
	switch {
	case c.Int("members") > 0:
		for i := 1; i <= c.Int("members"); i++ {
			members = append(members, inspect.AssignMember{ID: fmt.Sprintf("member-%d", i), Topics: slices.Clone(defaultTopics)})
		}
		v.Sources.Members = fmt.Sprintf("--members %d (hypothetical member-1..member-%d)", c.Int("members"), c.Int("members"))
		v.Sources.Subscriptions = subSource
	case live != nil:
		reported := 0
		for _, m := range live.Members {
			am := inspect.AssignMember{ID: m.MemberID, InstanceID: m.InstanceID, Owned: map[string][]int32{}}
			clientIDs[m.MemberID] = m.ClientID
			if m.MetadataReported && m.MetadataErr == "" && len(m.Subscription) > 0 {
				am.Topics = m.Subscription
				reported++
			} else {
				am.Topics = slices.Clone(defaultTopics)
			}
			if m.AssignmentReported && m.AssignmentErr == "" {
				for _, at := range m.Assignment {
					am.Owned[at.Topic] = append(am.Owned[at.Topic], at.Partitions...)
				}
			}
			members = append(members, am)
		}
		nowKnown = true
		for _, m := range live.Members {
			if !m.AssignmentReported || m.AssignmentErr != "" {
				nowKnown = false
			}
		}
		v.Sources.Members = fmt.Sprintf("live: DescribeGroups on the coordinator (%s, %s, %d members)", live.State, orNone(live.Protocol), len(live.Members))
		switch reported {
		case len(live.Members):
			v.Sources.Subscriptions = "live: the members' metadata"
		case 0:
			v.Sources.Subscriptions = "the broker did not report member metadata: " + subSource
		default:
			v.Sources.Subscriptions = fmt.Sprintf("live metadata for %d member(s); %s for the rest", reported, subSource)
		}
	default:
		if g.HasBrokers() {
			return exit.UsageErrorf("group %s has no live members: give --members N to plan a group of N members", group)
		}
		return exit.UsageErrorf("no live group (give -b BROKERS) and no --members N: nothing to plan for %s", group)
	}
	var subscribed []string
	for _, m := range members {
		for _, t := range m.Topics {
			if !slices.Contains(subscribed, t) {
				subscribed = append(subscribed, t)
			}
		}
	}
	slices.Sort(subscribed)
	if len(subscribed) == 0 {
		return exit.UsageErrorf("no subscription known for %s: the group has no committed offsets on the volume; give --topic", group)
	}

	// Partition counts.
	if cl != nil {
		cctx, cancel := cl.WithTimeout(ctx)
		md, err := cl.Metadata(cctx, subscribed)
		cancel()
		if err != nil {
			return err
		}
		for _, t := range subscribed {
			if tm := md.Topics[t]; tm != nil && tm.Err == "" {
				v.Partitions[t] = int32(len(tm.Partitions))
			}
		}
		v.Sources.Partitions = "live: the brokers' metadata"
	} else if a != nil {
		for _, p := range a.Partitions {
			if slices.Contains(subscribed, p.Topic) {
				v.Partitions[p.Topic] = max(v.Partitions[p.Topic], p.Partition+1)
			}
		}
		v.Sources.Partitions = "assignment.json partitions[]"
	}
	for _, t := range subscribed {
		if _, ok := v.Partitions[t]; !ok {
			v.Notes = append(v.Notes, "topic "+t+": partition count unknown (not in the "+strings.TrimPrefix(v.Sources.Partitions, "live: ")+"); left out")
		}
	}

	// Now.
	var now inspect.Assignment
	if nowKnown {
		now = inspect.Assignment{}
		for _, m := range members {
			now[m.ID] = m.Owned
		}
		v.Sources.Now = "live: the members' current assignment"
	} else {
		res, err := inspect.Balance(assignor, members, v.Partitions, 1)
		if err != nil {
			return err
		}
		now = res.Assignment
		v.Sources.Now = "computed: what the assignor gives these members from scratch"
		if live != nil {
			v.Sources.Now += " (the broker did not report the members' assignment)"
		}
		for i := range members {
			members[i].Owned = now[members[i].ID]
		}
	}

	// After.
	status := map[string]string{}
	var after []inspect.AssignMember
	removed := map[string]bool{}
	for _, r := range splitList(c.StringSlice("remove")) {
		found := false
		for _, m := range members {
			if m.ID == r || (m.InstanceID != "" && m.InstanceID == r) || clientIDs[m.ID] == r {
				removed[m.ID], found = true, true
			}
		}
		if !found {
			return exit.UsageErrorf("--remove %s: no such member (members: %s)", r, strings.Join(memberIDs(members), ", "))
		}
	}
	for _, m := range members {
		if removed[m.ID] {
			status[m.ID] = "leaves"
			continue
		}
		status[m.ID] = "stays"
		m.Owned = inspect.RejoinOwned(assignor, m.Owned)
		after = append(after, m)
	}
	newNames := splitList(c.StringSlice("new-member"))
	add := max(c.Int("add"), len(newNames))
	for i := 0; i < add; i++ {
		name := fmt.Sprintf("new-%d", i+1)
		nm := inspect.AssignMember{ID: name, Topics: slices.Clone(defaultTopics), Owned: map[string][]int32{}}
		if i < len(newNames) {
			nm.ID, nm.InstanceID = newNames[i], newNames[i]
		}
		if len(nm.Topics) == 0 {
			nm.Topics = slices.Clone(subscribed)
		}
		if status[nm.ID] != "" {
			return exit.UsageErrorf("--new-member %s: a member of that name exists", nm.ID)
		}
		status[nm.ID] = "joins"
		after = append(after, nm)
	}
	if add > 0 && len(newNames) == 0 {
		v.Notes = append(v.Notes, "new members are named new-1…: a real one's member id is chosen by the broker and decides where it sorts (give --new-member NAME for a static member)")
	}
	var res inspect.BalanceResult
	if len(after) > 0 {
		if res, err = inspect.Balance(assignor, after, v.Partitions, 2); err != nil {
			return err
		}
	} else {
		res = inspect.BalanceResult{Assignment: inspect.Assignment{}, Rounds: 1}
		v.Notes = append(v.Notes, "no member is left: every partition is unassigned")
	}
	v.Rebalances = res.Rounds
	v.Alternatives = res.Alternatives
	if v.Alternatives == nil {
		v.Alternatives = []inspect.AlternativeAssignment{}
	} else {
		v.Notes = append(v.Notes, fmt.Sprintf("franz-go's %s engine breaks ties here by Go map order: over %d runs it gave %d different answers; shown is the most frequent (%.0f%%), the others are in -o json's alternatives",
			assignor, inspect.BalanceTries, len(v.Alternatives), 100*v.Alternatives[0].Share))
	}
	if res.Revoked != nil {
		v.Revoked = res.Revoked
	}
	v.Moves = inspect.AssignmentMoves(now, res.Assignment)
	if v.Moves == nil {
		v.Moves = []inspect.PartitionMove{}
	}
	all := slices.Clone(members)
	for _, m := range after {
		if status[m.ID] == "joins" {
			all = append(all, m)
		}
	}
	for _, m := range all {
		pm := PlanAssignMember{MemberID: m.ID, InstanceID: m.InstanceID, ClientID: clientIDs[m.ID], Status: status[m.ID],
			Subscription: m.Topics, Now: orEmpty(now[m.ID]), After: orEmpty(res.Assignment[m.ID])}
		for _, mv := range v.Moves {
			if mv.To == m.ID {
				pm.Gained++
			}
			if mv.From == m.ID {
				pm.Lost++
			}
		}
		if pm.Subscription == nil {
			pm.Subscription = []string{}
		}
		v.Members = append(v.Members, pm)
	}

	t := render.NewTable("MEMBER", "STATUS", "NOW", "AFTER", "GAINED", "LOST", "INSTANCE+", "CLIENT+", "SUBSCRIPTION+")
	for _, m := range v.Members {
		t.Add(m.MemberID, m.Status, partsText(m.Now), partsText(m.After), strconv.Itoa(m.Gained), strconv.Itoa(m.Lost), m.InstanceID, m.ClientID, strings.Join(m.Subscription, ","))
	}
	return g.Printer.Print(render.Output{Data: v, Items: v.Members, Table: t, Human: func(p *render.Printer) error {
		w := p.Out
		fmt.Fprintf(w, "%s  %s · assignor %s · %s\n", p.Paint(render.Bold, "plan assignment"), render.Shorten(group, 80), assignor, render.Plural(v.Rebalances, "rebalance", "rebalances"))
		fmt.Fprintf(w, "members        %s\n", v.Sources.Members)
		fmt.Fprintf(w, "subscriptions  %s\n", v.Sources.Subscriptions)
		fmt.Fprintf(w, "partitions     %s: %s\n", orNone(v.Sources.Partitions), countsText(v.Partitions))
		fmt.Fprintf(w, "now            %s\n", v.Sources.Now)
		fmt.Fprintf(w, "assignor       %s\n", v.AssignorNote)
		for _, n := range v.Notes {
			fmt.Fprintf(w, "note           %s\n", n)
		}
		fmt.Fprintln(w)
		if err := p.Table(t); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s\n", p.Paint(render.Bold, render.Plural(len(v.Moves), "partition moves (its consumption pauses while it changes owner)", "partitions move (their consumption pauses while they change owner)")))
		for _, mv := range v.Moves {
			fmt.Fprintf(w, "  %s/%d  %s → %s\n", render.Shorten(mv.Topic, 80), mv.Partition, orNone(mv.From), orNone(mv.To))
		}
		if len(v.Revoked) > 0 {
			fmt.Fprintf(w, "\n%s\n", p.Paint(render.Bold, "revoked by the first (cooperative) rebalance, assigned by the second"))
			for _, mv := range v.Revoked {
				fmt.Fprintf(w, "  %s/%d  from %s\n", render.Shorten(mv.Topic, 80), mv.Partition, orNone(mv.From))
			}
		}
		return nil
	}})
}

func memberIDs(ms []inspect.AssignMember) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
		if m.InstanceID != "" {
			out[i] += " (" + m.InstanceID + ")"
		}
	}
	return out
}

func orEmpty(m map[string][]int32) map[string][]int32 {
	if m == nil {
		return map[string][]int32{}
	}
	return m
}

func partsText(m map[string][]int32) string {
	if len(m) == 0 {
		return "(none)"
	}
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(m)) {
		ps := make([]string, len(m[t]))
		for i, p := range m[t] {
			ps[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, t+": "+strings.Join(ps, ","))
	}
	return strings.Join(parts, "; ")
}

func countsText(m map[string]int32) string {
	if len(m) == 0 {
		return "(none)"
	}
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", t, m[t]))
	}
	return strings.Join(parts, ", ")
}
