package commands

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// plan restart --follow: each version the controller writes during the
// real restart is compared with the one-version prediction from the
// version before it (inspect.PredictVersion, the plan's own model), and
// the broker that left or joined with the planned order.

// FollowEvent is one line of plan restart --follow (-o jsonl: one object
// per line).
type FollowEvent struct {
	Kind string `json:"kind"` // following, version, settled, unsettled, done, stopped
	// Version fields (kind "version").
	Version    int64          `json:"assignmentVersion,omitempty"`
	Epoch      int64          `json:"controllerEpoch,omitempty"`
	Controller string         `json:"controller,omitempty"`
	Step       int            `json:"step,omitempty"`
	Event      string         `json:"event,omitempty"` // stop, start, recompute, brokers-changed
	Broker     string         `json:"broker,omitempty"`
	Expected   string         `json:"expected,omitempty"`
	AsPlanned  bool           `json:"asPlanned"`
	Deviations []string       `json:"deviations"`
	Moves      []FollowedMove `json:"moves"`
	Notes      []string       `json:"notes"`
	Message    string         `json:"message"`
	Next       string         `json:"next,omitempty"`
}

// FollowedMove is a group's coordinator change as written, beside the
// prediction.
type FollowedMove struct {
	Group     string `json:"group"`
	From      string `json:"from"`
	To        string `json:"to"`
	Predicted string `json:"predicted"`
	AsPlanned bool   `json:"asPlanned"`
}

type follower struct {
	g         *Globals
	c         *cli.Context
	in        inspect.RestartInput
	order     []string
	groups    []string
	st        inspect.ClusterState
	cl        *wire.Client
	keepGoing bool
	settle    time.Duration

	done       map[string]bool
	down       string // the broker stopped and not yet started again
	step       int
	deviations int
	lastV      *volume.Assignment
	jsonl      bool
}

func followRestart(c *cli.Context, g *Globals, in inspect.RestartInput, plan *inspect.RestartPlan, a *volume.Assignment, l volume.Layout) error {
	order := plan.Plan
	which := "planned"
	if plan.Given != nil {
		order, which = *plan.Given, "given"
	}
	f := &follower{g: g, c: c, in: in, order: order.Order, keepGoing: c.Bool("keep-going"), done: map[string]bool{},
		settle: c.Duration("settle-timeout"), jsonl: g.Printer.Format == render.JSON || g.Printer.Format == render.JSONL}
	if f.settle <= 0 {
		f.settle = 60 * time.Second
	}
	if g.Printer.Format == render.YAML || g.Printer.Format == render.CSV {
		return exit.UsageErrorf("plan restart --follow prints a stream: -o table or -o jsonl")
	}
	f.st = inspect.ClusterState{Alive: slices.Clone(in.Brokers), Controller: in.Controller, Entries: maps.Clone(in.Entries),
		Loaded: map[string]bool{}, Members: map[string]bool{}}
	for _, grp := range in.Groups {
		f.groups = append(f.groups, grp.ID)
		f.st.Loaded[grp.ID], f.st.Members[grp.ID] = grp.Loaded, grp.Members
	}
	ctx := c.Context
	if d := c.Duration("follow-timeout"); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	if g.HasBrokers() {
		cl, err := g.Client(ctx)
		if err != nil {
			return err
		}
		defer cl.Close()
		f.cl = cl
	}
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	versions := make(chan watch.Version, 256)
	werr := make(chan error, 1)
	go func() {
		werr <- watch.Run(wctx, watch.Options{Path: l.AssignmentPath(), PollInterval: c.Duration("poll-interval"),
			OnVersion: func(v watch.Version) {
				select {
				case versions <- v:
				case <-wctx.Done():
				}
			},
			OnProblem: func(msg string, ok bool) { g.Warnf("%s", msg) }})
	}()
	f.emit(FollowEvent{Kind: "following", Version: a.AssignmentVersion, Epoch: a.ControllerEpoch, Controller: a.Controller,
		Message: fmt.Sprintf("following %s (v%d) for the %s order %s (%d group moves of groups with members predicted); restart %s first",
			l.AssignmentPath(), a.AssignmentVersion, which, strings.Join(f.order, " → "), order.Score.Moves, f.order[0]),
		Next: f.order[0]})
	f.lastV = a
	first := true
	for {
		select {
		case <-ctx.Done():
			return f.finish(fmt.Sprintf("stopped following at step %d of %d (%v)", f.step+1, len(f.order), context.Cause(ctx)), false)
		case err := <-werr:
			if err != nil {
				return err
			}
			return f.finish("the watch ended", false)
		case v := <-versions:
			if first {
				first = false
				if v.Assignment.ControllerEpoch == a.ControllerEpoch && v.Assignment.AssignmentVersion == a.AssignmentVersion {
					continue // the version the plan was computed from
				}
			}
			stop, err := f.onVersion(ctx, v)
			if err != nil || stop {
				return err
			}
		}
	}
}

