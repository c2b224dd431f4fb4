package observe

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// plan restart --follow: internal/watch follows assignment.json; each
// version is checked against the plan by inspect.FollowVersion (the
// one-version prediction from the version before it, and the order); the
// follower tells each event and, with brokers, waits for the moved groups
// to be Stable before saying it is safe to go on.

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// RestartFollowOptions are plan restart --follow's settings.
type RestartFollowOptions struct {
	KeepGoing     bool          // --keep-going: follow on after a deviation
	PollInterval  time.Duration // --poll-interval (0: the watch's default)
	SettleTimeout time.Duration // --settle-timeout (0: 60s)
	// Client checks that each step's groups settle (nil: offline).
	Client *wire.Client
	// Emit is told every event; Notes the watch's problems.
	Emit  func(inspect.FollowEvent)
	Notes render.Notes
}

// follower follows a restart and checks the settling of each step with
// the brokers (cl nil: offline).
type follower struct {
	o  RestartFollowOptions
	cl *wire.Client
	f  inspect.RestartFollow
}

// FollowRestart follows the real restart in the planned (or given) order
// until it completes, deviates (exit 3 unless KeepGoing), or the context
// ends it.
func FollowRestart(ctx context.Context, o RestartFollowOptions, in inspect.RestartInput, plan *inspect.RestartPlan, a *volume.Assignment, l volume.Layout) error {
	order, which := plan.Plan, "planned"
	if plan.Given != nil {
		order, which = *plan.Given, "given"
	}
	fl := &follower{o: o, cl: o.Client, f: inspect.NewRestartFollow(in, order.Order, a)}
	if fl.o.SettleTimeout <= 0 {
		fl.o.SettleTimeout = 60 * time.Second
	}
	wctx, wcancel := context.WithCancel(ctx)
	w := watch.Follow(wctx, watch.Options{Path: l.AssignmentPath(), PollInterval: o.PollInterval}, 256)
	defer func() { wcancel(); _ = w.Err() }()
	fl.emit(inspect.FollowEvent{Kind: "following", Version: a.AssignmentVersion, Epoch: a.ControllerEpoch, Controller: a.Controller,
		Message: fmt.Sprintf("following %s (v%d) for the %s order %s (%d group moves of groups with members predicted); restart %s first",
			l.AssignmentPath(), a.AssignmentVersion, which, strings.Join(order.Order, " → "), order.Score.Moves, order.Order[0]),
		Next: order.Order[0]})
	return fl.loop(ctx, w)
}

// loop takes the follower's events until the restart ends.
func (fl *follower) loop(ctx context.Context, w *watch.Follower) error {
	first := true
	for {
		select {
		case <-ctx.Done():
			return fl.stopped(ctx)
		case <-w.Done():
			if err := w.Err(); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return fl.stopped(ctx)
			}
			return fl.finish("the watch ended", false)
		case e := <-w.Events:
			if e.Version == nil {
				fl.o.Notes.Warnf("%s", e.Problem)
				continue
			}
			if first && fl.f.IsStart(e.Version.Assignment) {
				first = false
				continue // the version the plan was computed from
			}
			first = false
			if stop, err := fl.onVersion(ctx, e.Version); stop {
				return err
			}
		}
	}
}

func (fl *follower) stopped(ctx context.Context) error {
	return fl.finish(fmt.Sprintf("stopped following at step %d of %d (%v)", fl.f.Step+1, len(fl.f.Order), context.Cause(ctx)), false)
}

// onVersion checks one version against the plan and prints it; stop says
// the follow is over (err: how it ends).
func (fl *follower) onVersion(ctx context.Context, v *watch.Version) (stop bool, err error) {
	if last := fl.f.Last; last != nil && inspect.NewerThan(last, v.Assignment) {
		return fl.onBackwards(v.Assignment)
	}
	var out inspect.FollowOutcome
	fl.f, out = inspect.FollowVersion(fl.f, v.Assignment, v.Rewritten)
	fl.emit(out.Event)
	if !out.Event.AsPlanned && !fl.o.KeepGoing {
		return true, fl.finish("stopped at the first deviation (--keep-going follows on): re-plan with 'kaasctl plan restart' once the cluster is whole again", true)
	}
	if out.Waiting {
		fl.emit(inspect.FollowEvent{Kind: "waiting", Broker: out.Event.Broker, Message: fmt.Sprintf("    %s stopped as planned; %s (the next version should list it)", out.Event.Broker, fl.startWhen(out.Event))})
	}
	if out.Settle {
		fl.settleStep(ctx)
		if out.Complete {
			return true, fl.finish("the restart is complete", false)
		}
	}
	return false, nil
}

