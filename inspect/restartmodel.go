package inspect

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// The controller's reaction to a broker leaving or rejoining, per kaas
// generation, in one place (plan restart simulates it version by version;
// whois --what-if-down models one step of it).
//
// Every version the controller writes lists only the alive brokers and
// carries explicit entries for the groups it sees active (in memory on a
// connected coordinator): a group whose entry names an alive broker keeps
// it; any other active group is placed afresh (rendezvous today, or the
// routing hash); inactive groups lose their entry and route by the hash
// tier over the alive brokers. What differs is a controller failover:

// FailoverModel is what a newly elected controller does with the previous
// version's explicit entries.
type FailoverModel string

const (
	// FailoverDrop: the Go flavour. The new controller's first version has
	// no consumerGroups at all (seen on a real Go cluster: "consumerGroups":
	// null), so every group routes by the hash tier over the alive brokers;
	// its next version places the active groups afresh (epoch 1).
	FailoverDrop FailoverModel = "drop"
	// FailoverReload: the Rust controller loads the previous assignment.json
	// on start, carries its version counter forward and balances the
	// previous entries against the active groups, as any other version.
	FailoverReload FailoverModel = "reload"
)

// FailoverModels lists the values of --failover.
var FailoverModels = []string{string(FailoverDrop), string(FailoverReload)}

// FailoverFor is the failover model of a kaas generation and why, from
// the volume model (internal/volume's generation table): the generation
// assumed, what its next controller writes, where that comes from, and
// what the volume cannot tell. An unknown generation is assumed to run
// the newest kaas.
func FailoverFor(gen volume.Generation) (FailoverModel, string) {
	s, ok := gen.Spec()
	why := "generation " + gen.Label() + ": "
	if !ok {
		s, _ = volume.AllGenerations[len(volume.AllGenerations)-1].Spec()
		why = "generation unknown, assuming " + s.Label + " (pin --kaas-version or --failover): "
	}
	fm := FailoverDrop
	if s.Failover.Reloads {
		fm = FailoverReload
	}
	why += s.Failover.Summary + " (from " + s.Failover.Source + ")"
	if s.Failover.Caveat != "" {
		why += "; " + s.Failover.Caveat
	}
	return fm, why
}

// AssumedFailover is the controller failover model whois's what-if assumes
// when it stops the controller and --failover does not say: the
// generation's (the newest kaas when it cannot be told), with why.
func AssumedFailover(gi volume.GenerationInfo) (FailoverModel, string, volume.FailoverRule) {
	gen, assumes := gi.Gen, gi.Assumes()
	fm, _ := FailoverFor(gen)
	s, ok := gen.Spec()
	if !ok {
		s, _ = volume.AllGenerations[len(volume.AllGenerations)-1].Spec()
		assumes = "kaas generation undetermined, assuming " + s.Label + " (pin --kaas-version or --failover)"
	}
	why := assumes + "; model from " + s.Failover.Source
	if s.Failover.Caveat != "" {
		why += "; " + s.Failover.Caveat
	}
	return fm, why, s.Failover
}

// FailoverRuleOf is the failover rule of the newest generation whose
// controller does what --failover says (its timings and races).
func FailoverRuleOf(m FailoverModel) volume.FailoverRule {
	var rule volume.FailoverRule
	for _, g := range volume.AllGenerations {
		if s, ok := g.Spec(); ok && s.Failover.Reloads == (m == FailoverReload) {
			rule = s.Failover
		}
	}
	return rule
}

// ParseFailover checks a --failover value.
func ParseFailover(s string) (FailoverModel, error) {
	switch FailoverModel(s) {
	case FailoverDrop, FailoverReload:
		return FailoverModel(s), nil
	}
	return "", fmt.Errorf("--failover %q: choose drop (Go: a new controller drops every explicit entry) or reload (Rust: it reloads them)", s)
}

// NextController is the broker the model expects to win the controller
// lease when the controller stops: the lowest alive broker id (what the
// sandbox does; on Kubernetes the lease goes to whichever broker asks
// first, which changes which later restart is a failover, not what a
// failover does).
func NextController(alive []string) string {
	if len(alive) == 0 {
		return ""
	}
	best := alive[0]
	for _, b := range alive[1:] {
		if b < best {
			best = b
		}
	}
	return best
}

