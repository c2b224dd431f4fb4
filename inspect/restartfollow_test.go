package inspect

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// version is the assignment a controller writes: alive brokers, the
// controller and the explicit entries.
func version(epoch, v int64, controller string, alive []string, entries map[string]string) *volume.Assignment {
	a := &volume.Assignment{ControllerEpoch: epoch, AssignmentVersion: v, Controller: controller}
	for _, b := range alive {
		a.Brokers = append(a.Brokers, volume.BrokerEntry{ID: b, Health: "alive"})
	}
	for _, g := range slices.Sorted(maps.Keys(entries)) {
		a.ConsumerGroups = append(a.ConsumerGroups, volume.GroupEntry{GroupID: g, Broker: entries[g]})
	}
	return a
}

// predicted is the version the model predicts from f's state when alive
// becomes alive (what a controller following kaas's rules writes).
func predicted(f RestartFollow, v int64, alive []string) *volume.Assignment {
	p := PredictVersion(f.State, alive, f.Groups, f.Failover, f.Placement)
	return version(f.Last.ControllerEpoch, v, p.Controller, p.Alive, p.Entries)
}

func followFixture() RestartFollow {
	in := RestartInput{Brokers: []string{"kaas-0", "kaas-1", "kaas-2"}, Controller: "kaas-0", Epoch: 1, Version: 5,
		Entries: map[string]string{"orders": "kaas-1", "billing": "kaas-2"}, Failover: FailoverReload, Placement: "rendezvous",
		Groups: []RestartGroup{{ID: "orders", Loaded: true, Members: true}, {ID: "billing", Loaded: true, Members: true}, {ID: "idle"}}}
	return NewRestartFollow(in, []string{"kaas-2", "kaas-1", "kaas-0"}, version(1, 5, "kaas-0", in.Brokers, in.Entries))
}

var all3 = []string{"kaas-0", "kaas-1", "kaas-2"}