func (f *follower) emit(e FollowEvent) {
	if e.Deviations == nil {
		e.Deviations = []string{}
	}
	if e.Moves == nil {
		e.Moves = []FollowedMove{}
	}
	if e.Notes == nil {
		e.Notes = []string{}
	}
	w := f.g.Printer.Out
	if f.jsonl {
		_ = render.WriteJSONL(w, []FollowEvent{e})
		return
	}
	p := f.g.Printer
	line := render.Clean(e.Message)
	switch {
	case len(e.Deviations) > 0:
		line = p.Paint(render.Red, "DEVIATION ") + line
	case e.Kind == "version" && e.AsPlanned:
		line = p.Paint(render.Green, "as planned ") + line
	case e.Kind == "settled":
		line = p.Paint(render.Green, "safe to go on ") + line
	}
	fmt.Fprintln(w, line)
	for _, d := range e.Deviations {
		fmt.Fprintln(w, "    deviation: "+render.Clean(d))
	}
	for _, m := range e.Moves {
		mark := "as predicted"
		if !m.AsPlanned {
			mark = "predicted " + orNone(m.Predicted)
		}
		fmt.Fprintf(w, "    %s  %s → %s  (%s)\n", render.Shorten(m.Group, 80), orNone(m.From), orNone(m.To), mark)
	}
	for _, n := range e.Notes {
		fmt.Fprintln(w, "    note: "+render.Clean(n))
	}
}

// expected is the event the order expects next.
func (f *follower) expected() (event, broker string) {
	if f.down != "" {
		return "start", f.down
	}
	for _, b := range f.order {
		if !f.done[b] {
			return "stop", b
		}
	}
	return "", ""
}