// ClusterState is what the controller's next version starts from: the
// last version's alive brokers, controller and entries, and which groups
// are in memory on their coordinator (Loaded) and have members.
type ClusterState struct {
	Alive      []string
	Controller string
	Entries    map[string]string // winning entry per group
	Loaded     map[string]bool
	Members    map[string]bool
}

// VersionOutcome is the predicted next version.
type VersionOutcome struct {
	Written      bool // false: no broker alive, no controller, the file stays
	Alive        []string
	Controller   string
	Failover     bool
	Entries      map[string]string
	Coordinators map[string]string // every asked group ("" none)
}

// Coordinators is every group's coordinator under the state's version.
func (st ClusterState) Coordinators(groups []string) map[string]string {
	bs := make([]grouphash.Broker, len(st.Alive))
	for i, id := range st.Alive {
		bs[i] = grouphash.Broker{ID: id, Health: grouphash.HealthAlive}
	}
	ring := grouphash.NewRing(bs)
	out := make(map[string]string, len(groups))
	for _, g := range groups {
		e, ok := st.Entries[g]
		out[g] = ring.ResolveGroup(g, ok, e).Coordinator
	}
	return out
}

// PredictVersion is the controller's next version when the alive set
// becomes alive: the same rules as the restart plan, one version at a time
// from any state (plan restart --follow predicts each version from the one
// actually written before it).
func PredictVersion(st ClusterState, alive []string, groups []string, fm FailoverModel, placement string) VersionOutcome {
	alive = slices.Clone(alive)
	slices.Sort(alive)
	before := st.Coordinators(groups)
	out := VersionOutcome{Alive: alive, Entries: map[string]string{}, Coordinators: map[string]string{}}
	if len(alive) == 0 {
		out.Controller, out.Coordinators = "", before
		return out
	}
	out.Written = true
	out.Controller = st.Controller
	if !slices.Contains(alive, st.Controller) {
		out.Failover, out.Controller = true, NextController(alive)
	}
	drop := out.Failover && fm == FailoverDrop
	bs := make([]grouphash.Broker, len(alive))
	for i, id := range alive {
		bs[i] = grouphash.Broker{ID: id, Health: grouphash.HealthAlive}
	}
	ring := grouphash.NewRing(bs)
	for _, g := range groups {
		active := st.Loaded[g] && slices.Contains(alive, before[g])
		if active && !drop {
			if e, ok := st.Entries[g]; ok && slices.Contains(alive, e) {
				out.Entries[g] = e
			} else if placement == "hash" {
				out.Entries[g] = ring.Pick(g).Coordinator
			} else {
				out.Entries[g] = grouphash.Rendezvous(g, alive)
			}
		}
		e, ok := out.Entries[g]
		out.Coordinators[g] = ring.ResolveGroup(g, ok, e).Coordinator
	}
	return out
}

// Advance is the state once a version (predicted or read) is applied:
// groups that moved are loaded again only if they have members.
func (st ClusterState) Advance(groups []string, alive []string, controller string, entries map[string]string) ClusterState {
	before := st.Coordinators(groups)
	next := ClusterState{Alive: slices.Clone(alive), Controller: controller, Entries: entries,
		Loaded: maps.Clone(st.Loaded), Members: st.Members}
	if next.Loaded == nil {
		next.Loaded = map[string]bool{}
	}
	after := next.Coordinators(groups)
	for _, g := range groups {
		if before[g] != after[g] {
			next.Loaded[g] = st.Members[g]
		}
	}
	return next
}

// Following a real restart (plan restart --follow): each version the
// controller writes is compared with the one-version prediction from the
// version before it (PredictVersion), and the broker that left or joined
// with the order followed.