func TestFollowVersion(t *testing.T) {
	t.Parallel()
	type check func(t *testing.T, f RestartFollow, out FollowOutcome)
	deviates := func(substr string) check {
		return func(t *testing.T, f RestartFollow, out FollowOutcome) {
			if out.Event.AsPlanned || !slices.ContainsFunc(out.Event.Deviations, func(d string) bool { return strings.Contains(d, substr) }) {
				t.Errorf("want a deviation %q: %+v", substr, out.Event)
			}
			if f.Deviations != 1 {
				t.Errorf("deviations counted %d", f.Deviations)
			}
		}
	}
	for _, tc := range []struct {
		name string
		// before: the versions read before the one checked.
		before func(f RestartFollow) RestartFollow
		write  func(f RestartFollow) (*volume.Assignment, bool)
		event  string
		broker string
		step   int
		next   string
		check  check
	}{
		{name: "the planned stop", write: func(f RestartFollow) (*volume.Assignment, bool) {
			return predicted(f, 6, []string{"kaas-0", "kaas-1"}), false
		}, event: "stop", broker: "kaas-2", step: 1, next: "start kaas-2", check: func(t *testing.T, f RestartFollow, out FollowOutcome) {
			if !out.Event.AsPlanned || !out.Waiting || out.Settle || f.Down != "kaas-2" {
				t.Errorf("%+v down %q", out, f.Down)
			}
			// billing's coordinator stopped: it moves as predicted.
			if len(out.Event.Moves) != 1 || out.Event.Moves[0].Group != "billing" || !out.Event.Moves[0].AsPlanned {
				t.Errorf("moves %+v", out.Event.Moves)
			}
		}},
		{name: "the planned start", before: stopped("kaas-2"), write: func(f RestartFollow) (*volume.Assignment, bool) {
			return predicted(f, 7, all3), false
		}, event: "start", broker: "kaas-2", step: 1, next: "stop kaas-1", check: func(t *testing.T, f RestartFollow, out FollowOutcome) {
			if !out.Event.AsPlanned || !out.Settle || out.Complete || !f.Done["kaas-2"] || f.Down != "" {
				t.Errorf("%+v", out)
			}
		}},
		{name: "out of order", write: func(f RestartFollow) (*volume.Assignment, bool) {
			return predicted(f, 6, []string{"kaas-1", "kaas-2"}), false
		}, event: "stop", broker: "kaas-0", step: 1, next: "start kaas-0", check: deviates("out of order: kaas-0 left; the restart order expects stop kaas-2 next")},
		{name: "a group elsewhere than predicted", write: func(f RestartFollow) (*volume.Assignment, bool) {
			a := predicted(f, 6, []string{"kaas-0", "kaas-1"})
			for i := range a.ConsumerGroups {
				if a.ConsumerGroups[i].GroupID == "orders" {
					a.ConsumerGroups[i].Broker = "kaas-0"
				}
			}
			return a, false
		}, event: "stop", broker: "kaas-2", step: 1, next: "start kaas-2", check: deviates("orders moved kaas-1 → kaas-0; predicted kaas-1")},
		{name: "an unexpected controller", before: stopped("kaas-2"), write: func(f RestartFollow) (*volume.Assignment, bool) {
			a := predicted(f, 7, all3)
			a.Controller = "kaas-2"
			return a, false
		}, event: "start", broker: "kaas-2", step: 1, next: "stop kaas-1", check: deviates("controller kaas-2; predicted kaas-0")},
		{name: "a quick restart read as one version", write: func(f RestartFollow) (*volume.Assignment, bool) {
			mid := PredictVersion(f.State, []string{"kaas-0", "kaas-1"}, f.Groups, f.Failover, f.Placement)
			st := f.State.Advance(f.Groups, mid.Alive, mid.Controller, mid.Entries)
			p := PredictVersion(st, all3, f.Groups, f.Failover, f.Placement)
			return version(1, 7, p.Controller, p.Alive, p.Entries), false
		}, event: "restart", broker: "kaas-2", step: 1, next: "stop kaas-1", check: func(t *testing.T, f RestartFollow, out FollowOutcome) {
			if !out.Event.AsPlanned || !out.Settle || !f.Done["kaas-2"] || len(out.Event.Notes) != 2 || !strings.Contains(out.Event.Notes[0], "v6–v6 were replaced") {
				t.Errorf("%+v", out.Event)
			}
		}},
		{name: "a recompute without moves", write: func(f RestartFollow) (*volume.Assignment, bool) {
			return version(1, 6, "kaas-0", all3, f.State.Entries), false
		}, event: "recompute", step: 1, next: "stop kaas-2", check: func(t *testing.T, f RestartFollow, out FollowOutcome) {
			if !out.Event.AsPlanned || len(out.Event.Notes) != 1 || !strings.Contains(out.Event.Notes[0], "no group move") {
				t.Errorf("%+v", out.Event)
			}
		}},
		{name: "a recompute that moves a group", write: func(f RestartFollow) (*volume.Assignment, bool) {
			return version(1, 6, "kaas-0", all3, map[string]string{"orders": "kaas-0", "billing": "kaas-2"}), true
		}, event: "recompute", step: 1, next: "stop kaas-2", check: func(t *testing.T, f RestartFollow, out FollowOutcome) {
			deviates("a version with the same brokers")(t, f, out)
			if !strings.Contains(out.Event.Notes[0], "rewritten with other bytes") {
				t.Errorf("notes %v", out.Event.Notes)
			}
		}},
		{name: "an extra version before the next step's stop is that step's", before: func(f RestartFollow) RestartFollow {
			f = stopped("kaas-2")(f)
			f, _ = FollowVersion(f, predicted(f, f.Last.AssignmentVersion+1, all3), false)
			return f
		}, write: func(f RestartFollow) (*volume.Assignment, bool) {
			return version(1, 8, "kaas-0", all3, f.State.Entries), false
		}, event: "recompute", step: 2, next: "stop kaas-1", check: func(t *testing.T, f RestartFollow, out FollowOutcome) {
			if !out.Event.AsPlanned || f.Step != 1 {
				t.Errorf("%+v step %d", out.Event, f.Step)
			}
		}},
		{name: "an extra version while step 2's broker is down is step 2's", before: func(f RestartFollow) RestartFollow {
			f = stopped("kaas-2")(f)
			f, _ = FollowVersion(f, predicted(f, f.Last.AssignmentVersion+1, all3), false)
			return stopped("kaas-1")(f)
		}, write: func(f RestartFollow) (*volume.Assignment, bool) {
			return version(1, f.Last.AssignmentVersion+1, f.State.Controller, f.State.Alive, f.State.Entries), false
		}, event: "recompute", step: 2, next: "start kaas-1", check: func(t *testing.T, f RestartFollow, out FollowOutcome) {}},
		{name: "the last start completes the restart", before: func(f RestartFollow) RestartFollow {
			f.Done = map[string]bool{"kaas-2": true, "kaas-1": true}
			f.Step = 2
			return stopped("kaas-0")(f)
		}, write: func(f RestartFollow) (*volume.Assignment, bool) {
			return predicted(f, 7, all3), false
		}, event: "start", broker: "kaas-0", step: 3, next: "", check: func(t *testing.T, f RestartFollow, out FollowOutcome) {
			if !out.Event.AsPlanned || !out.Settle || !out.Complete {
				t.Errorf("%+v", out)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := followFixture()
			if tc.before != nil {
				f = tc.before(f)
			}
			a, rewritten := tc.write(f)
			was := f.Step
			next, out := FollowVersion(f, a, rewritten)
			ev := out.Event
			if ev.Kind != "version" || ev.Event != tc.event || ev.Broker != tc.broker || ev.Step != tc.step || ev.Next != tc.next {
				t.Errorf("event %s %s step %d next %q; want %s %s step %d next %q", ev.Event, ev.Broker, ev.Step, ev.Next, tc.event, tc.broker, tc.step, tc.next)
			}
			if ev.Version != a.AssignmentVersion || next.Last != a || !strings.HasPrefix(ev.Message, "v") {
				t.Errorf("version %d last %v message %q", ev.Version, next.Last, ev.Message)
			}
			if f.Step != was {
				t.Error("FollowVersion changed the state it was given")
			}
			tc.check(t, next, out)
		})
	}
}

// stopped is the follow after the planned stop of b was read.
func stopped(b string) func(f RestartFollow) RestartFollow {
	return func(f RestartFollow) RestartFollow {
		alive := slices.DeleteFunc(slices.Clone(f.State.Alive), func(x string) bool { return x == b })
		f, _ = FollowVersion(f, predicted(f, f.Last.AssignmentVersion+1, alive), false)
		return f
	}
}

func TestUnsettledGroups(t *testing.T) {
	t.Parallel()
	names := NewNodeNamer(version(1, 1, "kaas-0", all3, nil))
	coords := map[string]wire.Coordinator{"a": {NodeID: 1}, "b": {NodeID: 2}, "c": {NodeID: 1}, "d": {Err: "COORDINATOR_NOT_AVAILABLE"}, "e": {NodeID: 1}}
	want := map[string]string{"a": "kaas-1", "b": "kaas-1", "c": "kaas-1", "d": "kaas-0", "e": "kaas-1"}
	described := []wire.DescribedGroup{{Group: "a", State: "Stable"}, {Group: "b", State: "Stable"}, {Group: "c", State: "PreparingRebalance"},
		{Group: "d"}, {Group: "e", Err: "NOT_COORDINATOR"}}
	got := UnsettledGroups(coords, described, names, want)
	wantOut := []string{"b: FindCoordinator says kaas-2, the version says kaas-1", "c is PreparingRebalance", "d: COORDINATOR_NOT_AVAILABLE", "e: NOT_COORDINATOR"}
	if !slices.Equal(got, wantOut) {
		t.Fatalf("got %q\nwant %q", got, wantOut)
	}
}

// The versions a generation's rules allow instead of the prediction are
// as planned, with a note: on Rust, a failover whose last broker to connect
// lost its groups' entries; on Go, the extra version a graceful controller
// stop writes first (still listing it, no entries). Without the rules the
// same versions deviate.
func TestFollowAllowsTheGenerationsRaces(t *testing.T) {
	t.Parallel()
	rust := RestartRulesFor(volume.Gen018, FailoverReload)
	goRules := RestartRulesFor(volume.GenGo, FailoverDrop)
	if !rust.Failover.FirstReportEmpty || !goRules.Failover.ExtraVersionOnStop || rust.Restart.StopToStart == 0 {
		t.Fatalf("rules: %+v %+v", rust, goRules)
	}
	// Rust: the controller kaas-0 stops; kaas-1 connects last, so orders
	// (on kaas-1) gets no entry and routes by the hash over kaas-1, kaas-2.
	in := RestartInput{Brokers: all3, Controller: "kaas-0", Epoch: 1, Version: 5, Failover: FailoverReload, Placement: "rendezvous", Rules: rust}
	var g string
	for _, c := range []string{"orders", "billing", "audit", "ledger", "email", "search"} {
		if (ClusterState{Alive: []string{"kaas-1", "kaas-2"}}).Coordinators([]string{c})[c] == "kaas-2" {
			g = c
			break
		}
	}
	in.Entries = map[string]string{g: "kaas-1"}
	in.Groups = []RestartGroup{{ID: g, Loaded: true, Members: true}}
	for _, rules := range []RestartRules{rust, {}} {
		in.Rules = rules
		f := NewRestartFollow(in, []string{"kaas-0", "kaas-1", "kaas-2"}, version(1, 5, "kaas-0", all3, in.Entries))
		_, out := FollowVersion(f, version(2, 6, "kaas-1", []string{"kaas-1", "kaas-2"}, nil), false)
		if want := rules.Failover.FirstReportEmpty; out.Event.AsPlanned != want || want && !strings.Contains(strings.Join(out.Event.Notes, " "), "kaas-1 connected its heartbeat to the new controller last") {
			t.Errorf("Rust rules %v: %+v", want, out.Event)
		}
	}
	// Go: the controller's graceful stop writes a version with a new
	// controller that still lists kaas-0, and no entries.
	in = RestartInput{Brokers: all3, Controller: "kaas-0", Epoch: 1, Version: 5, Failover: FailoverDrop, Placement: "rendezvous",
		Entries: map[string]string{"orders": "kaas-1"}, Groups: []RestartGroup{{ID: "orders", Loaded: true, Members: true}}}
	for _, rules := range []RestartRules{goRules, {}} {
		in.Rules = rules
		f := NewRestartFollow(in, []string{"kaas-0", "kaas-1", "kaas-2"}, version(1, 5, "kaas-0", all3, in.Entries))
		_, out := FollowVersion(f, version(2, 6, "kaas-1", all3, nil), false)
		if want := rules.Failover.ExtraVersionOnStop; out.Event.AsPlanned != want {
			t.Errorf("Go rules %v: %+v", want, out.Event)
		}
	}
}