func (f *follower) onVersion(ctx context.Context, v watch.Version) (bool, error) {
	a := v.Assignment
	ev := FollowEvent{Kind: "version", Version: a.AssignmentVersion, Epoch: a.ControllerEpoch, Controller: a.Controller}
	if v.Rewritten {
		ev.Notes = append(ev.Notes, "the same epoch and version rewritten with other bytes (a manual edit, or two controllers)")
	}
	gap := f.lastV != nil && a.ControllerEpoch >= f.lastV.ControllerEpoch && a.AssignmentVersion > f.lastV.AssignmentVersion+1
	if gap {
		ev.Notes = append(ev.Notes, fmt.Sprintf("v%d–v%d were replaced before they could be read: the comparison covers them together", f.lastV.AssignmentVersion+1, a.AssignmentVersion-1))
	}
	f.lastV = a
	var alive []string
	for _, b := range a.Brokers {
		if b.Health == "alive" && !slices.Contains(alive, b.ID) {
			alive = append(alive, b.ID)
		}
	}
	slices.Sort(alive)
	var left, joined []string
	for _, b := range f.st.Alive {
		if !slices.Contains(alive, b) {
			left = append(left, b)
		}
	}
	for _, b := range alive {
		if !slices.Contains(f.st.Alive, b) {
			joined = append(joined, b)
		}
	}
	wantEvent, wantBroker := f.expected()
	ev.Expected = strings.TrimSpace(wantEvent + " " + wantBroker)
	switch {
	case len(left) == 1 && len(joined) == 0:
		ev.Event, ev.Broker = "stop", left[0]
	case len(joined) == 1 && len(left) == 0:
		ev.Event, ev.Broker = "start", joined[0]
	case len(left) == 0 && len(joined) == 0:
		ev.Event = "recompute"
	default:
		ev.Event = "brokers-changed"
	}
	entries := map[string]string{}
	for _, e := range a.ConsumerGroups {
		if _, dup := entries[e.GroupID]; !dup {
			entries[e.GroupID] = e.Broker
		}
	}
	before := f.st.Coordinators(f.groups)
	from := f.st
	if ev.Event == "recompute" && gap && wantEvent == "stop" {
		// The stop's version was replaced by the start's before it could
		// be read (a quick restart): predict both, compare the second.
		var down []string
		for _, b := range alive {
			if b != wantBroker {
				down = append(down, b)
			}
		}
		mid := inspect.PredictVersion(f.st, down, f.groups, f.in.Failover, f.in.Placement)
		from = f.st.Advance(f.groups, mid.Alive, mid.Controller, mid.Entries)
		ev.Event, ev.Broker = "restart", wantBroker
		ev.Notes = append(ev.Notes, fmt.Sprintf("read as %s's stop and start together (its stop version was not seen)", wantBroker))
	}
	pred := inspect.PredictVersion(from, alive, f.groups, f.in.Failover, f.in.Placement)
	actual := inspect.ClusterState{Alive: alive, Entries: entries}.Coordinators(f.groups)
	for _, g := range f.groups {
		if before[g] == actual[g] && pred.Coordinators[g] == actual[g] {
			continue
		}
		m := FollowedMove{Group: g, From: before[g], To: actual[g], Predicted: pred.Coordinators[g], AsPlanned: pred.Coordinators[g] == actual[g]}
		ev.Moves = append(ev.Moves, m)
		if !m.AsPlanned {
			if before[g] == actual[g] {
				ev.Deviations = append(ev.Deviations, fmt.Sprintf("%s stayed on %s; predicted to move to %s", g, orNone(actual[g]), orNone(pred.Coordinators[g])))
			} else {
				ev.Deviations = append(ev.Deviations, fmt.Sprintf("%s moved %s → %s; predicted %s", g, orNone(before[g]), orNone(actual[g]), orNone(pred.Coordinators[g])))
			}
		}
	}
	if a.Controller != pred.Controller {
		ev.Deviations = append(ev.Deviations, fmt.Sprintf("controller %s; predicted %s (the model expects the lowest alive broker to win the lease)", orNone(a.Controller), orNone(pred.Controller)))
	}
	ordered := (ev.Event == wantEvent || ev.Event == "restart") && ev.Broker == wantBroker
	switch {
	case ev.Event == "recompute":
		if len(ev.Deviations) > 0 {
			ev.Deviations = append([]string{"a version with the same brokers (a recompute for another reason: a topic change, a new controller term) moved groups"}, ev.Deviations...)
		} else {
			ev.Notes = append(ev.Notes, "a version with the same brokers and no group move (a recompute for another reason)")
		}
	case !ordered && wantEvent == "":
		ev.Deviations = append([]string{fmt.Sprintf("the restart is complete, yet %s", describeBrokerChange(left, joined))}, ev.Deviations...)
	case !ordered:
		ev.Deviations = append([]string{fmt.Sprintf("out of order: %s; the %s order expects %s %s next", describeBrokerChange(left, joined),
			"restart", wantEvent, wantBroker)}, ev.Deviations...)
	}
	// Advance to what was written, whatever the prediction said.
	f.st = from.Advance(f.groups, alive, a.Controller, entries)
	switch ev.Event {
	case "restart":
		f.done[ev.Broker] = true
		f.step++
	case "stop":
		if f.down == "" {
			f.down = ev.Broker
		}
	case "start":
		if ev.Broker == f.down {
			f.down = ""
		}
		f.done[ev.Broker] = true
		if ordered {
			f.step++
		}
	}
	ev.Step = f.step
	if ev.Event == "stop" && ordered {
		ev.Step = f.step + 1
	}
	ev.AsPlanned = len(ev.Deviations) == 0
	ev.Message = fmt.Sprintf("v%d (epoch %d, controller %s): %s — %s", a.AssignmentVersion, a.ControllerEpoch, orNone(a.Controller),
		describeEvent(ev), render.Plural(len(ev.Moves), "group moved", "groups moved"))
	if len(ev.Deviations) > 0 {
		f.deviations++
	}
	nextEvent, nextBroker := f.expected()
	ev.Next = strings.TrimSpace(nextEvent + " " + nextBroker)
	f.emit(ev)
	if len(ev.Deviations) > 0 && !f.keepGoing {
		return true, f.finish("stopped at the first deviation (--keep-going follows on): re-plan with 'kaasctl plan restart' once the cluster is whole again", true)
	}
	if ev.Event == "stop" && ordered {
		f.emit(FollowEvent{Kind: "waiting", Message: fmt.Sprintf("    %s stopped as planned; start it again (the next version should list it)", ev.Broker)})
	}
	if (ev.Event == "start" || ev.Event == "restart") && f.down == "" {
		f.settleStep(ctx, ev)
		if nextEvent == "" {
			return true, f.finish("the restart is complete", false)
		}
	}
	return false, nil
}