// onBackwards reports a version older than the last one followed (a
// stale controller, a restored file): kaas's brokers skip it, so it is
// neither followed nor taken as the state the next version is compared
// with, and it is a deviation (the plan predicted no such version).
func (fl *follower) onBackwards(a *volume.Assignment) (stop bool, err error) {
	last := fl.f.Last
	ev := inspect.FollowEvent{Kind: "version", Version: a.AssignmentVersion, Epoch: a.ControllerEpoch, Controller: a.Controller,
		Step: fl.f.Step + 1, Deviations: inspect.VersionWarnings("assignment.json", last, a, false),
		Message: fmt.Sprintf("v%d (epoch %d, controller %s): older than v%d (epoch %d), the last version followed — kaas's brokers skip it; still following from v%d",
			a.AssignmentVersion, a.ControllerEpoch, orNone(a.Controller), last.AssignmentVersion, last.ControllerEpoch, last.AssignmentVersion)}
	we, wb := fl.f.Expected()
	ev.Expected = strings.TrimSpace(we + " " + wb)
	ev.Next = ev.Expected
	fl.f.Deviations++
	fl.emit(ev)
	if !fl.o.KeepGoing {
		return true, fl.finish("stopped at the first deviation (--keep-going follows on): assignment.json went backwards; find who wrote it (kaasctl watch --journal keeps every version)", true)
	}
	return false, nil
}

// startWhen says when the stopped broker may start again: once the groups
// its stop moved are Stable on their new coordinator, and not before the
// generation's least time between stop and start.
func (fl *follower) startWhen(ev inspect.FollowEvent) string {
	r := fl.f.Rules.Restart
	var moved []string
	for _, mv := range ev.Moves {
		moved = append(moved, mv.Group)
	}
	least := ""
	if r.StopToStart > 0 {
		least = fmt.Sprintf(" and at least %s after the stop", r.StopToStart)
	}
	if len(moved) == 0 {
		return "start it again" + least
	}
	return fmt.Sprintf("start it again once %s %s Stable on the new coordinator for 2 s%s (%s)", strings.Join(moved, ", "),
		map[bool]string{true: "is", false: "are"}[len(moved) == 1], least, r.Why)
}

func (fl *follower) emit(e inspect.FollowEvent) {
	if e.Deviations == nil {
		e.Deviations = []string{}
	}
	if e.Moves == nil {
		e.Moves = []inspect.FollowedMove{}
	}
	if e.Notes == nil {
		e.Notes = []string{}
	}
	fl.o.Emit(e)
}

// settleStep says when it is safe to go on: with brokers, once the groups
// with members are Stable on the coordinator the version names; offline,
// what to check.
func (fl *follower) settleStep(ctx context.Context) {
	_, nextBroker := fl.f.Expected()
	next := "the restart is complete"
	if nextBroker != "" {
		next = "restart " + nextBroker + " next"
	}
	if fl.cl == nil {
		fl.emit(inspect.FollowEvent{Kind: "unsettled", Message: fmt.Sprintf("    wait until the groups with members are Stable again (kaasctl groups describe; give -b to have plan restart --follow check), then %s", next), Next: nextBroker})
		return
	}
	groups, want := fl.f.SettleTargets()
	deadline := time.Now().Add(fl.o.SettleTimeout)
	var pending []string
	for {
		pending = fl.unsettled(ctx, groups, want)
		if len(pending) == 0 {
			fl.emit(inspect.FollowEvent{Kind: "settled", Message: fmt.Sprintf("%d group(s) with members Stable on their coordinators: %s", len(groups), next), Next: nextBroker})
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
	fl.emit(inspect.FollowEvent{Kind: "unsettled", Message: fmt.Sprintf("    not settled after %v: %s; check them before you %s", fl.o.SettleTimeout, strings.Join(pending, "; "), next), Next: nextBroker})
}

// unsettled lists the groups not Stable on their coordinator.
func (fl *follower) unsettled(ctx context.Context, groups []string, want map[string]string) []string {
	cctx, cancel := fl.cl.WithTimeout(ctx)
	defer cancel()
	coords, described, err := fl.cl.DescribeOnCoordinators(cctx, groups)
	if err != nil {
		return []string{"FindCoordinator failed: " + err.Error()}
	}
	return inspect.UnsettledGroups(coords, described, inspect.NewNodeNamer(fl.f.Last), want)
}

func (fl *follower) finish(msg string, deviated bool) error {
	f := fl.f
	summary := fmt.Sprintf("%s; %d of %d broker(s) restarted, %s", msg, len(f.Done), len(f.Order), render.Plural(f.Deviations, "version deviated", "versions deviated"))
	fl.emit(inspect.FollowEvent{Kind: "done", Message: summary})
	if f.Deviations > 0 || deviated {
		return exit.ProblemsFound("the restart deviated from the plan")
	}
	if len(f.Done) < len(f.Order) {
		return fmt.Errorf("stopped following before the restart completed")
	}
	return nil
}

// RestartListings is what plan restart starts from on the brokers: every
// broker's ListGroups answer through wire's one group gathering, within the
// client's timeout; a broker that failed is warned about (and counted by
// the plan).
func RestartListings(ctx context.Context, cl *wire.Client, notes render.Notes) ([]wire.BrokerGroups, error) {
	cctx, cancel := cl.WithTimeout(ctx)
	defer cancel()
	gathered, err := cl.GatherGroups(cctx, wire.GroupRounds{})
	if err != nil {
		return nil, err
	}
	for _, ans := range gathered.Listings {
		if ans.Err != "" {
			notes.Warnf("%s", ans.Err)
		}
	}
	return gathered.Listings, nil
}