// FollowEvent is one line of plan restart --follow (-o jsonl: one object
// per line).
type FollowEvent struct {
	Kind string `json:"kind"` // following, version, waiting, settled, unsettled, done
	// Version fields (kind "version").
	Version    int64          `json:"assignmentVersion,omitempty"`
	Epoch      int64          `json:"controllerEpoch,omitempty"`
	Controller string         `json:"controller,omitempty"`
	Step       int            `json:"step,omitempty"`
	Event      string         `json:"event,omitempty"` // stop, start, restart, recompute, brokers-changed
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

// RestartFollow is a followed restart between two versions: the order
// followed, the state the last version left, and the progress so far.
type RestartFollow struct {
	Order      []string
	Groups     []string
	State      ClusterState
	Failover   FailoverModel
	Placement  string
	Done       map[string]bool // brokers restarted
	Down       string          // the broker stopped and not yet started again
	Step       int             // steps completed in order
	Deviations int             // versions that deviated
	Last       *volume.Assignment
	// Rules are the generation's: a version they allow instead of the
	// predicted one (the last broker to connect losing its entries, the
	// extra version of a graceful controller stop) is as planned, noted.
	Rules RestartRules
}

// NewRestartFollow starts following order from the plan's input and the
// version it was computed from.
func NewRestartFollow(in RestartInput, order []string, a *volume.Assignment) RestartFollow {
	f := RestartFollow{Order: slices.Clone(order), Failover: in.Failover, Placement: in.Placement, Done: map[string]bool{}, Last: a, Rules: in.Rules,
		State: ClusterState{Alive: slices.Clone(in.Brokers), Controller: in.Controller, Entries: maps.Clone(in.Entries),
			Loaded: map[string]bool{}, Members: map[string]bool{}}}
	for _, grp := range in.Groups {
		f.Groups = append(f.Groups, grp.ID)
		f.State.Loaded[grp.ID], f.State.Members[grp.ID] = grp.Loaded, grp.Members
	}
	return f
}

// Expected is the event the order expects next: the stopped broker's
// start, else the stop of the next broker not yet restarted; "" when the
// restart is complete.
func (f RestartFollow) Expected() (event, broker string) {
	if f.Down != "" {
		return "start", f.Down
	}
	for _, b := range f.Order {
		if !f.Done[b] {
			return "stop", b
		}
	}
	return "", ""
}

// IsStart reports whether a is the version the follow started from.
func (f RestartFollow) IsStart(a *volume.Assignment) bool {
	return f.Last != nil && a.ControllerEpoch == f.Last.ControllerEpoch && a.AssignmentVersion == f.Last.AssignmentVersion
}

// FollowOutcome is one version checked against the plan.
type FollowOutcome struct {
	Event FollowEvent
	// Waiting: the expected broker stopped; it is to be started again.
	Waiting bool
	// Settle: a broker came back and none is down: the moved groups are
	// to be Stable again before the next step.
	Settle bool
	// Complete: every broker of the order has been restarted.
	Complete bool
}

// FollowVersion checks a version written during the restart against the
// prediction from the state before it and the order (rewritten: the same
// epoch and version with other bytes), and returns the state it leaves.
func FollowVersion(f RestartFollow, a *volume.Assignment, rewritten bool) (RestartFollow, FollowOutcome) {
	ev, r := f.readVersion(a, rewritten)
	if ev.Event == "recompute" && r.gap && r.wantEvent == "stop" {
		f.quickRestart(&ev, &r)
	}
	f.compareVersion(&ev, r)
	ordered := (ev.Event == r.wantEvent || ev.Event == "restart") && ev.Broker == r.wantBroker
	orderDeviation(&ev, ordered, r.wantEvent, r.wantBroker, r.left, r.joined)
	return f.advanceFollow(ev, r, ordered)
}

// followedVersion is what FollowVersion reads from one version: the alive
// brokers and the change from the state before it, the first entry of each
// group, whether versions were missed, the event the order expected, and
// the state the prediction starts from.
type followedVersion struct {
	a                     *volume.Assignment
	alive, left, joined   []string
	entries               map[string]string
	gap                   bool
	wantEvent, wantBroker string
	from                  ClusterState
}

// readVersion reads version a against the follow's state: the event it is
// (a broker stopped, started, or a recompute), what was expected, and
// notes for a rewritten version or versions replaced before they were read.
func (f RestartFollow) readVersion(a *volume.Assignment, rewritten bool) (FollowEvent, followedVersion) {
	ev := FollowEvent{Kind: "version", Version: a.AssignmentVersion, Epoch: a.ControllerEpoch, Controller: a.Controller}
	if rewritten {
		ev.Notes = append(ev.Notes, "the same epoch and version rewritten with other bytes (a manual edit, or two controllers)")
	}
	r := followedVersion{a: a, entries: map[string]string{}, from: f.State}
	r.gap = f.Last != nil && a.ControllerEpoch >= f.Last.ControllerEpoch && a.AssignmentVersion > f.Last.AssignmentVersion+1
	if r.gap {
		ev.Notes = append(ev.Notes, fmt.Sprintf("v%d–v%d were replaced before they could be read: the comparison covers them together", f.Last.AssignmentVersion+1, a.AssignmentVersion-1))
	}
	r.alive = aliveBrokers(a)
	r.left, r.joined = brokerChange(f.State.Alive, r.alive)
	r.wantEvent, r.wantBroker = f.Expected()
	ev.Expected = strings.TrimSpace(r.wantEvent + " " + r.wantBroker)
	ev.Event, ev.Broker = classifyChange(r.left, r.joined)
	for _, e := range a.ConsumerGroups {
		if _, dup := r.entries[e.GroupID]; !dup {
			r.entries[e.GroupID] = e.Broker
		}
	}
	return ev, r
}

// quickRestart reads a recompute seen after missed versions, while a stop
// was expected, as the expected broker's stop and start together: the
// stop's version was replaced by the start's before it could be read.
// The prediction then starts from the predicted stop version.
func (f RestartFollow) quickRestart(ev *FollowEvent, r *followedVersion) {
	down := slices.DeleteFunc(slices.Clone(r.alive), func(b string) bool { return b == r.wantBroker })
	mid := PredictVersion(f.State, down, f.Groups, f.Failover, f.Placement)
	r.from = f.State.Advance(f.Groups, mid.Alive, mid.Controller, mid.Entries)
	ev.Event, ev.Broker = "restart", r.wantBroker
	ev.Notes = append(ev.Notes, fmt.Sprintf("read as %s's stop and start together (its stop version was not seen)", r.wantBroker))
}

// compareVersion compares the version with the model's prediction: the
// groups' moves, and the controller (at a failover any broker may win the
// lease); differences the generation's rules allow become notes.
func (f RestartFollow) compareVersion(ev *FollowEvent, r followedVersion) {
	a := r.a
	pred := PredictVersion(r.from, r.alive, f.Groups, f.Failover, f.Placement)
	ev.Moves, ev.Deviations = compareMoves(f.Groups, f.State.Coordinators(f.Groups), ClusterState{Alive: r.alive, Entries: r.entries}.Coordinators(f.Groups), pred.Coordinators)
	if a.Controller != pred.Controller && pred.Failover && a.Controller != "" && slices.Contains(r.alive, a.Controller) {
		// At a failover, which broker wins the lease moves no group (the
		// new controller balances the same entries); the follow goes on
		// from the real one.
		ev.Notes = append(ev.Notes, fmt.Sprintf("controller %s took the lease (the plan assumed %s, the lowest alive id; kaas gives it to whichever broker asks first): the next steps follow %s", a.Controller, noneIfEmpty(pred.Controller), a.Controller))
	} else if a.Controller != pred.Controller {
		ev.Deviations = append(ev.Deviations, fmt.Sprintf("controller %s; predicted %s (the model expects the lowest alive broker to win the lease)", noneIfEmpty(a.Controller), noneIfEmpty(pred.Controller)))
	}
	if len(ev.Deviations) > 0 {
		if note, ok := f.allowedInstead(r.from, r.alive, r.entries, a, pred, ev.Event, r.wantEvent); ok {
			ev.Deviations = nil
			ev.Notes = append(ev.Notes, note)
		}
	}
}

// advanceFollow moves the follow on to what was written, whatever the
// prediction said, and words the event: its message, the step it belongs
// to, and what is expected next.
func (f RestartFollow) advanceFollow(ev FollowEvent, r followedVersion, ordered bool) (RestartFollow, FollowOutcome) {
	a := r.a
	next := f
	next.Last, next.Done = a, maps.Clone(f.Done)
	next.State = r.from.Advance(f.Groups, r.alive, a.Controller, r.entries)
	next.advanceOrder(ev, ordered)
	ev.AsPlanned = len(ev.Deviations) == 0
	ev.Message = fmt.Sprintf("v%d (epoch %d, controller %s): %s — %s", a.AssignmentVersion, a.ControllerEpoch, noneIfEmpty(a.Controller),
		describeFollowEvent(ev), render.Plural(len(ev.Moves), "group moved", "groups moved"))
	if !ev.AsPlanned {
		next.Deviations++
	}
	nextEvent, nextBroker := next.Expected()
	ev.Next = strings.TrimSpace(nextEvent + " " + nextBroker)
	back := (ev.Event == "start" || ev.Event == "restart") && next.Down == ""
	// The step an event belongs to: the one it completes, else the one in
	// progress or about to begin (a version while a broker is down, or an
	// extra version before the next stop, is the next step's).
	ev.Step = next.Step
	if !back && nextEvent != "" {
		ev.Step = next.Step + 1
	}
	return next, FollowOutcome{Event: ev, Waiting: ev.Event == "stop" && ordered, Settle: back, Complete: back && nextEvent == ""}
}

// allowedInstead reports whether a version that differs from the
// prediction is one the generation's rules allow, and says which: after a
// failover on Rust, the groups of the broker that connected to the new
// controller last get no entry; a graceful stop of the Go controller can
// first write a version that still lists it alive, with no entries.
func (f RestartFollow) allowedInstead(from ClusterState, alive []string, entries map[string]string, a *volume.Assignment, pred VersionOutcome, event, wantEvent string) (string, bool) {
	actual := ClusterState{Alive: alive, Entries: entries}.Coordinators(f.Groups)
	if f.Rules.Failover.ExtraVersionOnStop && event == "recompute" && wantEvent == "stop" && a.Controller != from.Controller && len(entries) == 0 {
		return "the extra version a graceful stop of the controller can write (a new controller, the stopping broker still listed alive, no entries), as the plan allowed", true
	}
	if !f.Rules.Failover.FirstReportEmpty || !pred.Failover {
		return "", false
	}
	// The brokers whose first heartbeat came too late: the last to
	// connect, or any set of them (every subset, up to 10 brokers).
	before := from.Coordinators(f.Groups)
	sets := [][]string{}
	if n := len(alive); n <= 10 {
		for mask := 1; mask < 1<<n; mask++ {
			var set []string
			for i, b := range alive {
				if mask&(1<<i) != 0 {
					set = append(set, b)
				}
			}
			sets = append(sets, set)
		}
	} else {
		for _, b := range alive {
			sets = append(sets, []string{b})
		}
	}
	slices.SortStableFunc(sets, func(x, y []string) int { return len(x) - len(y) })
	for _, set := range sets {
		st := from
		st.Loaded = maps.Clone(from.Loaded)
		for _, g := range f.Groups {
			if slices.Contains(set, before[g]) {
				st.Loaded[g] = false
			}
		}
		p := PredictVersion(st, alive, f.Groups, f.Failover, f.Placement)
		if _, dev := compareMoves(f.Groups, before, actual, p.Coordinators); len(dev) == 0 {
			return fmt.Sprintf("%s connected its heartbeat to the new controller last (or within 1 s of it), so the groups it coordinated got no entry (hash tier), as the plan allowed (the new controller is %s)", strings.Join(set, ", "), noneIfEmpty(a.Controller)), true
		}
	}
	return "", false
}

// advanceOrder records the broker that stopped or came back.
func (f *RestartFollow) advanceOrder(ev FollowEvent, ordered bool) {
	switch ev.Event {
	case "restart":
		f.Done[ev.Broker] = true
		f.Step++
	case "stop":
		if f.Down == "" {
			f.Down = ev.Broker
		}
	case "start":
		if ev.Broker == f.Down {
			f.Down = ""
		}
		f.Done[ev.Broker] = true
		if ordered {
			f.Step++
		}
	}
}

// aliveBrokers is the version's alive brokers, sorted, each once.
func aliveBrokers(a *volume.Assignment) []string {
	var alive []string
	for _, b := range a.Brokers {
		if b.Health == "alive" && !slices.Contains(alive, b.ID) {
			alive = append(alive, b.ID)
		}
	}
	slices.Sort(alive)
	return alive
}

// brokerChange is which brokers left and which joined between two alive
// sets.
func brokerChange(before, after []string) (left, joined []string) {
	for _, b := range before {
		if !slices.Contains(after, b) {
			left = append(left, b)
		}
	}
	for _, b := range after {
		if !slices.Contains(before, b) {
			joined = append(joined, b)
		}
	}
	return left, joined
}

// classifyChange names a broker change: one broker's stop or start, a
// recompute with the same brokers, or several brokers changed.
func classifyChange(left, joined []string) (event, broker string) {
	switch {
	case len(left) == 1 && len(joined) == 0:
		return "stop", left[0]
	case len(joined) == 1 && len(left) == 0:
		return "start", joined[0]
	case len(left) == 0 && len(joined) == 0:
		return "recompute", ""
	}
	return "brokers-changed", ""
}

// compareMoves lists the groups whose coordinator changed or was
// predicted to, and the deviations among them.
func compareMoves(groups []string, before, actual, predicted map[string]string) (moves []FollowedMove, deviations []string) {
	for _, g := range groups {
		if before[g] == actual[g] && predicted[g] == actual[g] {
			continue
		}
		m := FollowedMove{Group: g, From: before[g], To: actual[g], Predicted: predicted[g], AsPlanned: predicted[g] == actual[g]}
		moves = append(moves, m)
		switch {
		case m.AsPlanned:
		case before[g] == actual[g]:
			deviations = append(deviations, fmt.Sprintf("%s stayed on %s; predicted to move to %s", g, noneIfEmpty(actual[g]), noneIfEmpty(predicted[g])))
		default:
			deviations = append(deviations, fmt.Sprintf("%s moved %s → %s; predicted %s", g, noneIfEmpty(before[g]), noneIfEmpty(actual[g]), noneIfEmpty(predicted[g])))
		}
	}
	return moves, deviations
}

// orderDeviation adds what the order says about the event: a recompute
// that moved groups, a broker change after the restart completed, or one
// out of order.
func orderDeviation(ev *FollowEvent, ordered bool, wantEvent, wantBroker string, left, joined []string) {
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
		ev.Deviations = append([]string{fmt.Sprintf("out of order: %s; the restart order expects %s %s next", describeBrokerChange(left, joined),
			wantEvent, wantBroker)}, ev.Deviations...)
	}
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

func describeFollowEvent(ev FollowEvent) string {
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

// SettleTargets is the groups with members and the coordinator each has
// under the last version: before the next step, each is to be Stable
// there.
func (f RestartFollow) SettleTargets() (groups []string, want map[string]string) {
	for _, g := range f.Groups {
		if f.State.Members[g] {
			groups = append(groups, g)
		}
	}
	return groups, f.State.Coordinators(groups)
}

// UnsettledGroups lists the groups not yet Stable on the coordinator the
// version names, one line each: the coordinator lookup failed, another
// broker coordinates it, its description failed, or its state is not
// Stable.
func UnsettledGroups(coords map[string]wire.Coordinator, described []wire.DescribedGroup, names *NodeNamer, want map[string]string) []string {
	var out []string
	for _, d := range described {
		co := coords[d.Group]
		switch {
		case co.Err != "":
			out = append(out, d.Group+": "+co.Err)
		case names.Name(co.NodeID) != want[d.Group]:
			out = append(out, fmt.Sprintf("%s: FindCoordinator says %s, the version says %s", d.Group, names.Name(co.NodeID), noneIfEmpty(want[d.Group])))
		case d.Err != "":
			out = append(out, d.Group+": "+d.Err)
		case d.State != "Stable":
			out = append(out, d.Group+" is "+d.State)
		}
	}
	return out
}