func describeBrokerChange(left, joined []string) string {
	var parts []string
	if len(left) > 0 {
		parts = append(parts, strings.Join(left, ",")+" left")
	}
	if len(joined) > 0 {
		parts = append(parts, strings.Join(joined, ",")+" joined")
	}
	if len(parts) == 0 {
		return "no broker changed"
	}
	return strings.Join(parts, " and ")
}

func describeEvent(ev FollowEvent) string {
	switch ev.Event {
	case "stop":
		return ev.Broker + " left"
	case "start":
		return ev.Broker + " rejoined"
	case "restart":
		return ev.Broker + " left and rejoined"
	case "recompute":
		return "same brokers"
	}
	return "several brokers changed"
}

// settleStep says when it is safe to go on: with brokers, once the groups
// with members that moved in this step are Stable on the coordinator the
// version names; offline, what to check.
func (f *follower) settleStep(ctx context.Context, ev FollowEvent) {
	nextEvent, nextBroker := f.expected()
	next := "the restart is complete"
	if nextEvent != "" {
		next = "restart " + nextBroker + " next"
	}
	var groups []string
	for _, g := range f.groups {
		if f.st.Members[g] {
			groups = append(groups, g)
		}
	}
	if f.cl == nil {
		f.emit(FollowEvent{Kind: "unsettled", Message: fmt.Sprintf("    wait until the groups with members are Stable again (kaasctl groups describe; give -b to have plan restart --follow check), then %s", next), Next: nextBroker})
		return
	}
	want := f.st.Coordinators(groups)
	deadline := time.Now().Add(f.settle)
	var pending []string
	for {
		pending = f.unsettled(ctx, groups, want)
		if len(pending) == 0 {
			f.emit(FollowEvent{Kind: "settled", Message: fmt.Sprintf("%d group(s) with members Stable on their coordinators: %s", len(groups), next), Next: nextBroker})
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	f.emit(FollowEvent{Kind: "unsettled", Message: fmt.Sprintf("    not settled after %v: %s; check them before you %s", f.settle, strings.Join(pending, "; "), next), Next: nextBroker})
}

// unsettled lists the groups not Stable on their coordinator.
func (f *follower) unsettled(ctx context.Context, groups []string, want map[string]string) []string {
	cctx, cancel := f.cl.WithTimeout(ctx)
	defer cancel()
	coords, err := f.cl.FindCoordinators(cctx, groups, false)
	if err != nil {
		return []string{"FindCoordinator failed: " + err.Error()}
	}
	names := inspect.NewNodeNamer(f.lastV)
	var out []string
	for _, d := range f.cl.DescribeGroups(cctx, groups, coords) {
		co := coords[d.Group]
		switch {
		case co.Err != "":
			out = append(out, d.Group+": "+co.Err)
		case names.Name(co.NodeID) != want[d.Group]:
			out = append(out, fmt.Sprintf("%s: FindCoordinator says %s, the version says %s", d.Group, names.Name(co.NodeID), orNone(want[d.Group])))
		case d.Err != "":
			out = append(out, d.Group+": "+d.Err)
		case d.State != "Stable":
			out = append(out, d.Group+" is "+d.State)
		}
	}
	return out
}

func (f *follower) finish(msg string, deviated bool) error {
	summary := fmt.Sprintf("%s; %d of %d broker(s) restarted, %s", msg, len(f.done), len(f.order), render.Plural(f.deviations, "version deviated", "versions deviated"))
	f.emit(FollowEvent{Kind: "done", Message: summary})
	if f.deviations > 0 || deviated {
		return exit.ProblemsFound("the restart deviated from the plan")
	}
	if len(f.done) < len(f.order) {
		return fmt.Errorf("stopped following before the restart completed")
	}
	return nil
}
