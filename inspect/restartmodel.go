package inspect

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
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
